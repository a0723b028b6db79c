//! A reader of callgrind's output format (`valgrind --tool=callgrind`):
//! the self cost of every object file, and the inclusive cost of the calls
//! between functions, in instructions executed (the `Ir` event).
//!
//! The format is line based. `ob=`, `fn=` and `fl=` (and `fi=`/`fe=`)
//! set the object file, function and source file that the cost lines
//! after them belong to; `cob=`, `cfn=`, `cfi=` (or `cfl=`) name the
//! callee of the next `calls=` line. A name may be given once as
//! `(id) name` and then referred to as `(id)`; object names (`ob=`,
//! `cob=`) and function names (`fn=`, `cfn=`) have a table each. A cost
//! line starts with a digit, `+`, `-` or `*`: first the position columns
//! (`positions:` says how many, one by default; `+3`/`-2` are relative to
//! the previous position and `*` repeats it), then one count per event
//! of the `events:` header. The cost line right after a `calls=` line is
//! the call's *inclusive* cost (everything the callee and its callees
//! executed): it is not the caller's self cost, so it goes to
//! [`Profile::calls`] and not to [`Profile::objects`]. The sum of every
//! self cost is the file's `totals:` (or `summary:`) line, which
//! [`Profile::check`] compares.
//!
//! ```
//! let text = "events: Ir\nob=(1) /lib/libc.so.6\nfn=(1) malloc\n16 40\n\
//!             ob=(2) /bin/app\nfn=(2) main\n3 5\ncob=(1)\ncfn=(1)\n\
//!             calls=1 16\n4 40\ntotals: 45\n";
//! let p = kfd_bench::callgrind::parse(text).unwrap();
//! assert_eq!(p.objects["/lib/libc.so.6"], 40);
//! assert_eq!(p.objects["/bin/app"], 5);
//! p.check().unwrap();
//! ```

use std::collections::BTreeMap;

/// A function: the object file it is in and its name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Func {
    /// The object file (a path, or `???` when callgrind does not know it).
    pub object: String,
    /// The function's name (or its address, `0x...`).
    pub name: String,
}

/// What one callgrind output file holds, in `Ir` (instructions executed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile {
    /// Self cost per object file: the instructions executed in its code.
    pub objects: BTreeMap<String, u64>,
    /// Inclusive cost of the calls from one function (the key's first)
    /// to another (its second), summed over every call site.
    pub calls: BTreeMap<(Func, Func), u64>,
    /// The file's total (`totals:` lines, summed over parts; else its
    /// `summary:` lines), if it has one.
    pub total: Option<u64>,
}

impl Profile {
    /// The sum of [`Profile::objects`].
    pub fn self_total(&self) -> u64 {
        self.objects.values().sum()
    }

    /// Fails when the self costs do not add up to the file's total (a
    /// call's inclusive cost counted as self cost would show here).
    pub fn check(&self) -> Result<(), String> {
        match self.total {
            Some(t) if t != self.self_total() => Err(format!(
                "the self costs add up to {} instructions, the file's total is {t}",
                self.self_total()
            )),
            _ => Ok(()),
        }
    }
}

/// A name-compression table: `(id) name` defines, `(id)` refers.
#[derive(Debug, Default)]
struct Names(BTreeMap<String, String>);

impl Names {
    /// The name a `key=` value stands for, recording a definition.
    fn resolve(&mut self, value: &str) -> Result<String, String> {
        let v = value.trim();
        let Some(rest) = v.strip_prefix('(') else {
            return Ok(v.to_string());
        };
        let Some(close) = rest.find(')') else {
            return Err(format!("`{v}`: no `)` after the id"));
        };
        let (id, name) = (&rest[..close], rest[close + 1..].trim());
        if name.is_empty() {
            self.0
                .get(id)
                .cloned()
                .ok_or_else(|| format!("`({id})` is used before it is defined"))
        } else {
            self.0.insert(id.to_string(), name.to_string());
            Ok(name.to_string())
        }
    }
}

