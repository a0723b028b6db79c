//! The reviewed list of intended differences
//! (`conformance/intended-differences.txt`).
//!
//! One entry per line: a generation scope, then three fields separated by
//! ` | `:
//!
//! ```text
//! [<generation>,...] <scenario pattern> | <step pattern> | <reason>
//! ```
//!
//! The scope names the ABI generations (`rocm-5.2`, `rocm-6.2`,
//! `newest`, as `--abi` spells them) whose reference library the entry
//! was written against; an entry only covers differences of a run of one
//! of those generations, so a reason written for one C library never
//! hides a difference from another. Every entry must have a scope.
//!
//! Patterns are globs where `*` matches any run of characters. The
//! scenario pattern is matched against the scenario's display name
//! (`family/name`, or `family/name@preset` for scenarios run on several
//! presets); the step pattern against the record key that differs,
//! `crash` for a crash on one side only, or `trace` for an ioctl-trace
//! difference. Lines starting with `#` and blank lines are ignored.

use crate::abi::AbiKind;

/// One entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The generations the entry applies to.
    pub generations: Vec<AbiKind>,
    /// Scenario glob.
    pub scenario: String,
    /// Step glob.
    pub step: String,
    /// Why the difference is intended.
    pub reason: String,
    /// Line number in the file.
    pub line: usize,
}

/// The parsed file.
#[derive(Debug, Clone, Default)]
pub struct Intended {
    /// Entries in file order.
    pub entries: Vec<Entry>,
}

/// `*`-glob match.
pub fn glob(pat: &str, s: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let t: Vec<char> = s.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    let (mut star, mut mark) = (None::<usize>, 0usize);
    while ti < t.len() {
        if pi < p.len() && p[pi] != '*' && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// Splits `[a,b] rest` into the generations and the rest.
fn scope(line: &str) -> Result<(Vec<AbiKind>, &str), String> {
    let body = line
        .strip_prefix('[')
        .ok_or("an entry starts with its generation scope, e.g. `[rocm-5.2]`")?;
    let (names, rest) = body
        .split_once(']')
        .ok_or("the generation scope has no closing `]`")?;
    let mut gens = Vec::new();
    for n in names.split(',').map(str::trim) {
        let g = AbiKind::parse(n)
            .ok_or_else(|| format!("unknown generation `{n}` (rocm-5.2, rocm-6.2 or newest)"))?;
        if !gens.contains(&g) {
            gens.push(g);
        }
    }
    Ok((gens, rest.trim_start()))
}

impl Intended {
    /// Parses the file's text.
    pub fn parse(text: &str) -> Result<Intended, String> {
        let mut entries = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let l = raw.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let bad = |why: &str| format!("intended differences line {}: {why}", i + 1);
            let (generations, rest) = scope(l).map_err(|e| bad(&e))?;
            let parts: Vec<&str> = rest.splitn(3, " | ").map(str::trim).collect();
            if parts.len() != 3 || parts.iter().any(|p| p.is_empty()) {
                return Err(bad("want `[generation] scenario | step | reason`"));
            }
            entries.push(Entry {
                generations,
                scenario: parts[0].into(),
                step: parts[1].into(),
                reason: parts[2].into(),
                line: i + 1,
            });
        }
        Ok(Intended { entries })
    }

    /// The entry covering a difference at `step` of `scenario` in a run of
    /// generation `abi`.
    pub fn find(&self, abi: AbiKind, scenario: &str, step: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| {
            e.generations.contains(&abi) && glob(&e.scenario, scenario) && glob(&e.step, step)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("closed/*", "closed/hsaKmtOpenKFD"));
        assert!(glob("*", ""));
        assert!(glob("a*b*c", "aXXbYc"));
        assert!(!glob("a*b", "aXc"));
        assert!(glob("topology/*@mi300x", "topology/system@mi300x"));
    }

    #[test]
    fn parses_entries() {
        let i = Intended::parse("# c\n\n[rocm-5.2] closed/x | crash | 5.2.3 segfaults\n").unwrap();
        assert_eq!(i.entries.len(), 1);
        assert_eq!(i.entries[0].line, 3);
        assert!(i.find(AbiKind::Rocm52, "closed/x", "crash").is_some());
        assert!(i.find(AbiKind::Rocm52, "closed/y", "crash").is_none());
        assert!(Intended::parse("bad line").is_err());
    }

    #[test]
    fn entries_cover_only_their_generations() {
        let i = Intended::parse(
            "[rocm-5.2] a/* | crash | 5.2.3 only\n[rocm-6.2, newest] b/x | trace | both\n",
        )
        .unwrap();
        assert!(i.find(AbiKind::Rocm52, "a/1", "crash").is_some());
        assert!(i.find(AbiKind::Rocm62, "a/1", "crash").is_none());
        assert!(i.find(AbiKind::Newest, "a/1", "crash").is_none());
        assert!(i.find(AbiKind::Rocm52, "b/x", "trace").is_none());
        assert!(i.find(AbiKind::Rocm62, "b/x", "trace").is_some());
        assert!(i.find(AbiKind::Newest, "b/x", "trace").is_some());
    }

    #[test]
    fn the_reviewed_file_parses() {
        let i = Intended::parse(include_str!("../intended-differences.txt")).unwrap();
        assert!(i.entries.iter().all(|e| !e.generations.is_empty()));
    }

    #[test]
    fn a_scope_is_required_and_checked() {
        for bad in [
            "closed/x | crash | no scope",
            "[rocm-5.2 closed/x | crash | unclosed",
            "[rocm-7] closed/x | crash | unknown generation",
            "[] closed/x | crash | empty scope",
            "[rocm-5.2] closed/x | crash",
        ] {
            assert!(Intended::parse(bad).is_err(), "{bad}");
        }
    }
}
