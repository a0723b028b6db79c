//! The per-family table (stdout), `report.md` and `report.json`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::api::coverage_list;
use crate::parent::{Class, Outcome, RunResult};
use crate::scenarios::FAMILIES;

/// Counts of one family.
#[derive(Debug, Clone, Default)]
pub struct Row {
    /// Scenarios (scenario × preset).
    pub scenarios: usize,
    /// Equal.
    pub equal: usize,
    /// Unexpected difference.
    pub differ: usize,
    /// Intended difference.
    pub intended: usize,
    /// Ours NOT_SUPPORTED / missing.
    pub unsupported: usize,
    /// Reference lacks the API.
    pub ref_lacks: usize,
    /// Robustness families: status differences only (not judged).
    pub robust: usize,
    /// Unexpected trace differences (API equal or intended).
    pub trace_differ: usize,
}

/// Rows per family, in family order, plus a total.
pub fn rows(r: &RunResult) -> Vec<(String, Row)> {
    let mut map: BTreeMap<usize, (String, Row)> = BTreeMap::new();
    for o in &r.outcomes {
        let pos = FAMILIES
            .iter()
            .position(|f| f.name == o.family)
            .unwrap_or(usize::MAX);
        let e = map
            .entry(pos)
            .or_insert_with(|| (o.family.clone(), Row::default()));
        add(&mut e.1, o);
    }
    let mut v: Vec<(String, Row)> = map.into_values().collect();
    let mut total = Row::default();
    for o in &r.outcomes {
        add(&mut total, o);
    }
    v.push(("TOTAL".into(), total));
    v
}

fn add(row: &mut Row, o: &Outcome) {
    row.scenarios += 1;
    match o.class {
        Class::Equal => row.equal += 1,
        Class::Differ => row.differ += 1,
        Class::Intended => row.intended += 1,
        Class::Unsupported => row.unsupported += 1,
        Class::RefLacksApi => row.ref_lacks += 1,
        Class::Robust => row.robust += 1,
    }
    if o.trace_diff.is_some() {
        row.trace_differ += 1;
    }
}

/// Scenario count per function of the generation's export list.
pub fn coverage(r: &RunResult) -> Vec<(&'static str, usize)> {
    coverage_list(r.abi)
        .into_iter()
        .map(|f| (f, r.outcomes.iter().filter(|o| o.calls.contains(f)).count()))
        .collect()
}

/// The table printed on stdout.
pub fn table(r: &RunResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<11} {:>9} {:>6} {:>6} {:>8} {:>11} {:>10} {:>6} {:>12}",
        "family",
        "scenarios",
        "equal",
        "differ",
        "intended",
        "unsupported",
        "ref-lacks",
        "robust",
        "trace-differ"
    );
    for (name, row) in rows(r) {
        let _ = writeln!(
            s,
            "{:<11} {:>9} {:>6} {:>6} {:>8} {:>11} {:>10} {:>6} {:>12}",
            name,
            row.scenarios,
            row.equal,
            row.differ,
            row.intended,
            row.unsupported,
            row.ref_lacks,
            row.robust,
            row.trace_differ
        );
    }
    if let Some(t) = r.fuzz_totals() {
        let _ = writeln!(s, "{}", t.line());
    }
    s
}

