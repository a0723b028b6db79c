//! The reviewed list of intended differences
//! (`conformance/intended-differences.txt`).
//!
//! One entry per line, three fields separated by ` | `:
//!
//! ```text
//! <scenario pattern> | <step pattern> | <reason>
//! ```
//!
//! Patterns are globs where `*` matches any run of characters. The
//! scenario pattern is matched against the scenario's display name
//! (`family/name`, or `family/name@preset` for scenarios run on several
//! presets); the step pattern against the record key that differs,
//! `crash` for a crash on one side only, or `trace` for an ioctl-trace
//! difference. Lines starting with `#` and blank lines are ignored.

/// One entry.
#[derive(Debug, Clone)]
pub struct Entry {
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

impl Intended {
    /// Parses the file's text.
    pub fn parse(text: &str) -> Result<Intended, String> {
        let mut entries = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let l = raw.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let parts: Vec<&str> = l.splitn(3, " | ").map(str::trim).collect();
            if parts.len() != 3 || parts.iter().any(|p| p.is_empty()) {
                return Err(format!(
                    "intended differences line {}: want `scenario | step | reason`",
                    i + 1
                ));
            }
            entries.push(Entry {
                scenario: parts[0].into(),
                step: parts[1].into(),
                reason: parts[2].into(),
                line: i + 1,
            });
        }
        Ok(Intended { entries })
    }

    /// The entry covering a difference at `step` of `scenario`.
    pub fn find(&self, scenario: &str, step: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| glob(&e.scenario, scenario) && glob(&e.step, step))
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
        let i = Intended::parse("# c\n\nclosed/x | crash | 5.2.3 segfaults\n").unwrap();
        assert_eq!(i.entries.len(), 1);
        assert!(i.find("closed/x", "crash").is_some());
        assert!(i.find("closed/y", "crash").is_none());
        assert!(Intended::parse("bad line").is_err());
    }
}
