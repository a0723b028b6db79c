//! The table on stdout, `report.json`, and what both are built from.

use std::fmt::Write as _;

use crate::machine::Machine;
use crate::ops::{info, Unit, OPS};
use crate::parent::{Cell, Results, Side};
use crate::stats::{summarize, Summary};
use conformance::report::json_string;

/// A library's value for one row.
#[derive(Debug, Clone)]
pub enum Value {
    /// Measured.
    Measured(Summary),
    /// NOT_SUPPORTED or missing symbol.
    Unsupported(String),
    /// Failed.
    Error(String),
    /// Not applicable (e.g. the C 5.2.3 has no context API).
    NotApplicable,
    /// Nothing recorded (e.g. the child crashed before).
    Missing,
}

/// One table row.
#[derive(Debug, Clone)]
pub struct Row {
    /// Operation id.
    pub op: &'static str,
    /// Title.
    pub title: &'static str,
    /// Unit.
    pub unit: Unit,
    /// Parameter.
    pub param: String,
    /// Node count (topology rows).
    pub nodes: Option<u32>,
    /// C library.
    pub c: Value,
    /// Ours.
    pub ours: Value,
    /// Notes of both sides.
    pub notes: Vec<String>,
    /// Ioctls per operation `(C, ours)`, from the counting pass.
    pub ioctls: (Option<f64>, Option<f64>),
    /// The median over repetitions of `C/ours` within a repetition (see
    /// [`paired_ratio`]), where both sides have repetitions.
    pub paired: Option<f64>,
}

/// The median over repetitions of the ratio of the two libraries'
/// medians in that repetition: the two children of a repetition run back
/// to back, so a slow phase of the machine (seconds long on a shared VM)
/// slows both, where pooled samples would put it on one side more than
/// the other. Pairs repetition `i` of each side (as many as both have).
pub fn paired_ratio(c: &[f64], ours: &[f64]) -> Option<f64> {
    let ratios: Vec<f64> = c
        .iter()
        .zip(ours)
        .filter(|(_, &o)| o > 0.0)
        .map(|(c, o)| c / o)
        .collect();
    summarize(&ratios).map(|s| s.median)
}

impl Row {
    /// C/ours for time rows where both were measured: the paired ratio
    /// ([`paired_ratio`]), or `median(C) / median(ours)` of the pooled
    /// samples when there are no repetitions to pair.
    pub fn ratio(&self) -> Option<f64> {
        match (&self.c, &self.ours, self.unit) {
            (Value::Measured(c), Value::Measured(o), Unit::Ns) if o.median > 0.0 => {
                Some(self.paired.unwrap_or(c.median / o.median))
            }
            _ => None,
        }
    }

    /// Whether ours is measurably slower: ratio below 0.95 and the
    /// p10..p90 ranges do not overlap.
    pub fn ours_slower(&self) -> bool {
        match (&self.c, &self.ours, self.ratio()) {
            (Value::Measured(c), Value::Measured(o), Some(r)) => r < 0.95 && o.p10 > c.p90,
            _ => false,
        }
    }
}

fn value(cell: Option<&Cell>, na: bool) -> Value {
    if na {
        return Value::NotApplicable;
    }
    let Some(c) = cell else {
        return Value::Missing;
    };
    if let Some(u) = &c.unsupported {
        return Value::Unsupported(u.clone());
    }
    match (summarize(&c.samples), &c.error) {
        (_, Some(e)) => Value::Error(e.clone()),
        (Some(s), None) => Value::Measured(s),
        (None, None) => Value::Missing,
    }
}

