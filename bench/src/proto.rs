//! The text protocol a benchmark child writes on stdout, one record per
//! line, tab separated, and its parser.
//!
//! | line | meaning |
//! |---|---|
//! | `S op param value` | one sample (ns per operation, or the op's unit) |
//! | `U op param detail` | the library does not support the operation |
//! | `X op param detail` | the operation failed; not timed |
//! | `N op param text` | a note (e.g. how far a live set could grow) |
//! | `I op param count` | ioctls per operation (the counting pass) |

use std::io::Write;

/// One parsed record.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// A sample.
    Sample {
        /// Operation id (see [`crate::ops::OPS`]).
        op: String,
        /// Parameter (preset, live-allocation count, ...).
        param: String,
        /// The value.
        value: f64,
    },
    /// Unsupported: the library answered NOT_SUPPORTED or lacks a symbol.
    Unsupported {
        /// Operation id.
        op: String,
        /// Parameter.
        param: String,
        /// Which function, with which status.
        detail: String,
    },
    /// The operation failed with another status.
    Error {
        /// Operation id.
        op: String,
        /// Parameter.
        param: String,
        /// What failed.
        detail: String,
    },
    /// Ioctls per operation, from the simulator's trace.
    Ioctls {
        /// Operation id.
        op: String,
        /// Parameter.
        param: String,
        /// Ioctls per call.
        per_call: f64,
    },
    /// A free-form note.
    Note {
        /// Operation id.
        op: String,
        /// Parameter.
        param: String,
        /// The text.
        text: String,
    },
}

fn clean(s: &str) -> String {
    s.replace(['\t', '\n'], " ")
}

/// Writes records, one flushed line each (a crash loses nothing written).
#[derive(Debug)]
pub struct Writer<W: Write> {
    w: W,
}

impl<W: Write> Writer<W> {
    /// A writer over `w`.
    pub fn new(w: W) -> Self {
        Writer { w }
    }

    fn line(&mut self, tag: char, op: &str, param: &str, rest: &str) {
        let _ = writeln!(
            self.w,
            "{tag}\t{}\t{}\t{}",
            clean(op),
            clean(param),
            clean(rest)
        );
        let _ = self.w.flush();
    }

    /// `S` line.
    pub fn sample(&mut self, op: &str, param: &str, value: f64) {
        self.line('S', op, param, &format!("{value:.3}"));
    }

    /// `U` line.
    pub fn unsupported(&mut self, op: &str, param: &str, detail: &str) {
        self.line('U', op, param, detail);
    }

    /// `X` line.
    pub fn error(&mut self, op: &str, param: &str, detail: &str) {
        self.line('X', op, param, detail);
    }

    /// `I` line.
    pub fn ioctls(&mut self, op: &str, param: &str, per_call: f64) {
        self.line('I', op, param, &format!("{per_call:.2}"));
    }

    /// `N` line.
    pub fn note(&mut self, op: &str, param: &str, text: &str) {
        self.line('N', op, param, text);
    }
}

/// Parses a child's output; lines that are not records are ignored.
pub fn parse(text: &str) -> Vec<Record> {
    let mut v = Vec::new();
    for l in text.lines() {
        let mut it = l.splitn(4, '\t');
        let (Some(tag), Some(op), Some(param), Some(rest)) =
            (it.next(), it.next(), it.next(), it.next())
        else {
            continue;
        };
        let (op, param) = (op.to_string(), param.to_string());
        let rec = match tag {
            "S" => match rest.trim().parse::<f64>() {
                Ok(value) => Record::Sample { op, param, value },
                Err(_) => continue,
            },
            "I" => match rest.trim().parse::<f64>() {
                Ok(per_call) => Record::Ioctls {
                    op,
                    param,
                    per_call,
                },
                Err(_) => continue,
            },
            "U" => Record::Unsupported {
                op,
                param,
                detail: rest.to_string(),
            },
            "X" => Record::Error {
                op,
                param,
                detail: rest.to_string(),
            },
            "N" => Record::Note {
                op,
                param,
                text: rest.to_string(),
            },
            _ => continue,
        };
        v.push(rec);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut buf = Vec::new();
        {
            let mut w = Writer::new(&mut buf);
            w.sample("topology", "mi210", 1234.5);
            w.unsupported("queue", "", "hsaKmtCreateQueue: NOT_SUPPORTED(11)");
            w.error("ptr\tinfo", "live=10", "status 3");
            w.note("fill", "live=100000", "stopped at 65000");
            w.ioctls("queue", "", 2.0);
        }
        let text = String::from_utf8(buf).unwrap();
        let r = parse(&format!("garbage\n{text}"));
        assert_eq!(r.len(), 5);
        assert!(matches!(&r[4], Record::Ioctls { per_call, .. } if *per_call == 2.0));
        assert_eq!(
            r[0],
            Record::Sample {
                op: "topology".into(),
                param: "mi210".into(),
                value: 1234.5
            }
        );
        assert!(matches!(&r[1], Record::Unsupported { detail, .. } if detail.contains("11")));
        assert!(matches!(&r[2], Record::Error { op, .. } if op == "ptr info"));
        assert!(matches!(&r[3], Record::Note { text, .. } if text == "stopped at 65000"));
    }
}
