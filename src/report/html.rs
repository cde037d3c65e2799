//! `--format html`: one self-contained page a reviewer opens from a CI
//! artifact (SPEC "Reports a reviewer reads"). Everything it shows is in
//! the file: CSS in a `<style>`, plots as inline SVG, one small script; a
//! Content-Security-Policy `<meta>` forbids every fetch (`default-src
//! 'none'`) and lets only that script run (by its SHA-256, CSP Level 2), so
//! even a value that slipped past escaping could neither load nor run
//! anything. The script only opens the folded parts before printing and
//! filters the check table; with script disabled every number is still
//! there, and every plot repeats numbers a table beside it gives.
//!
//! Every value from a user's file (ids, query text, stratum and run names,
//! notes) goes through [`crate::escape::xml`], whose rules hold for HTML
//! text and quoted attributes alike (`&apos;` is an HTML5 entity), and
//! shows hostile characters as visible escapes.
//!
//! The page is also well-formed XML (W3C "Polyglot Markup": void elements
//! self-closed, boolean attributes given values, no `&` or `<` in the style
//! and script), so a test or a tool reads it back with an XML parser.
//!
//! Tables carry a `<caption>`, `<th scope="col">` headers and a row header
//! per row (WCAG 2.2 technique H63); plots carry `role="img"` and an
//! `aria-label` that says in words what they draw.

use std::fmt::Write as _;

use anyhow::Result;

use super::baseline::{plot_svg, HistoryView};
use super::compare::CompareView;
use super::eval::EvalView;
use super::gate::{level, p_text, skewed, stage_loss_text, GateView, SKEW_HEADING};
use super::table::{f4, signed4, Align, Table};
use super::{Exporter, Report};
use crate::config::Decision;
use crate::curve::Curve;
use crate::escape::xml as esc;
use crate::gate::{Check, CheckVerdict, Flip, RetrieverOutcome, StageOutcome, Verdict};
use crate::stages::{Lost, LostIn};

pub struct Html;

impl Exporter for Html {
    fn name(&self) -> &'static str {
        "html"
    }

    fn reports(&self) -> &'static [Report] {
        &[Report::Gate, Report::Compare, Report::Eval]
    }

    fn gate(&self, v: &GateView) -> Result<String> {
        Ok(gate_page(v))
    }

    fn compare(&self, v: &CompareView) -> Result<String> {
        Ok(compare_page(v))
    }

    fn eval(&self, v: &EvalView) -> Result<String> {
        Ok(eval_page(v))
    }
}

/// The page's only script: open every fold before printing (a closed
/// `<details>` prints its summary alone), and the "failing checks only"
/// switch. Without it nothing is hidden.
const SCRIPT: &str = r#"(function(){
addEventListener("beforeprint",function(){document.querySelectorAll("details").forEach(function(d){d.open=true;});});
document.querySelectorAll("input.only-failing").forEach(function(box){
box.hidden=false;box.parentNode.hidden=false;
box.addEventListener("change",function(){
document.querySelectorAll("tr[data-verdict]").forEach(function(tr){
var keep=tr.dataset.verdict==="fail"||tr.dataset.verdict==="inconclusive";
tr.hidden=box.checked?!keep:false;});});});
})();"#;