/// `report.md`.
pub fn markdown(r: &RunResult, title: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Conformance report\n\n{title}\n");
    let _ = writeln!(
        s,
        "Run on {} in {:.1} s. ABI generation: `{}`.\n",
        if r.sim {
            "the simulator (kfd-sim)"
        } else {
            "the real KFD"
        },
        r.elapsed.as_secs_f64(),
        r.abi.name()
    );
    let _ = writeln!(s, "## Per family\n");
    let _ = writeln!(s, "| family | scenarios | equal | differ | intended | unsupported | reference lacks API | robust | trace differ |");
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (name, row) in rows(r) {
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} |",
            row.scenarios,
            row.equal,
            row.differ,
            row.intended,
            row.unsupported,
            row.ref_lacks,
            row.robust,
            row.trace_differ
        );
    }
    if let Some(t) = r.fuzz_totals() {
        let _ = writeln!(s, "\n{}", t.line());
        let _ = writeln!(s, "\n| fuzz scenario | calls | ref crashes | ref hangs | ours crashes | ours hangs | ours panics | unexpected | status differ |");
        let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for o in &r.outcomes {
            if let Some(c) = &o.fuzz {
                let _ = writeln!(
                    s,
                    "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} |",
                    o.name,
                    c.calls,
                    c.ref_crashes,
                    c.ref_hangs,
                    c.ours_crashes,
                    c.ours_hangs,
                    c.ours_panics,
                    c.unexpected,
                    c.status_differ
                );
            }
        }
    }
    let section = |s: &mut String, title: &str, pick: &dyn Fn(&Outcome) -> bool| {
        let list: Vec<&Outcome> = r.outcomes.iter().filter(|o| pick(o)).collect();
        let _ = writeln!(s, "\n## {title} ({})\n", list.len());
        for o in list {
            let _ = writeln!(s, "- `{}`", o.name);
            for d in &o.details {
                let _ = writeln!(s, "  - {}", d.replace('|', "\\|"));
            }
            if let Some(t) = &o.trace_diff {
                let _ = writeln!(s, "  - trace: {t}");
            }
        }
    };
    section(&mut s, "Unexpected differences", &|o| {
        o.class == Class::Differ
    });
    section(&mut s, "Unexpected trace differences", &|o| {
        o.trace_diff.is_some()
    });
    section(&mut s, "Intended differences", &|o| {
        o.class == Class::Intended || o.trace_intended.is_some()
    });
    section(&mut s, "Reference lacks API", &|o| {
        o.class == Class::RefLacksApi
    });
    section(
        &mut s,
        "Robustness scenarios with status differences",
        &|o| o.class == Class::Robust,
    );
    let mut unsup: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for o in r.outcomes.iter().filter(|o| o.class == Class::Unsupported) {
        unsup
            .entry(o.unsupported_fn.clone().unwrap_or_default())
            .or_default()
            .push(&o.name);
    }
    let _ = writeln!(
        s,
        "\n## Unsupported by ours, per function ({} functions)\n",
        unsup.len()
    );
    for (f, list) in &unsup {
        let _ = writeln!(s, "- `{f}`: {} scenario(s), e.g. `{}`", list.len(), list[0]);
    }
    let crashes: Vec<&Outcome> = r
        .outcomes
        .iter()
        .filter(|o| o.ref_crash.is_some())
        .collect();
    let _ = writeln!(s, "\n## Reference crashes ({})\n", crashes.len());
    for o in crashes {
        let _ = writeln!(
            s,
            "- `{}`: {}",
            o.name,
            o.ref_crash.as_deref().unwrap_or("")
        );
    }
    let _ = writeln!(s, "\n## Coverage: scenarios per exported function\n");
    let _ = writeln!(s, "| function | scenarios |\n|---|---:|");
    for (f, n) in coverage(r) {
        let _ = writeln!(s, "| `{f}` | {n} |");
    }
    let _ = writeln!(s, "\n## Every scenario\n");
    let _ = writeln!(s, "| scenario | result | trace |\n|---|---|---|");
    for o in &r.outcomes {
        let t = if o.trace_diff.is_some() {
            "differs"
        } else if o.trace_intended.is_some() {
            "intended"
        } else {
            "-"
        };
        let _ = writeln!(s, "| `{}` | {} | {t} |", o.name, o.class.label());
    }
    s
}

/// `s` as a JSON string literal (quoted and escaped); kfd-bench's report
/// writes its strings with it too.
pub fn json_string(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn opt(s: &Option<String>) -> String {
    s.as_deref()
        .map(json_string)
        .unwrap_or_else(|| "null".into())
}

/// `report.json` (hand-written; one object).
pub fn json(r: &RunResult) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "{{\n  \"abi\": {},\n  \"simulator\": {},\n  \"elapsed_seconds\": {:.3},\n  \"families\": [\n",
        json_string(r.abi.name()),
        r.sim,
        r.elapsed.as_secs_f64()
    );
    let rows = rows(r);
    for (i, (name, row)) in rows.iter().enumerate() {
        let _ = write!(
            s,
            "    {{\"family\": {}, \"scenarios\": {}, \"equal\": {}, \"differ\": {}, \"intended\": {}, \"unsupported\": {}, \"reference_lacks_api\": {}, \"robust\": {}, \"trace_differ\": {}}}{}",
            json_string(name), row.scenarios, row.equal, row.differ, row.intended, row.unsupported, row.ref_lacks, row.robust, row.trace_differ,
            if i + 1 < rows.len() { "," } else { "" }
        );
        s.push('\n');
    }
    s.push_str("  ],\n  \"fuzz\": ");
    match r.fuzz_totals() {
        Some(t) => {
            let _ = write!(
                s,
                "{{\"calls\": {}, \"reference_crashes\": {}, \"reference_hangs\": {}, \"ours_crashes\": {}, \"ours_hangs\": {}, \"ours_panics\": {}, \"unexpected\": {}, \"intended\": {}, \"status_differences\": {}}}",
                t.calls, t.ref_crashes, t.ref_hangs, t.ours_crashes, t.ours_hangs, t.ours_panics, t.unexpected, t.intended, t.status_differ
            );
        }
        None => s.push_str("null"),
    }
    s.push_str(",\n  \"coverage\": {");
    let cov = coverage(r);
    for (i, (f, n)) in cov.iter().enumerate() {
        let _ = write!(
            s,
            "{}{}: {}",
            if i == 0 { "" } else { ", " },
            json_string(f),
            n
        );
    }
    s.push_str("},\n  \"scenarios\": [\n");
    for (i, o) in r.outcomes.iter().enumerate() {
        let details: Vec<String> = o.details.iter().map(|d| json_string(d)).collect();
        let _ = write!(
            s,
            "    {{\"name\": {}, \"family\": {}, \"result\": {}, \"unsupported_function\": {}, \"reference_crash\": {}, \"ours_crash\": {}, \"trace_difference\": {}, \"trace_intended\": {}, \"details\": [{}]}}{}",
            json_string(&o.name),
            json_string(&o.family),
            json_string(o.class.label()),
            opt(&o.unsupported_fn),
            opt(&o.ref_crash),
            opt(&o.ours_crash),
            opt(&o.trace_diff),
            opt(&o.trace_intended),
            details.join(", "),
            if i + 1 < r.outcomes.len() { "," } else { "" }
        );
        s.push('\n');
    }
    s.push_str("  ]\n}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::json_string as js;

    #[test]
    fn json_escapes() {
        assert_eq!(js("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
    }
}
