//! The results: one line per case on the terminal, and
//! `target/clients/report.md` with the table, the timings and a unified
//! diff excerpt for every case that differs.

use std::fmt::Write as _;
use std::path::Path;

use super::{Client, Suite};

/// The result of one (suite, preset, client).
#[derive(Debug)]
pub(super) struct Row {
    pub(super) suite: &'static str,
    pub(super) preset: String,
    pub(super) client: Client,
    pub(super) reference: String,
    pub(super) ours: String,
    pub(super) failure: Option<String>,
    pub(super) diff: Option<String>,
    /// Client runs made for this row (1 when ours is not available).
    pub(super) runs: usize,
}

/// The first lines of `diff -u reference other`.
pub(super) fn diff_excerpt(a: &Path, b: &Path) -> String {
    const LINES: usize = 40;
    match std::process::Command::new("diff")
        .arg("-u")
        .arg(a)
        .arg(b)
        .output()
    {
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stdout);
            let mut lines: Vec<&str> = text.lines().take(LINES + 1).collect();
            if lines.len() > LINES {
                lines.truncate(LINES);
                lines.push("[...]");
            }
            lines.join("\n")
        }
        Err(e) => format!("(diff: {e})"),
    }
}

fn verdict(r: &Row) -> String {
    match &r.failure {
        None => "PASS".into(),
        Some(f) => format!("FAIL: {f}"),
    }
}

pub(super) fn print_row(r: &Row) {
    println!(
        "{:<9} {:<8} {:<12} ref {:<10} ours {:<10} {}",
        r.suite,
        r.preset,
        r.client.name(),
        r.reference,
        r.ours,
        verdict(r)
    );
}

pub(super) fn report_md(
    suites: &[&Suite],
    rows: &[Row],
    notes: &[String],
    reference_only: bool,
) -> String {
    let mut s = String::from("# Real clients on kfd-sim\n\n");
    if reference_only {
        s.push_str(
            "`--reference-only`: the \"ours\" column is a second run of the \
             suite's C library.\n\n",
        );
    }
    for suite in suites {
        let _ = writeln!(
            s,
            "- `{}`: {} vs ours `{}`",
            suite.name, suite.about, suite.generation
        );
    }
    s.push_str(
        "\n| suite | preset | client | reference | ours | result |\n|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            r.suite,
            r.preset,
            r.client.name(),
            r.reference,
            r.ours,
            verdict(r).replace('|', "\\|")
        );
    }
    s.push('\n');
    for n in notes {
        let _ = writeln!(s, "- {n}");
    }
    for r in rows.iter().filter(|r| r.diff.is_some()) {
        let _ = write!(
            s,
            "\n## {} {} {}\n\n```diff\n{}\n```\n",
            r.suite,
            r.preset,
            r.client.name(),
            r.diff.as_deref().unwrap_or("")
        );
    }
    s
}