const CSS: &str = r#"
*,*::before,*::after{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0;padding:0 1rem;color:#1a1a1a;background:#fff}
main{display:block;max-width:80rem;margin:1.5rem auto}
h1,h2,h3,h4,p,li,caption,summary,figcaption,code,.id{overflow-wrap:anywhere}
th,td{overflow-wrap:break-word}table.top td{overflow-wrap:anywhere}
.long{display:inline-block;max-width:14rem;white-space:normal;overflow-wrap:break-word}
h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.25rem;margin-top:2rem;border-bottom:2px solid #ddd}h3{font-size:1.05rem;margin:1.2rem 0 .4rem}h4{font-size:1rem;margin:1rem 0 .3rem}
.pass{color:#1b7a2b}.fail{color:#b00020}.inconclusive{color:#8a5a00}.improved{color:#1f5fa8}
h1.fail,h2.fail{color:#b00020}h1.pass,h2.pass{color:#1b7a2b}
.settings,.meta,.note{color:#555;font-size:.92em}
.reason{border-left:4px solid #b00020;background:#fdf0f2;padding:.4rem .7rem;margin:.5rem 0}
.warning{border-left:4px solid #8a5a00;background:#fff8e6;padding:.4rem .7rem;margin:.4rem 0}
div.wide{overflow-x:auto;max-width:100%}
div.wide:focus-visible{outline:2px solid #1f5fa8;outline-offset:2px}
table{border-collapse:collapse;margin:.4rem 0 1rem}
caption{text-align:left;font-weight:600;padding:.3rem 0;caption-side:top}
th,td{padding:.2rem .55rem;border-bottom:1px solid #e2e2e2;text-align:left;vertical-align:middle}
thead th{border-bottom:2px solid #bbb;white-space:nowrap}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr[data-verdict=fail]>*{background:#fdebee}tr[data-verdict=inconclusive]>*{background:#fff6df}
code,.id{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
.rel{font-weight:700}.lost-id{background:#fde0e4}.gained-id{background:#e3f1e6}
ol.top{margin:0;padding-left:1.8rem}.chunk{color:#444;font-size:.85em;margin:0 0 .3rem;max-width:34rem}
details{margin:.3rem 0}summary{cursor:pointer}
.flip-text{font-style:italic}.stratum-tag{color:#555}
figure{margin:.5rem 0}figcaption{color:#555;font-size:.9em}
svg.chart,svg.curve{display:block;width:100%;height:auto}svg.trend{max-width:760px}svg.curve{max-width:720px}
svg.funnel{display:block;width:100%;max-width:360px;height:auto}
.legend span{display:inline-block;margin-right:1rem}
.swatch{display:inline-block;width:.8em;height:.8em;vertical-align:middle;margin-right:.25em}
label.filter{display:block;margin:.3rem 0}
svg{overflow:visible}
@media (max-width:40rem){body{padding:0 .6rem}main{margin:1rem auto}th,td{padding:.2rem .35rem}}
@media print{main{max-width:none;margin:0}body{font-size:10.5px}div.wide{overflow:visible}label.filter{display:none}tr,li,figure,details{break-inside:avoid}h2{break-before:auto;break-after:avoid}a{color:inherit;text-decoration:none}.reason,.warning,tr[data-verdict]>*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
"#;

/// Colours of the verdicts in plots, as in the CSS.
fn verdict_color(v: CheckVerdict) -> &'static str {
    match v {
        CheckVerdict::Fail => "#b00020",
        CheckVerdict::Pass => "#1b7a2b",
        CheckVerdict::Improved => "#1f5fa8",
        CheckVerdict::Inconclusive => "#8a5a00",
        CheckVerdict::NotGated => "#777",
    }
}

/// A whole page around `body`, all of it in the `<main>` landmark (WCAG
/// 2.2 technique ARIA11: a screen reader jumps to it, and axe-core's
/// "region" rule finds no content outside a landmark).
fn page(title: &str, body: &str) -> String {
    use sha2::{Digest, Sha256};
    let hash = base64(&Sha256::digest(SCRIPT.as_bytes()));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{hash}'; img-src data:; base-uri 'none'; form-action 'none'\"/>\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n\
<meta name=\"generator\" content=\"rgate {}\"/>\n\
<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n{body}</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        esc(title)
    )
}

/// Standard base64 with padding (RFC 4648 section 4), for the CSP hash.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The opening of a region that scrolls sideways when its table is wider
/// than a phone's screen, so the page itself never does. A keyboard user
/// can reach and scroll it: it takes focus and is named by its table's
/// caption (WCAG 2.2 SC 2.1.1; axe-core's "scrollable-region-focusable").
fn scroller(caption: &str) -> String {
    format!(
        "<div class=\"wide\" tabindex=\"0\" role=\"region\" aria-label=\"{}\">",
        esc(caption)
    )
}

/// Characters of an unbroken run (an id, a stratum name) beyond which a
/// table cell's text gets a width of its own.
const LONG_RUN: usize = 32;

/// A table cell's text, escaped. A cell's shortest width is its longest
/// unbroken run, and a table inside a scroller keeps every column at least
/// that wide (cells break long runs only where they would overflow, never
/// down to a letter per line); a run longer than [`LONG_RUN`] characters
/// goes in a box at most 14rem wide, where it breaks, so a 600-character id
/// neither widens the table past the screen nor hides the columns after it.
fn cell(text: &str) -> String {
    if text.split_whitespace().any(|w| w.chars().count() > LONG_RUN) {
        format!("<span class=\"long\">{}</span>", esc(text))
    } else {
        esc(text)
    }
}

/// A [`Table`] as an accessible HTML table: a caption, column headers, the
/// first cell of each row its row header; right-aligned columns are
/// numbers. Every cell is escaped.
fn table(t: &Table, caption: &str) -> String {
    let mut s = format!(
        "{}<table>\n<caption>{}</caption>\n<thead><tr>",
        scroller(caption),
        esc(caption)
    );
    for (i, h) in t.headers.iter().enumerate() {
        let class = if t.align[i] == Align::Right {
            " class=\"num\""
        } else {
            ""
        };
        let _ = write!(s, "<th scope=\"col\"{class}>{}</th>", cell(h));
    }
    s += "</tr></thead>\n<tbody>\n";
    for row in &t.rows {
        s += "<tr>";
        for (i, c) in row.iter().enumerate() {
            let class = if t.align[i] == Align::Right {
                " class=\"num\""
            } else {
                ""
            };
            if i == 0 {
                let _ = write!(s, "<th scope=\"row\"{class}>{}</th>", cell(c));
            } else {
                let _ = write!(s, "<td{class}>{}</td>", cell(c));
            }
        }
        s += "</tr>\n";
    }
    s += "</tbody>\n</table></div>\n";
    s
}

/// A linear scale from `[lo, hi]` onto `[x0, x1]` pixels, padded so marks
/// at the ends stay visible; a range of one point is widened.
#[derive(Clone, Copy)]
struct Scale {
    lo: f64,
    hi: f64,
    x0: f64,
    x1: f64,
}

impl Scale {
    fn over(values: impl IntoIterator<Item = f64>, x0: f64, x1: f64) -> Scale {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.into_iter().filter(|v| v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            (lo, hi) = (-1.0, 1.0);
        }
        let pad = ((hi - lo) * 0.08).max(1e-3);
        Scale {
            lo: lo - pad,
            hi: hi + pad,
            x0,
            x1,
        }
    }

    /// Pixel of `v`, clamped to the plot (an infinite bound runs to its
    /// edge).
    fn x(&self, v: f64) -> f64 {
        let v = if v.is_nan() {
            0.0
        } else {
            v.clamp(self.lo, self.hi)
        };
        self.x0 + (self.x1 - self.x0) * (v - self.lo) / (self.hi - self.lo)
    }
}

/// The interval the rule read, as `(from, to)`: one-sided bounds run from
/// delta to the bound; `threshold` reads the two-sided CI.
fn rule_interval(c: &Check, decision: Decision) -> (f64, f64) {
    match decision {
        Decision::ConfidentDrop | Decision::SignificantDrop => (c.cmp.delta, c.upper_bound),
        Decision::NonInferiority => (c.lower_bound, c.cmp.delta),
        Decision::Threshold => (c.cmp.ci_low, c.cmp.ci_high),
    }
}

/// The bound cell: what the rule used, four decimals.
fn bound_cell(c: &Check, decision: Decision) -> String {
    let b = |v: f64| if v.is_finite() { signed4(v) } else { "-".into() };
    match decision {
        Decision::ConfidentDrop | Decision::SignificantDrop => b(c.upper_bound),
        Decision::NonInferiority => b(c.lower_bound),
        Decision::Threshold => format!("[{}, {}]", b(c.cmp.ci_low), b(c.cmp.ci_high)),
    }
}

const PLOT_W: f64 = 180.0;
const PLOT_H: f64 = 34.0;

/// One check's row plot: the region beyond the tolerance shaded, the
/// tolerance line dashed (at minus the tolerance: the drop allowed), zero
/// grey, the interval the rule read as a bar and delta as a dot in the
/// verdict's colour. A check fails exactly when its bar lies in the shaded
/// region under `confident-drop`.
fn check_plot(c: &Check, decision: Decision, sc: &Scale, words: &str) -> String {
    let mut s = format!(
        "<svg class=\"check-plot\" width=\"{PLOT_W}\" height=\"{PLOT_H}\" viewBox=\"0 0 {PLOT_W} {PLOT_H}\" role=\"img\" aria-label=\"{}\"><title>{}</title>",
        esc(words),
        esc(words)
    );
    let (top, bottom, mid) = (12.0, PLOT_H - 2.0, 12.0 + (PLOT_H - 14.0) / 2.0);
    let x0 = sc.x(0.0);
    let zero_label = "0".to_string();
    // At tolerance 0 the line is zero's, which the zero label names.
    let tol_label = c
        .tolerance
        .filter(|t| *t > 0.0)
        .map(|tol| format!("−{}", short(tol)));
    let (tol_at, zero_at) = match &tol_label {
        Some(l) => apart(
            (sc.x(-c.tolerance.unwrap_or(0.0)), label_width(l)),
            (x0, label_width(&zero_label)),
            PLOT_W,
        ),
        None => (x0, x0),
    };
    if let Some(tol) = c.tolerance {
        let xt = sc.x(-tol);
        let _ = write!(
            s,
            "<rect x=\"{:.1}\" y=\"{top}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#fbdde2\"/>",
            sc.x0,
            (xt - sc.x0).max(0.0),
            bottom - top
        );
        let _ = write!(
            s,
            "<line class=\"tolerance\" data-value=\"{}\" x1=\"{xt:.1}\" y1=\"{:.1}\" x2=\"{xt:.1}\" y2=\"{bottom}\" stroke=\"#b00020\" stroke-width=\"1.5\" stroke-dasharray=\"4,2\"/>",
            f4(tol),
            top - 2.0,
        );
        if let Some(label) = &tol_label {
            let _ = write!(
                s,
                "<text class=\"tolerance-label\" x=\"{tol_at:.1}\" y=\"9\" text-anchor=\"middle\" font-size=\"{LABEL_FONT}\" fill=\"#b00020\">{label}</text>"
            );
        }
    }
    let _ = write!(
        s,
        "<line class=\"zero\" x1=\"{x0:.1}\" y1=\"{top}\" x2=\"{x0:.1}\" y2=\"{bottom}\" stroke=\"#999\"/><text class=\"zero-label\" x=\"{zero_at:.1}\" y=\"9\" text-anchor=\"middle\" font-size=\"{LABEL_FONT}\" fill=\"#666\">{zero_label}</text>"
    );
    let (a, b) = rule_interval(c, decision);
    if a.is_finite() || b.is_finite() {
        let (xa, xb) = (sc.x(a), sc.x(b));
        let _ = write!(
            s,
            "<line class=\"bound\" x1=\"{:.1}\" y1=\"{mid:.1}\" x2=\"{:.1}\" y2=\"{mid:.1}\" stroke=\"#333\" stroke-width=\"2.5\"/>",
            xa.min(xb),
            xa.max(xb)
        );
        for x in [xa, xb] {
            let _ = write!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#333\" stroke-width=\"1.5\"/>",
                mid - 5.0,
                mid + 5.0
            );
        }
    }
    let _ = write!(
        s,
        "<circle class=\"delta\" data-value=\"{}\" cx=\"{:.1}\" cy=\"{mid:.1}\" r=\"4.5\" fill=\"{}\" stroke=\"#fff\"/></svg>",
        signed4(c.cmp.delta),
        sc.x(c.cmp.delta),
        verdict_color(c.verdict)
    );
    s
}

/// Three decimals with trailing zeros dropped, for plot labels.
fn short(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// Font size of the plots' axis labels, in SVG units.
const LABEL_FONT: f64 = 9.0;

/// A label's width in SVG units, bounded above: digits, the point and the
/// minus sign are at most 0.6 em wide in the sans-serif faces a page falls
/// back to (a digit is 0.556 em in Helvetica and Arial).
fn label_width(label: &str) -> f64 {
    label.chars().count() as f64 * 0.6 * LABEL_FONT
}

/// Centres for two labels `(at, width)` on one line, the first left of the
/// second: where they are, or pushed apart about their midpoint until
/// 3 units separate them (a tight tolerance puts its line a pixel from
/// zero's), then moved as one to stay within `[0, w]`.
fn apart(a: (f64, f64), b: (f64, f64), w: f64) -> (f64, f64) {
    let need = (a.1 + b.1) / 2.0 + 3.0;
    let (mut xa, mut xb) = (a.0, b.0);
    if xb - xa < need {
        let mid = (xa + xb) / 2.0;
        xa = mid - need / 2.0;
        xb = mid + need / 2.0;
    }
    let shift = if xa - a.1 / 2.0 < 0.0 {
        a.1 / 2.0 - xa
    } else if xb + b.1 / 2.0 > w {
        w - b.1 / 2.0 - xb
    } else {
        0.0
    };
    (xa + shift, xb + shift)
}

/// A sentence the views share with the markdown report, for HTML: escaped,
/// with its `code` spans (paired backticks) as `<code>` rather than
/// markdown's backticks. Unpaired backticks stay as written.
fn prose(text: &str) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return esc(text);
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i % 2 == 1 {
                format!("<code>{}</code>", esc(p))
            } else {
                esc(p)
            }
        })
        .collect()
}

fn verdict_span(v: Verdict) -> String {
    format!(
        "<span class=\"{0}\">{1}</span>",
        v.name(),
        v.name().to_uppercase()
    )
}

/// The retrievers in the order the page shows them: failing ones first
/// (the decision before the detail), otherwise as configured. Each keeps
/// its configured index, which names its section (`#r{i}`).
fn failing_first(o: &crate::gate::GateOutcome) -> Vec<(usize, &RetrieverOutcome)> {
    let mut order: Vec<(usize, &RetrieverOutcome)> = o.retrievers.iter().enumerate().collect();
    order.sort_by_key(|(_, r)| r.verdict() != Verdict::Fail);
    order
}

/// A retriever's line in the page's opening list. A failing one's
/// reasons are spelled out in its section, shown first right below, so the
/// list says how many checks failed and which stage lost queries.
fn retriever_line(v: &GateView, r: &RetrieverOutcome) -> String {
    if r.verdict() != Verdict::Fail {
        return v.summary(r);
    }
    let failed = r.checks.iter().filter(|c| r.fails(c)).count();
    let gated = r.counts().gated();
    let mut parts: Vec<String> = r
        .stages
        .as_ref()
        .map(|s| s.losses.iter().map(stage_loss_text).collect())
        .unwrap_or_default();
    parts.push(format!(
        "{failed} of {gated} gated check{} failed",
        if gated == 1 { "" } else { "s" }
    ));
    parts.join("; ")
}

fn gate_page(v: &GateView) -> String {
    let o = v.outcome;
    let verdict = o.verdict();
    let order = failing_first(o);
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<header>\n<h1 class=\"{}\">{} · rgate {}</h1>\n<p class=\"lead\">{}</p>",
        verdict.name(),
        verdict.name().to_uppercase(),
        esc(v.command),
        prose(&v.headline())
    );
    b += "<ul class=\"retrievers\">\n";
    for (i, r) in &order {
        let _ = writeln!(
            b,
            "<li><a href=\"#r{i}\">{}</a>: {} — {}</li>",
            esc(&r.name),
            verdict_span(r.verdict()),
            prose(&retriever_line(v, r))
        );
    }
    b += "</ul>\n";
    if let Some(j) = v.judge_line() {
        let class = o.judge.as_ref().map_or("none", |j| j.verdict.name());
        let _ = writeln!(b, "<p class=\"judge {class}\">{}</p>", prose(&j));
    }
    let _ = writeln!(
        b,
        "<p class=\"settings\">{}</p>\n</header>",
        prose(&v.settings_line())
    );
    for w in &o.warnings {
        let _ = writeln!(
            b,
            "<p class=\"warning\"><strong>Warning:</strong> {}</p>",
            prose(w)
        );
    }
    if o.retrievers.iter().any(|r| !r.checks.is_empty()) {
        b += "<label class=\"filter\" hidden=\"hidden\"><input type=\"checkbox\" class=\"only-failing\" hidden=\"hidden\"/> show failing and inconclusive checks only</label>\n";
    }
    for (i, r) in order {
        b += &retriever_section(v, r, i);
    }
    page(&v.headline(), &b)
}

fn retriever_section(v: &GateView, r: &RetrieverOutcome, i: usize) -> String {
    let rv = r.verdict();
    let mut b = format!(
        "<section id=\"r{i}\" class=\"retriever\">\n<h2 class=\"{}\">{} — {}</h2>\n<p class=\"meta\">run <code>{}</code> · {}</p>\n",
        rv.name(),
        esc(&r.name),
        rv.name(),
        esc(&r.run),
        esc(&GateView::baseline_desc(r))
    );
    let fails: Vec<&Check> = r.checks.iter().filter(|c| r.fails(c)).collect();
    for c in &fails {
        let _ = writeln!(b, "<p class=\"reason\">{}</p>", prose(&v.reason(c, r)));
    }
    if let Some(losses) = r.stages.as_ref().map(|s| &s.losses) {
        for l in losses {
            let _ = writeln!(b, "<p class=\"reason\">{}</p>", prose(&stage_loss_text(l)));
        }
    }
    if !r.checks.is_empty() {
        b += &check_table(v, r);
    }
    if let Some(t) = v.ppi_table(r) {
        b += &table(
            &t,
            &format!(
                "Prediction-powered estimates of each delta of {}, beside people's labels alone",
                r.name
            ),
        );
    }
    if let Some(imp) = v.improvements(r) {
        let _ = writeln!(b, "<p class=\"improved\">{}</p>", prose(&imp));
    }
    let skewed = skewed(r);
    if !skewed.is_empty() {
        let _ = writeln!(b, "<h3>{SKEW_HEADING}</h3>\n<ul>");
        for s in &skewed {
            let _ = writeln!(b, "<li>{}</li>", prose(s));
        }
        b += "</ul>\n";
    }
    b += &strata_table(r);
    if let Some(st) = &r.stages {
        b += &funnel(&r.name, st);
    }
    b += &flips(r);
    b += &power_panel(v.outcome.settings.decision, v.outcome.settings.alpha, r);
    b += &trend(r);
    if !r.warnings.is_empty() {
        b += "<h3>Warnings</h3>\n";
        for w in &r.warnings {
            let _ = writeln!(b, "<p class=\"warning\">{}</p>", prose(w));
        }
    }
    b += "</section>\n";
    b
}

/// Each check a row: the numbers, its plot, its tolerance, its mde, the
/// test that ran and the verdict, one precision per column; eleven columns
/// that fit a 1280 px screen without scrolling (the verdict and mde never
/// hide in a scroller). The bound the rule read, its level and the
/// p-values follow in a folded table with a row per check, on demand: the
/// plot draws the bound, and a failing check's reason above says it.
fn check_table(v: &GateView, r: &RetrieverOutcome) -> String {
    let decision = v.outcome.settings.decision;
    let bound = v.bound_header();
    let sc = Scale::over(
        r.checks.iter().flat_map(|c| {
            let (a, b) = rule_interval(c, decision);
            [c.cmp.delta, a, b, 0.0, -c.tolerance.unwrap_or(0.0)]
        }),
        8.0,
        PLOT_W - 8.0,
    );
    let caption = format!(
        "Checks of {}: delta (dot) and the {} the rule read (bar) against the tolerance (dashed line; shaded: beyond it)",
        r.name, bound
    );
    let mut s = format!(
        "{}<table class=\"checks\">\n<caption>{}</caption>\n<thead><tr>",
        scroller(&caption),
        esc(&caption)
    );
    let cols: [(&str, bool); 11] = [
        ("metric", false),
        ("stratum", false),
        ("n", true),
        ("baseline", true),
        ("current", true),
        ("delta", true),
        ("plot", false),
        ("tolerance", true),
        ("mde", true),
        ("test", false),
        ("verdict", false),
    ];
    for (h, num) in cols {
        let class = if num { " class=\"num\"" } else { "" };
        let _ = write!(s, "<th scope=\"col\"{class}>{}</th>", esc(h));
    }
    s += "</tr></thead>\n<tbody>\n";
    let lvl = |c: &Check| {
        if decision == Decision::Threshold {
            "-".to_string()
        } else {
            level(c.bound_level)
        }
    };
    for c in &r.checks {
        let metric = c.cmp.metric.name();
        let tol = c.tolerance.map_or("-".to_string(), f4);
        let words = format!(
            "{metric} on {}: delta {}, {bound} {} at {}, tolerance {tol}: {}",
            c.cmp.stratum,
            signed4(c.cmp.delta),
            bound_cell(c, decision),
            lvl(c),
            c.verdict.name()
        );
        let num = |x: String| format!("<td class=\"num\">{}</td>", esc(&x));
        let _ = writeln!(
            s,
            "<tr data-verdict=\"{}\"><th scope=\"row\">{}</th><td>{}</td>{}{}{}{}<td>{}</td><td class=\"num tolerance\">{}</td>{}<td>{}</td><td class=\"{}\">{}</td></tr>",
            c.verdict.name(),
            cell(&metric),
            cell(&c.cmp.stratum),
            num(c.cmp.n.to_string()),
            num(f4(c.cmp.baseline)),
            num(f4(c.cmp.current)),
            num(signed4(c.cmp.delta)),
            check_plot(c, decision, &sc, &words),
            esc(&tol),
            num(c.mde().map_or("-".into(), f4)),
            esc(c.test_name()),
            c.verdict.name(),
            c.verdict.name()
        );
    }
    s += "</tbody>\n</table></div>\n";
    let mut t = Table::new(
        [
            "metric",
            "stratum",
            bound.as_str(),
            "level",
            "p (1-sided)",
            "p_adj",
            "verdict",
        ]
        .iter()
        .map(|h| h.to_string())
        .collect(),
        2,
    );
    t.align[6] = Align::Left;
    for c in &r.checks {
        t.push(vec![
            c.cmp.metric.name(),
            c.cmp.stratum.clone(),
            bound_cell(c, decision),
            lvl(c),
            p_text(c.cmp.p_value, r),
            p_text(c.cmp.p_adjusted, r),
            c.verdict.name().to_string(),
        ]);
    }
    let inner = table(
        &t,
        &format!(
            "The {bound}, its level and the p-values of each check of {}",
            r.name
        ),
    )
    .replacen("<table>", "<table class=\"check-tests\">", 1);
    let _ = writeln!(
        s,
        "<details class=\"check-tests\"><summary>The {} the rule read, its level and the p-values of each check</summary>\n{inner}</details>",
        esc(&bound)
    );
    s
}

/// The strata side by side: each stratum's checks, queries lost, and for
/// two stages its counts by stage, baseline -> current.
fn strata_table(r: &RetrieverOutcome) -> String {
    let mut names: Vec<&str> = Vec::new();
    let lost = r.stages.as_ref().map(|st| st.lost.as_slice()).unwrap_or_default();
    for sl in lost {
        if !names.contains(&sl.scope.as_str()) {
            names.push(&sl.scope);
        }
    }
    for c in &r.checks {
        if !names.contains(&c.cmp.stratum.as_str()) {
            names.push(&c.cmp.stratum);
        }
    }
    for f in &r.flips {
        if !f.stratum.is_empty() && !names.contains(&f.stratum.as_str()) {
            names.push(&f.stratum);
        }
    }
    if names.len() < 2 && r.flips.is_empty() {
        return String::new();
    }
    let two = !lost.is_empty();
    let mut headers = vec!["scope", "n", "checks failed", "queries lost (hit to miss)"];
    if two {
        headers.extend(["reached", "dropped by rerank", "missed by retrieval"]);
    }
    let mut t = Table::new(headers.iter().map(|h| h.to_string()).collect(), 1);
    for name in names {
        let n = lost
            .iter()
            .find(|s| s.scope == name)
            .map(|s| s.n)
            .or_else(|| r.checks.iter().find(|c| c.cmp.stratum == name).map(|c| c.cmp.n));
        let here: Vec<&Check> = r.checks.iter().filter(|c| c.cmp.stratum == name).collect();
        let gated = here
            .iter()
            .filter(|c| c.verdict != CheckVerdict::NotGated)
            .count();
        let failed = here.iter().filter(|c| r.fails(c)).count();
        let flips = if name == "all" {
            r.flips.len()
        } else {
            r.flips.iter().filter(|f| f.stratum == name).count()
        };
        let mut row = vec![
            name.to_string(),
            n.map_or("-".into(), |n| n.to_string()),
            if gated == 0 {
                "-".into()
            } else {
                format!("{failed} of {gated}")
            },
            flips.to_string(),
        ];
        if two {
            let sl = lost.iter().find(|s| s.scope == name);
            for f in [
                (|l: &Lost| l.reached) as fn(&Lost) -> usize,
                |l| l.dropped_by_rerank,
                |l| l.missed_by_retrieval,
            ] {
                row.push(match sl {
                    Some(s) => match &s.baseline {
                        Some(b) => format!("{} -> {}", f(b), f(&s.current)),
                        None => format!("? -> {}", f(&s.current)),
                    },
                    None => "-".into(),
                });
            }
        }
        t.push(row);
    }
    format!(
        "<h3>By stratum</h3>\n{}",
        table(
            &t,
            &format!("Each stratum's checks and lost queries of {}", r.name)
        )
    )
}

/// The rule [`crate::gate::power`] applies to call a check enforceable
/// (SPEC "enforceable"), in words, for the power panel's caption: under
/// the drop decisions a drop of twice the tolerance caught at least 80% of
/// the time, which is an mde within twice the tolerance; under
/// non-inferiority and threshold, a bound on how often an unchanged
/// retriever fails. A prediction-powered check also needs its mde within
/// twice the tolerance ([`crate::gate::power::ppi_power`]).
fn enforceable_rule(decision: Decision, alpha: f64, ppi: bool) -> String {
    let also = if ppi {
        " and (labels: ppi) its mde is at most twice the tolerance"
    } else {
        ""
    };
    match decision {
        Decision::ConfidentDrop | Decision::SignificantDrop => "A check is enforceable when a drop of twice its tolerance is caught at least 80% of the time, which puts its bar at or before the dotted line (at tolerance 0, when a significant drop can fail it). The mde is never below the tolerance: a bar past the dashed line is expected.".to_string(),
        Decision::NonInferiority => format!("A check is enforceable when an unchanged retriever fails it at most 20% of the time (column unchanged fails){also}."),
        // The plain test holds an unchanged run to the check's corrected
        // level; the prediction-powered one to alpha itself.
        Decision::Threshold if ppi => format!(
            "A check is enforceable when an unchanged retriever fails it at most {} of the time (alpha; column unchanged fails){also}.",
            crate::diag::number(alpha)
        ),
        Decision::Threshold => format!(
            "A check is enforceable when an unchanged retriever fails it no more often than the level the check is held to (alpha {} after the correction; column unchanged fails).",
            crate::diag::number(alpha)
        ),
    }
}

/// What each gated check can detect: its mde (the drop caught 80% of the
/// time) against its tolerance and twice it, whether the rule calls it
/// enforceable, and the queries that would make it so.
fn power_panel(decision: Decision, alpha: f64, r: &RetrieverOutcome) -> String {
    let gated: Vec<&Check> = r.checks.iter().filter(|c| c.tolerance.is_some()).collect();
    if gated.is_empty() {
        return String::new();
    }
    const W: f64 = 180.0;
    let sc = Scale::over(
        gated.iter().flat_map(|c| {
            let tol = c.tolerance.unwrap_or(0.0);
            [0.0, tol, 2.0 * tol, c.mde().unwrap_or(0.0)]
        }),
        4.0,
        W - 4.0,
    );
    let sc = Scale { lo: 0.0, ..sc };
    let unchanged = matches!(decision, Decision::NonInferiority | Decision::Threshold);
    let ppi = gated.iter().any(|c| c.ppi.is_some());
    let caption = format!(
        "What each gated check of {} can detect: the mde (bar; the drop failed 80% of the time) against the tolerance (dashed line) and twice the tolerance (dotted line). {}",
        r.name,
        enforceable_rule(decision, alpha, ppi)
    );
    let mut s = format!(
        "<h3>Power</h3>\n{}<table class=\"power\">\n<caption>{}</caption>\n<thead><tr><th scope=\"col\">metric</th><th scope=\"col\">stratum</th><th scope=\"col\" class=\"num\">n</th><th scope=\"col\" class=\"num\">tolerance</th><th scope=\"col\" class=\"num\">mde</th><th scope=\"col\">plot</th>{}<th scope=\"col\">enforceable</th><th scope=\"col\" class=\"num\">queries needed</th></tr></thead>\n<tbody>\n",
        scroller(&caption),
        esc(&caption),
        if unchanged {
            "<th scope=\"col\" class=\"num\">unchanged fails</th>"
        } else {
            ""
        }
    );
    for c in gated {
        let tol = c.tolerance.unwrap_or(0.0);
        let mde = c.mde();
        let words = format!(
            "{} on {}: mde {} against tolerance {} (twice: {})",
            c.cmp.metric.name(),
            c.cmp.stratum,
            mde.map_or("none".into(), f4),
            f4(tol),
            f4(2.0 * tol)
        );
        let mut plot = format!(
            "<svg class=\"power-plot\" width=\"{W}\" height=\"20\" viewBox=\"0 0 {W} 20\" role=\"img\" aria-label=\"{0}\"><title>{0}</title>",
            esc(&words)
        );
        if let Some(m) = mde {
            let fill = if c.power.enforceable { "#7a9cc6" } else { "#d98c99" };
            let _ = write!(
                plot,
                "<rect class=\"mde\" x=\"{:.1}\" y=\"4\" width=\"{:.1}\" height=\"12\" fill=\"{fill}\"/>",
                sc.x(0.0),
                (sc.x(m) - sc.x(0.0)).max(0.5)
            );
        }
        let (xt, x2) = (sc.x(tol), sc.x(2.0 * tol));
        let _ = write!(
            plot,
            "<line class=\"tolerance\" x1=\"{xt:.1}\" y1=\"0\" x2=\"{xt:.1}\" y2=\"20\" stroke=\"#b00020\" stroke-width=\"1.5\" stroke-dasharray=\"4,2\"/><line class=\"twice-tolerance\" x1=\"{x2:.1}\" y1=\"0\" x2=\"{x2:.1}\" y2=\"20\" stroke=\"#333\" stroke-width=\"1.5\" stroke-dasharray=\"1,2\"/></svg>"
        );
        let fails = if unchanged {
            format!(
                "<td class=\"num\">{}</td>",
                c.power
                    .unchanged_fails
                    .map_or("-".into(), |u| format!("{:.1}%", 100.0 * u))
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "<tr><th scope=\"row\">{}</th><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{plot}</td>{fails}<td>{}</td><td class=\"num\">{}</td></tr>",
            cell(&c.cmp.metric.name()),
            cell(&c.cmp.stratum),
            c.cmp.n,
            f4(tol),
            mde.map_or("-".into(), f4),
            if c.power.enforceable { "yes" } else { "no" },
            c.power
                .queries_needed
                .map_or("-".into(), |q| format!("about {q}"))
        );
    }
    s += "</tbody>\n</table></div>\n";
    s
}

/// The two stages: per scope a bar of the queries that reached the top k,
/// were dropped by the reranker, or were missed by retrieval, baseline
/// above current; the counts and the ceilings in tables beside.
fn funnel(name: &str, st: &StageOutcome) -> String {
    let mut s = format!("<h3>{}</h3>\n", esc(&GateView::stage_title(st)));
    const W: f64 = 360.0;
    let colors = [
        ("#5b9a68", "reached"),
        ("#e39b3b", "dropped by rerank"),
        ("#c5504b", "missed by retrieval"),
    ];
    s += "<p class=\"legend\">";
    for (c, name) in colors {
        let _ = write!(
            s,
            "<span><span class=\"swatch\" style=\"background:{c}\"></span>{name}</span>"
        );
    }
    s += "</p>\n";
    let bar = |l: &Lost, n: usize, label: &str| {
        let words = format!(
            "{label}: {} reached, {} dropped by rerank, {} missed by retrieval, of {n}",
            l.reached, l.dropped_by_rerank, l.missed_by_retrieval
        );
        let mut b = format!(
            "<svg class=\"funnel\" width=\"{W}\" height=\"16\" viewBox=\"0 0 {W} 16\" role=\"img\" aria-label=\"{0}\"><title>{0}</title>",
            esc(&words)
        );
        let mut x = 0.0;
        let total = (l.reached + l.dropped_by_rerank + l.missed_by_retrieval).max(1) as f64;
        for ((c, _), k) in colors
            .iter()
            .zip([l.reached, l.dropped_by_rerank, l.missed_by_retrieval])
        {
            let w = W * k as f64 / total;
            if k > 0 {
                let _ = write!(
                    b,
                    "<rect x=\"{x:.1}\" y=\"1\" width=\"{w:.1}\" height=\"14\" fill=\"{c}\"/>"
                );
            }
            x += w;
        }
        b + "</svg>"
    };
    let caption = format!("Queries of {name} by stage, baseline above current");
    s += &scroller(&caption);
    let _ = write!(
        s,
        "<table class=\"funnel\">\n<caption>{}</caption>",
        esc(&caption)
    );
    s += "\n<thead><tr><th scope=\"col\">scope</th><th scope=\"col\" class=\"num\">n</th><th scope=\"col\">baseline</th><th scope=\"col\">current</th></tr></thead>\n<tbody>\n";
    for sl in &st.lost {
        let base = sl.baseline.as_ref().map_or_else(
            || "no candidate lists stored".to_string(),
            |l| bar(l, sl.n, "baseline"),
        );
        let _ = writeln!(
            s,
            "<tr><th scope=\"row\">{}</th><td class=\"num\">{}</td><td>{base}</td><td>{}</td></tr>",
            cell(&sl.scope),
            sl.n,
            bar(&sl.current, sl.n, "current")
        );
    }
    s += "</tbody>\n</table></div>\n";
    s += &table(
        &GateView::lost_table(st),
        &format!("Queries of {name} by stage, baseline -> current"),
    );
    s += &table(
        &GateView::ceiling_table(st, false),
        &format!(
            "Each final metric of {name} beside its ceiling (a perfect reranker of the current candidates)"
        ),
    );
    if !st.absent.is_empty() {
        let _ = writeln!(
            s,
            "<p class=\"warning\">{} quer{} hold final results absent from their candidates: {}</p>",
            st.absent.len(),
            if st.absent.len() == 1 { "y" } else { "ies" },
            esc(&st
                .absent
                .iter()
                .take(10)
                .map(|(q, ids)| format!("{q} ({})", ids.join(", ")))
                .collect::<Vec<_>>()
                .join("; "))
        );
    }
    s
}

/// Flips shown open when there are at most this many; more fold (their
/// summaries, with id, text and what was lost, stay visible).
const OPEN_FLIPS: usize = 30;

/// Flips written into the page at most, each with its two top-k lists:
/// 50,000 flips made a 46 MB page no browser opens comfortably, and no
/// reviewer reads past the first few hundred. The rest are counted, per
/// stage, and listed in full by the JSON report.
pub const HTML_FLIPS: usize = 500;

/// The anchor of a lost query's entry, `q-<retriever>~<query id>`, each
/// part kept where it is ASCII letters, digits, `-` and `_`, every other
/// byte of its UTF-8 written `.XX` (upper-case hex): stable (a function of
/// the two names alone, so a link in the PR comment finds it), unique (the
/// spelling is reversible, and one retriever lists a query once) and a
/// valid id and URL fragment for any id a gold set holds.
pub fn query_anchor(retriever: &str, query_id: &str) -> String {
    fn part(out: &mut String, s: &str) {
        for b in s.bytes() {
            if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
                out.push(char::from(b));
            } else {
                let _ = write!(out, ".{b:02X}");
            }
        }
    }
    let mut out = String::from("q-");
    part(&mut out, retriever);
    out.push('~');
    part(&mut out, query_id);
    out
}

/// A lost query's rank of its first relevant chunk in the baseline's top
/// k and in the current one (`None`: not in the top k).
fn relevant_ranks(f: &Flip) -> Option<(Option<usize>, Option<usize>)> {
    let top = f.top.as_ref()?;
    let first = |ids: &[String]| ids.iter().position(|i| top.relevant.contains(i)).map(|p| p + 1);
    Some((first(&top.baseline), first(&top.current)))
}

/// The order lost queries are listed in: the largest loss first, that is
/// the most gated metrics that lost the query, then (where the top k is
/// known) the furthest fall of its first relevant chunk, a chunk gone from
/// the top k counted at k + 1; otherwise in the report's order.
fn by_severity(flips: &mut [&Flip]) {
    let fall = |f: &Flip| -> usize {
        match (relevant_ranks(f), f.top.as_ref()) {
            (Some((before, after)), Some(top)) => {
                let after = after.unwrap_or(top.k + 1);
                after.saturating_sub(before.unwrap_or(top.k + 1))
            }
            _ => 0,
        }
    };
    flips.sort_by_key(|f| (std::cmp::Reverse(f.lost.len()), std::cmp::Reverse(fall(f))));
}

/// How many queries each gated metric lost, overall and per stratum.
fn lost_per_metric(r: &RetrieverOutcome) -> Table {
    let mut metrics: Vec<&str> = Vec::new();
    let mut strata: Vec<&str> = Vec::new();
    for f in &r.flips {
        for m in &f.lost {
            if !metrics.contains(&m.as_str()) {
                metrics.push(m);
            }
        }
        if !strata.contains(&f.stratum.as_str()) {
            strata.push(&f.stratum);
        }
    }
    let mut headers = vec!["metric".to_string(), "queries lost".to_string()];
    if strata.len() > 1 {
        headers.extend(strata.iter().map(|s| s.to_string()));
    }
    let mut t = Table::new(headers, 1);
    for m in metrics {
        let lost: Vec<&Flip> = r.flips.iter().filter(|f| f.lost.iter().any(|l| l == m)).collect();
        let mut row = vec![m.to_string(), lost.len().to_string()];
        if strata.len() > 1 {
            for st in &strata {
                row.push(lost.iter().filter(|f| f.stratum == *st).count().to_string());
            }
        }
        t.push(row);
    }
    t
}

/// The queries that went from hit to miss, by stage, the largest loss
/// first ([`by_severity`]), each under its own anchor ([`query_anchor`])
/// with its stratum, its text, the metrics that lost it, and its top k
/// baseline beside current: the chunks lost from and gained in the top k,
/// relevant ones in bold. A table first counts the queries each metric
/// lost.
fn flips(r: &RetrieverOutcome) -> String {
    if r.flips.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "<h3>Queries that went from hit to miss ({})</h3>\n",
        r.flips.len()
    );
    s += &table(
        &lost_per_metric(r),
        &format!("Queries of {} each gated metric lost", r.name),
    )
    .replacen("<table>", "<table class=\"lost-per-metric\">", 1);
    let groups: Vec<(Option<&str>, Vec<&Flip>)> = if r.stages.is_none() {
        vec![(None, r.flips.iter().collect())]
    } else {
        [
            (Some(LostIn::Rerank), "lost in rerank"),
            (Some(LostIn::Retrieval), "lost in retrieval"),
            (Some(LostIn::Both), "lost in both stages"),
            (None, "stage unknown"),
        ]
        .into_iter()
        .map(|(g, title)| {
            (
                Some(title),
                r.flips.iter().filter(|f| f.lost_in == g).collect::<Vec<_>>(),
            )
        })
        .filter(|(_, f)| !f.is_empty())
        .collect()
    };
    let open = r.flips.len() <= OPEN_FLIPS;
    let mut shown = 0;
    for (title, mut group) in groups {
        if let Some(t) = title {
            let _ = writeln!(s, "<h4>{t} ({})</h4>", group.len());
        }
        by_severity(&mut group);
        let room = HTML_FLIPS - shown;
        let rest = group.len().saturating_sub(room);
        for f in group.into_iter().take(room) {
            shown += 1;
            s += &flip(&r.name, f, open);
        }
        if rest > 0 {
            let _ = writeln!(
                s,
                "<p class=\"more\">… and {} more quer{} {}, not shown: the page shows the first {HTML_FLIPS} flips, the largest losses first (the JSON report, <code>--format json</code>, lists every one).</p>",
                crate::input::grouped(rest as u64),
                if rest == 1 { "y" } else { "ies" },
                if title.is_some() { "in this group" } else { "went from hit to miss" },
            );
        }
    }
    if r.gained > 0 {
        let _ = writeln!(
            s,
            "<p>{} quer{} went from miss to hit.</p>",
            r.gained,
            if r.gained == 1 { "y" } else { "ies" }
        );
    }
    s
}

/// Where the first relevant chunk stood, before and after, in words.
fn rank_words(f: &Flip) -> Option<String> {
    let (before, after) = relevant_ranks(f)?;
    let k = f.top.as_ref()?.k;
    let at = |r: Option<usize>| r.map_or(format!("not in the top {k}"), |r| format!("rank {r}"));
    Some(format!("first relevant chunk {} → {}", at(before), at(after)))
}

fn flip(retriever: &str, f: &Flip, open: bool) -> String {
    let text = f
        .text
        .as_deref()
        .map(|t| format!(" <span class=\"flip-text\">“{}”</span>", esc(t)))
        .unwrap_or_default();
    let ranks = rank_words(f).map(|w| format!("; {w}")).unwrap_or_default();
    let summary = format!(
        "<code class=\"id\">{}</code>{text} <span class=\"stratum-tag\">({})</span>: lost {}{ranks}",
        esc(&f.query_id),
        esc(&f.stratum),
        esc(&f.lost.join(", "))
    );
    let anchor = esc(&query_anchor(retriever, &f.query_id));
    let Some(top) = &f.top else {
        return format!("<p class=\"flip\" id=\"{anchor}\">{summary}</p>\n");
    };
    let lost = top.lost();
    let gained = top.gained();
    let id = |i: &str, mark: &str| {
        let rel = top.relevant.iter().any(|r| r == i);
        let mut class = String::from("id");
        if rel {
            class += " rel";
        }
        if !mark.is_empty() {
            class += " ";
            class += mark;
        }
        format!(
            "<code class=\"{class}\">{}</code>{}",
            esc(i),
            if rel {
                " <span class=\"rel\" title=\"relevant in the gold set\">(relevant)</span>"
            } else {
                ""
            }
        )
    };
    let list = |ids: &[String], moved: &[&str], mark: &str| {
        if ids.is_empty() {
            return "<p>(no results)</p>".to_string();
        }
        let mut l = String::from("<ol class=\"top\">");
        for i in ids {
            let m = if moved.contains(&i.as_str()) { mark } else { "" };
            let text = top
                .texts
                .get(i)
                .map(|t| format!("<div class=\"chunk\">{}</div>", esc(&excerpt(t))))
                .unwrap_or_default();
            let _ = write!(l, "<li>{}{text}</li>", id(i, m));
        }
        l + "</ol>"
    };
    let names = |ids: &[&str], mark: &str| {
        if ids.is_empty() {
            "none".to_string()
        } else {
            ids.iter().map(|i| id(i, mark)).collect::<Vec<_>>().join(", ")
        }
    };
    format!(
        "<details class=\"flip\" id=\"{anchor}\"{}><summary>{summary}</summary>\n<p>Lost from the top {k}: {}<br/>Gained in the top {k}: {}</p>\n<table class=\"top\"><caption>Top {k} of <code>{}</code>, baseline beside current</caption><thead><tr><th scope=\"col\">baseline</th><th scope=\"col\">current</th></tr></thead><tbody><tr><td>{}</td><td>{}</td></tr></tbody></table>\n</details>\n",
        if open { " open=\"open\"" } else { "" },
        names(&lost, "lost-id"),
        names(&gained, "gained-id"),
        esc(&f.query_id),
        list(&top.baseline, &lost, "lost-id"),
        list(&top.current, &gained, "gained-id"),
        k = top.k
    )
}

/// Chunk text shown per id, in characters: enough to tell chunks apart.
const EXCERPT: usize = 240;

/// A chunk's text cut at [`EXCERPT`] characters, whitespace runs as one
/// space.
fn excerpt(t: &str) -> String {
    let flat = t.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(EXCERPT) {
        Some((i, _)) => format!("{}…", &flat[..i]),
        None => flat,
    }
}

/// Entries of the history table shown under the chart (the chart has all).
const TREND_ROWS: usize = 12;

/// The baseline's recorded history and this run after it: the chart
/// `baseline history --plot` draws, of the gated metrics overall (this run
/// a ring), and the last entries as a table.
fn trend(r: &RetrieverOutcome) -> String {
    if r.history.is_empty() && r.current.is_none() {
        return String::new();
    }
    let entries: Vec<crate::baseline::HistoryEntry> = r.history.iter().chain(&r.current).cloned().collect();
    let mut metrics: Vec<String> = Vec::new();
    for c in r.checks.iter().filter(|c| c.tolerance.is_some()) {
        let n = c.cmp.metric.name();
        if !metrics.contains(&n) {
            metrics.push(n);
        }
    }
    let parsed: Vec<crate::metrics::Metric> = metrics.iter().filter_map(|m| m.parse().ok()).collect();
    let svg = plot_svg(&r.name, &entries, &metrics, "all");
    let svg = svg.replacen(
        "<svg ",
        &format!(
            "<svg class=\"chart trend\" role=\"img\" aria-label=\"{}\" ",
            esc(&format!(
                "history of {}: {} recorded results of {}{}",
                r.name,
                r.history.len(),
                metrics.join(", "),
                if r.current.is_some() {
                    ", then this run"
                } else {
                    ""
                }
            ))
        ),
        1,
    );
    let from = entries.len().saturating_sub(TREND_ROWS);
    let view = HistoryView {
        name: &r.name,
        entries: &entries[from..],
        metrics: &parsed,
        scope: "all",
    };
    let this = if r.current.is_some() {
        " This run is the last point (a ring): not recorded unless the gate ran with <code>--record</code>."
    } else {
        ""
    };
    format!(
        "<h3>Trend</h3>\n<figure>{svg}<figcaption>The overall means of the gated metrics at each recorded gate (dots) and baseline update (squares).{this}</figcaption></figure>\n{}",
        table(
            &view.table(),
            &format!(
                "The last {} of {} results of {}{}",
                entries.len() - from,
                entries.len(),
                r.name,
                if r.current.is_some() {
                    ", this run last"
                } else {
                    ""
                }
            )
        )
    )
}

/// An interval plot for compare's side-by-side view: the CI as a bar,
/// delta as a dot, zero grey.
fn interval_plot(delta: f64, lo: f64, hi: f64, sc: &Scale, significant: bool, words: &str) -> String {
    let (w, h) = (sc.x1 + 4.0, 18.0);
    let x0 = sc.x(0.0);
    format!(
        "<svg class=\"interval\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"{words}\"><title>{words}</title><line x1=\"{x0:.1}\" y1=\"0\" x2=\"{x0:.1}\" y2=\"{h}\" stroke=\"#999\"/><line class=\"ci\" x1=\"{:.1}\" y1=\"9\" x2=\"{:.1}\" y2=\"9\" stroke=\"#333\" stroke-width=\"2\"/><circle class=\"delta\" cx=\"{:.1}\" cy=\"9\" r=\"4\" fill=\"{}\"/></svg>",
        sc.x(lo),
        sc.x(hi),
        sc.x(delta),
        if significant { "#1f5fa8" } else { "#888" },
        words = esc(words),
    )
}

fn compare_page(v: &CompareView) -> String {
    let mut b = format!(
        "<header>\n<h1>rgate compare</h1>\n<p class=\"lead\">{}</p>\n<p class=\"lead statement\">{}</p>\n<p class=\"settings\">{}</p>\n</header>\n",
        prose(&v.title()),
        prose(&v.statement()),
        prose(&v.settings_line())
    );
    b += &table(&v.means_table(), "Means of each run over every query");
    if v.family.ranking.len() > 1 {
        b += &table(
            &v.ranking_table(),
            &format!(
                "The variants ranked by {}, each against {}",
                v.family.metric, v.runs[0].name
            ),
        );
    }
    if !v.comparisons.is_empty() {
        b += &side_by_side(v);
    }
    for k in 0..v.comparisons.len() {
        let caption = format!("{} vs {}", v.runs[k + 1].name, v.runs[0].name);
        let _ = writeln!(b, "<h2>{}</h2>", esc(&caption));
        b += &table(
            &v.rows_table(k),
            &format!(
                "{caption}: per metric and stratum (* significant after {})",
                v.family.correction.words()
            ),
        );
        let skewed = v.skewed(k);
        if !skewed.is_empty() {
            let _ = writeln!(b, "<h3>{SKEW_HEADING}</h3>\n<ul>");
            for s in &skewed {
                let _ = writeln!(b, "<li>{}</li>", prose(s));
            }
            b += "</ul>\n";
        }
    }
    page(&v.title(), &b)
}

/// Every variant's delta from the baseline with its interval, one column
/// per variant and one row per metric and stratum, on one scale.
fn side_by_side(v: &CompareView) -> String {
    let level = format!("{:.0}%", (1.0 - v.settings.alpha) * 100.0);
    let sc = Scale::over(
        v.comparisons
            .iter()
            .flatten()
            .flat_map(|r| [r.cmp.ci_low, r.cmp.ci_high, r.cmp.delta, 0.0]),
        6.0,
        150.0,
    );
    let caption = format!(
        "Delta from {} with its {level} interval (bar); blue: significant after {}",
        v.runs[0].name,
        v.family.correction.words()
    );
    let mut s = format!(
        "<h2>Variants side by side</h2>\n{}<table class=\"side-by-side\">\n<caption>{}</caption>\n<thead><tr><th scope=\"col\">metric</th><th scope=\"col\">stratum</th><th scope=\"col\" class=\"num\">{}</th>",
        scroller(&caption),
        esc(&caption),
        esc(&v.runs[0].name)
    );
    for r in &v.runs[1..] {
        let _ = write!(s, "<th scope=\"col\">{}</th>", esc(&r.name));
    }
    s += "</tr></thead>\n<tbody>\n";
    for (i, first) in v.comparisons[0].iter().enumerate() {
        let _ = write!(
            s,
            "<tr><th scope=\"row\">{}</th><td>{}</td><td class=\"num\">{}</td>",
            cell(&first.cmp.metric.name()),
            cell(&first.cmp.stratum),
            f4(first.cmp.baseline)
        );
        for (k, rows) in v.comparisons.iter().enumerate() {
            let Some(row) = rows
                .get(i)
                .filter(|r| r.cmp.metric == first.cmp.metric && r.cmp.stratum == first.cmp.stratum)
            else {
                s += "<td>-</td>";
                continue;
            };
            let words = format!(
                "{} on {}, {}: delta {} [{}, {}]{}",
                row.cmp.metric.name(),
                row.cmp.stratum,
                v.runs[k + 1].name,
                signed4(row.cmp.delta),
                signed4(row.cmp.ci_low),
                signed4(row.cmp.ci_high),
                if row.significant { ", significant" } else { "" }
            );
            let _ = write!(
                s,
                "<td><span class=\"num\">{}{} [{}, {}]</span><br/>{}</td>",
                signed4(row.cmp.delta),
                if row.significant { " *" } else { "" },
                signed4(row.cmp.ci_low),
                signed4(row.cmp.ci_high),
                interval_plot(
                    row.cmp.delta,
                    row.cmp.ci_low,
                    row.cmp.ci_high,
                    &sc,
                    row.significant,
                    &words
                )
            );
        }
        s += "</tr>\n";
    }
    s += "</tbody>\n</table></div>\n";
    s
}

fn eval_page(v: &EvalView) -> String {
    let mut b = format!(
        "<header>\n<h1>rgate eval</h1>\n<p class=\"lead\">{}</p>\n</header>\n",
        prose(&v.title())
    );
    b += &table(&v.means_table(), "Means per scope");
    if let Some(note) = v.interval_note() {
        let _ = writeln!(b, "<p class=\"note\">{}</p>", prose(&note));
    }
    if let Some(t) = v.ppi_table() {
        b += &table(&t, "Prediction-powered estimates beside people's labels alone");
    }
    if let Some(sv) = &v.candidates {
        let _ = writeln!(b, "<h2>{}</h2>", esc(&v.stage_title(sv)));
        b += &table(&v.lost_table(sv), "Queries by stage");
        b += &table(&v.ceiling_table(sv), "Each final metric beside its ceiling");
    }
    b += &curves(v);
    if v.per_query {
        b += "<h2>Per query</h2>\n";
        b += &table(&v.query_table(), "Each query's values");
    }
    page(&format!("rgate eval · {}", v.title()), &b)
}

/// Colours of a curve's scopes, `all` first.
const SCOPE_COLORS: [&str; 8] = [
    "#1a1a1a", "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf",
];

/// One `--curve` as a chart: per scope the mean at each k (a line), its 95%
/// interval (a band), the ceiling of the candidates (dashed) and, with
/// `--target`, the target (a dashed red line) and each scope's depth (a
/// ring on its line). The table under it has every number.
fn curve_chart(c: &Curve) -> String {
    const W: f64 = 720.0;
    const H: f64 = 320.0;
    const L: f64 = 52.0;
    const R: f64 = 170.0;
    const T: f64 = 16.0;
    const B: f64 = 40.0;
    let ks: Vec<u32> = c
        .scopes
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.k))
        .collect();
    let (k_lo, k_hi) = (
        ks.iter().copied().min().unwrap_or(1),
        ks.iter().copied().max().unwrap_or(1),
    );
    let x = |k: u32| {
        if k_hi == k_lo {
            L + (W - L - R) / 2.0
        } else {
            L + (W - L - R) * f64::from(k - k_lo) / f64::from(k_hi - k_lo)
        }
    };
    let mut values: Vec<f64> = Vec::new();
    for s in &c.scopes {
        for p in &s.points {
            values.push(p.mean);
            values.extend(p.interval.map(|i| [i.low, i.high]).into_iter().flatten());
            values.extend(p.ceiling);
        }
    }
    values.extend(c.target);
    let (mut lo, mut hi) = values
        .iter()
        .filter(|v| v.is_finite())
        .fold((1.0f64, 0.0f64), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    if lo > hi {
        (lo, hi) = (0.0, 1.0);
    }
    lo = ((lo - 0.02).max(0.0) * 10.0).floor() / 10.0;
    hi = ((hi + 0.02).min(1.0) * 10.0).ceil() / 10.0;
    if hi - lo < 0.1 {
        hi = (lo + 0.1).min(1.0);
        lo = hi - 0.1;
    }
    let y = |v: f64| T + (H - T - B) * (1.0 - (v.clamp(lo, hi) - lo) / (hi - lo));
    let words = format!(
        "{} for {} scope{}, k from {k_lo} to {k_hi}{}",
        c.spec.name(),
        c.scopes.len(),
        if c.scopes.len() == 1 { "" } else { "s" },
        c.target
            .map_or(String::new(), |t| format!(", target {}", crate::diag::number(t)))
    );
    let mut s = format!(
        "<svg class=\"curve\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{0}\"><title>{0}</title>",
        esc(&words)
    );
    let steps = ((hi - lo) / 0.1).round() as usize;
    for i in 0..=steps {
        let v = lo + 0.1 * i as f64;
        let yy = y(v);
        let _ = write!(
            s,
            "<line x1=\"{L}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" stroke=\"#e5e5e5\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\" fill=\"#555\">{v:.1}</text>",
            W - R,
            L - 6.0,
            yy + 4.0
        );
    }
    let ticks: Vec<u32> = {
        let span = k_hi - k_lo;
        let step = [1u32, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000]
            .into_iter()
            .find(|st| span / st <= 10)
            .unwrap_or(span.max(1));
        let first = k_lo.div_ceil(step) * step;
        let mut t: Vec<u32> = std::iter::once(k_lo)
            .chain((first..=k_hi).step_by(step as usize))
            .collect();
        t.dedup();
        t
    };
    for k in ticks {
        let xx = x(k);
        let _ = write!(
            s,
            "<line x1=\"{xx:.1}\" y1=\"{:.1}\" x2=\"{xx:.1}\" y2=\"{:.1}\" stroke=\"#999\"/><text x=\"{xx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555\">{k}</text>",
            H - B,
            H - B + 5.0,
            H - B + 18.0
        );
    }
    let _ = write!(
        s,
        "<line x1=\"{L}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#999\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555\">k</text>",
        H - B,
        W - R,
        H - B,
        (L + W - R) / 2.0,
        H - 6.0
    );
    if let Some(t) = c.target {
        let yy = y(t);
        let _ = write!(
            s,
            "<line class=\"target\" x1=\"{L}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" stroke=\"#b00020\" stroke-dasharray=\"5,3\"/>",
            W - R
        );
    }
    for (i, sc) in c.scopes.iter().enumerate() {
        let color = SCOPE_COLORS[i % SCOPE_COLORS.len()];
        let band: Vec<(u32, f64, f64)> = sc
            .points
            .iter()
            .filter_map(|p| p.interval.map(|iv| (p.k, iv.low, iv.high)))
            .collect();
        if band.len() > 1 {
            let upper = band.iter().map(|(k, _, h)| format!("{:.1},{:.1}", x(*k), y(*h)));
            let lower = band
                .iter()
                .rev()
                .map(|(k, l, _)| format!("{:.1},{:.1}", x(*k), y(*l)));
            let pts: Vec<String> = upper.chain(lower).collect();
            let _ = write!(
                s,
                "<polygon class=\"band\" points=\"{}\" fill=\"{color}\" fill-opacity=\"0.10\"/>",
                pts.join(" ")
            );
        }
        let line = |f: &dyn Fn(&crate::curve::Point) -> Option<f64>| -> Vec<String> {
            sc.points
                .iter()
                .filter_map(|p| {
                    f(p).filter(|v| v.is_finite())
                        .map(|v| format!("{:.1},{:.1}", x(p.k), y(v)))
                })
                .collect()
        };
        let ceiling = line(&|p| p.ceiling);
        if ceiling.len() > 1 {
            let _ = write!(
                s,
                "<polyline class=\"ceiling\" fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\" stroke-dasharray=\"2,3\" points=\"{}\"/>",
                ceiling.join(" ")
            );
        }
        let mean = line(&|p| Some(p.mean));
        let _ = write!(
            s,
            "<polyline class=\"mean\" data-scope=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>",
            esc(&sc.scope),
            mean.join(" ")
        );
        if let Some(k) = sc.depth.as_ref().and_then(|d| d.k) {
            if let Some(p) = sc.points.iter().find(|p| p.k == k) {
                let _ = write!(
                    s,
                    "<circle class=\"depth\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"><title>{}: k = {k}</title></circle>",
                    x(k),
                    y(p.mean),
                    esc(&sc.scope)
                );
            }
        }
        let ly = T + 8.0 + 18.0 * i as f64;
        let _ = write!(
            s,
            "<line x1=\"{:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{color}\" stroke-width=\"3\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{} ({})</text>",
            W - R + 12.0,
            W - R + 32.0,
            W - R + 38.0,
            ly + 4.0,
            esc(&sc.scope),
            sc.n
        );
    }
    s + "</svg>"
}

/// Each curve: its chart, its table, and the target's answer per scope.
fn curves(v: &EvalView) -> String {
    let mut b = String::new();
    for c in v.curves {
        let _ = writeln!(b, "<h2>Curve {}</h2>", esc(&c.spec.name()));
        let _ = writeln!(
            b,
            "<figure>{}<figcaption>{} Line: the mean at each k; band: its interval; dotted: the ceiling of the candidates; dashed red: the target; ring: the depth that reaches it with confidence.</figcaption></figure>",
            curve_chart(c),
            prose(&v.curve_title(c))
        );
        let lines = v.target_lines(c);
        if let Some((head, rest)) = lines.split_first() {
            let _ = writeln!(b, "<p>{}</p>\n<ul class=\"target\">", prose(head));
            for l in rest {
                let _ = writeln!(b, "<li>{}</li>", prose(l));
            }
            b += "</ul>\n";
        }
        b += &table(
            &v.curve_table(c),
            &format!("{} per scope and cutoff", c.spec.name()),
        );
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 4648 section 10's test vectors.
    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(i.as_bytes()), o, "{i}");
        }
    }

    /// 1,203 flips over two stages: the page holds the first
    /// [`HTML_FLIPS`] (500: 700 lost in rerank, of which 500 shown, then
    /// none of the 503 lost in retrieval) and says how many it left out in
    /// each group; the headings keep the full counts.
    #[test]
    fn the_page_shows_at_most_so_many_flips_and_counts_the_rest() {
        let mut r = RetrieverOutcome::new("r", "run.jsonl".into(), 100);
        r.flips = (0..1203)
            .map(|i| Flip {
                query_id: format!("q{i}"),
                stratum: "s".into(),
                text: None,
                lost: vec!["recall@10".into()],
                lost_in: Some(if i < 700 {
                    LostIn::Rerank
                } else {
                    LostIn::Retrieval
                }),
                top: None,
                ranks: (None, None),
                verified: None,
            })
            .collect();
        r.stages = Some(StageOutcome {
            candidates: "c.jsonl".into(),
            cutoff: None,
            lost: Vec::new(),
            ceilings: Vec::new(),
            losses: Vec::new(),
            absent: Vec::new(),
        });
        let h = flips(&r);
        assert_eq!(h.matches("<p class=\"flip\" id=").count(), HTML_FLIPS);
        assert!(
            h.contains("<h3>Queries that went from hit to miss (1203)</h3>"),
            "{h}"
        );
        assert!(h.contains("<h4>lost in rerank (700)</h4>"), "{h}");
        assert!(h.contains("<h4>lost in retrieval (503)</h4>"), "{h}");
        assert!(
            h.contains("… and 200 more queries in this group, not shown"),
            "{h}"
        );
        assert!(
            h.contains("… and 503 more queries in this group, not shown"),
            "{h}"
        );
        assert!(h.contains(">q499<") && !h.contains(">q500<"), "{h}");
        // Without stages: one group, one remainder, grouped by thousands.
        r.stages = None;
        r.flips
            .extend(r.flips.clone().into_iter().take(1000).map(|mut f| {
                f.query_id += "b";
                f
            }));
        let h = flips(&r);
        assert_eq!(h.matches("<p class=\"flip\" id=").count(), HTML_FLIPS);
        assert!(
            h.contains("… and 1,703 more queries went from hit to miss, not shown"),
            "{h}"
        );
    }

    /// Anchors spelled by hand: letters, digits, `-` and `_` kept, every
    /// other byte `.XX`; the retriever and the query apart by `~`, which
    /// neither spelling produces, so two pairs never share an anchor.
    #[test]
    fn query_anchors_are_reversible_spellings() {
        assert_eq!(query_anchor("hybrid", "q-005"), "q-hybrid~q-005");
        assert_eq!(query_anchor("a b", "é.~"), "q-a.20b~.C3.A9.2E.7E");
        assert_ne!(query_anchor("a~b", "c"), query_anchor("a", "b~c"));
        assert_ne!(query_anchor("r", "a b"), query_anchor("r", "a_b"));
    }

    /// Labels a pixel apart are pushed to 3 units between their edges,
    /// about their midpoint; ones at the plot's edge move inside it.
    #[test]
    fn labels_are_pushed_apart_and_kept_inside() {
        // Widths 20 and 6: centres at least 13 + 3 = 16 apart.
        let (a, b) = apart((100.0, 20.0), (101.0, 6.0), 180.0);
        assert!((b - a - 16.0).abs() < 1e-9 && ((a + b) / 2.0 - 100.5).abs() < 1e-9);
        // Far enough apart: untouched.
        assert_eq!(apart((50.0, 20.0), (100.0, 6.0), 180.0), (50.0, 100.0));
        // At the left edge: the first label's left end at 0.
        let (a, b) = apart((2.0, 20.0), (3.0, 6.0), 180.0);
        assert!((a - 10.0).abs() < 1e-9 && (b - 26.0).abs() < 1e-9, "{a} {b}");
        // At the right edge: the second label's right end at the width.
        let (a, b) = apart((178.0, 20.0), (179.0, 6.0), 180.0);
        assert!((b - 177.0).abs() < 1e-9 && (a - 161.0).abs() < 1e-9, "{a} {b}");
    }

    #[test]
    fn prose_turns_code_spans_into_code_and_escapes_the_rest() {
        assert_eq!(
            prose("see `a<b` & `c`"),
            "see <code>a&lt;b</code> &amp; <code>c</code>"
        );
        // An unpaired backtick is text.
        assert_eq!(prose("it`s <x>"), "it`s &lt;x&gt;");
    }

    #[test]
    fn a_table_escapes_its_cells_and_heads_its_rows() {
        let mut t = Table::new(vec!["id".into(), "v".into()], 1);
        t.push(vec!["<b>x</b>".into(), "1".into()]);
        let h = table(&t, "c&d");
        assert!(h.contains("<caption>c&amp;d</caption>"), "{h}");
        assert!(h.contains("<th scope=\"row\">&lt;b&gt;x&lt;/b&gt;</th>"), "{h}");
        assert!(h.contains("<td class=\"num\">1</td>"), "{h}");
    }
}