/// The rows of a run, in table order.
pub fn rows(r: &Results) -> Vec<Row> {
    let mut out = Vec::new();
    for o in OPS {
        let Some(params) = r.params.get(o.id) else {
            continue;
        };
        for p in params {
            let c = r.cell(o.id, p, Side::C);
            let ours = r.cell(o.id, p, Side::Ours);
            let mut notes: Vec<String> = Vec::new();
            let mut nodes = None;
            let of = |c: Option<&Cell>| c.map(|c| c.notes.clone()).unwrap_or_default();
            let (cn, on) = (of(c), of(ours));
            for (side, list, other) in [("C", &cn, &on), ("ours", &on, &cn)] {
                for n in list {
                    if let Some(v) = n.strip_prefix("nodes=") {
                        nodes = v.parse().ok();
                    } else if !other.contains(n) {
                        notes.push(format!("{side}: {n}"));
                    } else if side == "C" {
                        notes.push(format!("both: {n}"));
                    }
                }
            }
            out.push(Row {
                op: o.id,
                title: o.title,
                unit: o.unit,
                param: p.clone(),
                nodes,
                c: value(c, o.ours_only),
                ours: value(ours, false),
                notes,
                ioctls: (c.and_then(|c| c.ioctls), ours.and_then(|c| c.ioctls)),
                paired: match (c, ours) {
                    (Some(c), Some(o)) => paired_ratio(&c.rep_medians, &o.rep_medians),
                    _ => None,
                },
            });
        }
    }
    out
}

/// The divisor and suffix that print `v` (the median) in its unit.
fn scale(unit: Unit, v: f64) -> (f64, &'static str) {
    let v = v.abs();
    match unit {
        Unit::Ns if v >= 1e9 => (1e9, " s"),
        Unit::Ns if v >= 1e6 => (1e6, " ms"),
        Unit::Ns if v >= 1e3 => (1e3, " µs"),
        Unit::Ns => (1.0, " ns"),
        Unit::Bytes if v >= 1024.0 * 1024.0 => (1024.0 * 1024.0, " MiB"),
        Unit::Bytes => (1024.0, " KiB"),
        Unit::Count => (1.0, ""),
    }
}

/// Three significant digits.
fn num(x: f64) -> String {
    let a = x.abs();
    if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// `v` in `unit`, e.g. `1.23 µs`.
pub fn fmt_unit(unit: Unit, v: f64) -> String {
    let (d, suffix) = scale(unit, v);
    format!("{}{suffix}", num(v / d))
}

/// `1.23 µs [1.20-1.31]`: the median, then p10-p90 in the median's unit.
fn fmt_value(unit: Unit, v: &Value) -> String {
    match v {
        Value::Measured(s) if s.n > 1 => {
            let (d, suffix) = scale(unit, s.median);
            format!(
                "{}{suffix} [{}-{}]",
                num(s.median / d),
                num(s.p10 / d),
                num(s.p90 / d)
            )
        }
        Value::Measured(s) => fmt_unit(unit, s.median),
        Value::Unsupported(_) => "unsupported".into(),
        Value::Error(_) => "error".into(),
        Value::NotApplicable => "n/a".into(),
        Value::Missing => "-".into(),
    }
}

fn count(x: Option<f64>) -> String {
    match x {
        Some(v) if (v - v.round()).abs() < 0.05 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
        None => "-".into(),
    }
}

/// `C/ours` ioctls per operation, empty when neither was counted.
fn fmt_ioctls(row: &Row) -> String {
    match row.ioctls {
        (None, None) => String::new(),
        (c, o) => format!("{}/{}", count(c), count(o)),
    }
}

fn param_label(row: &Row) -> String {
    match row.nodes {
        Some(n) => format!("{} ({n} nodes)", row.param),
        None => row.param.clone(),
    }
}

/// The table printed on stdout (`report.txt`).
pub fn table(r: &Results) -> String {
    let rows = rows(r);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<32} {:<19} {:<27} {:<27} {:>7} {:>7}",
        "operation",
        "param",
        "C 5.2.3 median [p10-p90]",
        "ours median [p10-p90]",
        "ioctls",
        "C/ours"
    );
    let _ = writeln!(s, "{}", "-".repeat(32 + 19 + 27 + 27 + 7 + 7 + 5));
    let mut last = "";
    for row in &rows {
        let title = if row.op == last { "" } else { row.title };
        last = row.op;
        let ratio = match row.ratio() {
            Some(x) => format!("{x:.2}{}", if row.ours_slower() { " !" } else { "" }),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "{:<32} {:<19} {:<27} {:<27} {:>7} {:>7}",
            title,
            param_label(row),
            fmt_value(row.unit, &row.c),
            fmt_value(row.unit, &row.ours),
            fmt_ioctls(row),
            ratio
        );
    }
    let notes = notes(r, &rows);
    if !notes.is_empty() {
        let _ = writeln!(s, "\nnotes:");
        for n in &notes {
            let _ = writeln!(s, "  {n}");
        }
    }
    s
}