/// Whether `line` is a cost line (positions, then event counts).
fn is_cost(line: &str) -> bool {
    matches!(
        line.as_bytes().first(),
        Some(b'0'..=b'9' | b'+' | b'-' | b'*')
    )
}

/// The `Ir` count of a cost line: the column `ir` after the `positions`
/// position columns (0 when the line stops before it).
fn ir_of(line: &str, positions: usize, ir: usize) -> Result<u64, String> {
    match line.split_whitespace().nth(positions + ir) {
        None => Ok(0),
        Some(t) => t
            .parse::<u64>()
            .map_err(|_| format!("`{t}` is not an event count")),
    }
}

/// The `Ir` value of a `totals:`/`summary:` line's counts.
fn ir_total(counts: &str, ir: usize) -> Result<u64, String> {
    ir_of(counts, 0, ir)
}

/// Parses a callgrind output file's text. Fails on what it cannot read
/// (an undefined `(id)`, a `calls=` line without its cost line, an
/// `events:` line without `Ir`, a count that is not a number), naming
/// the line.
pub fn parse(text: &str) -> Result<Profile, String> {
    let mut p = Profile::default();
    let (mut objects, mut functions) = (Names::default(), Names::default());
    // Position columns per cost line, and the column of Ir among events.
    let (mut positions, mut ir) = (1usize, 0usize);
    let mut ob = String::from("???");
    let mut func = Func {
        object: ob.clone(),
        name: "???".into(),
    };
    let (mut cob, mut cfn): (Option<String>, Option<String>) = (None, None);
    // Set by a `calls=` line: the next line is that call's inclusive cost.
    let mut call: Option<Func> = None;
    let (mut totals, mut summary): (Option<u64>, Option<u64>) = (None, None);
    for (i, raw) in text.lines().enumerate() {
        let at = |e: String| format!("line {}: {e}", i + 1);
        let line = raw.trim_end();
        if let Some(callee) = call.take() {
            if !is_cost(line) {
                return Err(at(
                    "a `calls=` line must be followed by its cost line".into()
                ));
            }
            let n = ir_of(line, positions, ir).map_err(at)?;
            *p.calls.entry((func.clone(), callee)).or_default() += n;
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if is_cost(line) {
            let n = ir_of(line, positions, ir).map_err(at)?;
            *p.objects.entry(ob.clone()).or_default() += n;
            continue;
        }
        if let Some(v) = line.strip_prefix("positions:") {
            positions = v.split_whitespace().count().max(1);
        } else if let Some(v) = line.strip_prefix("events:") {
            ir = v
                .split_whitespace()
                .position(|e| e == "Ir")
                .ok_or_else(|| at(format!("the events ({}) have no Ir", v.trim())))?;
        } else if let Some(v) = line.strip_prefix("totals:") {
            let n = ir_total(v, ir).map_err(at)?;
            totals = Some(totals.unwrap_or(0) + n);
        } else if let Some(v) = line.strip_prefix("summary:") {
            let n = ir_total(v, ir).map_err(at)?;
            summary = Some(summary.unwrap_or(0) + n);
        } else if let Some((key, value)) = line.split_once('=') {
            match key {
                "ob" => {
                    ob = objects.resolve(value).map_err(at)?;
                    func.object = ob.clone();
                }
                "fn" => {
                    func = Func {
                        object: ob.clone(),
                        name: functions.resolve(value).map_err(at)?,
                    }
                }
                "cob" => cob = Some(objects.resolve(value).map_err(at)?),
                "cfn" => cfn = Some(functions.resolve(value).map_err(at)?),
                // A jump's target function: may define a compressed name.
                "jfn" => {
                    functions.resolve(value).map_err(at)?;
                }
                "calls" => {
                    call = Some(Func {
                        object: cob.take().unwrap_or_else(|| ob.clone()),
                        name: cfn.take().unwrap_or_else(|| func.name.clone()),
                    })
                }
                // Source files (fl, fi, fe, cfi, cfl, jfi), jumps (jump,
                // jcnd: the line after one is a position without costs)
                // and anything newer: not needed.
                _ => {}
            }
        }
        // Other header lines (version:, creator:, cmd:, desc:, part: ...).
    }
    if call.is_some() {
        return Err("the file ends after a `calls=` line, without its cost line".into());
    }
    p.total = totals.or(summary);
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small file as callgrind writes it: name compression for objects,
    /// functions and files, subposition compression (`+3`, `-2`, `*`), a
    /// call from the app into libc whose inclusive cost (600) is far
    /// larger than any self cost, a call into the app's own code, and
    /// jump lines (each followed by a position without costs; the second
    /// defines a function name with `jfn=`).
    const FILE: &str = "\
# callgrind format
version: 1
creator: callgrind-3.19.0
cmd:  ./app --batch 10
part: 1

positions: line
events: Ir
summary: 1194

ob=(1) /usr/lib/x86_64-linux-gnu/libc.so.6
fl=(1) ./malloc/malloc.c
fn=(1) malloc
3281 100
+3 5
-2 15
* 2

fn=(2) free
10 80

ob=(2) /work/target/release/app
fl=(2) src/main.rs
fn=(3) main
7 11
cob=(1)
cfi=(1)
cfn=(1)
calls=4 3281
+1 600
* 4
jump=3 +2
+1
jfn=(5) main.cold
jump=1 +9
-1
+2 20
cfn=(4) helper
calls=1 30
* 250
fn=(4)
30 250
fn=(5)
40 7

ob=(1)
fn=(2)
11 700
totals: 1194
";

    fn func(object: &str, name: &str) -> Func {
        Func {
            object: object.into(),
            name: name.into(),
        }
    }

    #[test]
    fn self_cost_per_object() {
        let p = parse(FILE).unwrap();
        let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
        let app = "/work/target/release/app";
        // libc: malloc 100 + 5 + 15 + 2, free 80 + 700.
        assert_eq!(p.objects[libc], 902);
        // app: main 11 + 4 + 20 (the lines after a jump have no cost),
        // helper 250, main.cold 7 (named by the jump's `jfn=`).
        assert_eq!(p.objects[app], 292);
        assert_eq!(p.objects.len(), 2);
        assert_eq!(p.total, Some(1194));
        assert_eq!(p.self_total(), 1194);
        p.check().unwrap();
        assert_eq!(
            p.calls[&(func(app, "main"), func(libc, "malloc"))],
            600,
            "the inclusive cost goes to the call"
        );
        assert_eq!(p.calls[&(func(app, "main"), func(app, "helper"))], 250);
        assert_eq!(p.calls.len(), 2);
    }

    /// Counting the line after `calls=` as self cost would give the app
    /// 292 + 600 + 250 and break the total, which [`Profile::check`]
    /// catches.
    #[test]
    fn the_inclusive_line_of_a_call_is_not_self_cost() {
        let p = parse(FILE).unwrap();
        assert_eq!(p.objects["/work/target/release/app"], 292);
        let mut wrong = p.clone();
        *wrong.objects.get_mut("/work/target/release/app").unwrap() += 600 + 250;
        assert!(wrong.check().is_err());
    }

    /// With two position columns (`--dump-instr=yes`) and Ir as the
    /// second event, the right columns are read.
    #[test]
    fn positions_and_event_columns() {
        let text = "positions: instr line\nevents: Bc Ir\nob=/bin/a\nfn=f\n\
                    0x10 3 7 40\n+4 * 1 2\n+2 -1 9\ntotals: 8 42\n";
        let p = parse(text).unwrap();
        assert_eq!(p.objects["/bin/a"], 42);
        p.check().unwrap();
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("ob=(3)\nfn=f\n1 1\n").unwrap_err();
        assert!(e.starts_with("line 1:") && e.contains("(3)"), "{e}");
        let e = parse("ob=a\nfn=f\ncalls=1 3\nfn=g\n").unwrap_err();
        assert!(e.starts_with("line 4:"), "{e}");
        assert!(parse("ob=a\nfn=f\ncalls=1 3\n").is_err());
        assert!(parse("events: Dr Dw\n").is_err());
        assert!(parse("ob=a\nfn=f\n3 x\n").is_err());
    }
}
