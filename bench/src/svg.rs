//! `scaling.svg`: cost against live allocations, and open+topology read
//! against node count, for both libraries (C dashed, ours solid), drawn by
//! hand.

use std::fmt::Write as _;

use crate::ops::{info, SCALING_OPS};
use crate::report::{fmt_unit, Row, Value};

const W: f64 = 1000.0;
const PANEL_H: f64 = 400.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 300.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;
const COLORS: &[&str] = &["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"];

/// A log10 axis over `[lo, hi]` mapped to `[a, b]` pixels.
struct LogAxis {
    lo: f64,
    hi: f64,
    a: f64,
    b: f64,
}

impl LogAxis {
    fn new(values: &[f64], a: f64, b: f64) -> LogAxis {
        let pos: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
        let mn = pos.iter().copied().fold(f64::INFINITY, f64::min);
        let mx = pos.iter().copied().fold(0.0, f64::max);
        let (lo, hi) = if pos.is_empty() {
            (1.0, 10.0)
        } else {
            (
                10f64.powf(mn.log10().floor()),
                10f64.powf(mx.log10().ceil().max(mn.log10().floor() + 1.0)),
            )
        };
        LogAxis { lo, hi, a, b }
    }
    fn px(&self, v: f64) -> f64 {
        let t = (v.max(self.lo).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10());
        self.a + (self.b - self.a) * t
    }
    /// Decade ticks.
    fn ticks(&self) -> Vec<f64> {
        let mut v = Vec::new();
        let mut x = self.lo;
        while x <= self.hi * 1.0001 {
            v.push(x);
            x *= 10.0;
        }
        v
    }
}

fn median(v: &Value) -> Option<f64> {
    match v {
        Value::Measured(s) => Some(s.median),
        _ => None,
    }
}

fn level_label(p: &str) -> String {
    let n: usize = p.trim_start_matches("live=").parse().unwrap_or(0);
    if n >= 1000 && n % 1000 == 0 {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

fn polyline(s: &mut String, pts: &[(f64, f64)], color: &str, dashed: bool) {
    if pts.len() > 1 {
        let p: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{color}" stroke-width="2" {}points="{}"/>"#,
            if dashed {
                r#"stroke-dasharray="6,4" "#
            } else {
                ""
            },
            p.join(" ")
        );
    }
    for (x, y) in pts {
        let _ = writeln!(
            s,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="4" stroke="{color}" stroke-width="2" fill="{}"/>"#,
            if dashed { "white" } else { color }
        );
    }
}

fn y_grid(s: &mut String, ax: &LogAxis, y0: f64) {
    for t in ax.ticks() {
        let y = ax.px(t);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end" font-size="12">{}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            fmt_unit(crate::ops::Unit::Ns, t)
        );
    }
    let _ = writeln!(
        s,
        r#"<rect x="{LEFT}" y="{:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="black"/>"#,
        y0 + TOP,
        W - LEFT - RIGHT,
        PANEL_H - TOP - BOTTOM
    );
}

fn legend(s: &mut String, x: f64, mut y: f64, items: &[(String, &str)]) {
    for (label, color) in items {
        for (dy, dashed, who) in [(0.0, true, "C"), (16.0, false, "ours")] {
            let yy = y + dy;
            let _ = writeln!(
                s,
                r#"<line x1="{x:.1}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="{color}" stroke-width="2" {}/><text x="{:.1}" y="{:.1}" font-size="11">{who}: {label}</text>"#,
                x + 28.0,
                if dashed {
                    r#"stroke-dasharray="6,4""#
                } else {
                    ""
                },
                x + 34.0,
                yy + 4.0
            );
        }
        y += 40.0;
    }
}