/// The notes under a table: unsupported and failed cells, the rows'
/// notes, then the children that failed.
fn notes(r: &Results, rows: &[Row]) -> Vec<String> {
    let mut notes = Vec::new();
    for row in rows {
        for (side, v) in [("C", &row.c), ("ours", &row.ours)] {
            match v {
                Value::Unsupported(d) => {
                    notes.push(format!("{} {}: {side} unsupported: {d}", row.op, row.param))
                }
                // The live-set note already says why a level is missing.
                Value::Error(d) if !d.starts_with("the live set") => {
                    notes.push(format!("{} {}: {side} error: {d}", row.op, row.param))
                }
                _ => {}
            }
        }
        for n in &row.notes {
            let at = if row.param.is_empty() {
                row.op.to_string()
            } else {
                format!("{} {}", row.op, row.param)
            };
            notes.push(format!("{at}: {n}"));
        }
    }
    notes.dedup();
    notes.extend(r.failures.iter().cloned());
    notes
}

/// Where and when a run measured, for [`markdown`].
#[derive(Debug, Clone)]
pub struct RunInfo {
    /// The command that ran, e.g. `cargo xtask bench --markdown`.
    pub command: String,
    /// The commit measured (and whether the tree had other changes).
    pub commit: String,
    /// The Rust toolchain that built both our library and the runner.
    pub toolchain: String,
    /// When the run ended, [`crate::machine::now_utc`].
    pub date: String,
    /// The machine.
    pub machine: Machine,
    /// Seconds from the start of `cargo xtask bench` (with the builds).
    pub wall_seconds: Option<f64>,
}

/// `docs/benchmarks.md`: the method, where and when the run measured, and
/// its table. Generated whole; nothing in it is edited by hand.
pub fn markdown(r: &Results, run: &RunInfo) -> String {
    let cfg = &r.config;
    let m = &run.machine;
    let mut s = String::from("# Benchmarks\n\n");
    s.push_str(
        "<!-- Generated by `cargo xtask bench --markdown` (kfd-bench's report.rs); \
         rerun it instead of editing. -->\n\n",
    );
    s.push_str(METHOD);
    let _ = writeln!(s, "\n## The latest run\n");
    let _ = writeln!(s, "| | |\n|---|---|");
    let _ = writeln!(s, "| command | `{}` |", run.command);
    let _ = writeln!(s, "| commit | {} |", run.commit);
    let _ = writeln!(s, "| date | {} |", run.date);
    let _ = writeln!(s, "| machine | {}, {} CPUs, {} |", m.cpu, m.cpus, m.os);
    let _ = writeln!(
        s,
        "| kernel | {}, `vm.max_map_count` {} |",
        m.kernel, m.max_map_count
    );
    let _ = writeln!(s, "| toolchain | {} (release builds) |", run.toolchain);
    let _ = writeln!(
        s,
        "| settings | {}, {} repetitions, live levels {}, presets {}, {} ms per operation and child |",
        if cfg.groups.is_empty() {
            "every group".to_string()
        } else {
            format!("groups {}", cfg.groups.join(", "))
        },
        cfg.reps,
        cfg.levels
            .iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        cfg.presets.join(", "),
        cfg.budget.per_op.as_millis()
    );
    let _ = writeln!(
        s,
        "| time | {:.0} s of measuring{} |",
        r.elapsed.as_secs_f64(),
        run.wall_seconds
            .map(|w| format!(", {w:.0} s with the builds"))
            .unwrap_or_default()
    );
    let _ = writeln!(s, "| load average at the end | {} (1, 5, 15 min) |", m.load);
    let busy = m
        .load
        .split_whitespace()
        .next()
        .and_then(|l| l.parse::<f64>().ok())
        .is_some_and(|l| l > m.cpus as f64);
    if busy {
        s.push_str(
            "\nThe load average was above the CPU count: other work shared the machine \
             during the run, which widens the spreads and moves single medians; compare \
             p10 values, or rerun on an idle machine before calling a row a regression.\n",
        );
    }
    let _ = writeln!(
        s,
        "\n| operation | param | C 5.2.3 median [p10-p90] | ours median [p10-p90] | ioctls | C/ours |"
    );
    let _ = writeln!(s, "|---|---|--:|--:|--:|--:|");
    let rows = rows(r);
    let mut last = "";
    for row in &rows {
        let title = if row.op == last { "" } else { row.title.trim() };
        last = row.op;
        let ratio = match row.ratio() {
            Some(x) if row.ours_slower() => format!("**{x:.2} !**"),
            Some(x) => format!("{x:.2}"),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "| {title} | {} | {} | {} | {} | {ratio} |",
            param_label(row),
            fmt_value(row.unit, &row.c),
            fmt_value(row.unit, &row.ours),
            fmt_ioctls(row)
        );
    }
    let notes = notes(r, &rows);
    if !notes.is_empty() {
        s.push_str("\nNotes:\n\n");
        for n in &notes {
            let _ = writeln!(s, "- {n}");
        }
    }
    s
}