/// The SVG document for a run's rows.
pub fn render(rows: &[Row]) -> String {
    let mut s = String::new();
    let h = PANEL_H * 2.0;
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" font-family="sans-serif">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{h}" fill="white"/>"#);

    // Panel 1: cost against live allocations.
    let levels: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for r in rows.iter().filter(|r| SCALING_OPS.contains(&r.op)) {
            if !v.contains(&r.param) {
                v.push(r.param.clone());
            }
        }
        v
    };
    let y0 = 0.0;
    let vals: Vec<f64> = rows
        .iter()
        .filter(|r| SCALING_OPS.contains(&r.op))
        .flat_map(|r| [median(&r.c), median(&r.ours)])
        .flatten()
        .collect();
    let ax = LogAxis::new(&vals, y0 + PANEL_H - BOTTOM, y0 + TOP);
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="{:.1}" font-size="16" font-weight="bold">Cost per operation against live allocations (median, log scale)</text>"#,
        y0 + 24.0
    );
    y_grid(&mut s, &ax, y0);
    let n = levels.len().max(1);
    let xs: Vec<f64> = (0..n)
        .map(|i| LEFT + 30.0 + (W - LEFT - RIGHT - 60.0) * i as f64 / (n.max(2) - 1) as f64)
        .collect();
    for (i, l) in levels.iter().enumerate() {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12">{}</text>"#,
            xs[i],
            y0 + PANEL_H - BOTTOM + 18.0,
            level_label(l)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13">live allocations (4 KiB buffers)</text>"#,
        (LEFT + W - RIGHT) / 2.0,
        y0 + PANEL_H - 12.0
    );
    let mut items = Vec::new();
    for (k, op) in SCALING_OPS.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        for dashed in [true, false] {
            let pts: Vec<(f64, f64)> = levels
                .iter()
                .enumerate()
                .filter_map(|(i, l)| {
                    let r = rows.iter().find(|r| r.op == *op && &r.param == l)?;
                    let v = median(if dashed { &r.c } else { &r.ours })?;
                    Some((xs[i], ax.px(v)))
                })
                .collect();
            polyline(&mut s, &pts, color, dashed);
        }
        let title = info(op).map(|o| o.title).unwrap_or(op).trim().to_string();
        items.push((title, color));
    }
    legend(&mut s, W - RIGHT + 14.0, y0 + TOP + 6.0, &items);

    // Panel 2: open + topology read against node count.
    let y0 = PANEL_H;
    let topo: Vec<&Row> = rows.iter().filter(|r| r.op == "topology").collect();
    let vals: Vec<f64> = topo
        .iter()
        .flat_map(|r| [median(&r.c), median(&r.ours)])
        .flatten()
        .collect();
    let ax = LogAxis::new(&vals, y0 + PANEL_H - BOTTOM, y0 + TOP);
    let max_nodes = topo
        .iter()
        .filter_map(|r| r.nodes)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let xmax = (max_nodes / 10.0).ceil() * 10.0;
    let xpx = |nodes: f64| LEFT + 30.0 + (W - LEFT - RIGHT - 60.0) * nodes / xmax;
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="{:.1}" font-size="16" font-weight="bold">open + full topology read + close against node count (median, log scale)</text>"#,
        y0 + 24.0
    );
    y_grid(&mut s, &ax, y0);
    let mut t = 0.0;
    while t <= xmax {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12">{t}</text>"#,
            xpx(t),
            y0 + PANEL_H - BOTTOM + 18.0
        );
        t += (xmax / 7.0).ceil().max(1.0);
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13">topology nodes (preset)</text>"#,
        (LEFT + W - RIGHT) / 2.0,
        y0 + PANEL_H - 12.0
    );
    for (dashed, color) in [(true, COLORS[0]), (false, COLORS[0])] {
        let mut pts: Vec<(f64, f64, String)> = topo
            .iter()
            .filter_map(|r| {
                let v = median(if dashed { &r.c } else { &r.ours })?;
                Some((xpx(r.nodes? as f64), ax.px(v), r.param.clone()))
            })
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let xy: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
        polyline(&mut s, &xy, color, dashed);
        if dashed {
            // One label per node count, above the highest point there.
            let mut i = 0;
            while i < pts.len() {
                let x = pts[i].0;
                let same: Vec<&(f64, f64, String)> =
                    pts[i..].iter().take_while(|p| p.0 == x).collect();
                let top = same.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
                let names: Vec<&str> = same.iter().map(|p| p.2.as_str()).collect();
                let _ = writeln!(
                    s,
                    r#"<text x="{:.1}" y="{:.1}" font-size="11" fill="black">{}</text>"#,
                    x + 8.0,
                    top - 8.0,
                    names.join(", ")
                );
                i += same.len();
            }
        }
    }
    legend(
        &mut s,
        W - RIGHT + 14.0,
        y0 + TOP + 6.0,
        &[("open+topology read+close".to_string(), COLORS[0])],
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Value;
    use crate::stats::summarize;

    fn row(op: &'static str, param: &str, nodes: Option<u32>, c: f64, ours: f64) -> Row {
        Row {
            op,
            title: op,
            unit: crate::ops::Unit::Ns,
            param: param.into(),
            nodes,
            c: Value::Measured(summarize(&[c]).unwrap()),
            ours: Value::Measured(summarize(&[ours]).unwrap()),
            notes: vec![],
            ioctls: (None, None),
            paired: None,
        }
    }

    #[test]
    fn draws_both_panels() {
        let rows = vec![
            row("pointer-info", "live=0", None, 17.0, 350.0),
            row("pointer-info", "live=1000", None, 80.0, 380.0),
            row("topology", "mi210", Some(2), 6e5, 3e5),
            row("topology", "apu", Some(2), 5e5, 3e5),
            row("topology", "large64", Some(66), 7e7, 2e7),
        ];
        let svg = render(&rows);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        // One dashed (C) and one solid (ours) line per panel.
        assert_eq!(svg.matches("<polyline").count(), 4);
        assert_eq!(svg.matches("stroke-dasharray=\"6,4\" points").count(), 2);
        assert!(svg.contains(">1k<"));
        assert!(svg.contains("apu, mi210"), "{svg}");
    }
}