/// The method part of [`markdown`]'s page.
const METHOD: &str = include_str!("method.md");

fn json_num(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3}")
    } else {
        "null".into()
    }
}

fn json_value(v: &Value) -> String {
    match v {
        Value::Measured(s) => format!(
            "{{\"status\": \"ok\", \"n\": {}, \"median\": {}, \"p10\": {}, \"p90\": {}, \"mad\": {}}}",
            s.n,
            json_num(s.median),
            json_num(s.p10),
            json_num(s.p90),
            json_num(s.mad)
        ),
        Value::Unsupported(d) => {
            format!("{{\"status\": \"unsupported\", \"detail\": {}}}", json_string(d))
        }
        Value::Error(d) => format!("{{\"status\": \"error\", \"detail\": {}}}", json_string(d)),
        Value::NotApplicable => "{\"status\": \"n/a\"}".into(),
        Value::Missing => "{\"status\": \"missing\"}".into(),
    }
}

/// `report.json`.
pub fn json(r: &Results, wall_seconds: Option<f64>) -> String {
    let cfg = &r.config;
    let mut s = String::from("{\n");
    let _ = writeln!(s, "  \"tool\": \"kfd-bench\",");
    let _ = writeln!(
        s,
        "  \"libraries\": {{\"c\": {}, \"ours\": {}, \"ours_newest\": {}}},",
        json_string(&cfg.reference.display().to_string()),
        json_string(&cfg.ours.display().to_string()),
        cfg.ours_newest
            .as_ref()
            .map(|p| json_string(&p.display().to_string()))
            .unwrap_or_else(|| "null".into())
    );
    let _ = writeln!(
        s,
        "  \"simulator\": {},",
        json_string(&cfg.sim.display().to_string())
    );
    let levels: Vec<String> = cfg.levels.iter().map(|l| l.to_string()).collect();
    let presets: Vec<String> = cfg.presets.iter().map(|p| json_string(p)).collect();
    let _ = writeln!(
        s,
        "  \"config\": {{\"reps\": {}, \"levels\": [{}], \"presets\": [{}], \"per_op_ms\": {}, \"max_samples\": {}, \"cpus\": {}}},",
        cfg.reps,
        levels.join(", "),
        presets.join(", "),
        cfg.budget.per_op.as_millis(),
        cfg.budget.max_samples,
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)
    );
    let _ = writeln!(
        s,
        "  \"measure_seconds\": {},",
        json_num(r.elapsed.as_secs_f64())
    );
    if let Some(w) = wall_seconds {
        let _ = writeln!(s, "  \"wall_seconds\": {},", json_num(w));
    }
    let _ = writeln!(s, "  \"units\": \"ns per operation unless unit says otherwise; spread is p10..p90 of pooled samples (each sample is the mean of a batch)\",");
    s.push_str("  \"results\": [\n");
    let rows = rows(r);
    for (i, row) in rows.iter().enumerate() {
        let unit = match row.unit {
            Unit::Ns => "ns",
            Unit::Bytes => "bytes",
            Unit::Count => "count",
        };
        let notes: Vec<String> = row.notes.iter().map(|n| json_string(n)).collect();
        let _ = write!(
            s,
            "    {{\"op\": {}, \"title\": {}, \"unit\": \"{unit}\", \"param\": {}, \"nodes\": {}, \"c\": {}, \"ours\": {}, \"ioctls\": {{\"c\": {}, \"ours\": {}}}, \"ratio_c_over_ours\": {}, \"ours_slower\": {}, \"notes\": [{}]}}",
            json_string(row.op),
            json_string(info(row.op).map(|o| o.title).unwrap_or(row.title).trim()),
            json_string(&row.param),
            row.nodes.map(|n| n.to_string()).unwrap_or_else(|| "null".into()),
            json_value(&row.c),
            json_value(&row.ours),
            row.ioctls.0.map(json_num).unwrap_or_else(|| "null".into()),
            row.ioctls.1.map(json_num).unwrap_or_else(|| "null".into()),
            row.ratio().map(json_num).unwrap_or_else(|| "null".into()),
            row.ours_slower(),
            notes.join(", ")
        );
        s.push_str(if i + 1 < rows.len() { ",\n" } else { "\n" });
    }
    s.push_str("  ],\n");
    let fails: Vec<String> = r.failures.iter().map(|f| json_string(f)).collect();
    let _ = writeln!(s, "  \"child_failures\": [{}]", fails.join(", "));
    s.push_str("}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::Record;

    fn results() -> Results {
        let cfg = crate::parent::Config {
            reference: "/c.so".into(),
            ours: "/ours.so".into(),
            ours_newest: None,
            sim: "/sim.so".into(),
            presets: vec!["mi210".into()],
            default_preset: "mi210".into(),
            scaling_preset: "mi210".into(),
            levels: vec![0],
            live: crate::child::Live::Vram,
            reps: 1,
            budget: crate::child::Budget {
                per_op: std::time::Duration::from_millis(1),
                max_samples: 1,
                min_samples: 1,
                count_ioctls: false,
                fixed_batch: None,
            },
            groups: vec![],
            out_dir: "/tmp".into(),
            runner: "/bin/true".into(),
            child_timeout: std::time::Duration::from_secs(1),
        };
        let mut r = Results {
            config: cfg,
            cells: Default::default(),
            params: Default::default(),
            failures: vec![],
            elapsed: Default::default(),
        };
        let s = |op: &str, param: &str, value: f64| Record::Sample {
            op: op.into(),
            param: param.into(),
            value,
        };
        r.add(
            Side::C,
            vec![
                s("topology", "mi210", 100.0),
                s("topology", "mi210", 110.0),
                Record::Note {
                    op: "topology".into(),
                    param: "mi210".into(),
                    text: "nodes=2".into(),
                },
                s("queue", "", 50.0),
                Record::Ioctls {
                    op: "topology".into(),
                    param: "mi210".into(),
                    per_call: 3.0,
                },
            ],
        );
        r.add(
            Side::Ours,
            vec![
                s("topology", "mi210", 50.0),
                s("topology", "mi210", 55.0),
                Record::Unsupported {
                    op: "queue".into(),
                    param: "".into(),
                    detail: "hsaKmtCreateQueue: NOT_SUPPORTED(11)".into(),
                },
                s("ctx-open-close", "", 10.0),
            ],
        );
        r
    }

    /// A slow phase that hits one repetition of both sides moves the
    /// paired ratio less than the ratio of pooled medians.
    #[test]
    fn paired_ratio_pairs_repetitions() {
        // Repetition 1 fast (C 10, ours 8), repetition 2 slow for both
        // (C 20, ours 16): ours is 1.25x faster in each.
        assert_eq!(
            paired_ratio(&[10.0, 20.0, 10.0], &[8.0, 16.0, 8.0]),
            Some(1.25)
        );
        assert_eq!(paired_ratio(&[10.0], &[]), None);
        assert_eq!(paired_ratio(&[10.0, 30.0], &[0.0, 10.0]), Some(3.0));
    }

    #[test]
    fn rows_ratios_and_unsupported() {
        let r = results();
        let rows = rows(&r);
        let topo = rows.iter().find(|x| x.op == "topology").unwrap();
        assert_eq!(topo.nodes, Some(2));
        assert!((topo.ratio().unwrap() - 2.0).abs() < 1e-9);
        assert!(!topo.ours_slower());
        let q = rows.iter().find(|x| x.op == "queue").unwrap();
        assert!(matches!(q.ours, Value::Unsupported(_)));
        assert!(q.ratio().is_none());
        let ctx = rows.iter().find(|x| x.op == "ctx-open-close").unwrap();
        assert!(matches!(ctx.c, Value::NotApplicable));
        let t = table(&r);
        assert!(t.contains("unsupported"));
        assert!(t.contains("n/a"));
        assert!(t.contains("2.00"));
        assert!(t.contains("105 ns [101-109]"), "{t}");
        assert!(t.contains("3/-"), "{t}");
        assert_eq!(fmt_unit(Unit::Ns, 1234.5), "1.23 µs");
        assert_eq!(fmt_unit(Unit::Ns, 45_600.0), "45.6 µs");
        assert_eq!(fmt_unit(Unit::Bytes, 3.0 * 1024.0 * 1024.0), "3.00 MiB");
    }

    #[test]
    fn markdown_page_has_method_run_and_table() {
        let run = RunInfo {
            command: "cargo xtask bench --markdown".into(),
            commit: "`0123abcd`".into(),
            toolchain: "rustc 1.95.0".into(),
            date: "2026-12-01 13:30 UTC".into(),
            machine: Machine {
                cpu: "Test CPU".into(),
                cpus: 2,
                os: "Debian GNU/Linux 12 (bookworm)".into(),
                kernel: "6.1.0".into(),
                max_map_count: "65530".into(),
                load: "0.10 0.20 0.30".into(),
            },
            wall_seconds: Some(170.0),
        };
        let md = markdown(&results(), &run);
        assert!(md.starts_with("# Benchmarks\n"));
        assert!(!md.contains("load average was above"), "an idle machine");
        let mut busy = run.clone();
        busy.machine.load = "4.61 3.72 2.54".into();
        assert!(markdown(&results(), &busy).contains("load average was above the CPU count"));
        assert!(md.contains("## How it measures"), "the method is included");
        assert!(md.contains("| commit | `0123abcd` |"));
        assert!(md.contains("| machine | Test CPU, 2 CPUs, Debian GNU/Linux 12 (bookworm) |"));
        assert!(md.contains(", 170 s with the builds |"));
        let topo = md
            .lines()
            .find(|l| l.starts_with("| open+topology"))
            .expect("topology row");
        assert_eq!(
            topo,
            "| open+topology read+close | mi210 (2 nodes) | 105 ns [101-109] | 52.5 ns [50.5-54.5] | 3/- | 2.00 |"
        );
        assert!(md.contains("- queue : ours unsupported: hsaKmtCreateQueue: NOT_SUPPORTED(11)"));
    }

    #[test]
    fn json_is_well_formed_enough() {
        let j = json(&results(), Some(1.5));
        assert!(j.starts_with("{\n") && j.ends_with("}\n"));
        assert!(j.contains("\"status\": \"unsupported\""));
        assert!(j.contains("\"ratio_c_over_ours\": 2.000"));
        assert_eq!(j.matches('{').count(), j.matches('}').count());
        assert_eq!(j.matches('[').count(), j.matches(']').count());
        assert!(j.contains("\"wall_seconds\": 1.500"));
    }
}
