//! `--format html` (issue 29, items 1 and 8): the page a reviewer opens.
//! It is read back as XML (the page is polyglot markup) to check what it
//! holds: the verdict first, every check with its tolerance and test, the
//! lost queries with what came back instead, the trend; nothing that could
//! fetch; hostile gold text as text. Where Debian's `chromium` is installed
//! (CI installs it), a real headless browser renders it too.

use crate::common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{repo, run, TestProject};
use roxmltree::{Document, Node};
use serde_json::{json, Value};

/// `rgate gate` on the shipped regressed demo, from the repository root
/// (it only reads the shipped baselines and their histories).
fn regressed_demo(format_args: &[&str]) -> common::Out {
    let mut c = common::rgate();
    c.current_dir(repo("")).args([
        "gate",
        "--run",
        "hybrid=config/demo/runs/hybrid-regressed.jsonl",
        "--run",
        "reranked=config/demo/runs/reranked-regressed.jsonl",
    ]);
    c.args(format_args);
    run(c)
}

fn parse(html: &str) -> Document<'_> {
    Document::parse_with_options(
        html,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("not well-formed: {e}\n{html}"))
}

/// All text under `n`, as a reader sees it.
fn text(n: Node) -> String {
    n.descendants()
        .filter(|d| d.is_text())
        .filter_map(|d| d.text())
        .collect()
}

fn elements<'a>(doc: &'a Document, name: &str) -> Vec<Node<'a, 'a>> {
    doc.descendants().filter(|n| n.has_tag_name(name)).collect()
}

/// The check rows of the retriever section `id`, each as its cells' text.
fn check_rows(doc: &Document, section: &str) -> Vec<Vec<String>> {
    let s = doc
        .descendants()
        .find(|n| n.attribute("id") == Some(section))
        .unwrap_or_else(|| panic!("no section {section}"));
    let table = s
        .descendants()
        .find(|n| n.has_tag_name("table") && n.attribute("class") == Some("checks"))
        .expect("a check table");
    table
        .descendants()
        .filter(|n| n.has_tag_name("tr") && n.attribute("data-verdict").is_some())
        .map(|tr| {
            tr.children()
                .filter(|c| c.is_element())
                .map(|c| text(c).trim().to_string())
                .collect()
        })
        .collect()
}

fn headers(doc: &Document, class: &str) -> Vec<String> {
    let t = doc
        .descendants()
        .find(|n| n.has_tag_name("table") && n.attribute("class") == Some(class))
        .unwrap();
    t.descendants()
        .filter(|n| n.has_tag_name("th") && n.attribute("scope") == Some("col"))
        .map(|n| text(n))
        .collect()
}

/// Nothing on the page can fetch: no element that loads (`link`, `img`,
/// `iframe`, `object`, `embed`, `source`, `video`, `audio`, `base`), no
/// `src`, links only to the page's own anchors, no `url(` or `@import` in
/// any style; one script, the page's own; and a CSP that forbids fetching.
fn assert_offline(doc: &Document) {
    for n in doc.descendants().filter(|n| n.is_element()) {
        let name = n.tag_name().name();
        assert!(
            !matches!(
                name,
                "link"
                    | "img"
                    | "iframe"
                    | "object"
                    | "embed"
                    | "source"
                    | "video"
                    | "audio"
                    | "base"
                    | "image"
                    | "use"
            ),
            "<{name}> can fetch"
        );
        for a in n.attributes() {
            assert_ne!(a.name(), "src", "<{name} src>");
            assert!(!a.name().starts_with("on"), "<{name} {}>", a.name());
            if a.name() == "href" {
                assert!(a.value().starts_with('#'), "<{name} href={}>", a.value());
            }
            if a.name() == "style" {
                assert!(!a.value().contains("url("), "{}", a.value());
            }
        }
    }
    for s in elements(doc, "style") {
        let css = text(s);
        assert!(!css.contains("url(") && !css.contains("@import"), "{css}");
    }
    assert_eq!(elements(doc, "script").len(), 1, "one script, the page's own");
    let csp = elements(doc, "meta")
        .into_iter()
        .find(|m| m.attribute("http-equiv") == Some("Content-Security-Policy"))
        .expect("a CSP");
    assert!(
        csp.attribute("content")
            .unwrap()
            .starts_with("default-src 'none';"),
        "{csp:?}"
    );
}

#[test]
fn the_regressed_demo_shows_the_failing_check_against_its_tolerance_first() {
    let o = regressed_demo(&["--format", "html"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let doc = parse(&o.stdout);
    assert_offline(&doc);
    // The verdict comes first: the page's first heading.
    let h1 = elements(&doc, "h1")[0];
    assert_eq!(text(h1), "FAIL · rgate gate");
    // Failing retrievers first, in the list and in the sections: hybrid
    // (r1) and reranked (r2) fail, bm25 (r0) passes (config/rgate.yaml
    // lists bm25, hybrid, reranked).
    let body = doc.descendants().find(|n| n.has_tag_name("body")).unwrap();
    let list: Vec<String> = body
        .descendants()
        .find(|n| n.has_tag_name("ul") && n.attribute("class") == Some("retrievers"))
        .expect("the retrievers' list")
        .children()
        .filter(|n| n.has_tag_name("li"))
        .map(text)
        .collect();
    assert!(list[0].starts_with("hybrid: FAIL"), "{list:?}");
    assert!(list[1].starts_with("reranked: FAIL"), "{list:?}");
    assert!(list[2].starts_with("bm25: PASS"), "{list:?}");
    let sections: Vec<&str> = elements(&doc, "section")
        .iter()
        .filter_map(|n| n.attribute("id"))
        .collect();
    assert_eq!(sections, ["r1", "r2", "r0"]);
    // The config's tolerance, the mde and the test that ran are columns;
    // eleven of them, the bound, its level and the p-values folded below.
    let head = headers(&doc, "checks");
    assert_eq!(
        head,
        [
            "metric",
            "stratum",
            "n",
            "baseline",
            "current",
            "delta",
            "plot",
            "tolerance",
            "mde",
            "test",
            "verdict"
        ]
    );
    let rows = check_rows(&doc, "r1");
    let fail: Vec<&Vec<String>> = rows.iter().filter(|r| r[10] == "fail").collect();
    // recall@10, ndcg@10 and hit_rate@3 on identifier-lookup (the demo's
    // significant-drop rules, config/rgate.yaml).
    assert_eq!(fail.len(), 3, "{rows:?}");
    // hit_rate@3 on identifier-lookup: 28 of 30 hits in the baseline, 12 lost
    // (config/demo/README.md), tolerance 0.20 (config/rgate.yaml).
    let f = fail.iter().find(|r| r[0] == "hit_rate@3").unwrap();
    assert_eq!(
        (f[0].as_str(), f[1].as_str(), f[2].as_str()),
        ("hit_rate@3", "identifier-lookup", "30")
    );
    assert_eq!((f[3].as_str(), f[4].as_str()), ("0.9333", "0.5333"));
    assert_eq!(f[5], "-0.4000");
    assert_eq!((f[7].as_str(), f[9].as_str()), ("0.2000", "randomization"));
    // ndcg@10's 10% of its baseline mean 0.7046, in the same precision.
    let ndcg = rows.iter().find(|r| r[0] == "ndcg@10").unwrap();
    assert_eq!(ndcg[7], "0.0705");
    // The folded table: a row per check, in the same order, with the bound
    // the rule read and the p-values.
    assert_eq!(
        headers(&doc, "check-tests"),
        [
            "metric",
            "stratum",
            "upper bound",
            "level",
            "p (1-sided)",
            "p_adj",
            "verdict"
        ]
    );
    let folded: Vec<Vec<String>> = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("r1"))
        .unwrap()
        .descendants()
        .find(|n| n.has_tag_name("table") && n.attribute("class") == Some("check-tests"))
        .expect("the folded table")
        .descendants()
        .filter(|n| n.has_tag_name("tr"))
        .skip(1)
        .map(|tr| tr.children().filter(|c| c.is_element()).map(text).collect())
        .collect();
    assert_eq!(folded.len(), rows.len());
    for (a, b) in folded.iter().zip(&rows) {
        assert_eq!((&a[0], &a[1], &a[6]), (&b[0], &b[1], &b[10]));
    }
    // One precision per column: every p in the column has three decimals
    // at B = 10,000, "<0.001" included.
    for r in &folded {
        for p in [&r[4], &r[5]] {
            assert!(
                p == "-" || p.trim_start_matches('<').split('.').nth(1).map(str::len) == Some(3),
                "{p} in {r:?}"
            );
        }
    }
    // The failing row's plot draws the tolerance line at -0.2 and the dot at
    // the delta beyond it, and the bound the rule read (significant-drop:
    // the upper bound against 0) below 0.
    let svg = doc
        .descendants()
        .filter(|n| n.has_tag_name("tr") && n.attribute("data-verdict") == Some("fail"))
        .find(|tr| text(*tr).contains("hit_rate@3"))
        .and_then(|tr| tr.descendants().find(|n| n.has_tag_name("svg")))
        .expect("a plot in the failing row");
    assert_eq!(svg.attribute("role"), Some("img"));
    let label = svg.attribute("aria-label").unwrap();
    assert!(
        label.contains("delta -0.4000") && label.contains("tolerance 0.2000"),
        "{label}"
    );
    let x = |class: &str, attr: &str| -> f64 {
        svg.descendants()
            .find(|n| n.attribute("class") == Some(class))
            .and_then(|n| n.attribute(attr))
            .unwrap()
            .parse()
            .unwrap()
    };
    let (tol, dot, bound_end) = (x("tolerance", "x1"), x("delta", "cx"), x("bound", "x2"));
    // The axis is linear: -0.2 at the tolerance line, -0.4 at the dot.
    let zero = tol + (tol - dot) / (-0.2 - -0.4) * 0.2;
    assert!(
        dot < tol && bound_end < zero,
        "dot {dot}, bound to {bound_end}, tolerance {tol}, zero {zero}"
    );
}

/// The baseline's and the current top `k` of `query`, read straight from
/// the shipped files.
fn demo_top(baseline: &str, run: &str, query: &str, k: usize) -> (Vec<String>, Vec<String>) {
    let b: Value = serde_json::from_str(&std::fs::read_to_string(repo(baseline)).unwrap()).unwrap();
    let stored = &b["queries"][query];
    let base: Vec<String> = stored["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .take(k)
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let text = std::fs::read_to_string(repo(run)).unwrap();
    let line: Value = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["query_id"] == query)
        .unwrap();
    let mut results: Vec<(f64, String)> = line["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["score"].as_f64().unwrap(),
                r["id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    results.sort_by(|a, b| b.0.total_cmp(&a.0));
    (base, results.into_iter().take(k).map(|(_, id)| id).collect())
}

#[test]
fn each_lost_query_shows_its_text_and_what_came_back_instead() {
    let o = regressed_demo(&["--format", "html"]);
    let doc = parse(&o.stdout);
    let section = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("r1"))
        .unwrap();
    let flips: Vec<Node> = section
        .descendants()
        .filter(|n| n.has_tag_name("details") && n.attribute("class") == Some("flip"))
        .collect();
    // 12 identifier lookups lost (config/demo/README.md).
    assert_eq!(flips.len(), 12);
    let q5 = flips
        .iter()
        .find(|f| text(**f).starts_with("q-005"))
        .expect("q-005 is lost");
    let summary = text(q5.children().find(|n| n.has_tag_name("summary")).unwrap());
    let (base, cur) = demo_top(
        "config/demo/baselines/hybrid.json",
        "config/demo/runs/hybrid-regressed.jsonl",
        "q-005",
        10,
    );
    // q-005's relevant chunks (config/demo/gold.yaml): the first of the
    // top 10 that is one, before and after.
    let relevant = ["docs/errors.md#7", "docs/limits.md#1"];
    let rank = |ids: &[String]| {
        ids.iter()
            .position(|i| relevant.contains(&i.as_str()))
            .map_or("not in the top 10".to_string(), |p| format!("rank {}", p + 1))
    };
    assert_eq!(
        summary,
        format!(
            "q-005 “LMN-4290” (identifier-lookup): lost recall@10, hit_rate@3, ndcg@10; first relevant chunk {} → {}",
            rank(&base),
            rank(&cur)
        )
    );
    assert_eq!(q5.attribute("id"), Some("q-hybrid~q-005"));
    let ids = |class: &str| -> Vec<String> {
        let ol: Vec<Node> = q5.descendants().filter(|n| n.has_tag_name("ol")).collect();
        let pick = if class == "baseline" { ol[0] } else { ol[1] };
        pick.children()
            .filter(|n| n.has_tag_name("li"))
            .map(|li| text(li.first_element_child().unwrap()))
            .collect()
    };
    assert_eq!(ids("baseline"), base);
    assert_eq!(ids("current"), cur);
    let marked = |class: &str| -> HashSet<String> {
        q5.descendants()
            .filter(|n| n.has_tag_name("li"))
            .filter_map(|li| li.first_element_child())
            .filter(|c| c.attribute("class").unwrap_or("").split(' ').any(|k| k == class))
            .map(text)
            .collect()
    };
    let lost: HashSet<String> = base.iter().filter(|i| !cur.contains(i)).cloned().collect();
    let gained: HashSet<String> = cur.iter().filter(|i| !base.contains(i)).cloned().collect();
    assert!(!lost.is_empty() && !gained.is_empty());
    assert_eq!(marked("lost-id"), lost);
    assert_eq!(marked("gained-id"), gained);
    // The relevant chunk of q-005 in config/demo/gold.yaml is marked so.
    assert!(marked("rel").contains("docs/errors.md#7"), "{:?}", marked("rel"));
}

#[test]
fn two_stages_power_and_trend_are_drawn() {
    let o = regressed_demo(&["--format", "html"]);
    let doc = parse(&o.stdout);
    let reranked = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("r2"))
        .unwrap();
    let all = text(reranked);
    assert!(
        all.contains("14 more queries dropped by the reranker (identifier-lookup)"),
        "{all}"
    );
    // The funnel: identifier-lookup 29 -> 15 reached, 1 -> 15 dropped by the
    // reranker (the markdown report's table, and the demo README's 14 more).
    let funnel: Vec<&str> = reranked
        .descendants()
        .filter(|n| n.has_tag_name("svg") && n.attribute("class") == Some("funnel"))
        .filter_map(|n| n.attribute("aria-label"))
        .collect();
    assert!(
        funnel.contains(&"current: 15 reached, 15 dropped by rerank, 0 missed by retrieval, of 30"),
        "{funnel:?}"
    );
    assert!(funnel.contains(&"baseline: 29 reached, 1 dropped by rerank, 0 missed by retrieval, of 30"));
    // The power panel: the mde beside the tolerance, and the queries needed.
    assert_eq!(
        headers(&doc, "power"),
        [
            "metric",
            "stratum",
            "n",
            "tolerance",
            "mde",
            "plot",
            "enforceable",
            "queries needed"
        ]
    );
    // Every rule of the shipped demo is enforceable on its 90 queries (30
    // a stratum): no check needs more.
    let power: Vec<String> = reranked
        .descendants()
        .filter(|n| n.has_tag_name("table") && n.attribute("class") == Some("power"))
        .flat_map(|t| t.descendants().filter(|n| n.has_tag_name("tr")).skip(1))
        .map(text)
        .collect();
    assert_eq!(power.len(), 4, "{power:?}");
    assert!(power.iter().all(|r| r.contains("yes")), "{power:?}");
    // The caption states the rule power.rs applies (SPEC "enforceable": a
    // drop of twice the tolerance caught 80% of the time), and the numbers
    // beside it obey it: each enforceable row's mde is within twice its
    // tolerance, though past the tolerance itself.
    let table = reranked
        .descendants()
        .find(|n| n.has_tag_name("table") && n.attribute("class") == Some("power"))
        .unwrap();
    let caption = text(table.children().find(|n| n.has_tag_name("caption")).unwrap());
    assert!(
        caption.contains("enforceable when a drop of twice its tolerance is caught at least 80% of the time"),
        "{caption}"
    );
    assert!(!caption.contains("cannot enforce"), "{caption}");
    for tr in table.descendants().filter(|n| n.has_tag_name("tr")).skip(1) {
        let cells: Vec<String> = tr.children().filter(|c| c.is_element()).map(text).collect();
        let (tol, mde): (f64, f64) = (cells[3].parse().unwrap(), cells[4].parse().unwrap());
        assert_eq!(cells[6], "yes");
        assert!(mde <= 2.0 * tol && mde >= tol, "{cells:?}");
    }
    // The trend: one point per entry of the shipped history of each gated
    // metric (config/demo/baselines/reranked.history.jsonl).
    let history = std::fs::read_to_string(repo("config/demo/baselines/reranked.history.jsonl")).unwrap();
    let entries = history.lines().filter(|l| !l.trim().is_empty()).count();
    let chart = reranked
        .descendants()
        .find(|n| n.has_tag_name("figure"))
        .and_then(|f| f.descendants().find(|n| n.has_tag_name("svg")))
        .expect("a trend chart");
    let points = chart
        .descendants()
        .filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("point")))
        .count();
    let gated = ["recall@10", "ndcg@10", "hit_rate@3", "candidates:recall@20"];
    let with_value: usize = history
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let e: Value = serde_json::from_str(l).unwrap();
            gated
                .iter()
                .filter(|m| e["aggregates"]["all"][**m].is_number())
                .count()
        })
        .sum();
    assert!(entries > 0);
    // This run ends the trend: one ring per gated metric, at the overall
    // current mean the check table gives.
    let current: Vec<Node> = chart
        .descendants()
        .filter(|n| n.attribute("class") == Some("point current"))
        .collect();
    assert_eq!(current.len(), gated.len());
    assert_eq!(points, with_value + gated.len());
    for row in check_rows(&doc, "r2")
        .iter()
        .filter(|r| r[1] == "all" && r[7] != "-")
    {
        let ring = current
            .iter()
            .find(|n| text(**n).starts_with(&format!("{} this run ", row[0])))
            .unwrap_or_else(|| panic!("no ring for {}", row[0]));
        assert!(
            text(*ring).ends_with(&format!(": {}", row[4])),
            "{} vs {row:?}",
            text(*ring)
        );
    }
    let ring_x: f64 = current[0].attribute("cx").unwrap().parse().unwrap();
    let last = chart
        .descendants()
        .filter(|n| n.attribute("class") == Some("point gate"))
        .filter_map(|n| n.attribute("cx")?.parse::<f64>().ok())
        .fold(f64::NEG_INFINITY, f64::max);
    assert!(ring_x >= last, "this run at {ring_x}, a recorded gate at {last}");
}

#[test]
fn report_dir_holds_report_html() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().to_str().unwrap();
    let o = regressed_demo(&["--report-dir", dir]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let page = std::fs::read_to_string(out.path().join("report.html")).unwrap();
    let doc = parse(&page);
    assert_offline(&doc);
    // The table on stdout and the page tell one verdict.
    assert!(o.stdout.starts_with("rgate gate: FAIL"), "{}", o.stdout);
    assert_eq!(text(elements(&doc, "h1")[0]), "FAIL · rgate gate");
}

/// A hostile gold set (cli_injection.rs's threats): markup, a script, a
/// link, terminal escapes and a bidi override in ids, text and strata.
const FORGED_TEXT: &str =
    "hello\n<script>alert(1)</script> <img src=x onerror=alert(2)> [x](http://e) \x1b[2J\u{202e}";
const IDS: [&str; 4] = ["<script>", "q\"onmouseover=\"alert(3)", "q'&amp;", "q\u{202e}rtl"];

fn hostile() -> TestProject {
    let mut queries = Vec::new();
    let (mut base, mut cur) = (String::new(), String::new());
    for i in 0..10 {
        let id = IDS.get(i).map_or_else(|| format!("q{i}"), |s| s.to_string());
        let stratum = if i % 2 == 0 { "<b>s</b>" } else { "s2" };
        queries.push(
            json!({"id": id, "text": FORGED_TEXT, "stratum": stratum, "relevant": [format!("<d{i}>")]}),
        );
        base += &format!(
            "{}\n",
            json!({"query_id": id, "results": [{"id": format!("<d{i}>"), "score": 1.0}]})
        );
        let doc = if i < 6 {
            "<i>other</i>".to_string()
        } else {
            format!("<d{i}>")
        };
        cur += &format!(
            "{}\n",
            json!({"query_id": id, "results": [{"id": doc, "score": 1.0}]})
        );
    }
    let p = TestProject::new()
        .with_file("gold.json", json!({"version": 1, "queries": queries}).to_string())
        .with_file("base.jsonl", base)
        .with_file("cur.jsonl", cur)
        .with_file(
            "rgate.yaml",
            "gold: gold.json\nbaselines: baselines\nmetrics: [recall@10]\nretrievers:\n  - name: r\n    run: cur.jsonl\ngate:\n  resamples: 1000\n  rules:\n    - metric: recall@10\n      max_drop: 0.01\n      strata: all\n",
        )
        .with_args(&["--config", "rgate.yaml"]);
    let o = p.run(&["baseline", "update", "--run", "r=base.jsonl"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    p
}

#[test]
fn hostile_gold_text_stays_text() {
    let p = hostile();
    let o = p.run(&["gate", "--format", "html"]);
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    for c in o.stdout.chars() {
        assert!(c == '\n' || !rgate::escape::is_hostile(c), "raw {c:?}");
    }
    let doc = parse(&o.stdout);
    assert_offline(&doc);
    // No element came from the gold set: only the page's own.
    for name in ["b", "i", "img"] {
        assert!(elements(&doc, name).is_empty(), "<{name}> from the gold set");
    }
    // The texts read as written, escapes visible.
    let all = text(doc.root());
    assert!(
        all.contains("“hello\\n<script>alert(1)</script> <img src=x onerror=alert(2)> [x](http://e) \\u{1b}[2J\\u{202e}”"),
        "{all}"
    );
    for id in [
        "<script>",
        "q\"onmouseover=\"alert(3)",
        "q'&amp;",
        "q\\u{202e}rtl",
    ] {
        assert!(all.contains(id), "{id} in {all}");
    }
    assert!(all.contains("<b>s</b>") && all.contains("<i>other</i>"), "{all}");
}

/// Debian's `chromium` (or another name a distribution gives it), if
/// installed.
fn chromium() -> Option<PathBuf> {
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .find_map(|name| {
        std::env::var_os("PATH")?
            .to_str()?
            .split(':')
            .map(|d| Path::new(d).join(name))
            .find(|p| p.is_file())
    })
}

/// The DOM chromium built from `page` after running its script, and what it
/// logged (into files: a full pipe would stall it). No network: the page is
/// a local file, and the flags turn off the browser's own background
/// traffic.
fn render(browser: &Path, page: &Path) -> (String, String) {
    render_with(browser, page, &[])
}

/// [`render`] with more flags (a window size, a longer time budget).
fn render_with(browser: &Path, page: &Path, extra: &[&str]) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let out = profile.path().join("dom.html");
    let log = profile.path().join("log.txt");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--disable-extensions",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .args(if extra.iter().any(|a| a.starts_with("--virtual-time-budget")) {
            &[][..]
        } else {
            &["--virtual-time-budget=2000"][..]
        })
        .args(extra)
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "chromium did not finish in 120 s:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
    (read(&out), read(&log))
}

#[test]
fn a_real_browser_renders_it_offline_and_keeps_gold_text_as_text() {
    let Some(browser) = chromium() else {
        eprintln!("SKIPPED a_real_browser_renders_it_offline_and_keeps_gold_text_as_text: no chromium on PATH (.ci/run installs it)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let demo = dir.path().join("demo.html");
    std::fs::write(&demo, regressed_demo(&["--format", "html"]).stdout).unwrap();
    let (dom, log) = render(&browser, &demo);
    // It rendered: the verdict, every check row of the failing retriever,
    // each with its tolerance, and the flips.
    assert!(dom.contains("FAIL · rgate gate"), "{dom}\n{log}");
    // hybrid fails recall@10, ndcg@10 and hit_rate@3; reranked ndcg@10 and
    // hit_rate@3 (the terminal report of the same run says so).
    assert_eq!(dom.matches("data-verdict=\"fail\"").count(), 5, "{dom}");
    assert_eq!(dom.matches("<tr data-verdict=").count(), 4 + 4 + 5, "{dom}");
    assert!(dom.contains("<td class=\"num tolerance\">0.0700</td>"), "{dom}");
    assert!(dom.contains("q-005"));
    // The script ran under the page's CSP (its hash matched): it shows the
    // filter it keeps hidden without script.
    assert!(
        dom.contains("<label class=\"filter\">"),
        "the script did not run:\n{log}"
    );
    // Nothing was fetched or refused.
    assert!(!log.contains("Content Security Policy"), "{log}");
    assert!(!log.contains("net::ERR"), "{log}");

    let p = hostile();
    let page = p.path("hostile.html");
    std::fs::write(&page, p.run(&["gate", "--format", "html"]).stdout).unwrap();
    let (dom, log) = render(&browser, &page);
    assert_eq!(
        dom.matches("<script").count(),
        1,
        "only the page's script:\n{dom}"
    );
    assert!(!dom.contains("<img"), "{dom}");
    // The id with quotes is text: as an attribute it would end in a quote.
    assert!(dom.contains("q\"onmouseover=\"alert(3)</code>"), "{dom}");
    assert!(!dom.contains("onmouseover=\"alert(3)\""), "{dom}");
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{dom}");
    assert!(!log.contains("Content Security Policy"), "{log}");
}

#[test]
fn eval_and_compare_pages_hold_the_values_of_their_json() {
    let p = TestProject::demo(&["bm25", "hybrid", "hybrid-regressed"]);
    let eval = [
        "eval",
        "--gold",
        "demo/gold.yaml",
        "--run",
        "demo/runs/hybrid.jsonl",
    ];
    let o = p.run(&[&eval[..], &["--format", "html"]].concat());
    assert_eq!(o.code, 0, "{}", o.stderr);
    let doc = parse(&o.stdout);
    assert_offline(&doc);
    let (_, j) = p.json(&eval);
    let all = text(doc.root());
    let recall = j["metrics"]["recall@10"]["all"]
        .as_f64()
        .unwrap_or_else(|| panic!("{j}"));
    assert!(all.contains(&format!("{recall:.4}")), "{recall} in {all}");

    let cmp = [
        "compare",
        "--gold",
        "demo/gold.yaml",
        "demo/runs/bm25.jsonl",
        "demo/runs/hybrid.jsonl",
        "demo/runs/hybrid-regressed.jsonl",
    ];
    let o = p.run(&[&cmp[..], &["--format", "html"]].concat());
    assert_eq!(o.code, 0, "{}", o.stderr);
    let doc = parse(&o.stdout);
    assert_offline(&doc);
    // Side by side: one column per variant after the baseline's.
    let head = headers(&doc, "side-by-side");
    assert_eq!(head.len(), 3 + 2, "{head:?}");
    let (_, j) = p.json(&cmp);
    let all = text(doc.root());
    for run in j["runs"].as_array().unwrap_or_else(|| panic!("{j}")) {
        for row in run["checks"].as_array().unwrap() {
            let (d, lo, hi) = (
                row["delta"].as_f64().unwrap(),
                row["ci_low"].as_f64().unwrap(),
                row["ci_high"].as_f64().unwrap(),
            );
            let cell = format!("[{lo:+.4}, {hi:+.4}]");
            assert!(all.contains(&cell), "{cell} (delta {d}) in {all}");
        }
    }
}

#[test]
fn a_corpus_gives_each_shown_chunk_its_text() {
    let (base, cur) = demo_top(
        "config/demo/baselines/hybrid.json",
        "config/demo/runs/hybrid-regressed.jsonl",
        "q-005",
        10,
    );
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("chunks.jsonl");
    let mut lines = String::new();
    let ids: Vec<&String> = base
        .iter()
        .chain(cur.iter().filter(|i| !base.contains(i)))
        .collect();
    for id in &ids {
        lines += &format!(
            "{}\n",
            json!({"id": id, "text": format!("text of {id}\n<b>x</b>")})
        );
    }
    std::fs::write(&corpus, lines).unwrap();
    let o = regressed_demo(&["--format", "html", "--corpus", corpus.to_str().unwrap()]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let doc = parse(&o.stdout);
    let q5 = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("r1"))
        .unwrap()
        .descendants()
        .find(|n| n.has_tag_name("details") && text(*n).starts_with("q-005"))
        .unwrap();
    let shown: Vec<(String, String)> = q5
        .descendants()
        .filter(|n| n.has_tag_name("li"))
        .map(|li| {
            let chunk = li
                .children()
                .find(|c| c.attribute("class") == Some("chunk"))
                .unwrap_or_else(|| panic!("no text in {li:?}"));
            (text(li.first_element_child().unwrap()), text(chunk))
        })
        .collect();
    assert_eq!(shown.len(), 20);
    for (id, t) in shown {
        assert_eq!(t, format!("text of {id} <b>x</b>"));
    }
}

/// A query lost on hit_rate@3 alone shows its top 3: the chunks that left
/// the top 3 are the ones that cost the hit.
#[test]
fn the_top_k_shown_is_the_cutoff_that_lost_the_query() {
    let o = regressed_demo(&["--format", "html"]);
    let doc = parse(&o.stdout);
    let q5 = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("r2"))
        .unwrap()
        .descendants()
        .find(|n| n.has_tag_name("details") && text(*n).starts_with("q-005"))
        .unwrap();
    let summary = text(q5.children().find(|n| n.has_tag_name("summary")).unwrap());
    assert!(summary.contains(": lost hit_rate@3;"), "{summary}");
    let (base, cur) = demo_top(
        "config/demo/baselines/reranked.json",
        "config/demo/runs/reranked-regressed.jsonl",
        "q-005",
        3,
    );
    let lists: Vec<Vec<String>> = q5
        .descendants()
        .filter(|n| n.has_tag_name("ol"))
        .map(|ol| {
            ol.children()
                .filter(|n| n.has_tag_name("li"))
                .map(|li| text(li.first_element_child().unwrap()))
                .collect()
        })
        .collect();
    assert_eq!(lists, [base, cur]);
}

/// `eval --curve` plots each scope's means, and the table under the chart
/// holds every point of the JSON report's `curves[]`.
#[test]
fn eval_plots_each_curve_with_its_points() {
    let p = TestProject::demo(&["hybrid"]);
    let args = [
        "eval",
        "--gold",
        "demo/gold.yaml",
        "--run",
        "demo/runs/hybrid.jsonl",
        "--curve",
        "recall@1..20",
        "--target",
        "0.8",
    ];
    let o = p.run(&[&args[..], &["--format", "html"]].concat());
    assert_eq!(o.code, 0, "{}", o.stderr);
    let doc = parse(&o.stdout);
    assert_offline(&doc);
    let (_, j) = p.json(&args);
    let scopes = j["curves"][0]["scopes"]
        .as_array()
        .unwrap_or_else(|| panic!("{j}"));
    let chart = doc
        .descendants()
        .find(|n| n.has_tag_name("svg") && n.attribute("class") == Some("curve"))
        .expect("a curve chart");
    let lines: Vec<&str> = chart
        .descendants()
        .filter(|n| n.attribute("class") == Some("mean"))
        .filter_map(|n| n.attribute("data-scope"))
        .collect();
    let names: Vec<&str> = scopes.iter().map(|s| s["scope"].as_str().unwrap()).collect();
    assert_eq!(lines, names);
    // Each line has a vertex per cutoff.
    for l in chart
        .descendants()
        .filter(|n| n.attribute("class") == Some("mean"))
    {
        assert_eq!(l.attribute("points").unwrap().split(' ').count(), 20);
    }
    // The table: one row per scope and k, the mean as JSON has it.
    let rows: Vec<Vec<String>> = doc
        .descendants()
        .filter(|n| n.has_tag_name("table"))
        .find(|t| text(*t).contains("recall@1..20 per scope and cutoff"))
        .expect("the curve table")
        .descendants()
        .filter(|n| n.has_tag_name("tr"))
        .skip(1)
        .map(|tr| tr.children().filter(|c| c.is_element()).map(text).collect())
        .collect();
    assert_eq!(rows.len(), names.len() * 20);
    for s in scopes {
        for pt in s["points"].as_array().unwrap() {
            let k = pt["k"].as_u64().unwrap().to_string();
            let row = rows
                .iter()
                .find(|r| r[0] == s["scope"].as_str().unwrap() && r[2] == k)
                .unwrap_or_else(|| panic!("{} k={k}", s["scope"]));
            assert_eq!(row[3], format!("{:.4}", pt["mean"].as_f64().unwrap()));
        }
    }
    // The target's answer per scope, in words.
    let all = text(doc.root());
    assert!(all.contains("target recall@k >= 0.8"), "{all}");
}

/// The pages issue 47 measures: the shipped demo's passing gate and the
/// regressed one (from the repository root), a compare of three demo runs
/// and an eval with a curve (in a copy of the demo).
fn demo_pages() -> Vec<(&'static str, String)> {
    let mut c = common::rgate();
    c.current_dir(repo("")).args(["gate", "--format", "html"]);
    let pass = run(c);
    assert_eq!(pass.code, 0, "{}", pass.stderr);
    let fail = regressed_demo(&["--format", "html"]);
    assert_eq!(fail.code, 1, "{}", fail.stderr);
    let p = TestProject::demo(&["bm25", "hybrid", "hybrid-regressed"]);
    let cmp = p.run(&[
        "compare",
        "--gold",
        "demo/gold.yaml",
        "demo/runs/bm25.jsonl",
        "demo/runs/hybrid.jsonl",
        "demo/runs/hybrid-regressed.jsonl",
        "--format",
        "html",
    ]);
    assert_eq!(cmp.code, 0, "{}", cmp.stderr);
    let eval = p.run(&[
        "eval",
        "--gold",
        "demo/gold.yaml",
        "--run",
        "demo/runs/hybrid.jsonl",
        "--curve",
        "recall@1..20",
        "--target",
        "0.8",
        "--format",
        "html",
    ]);
    assert_eq!(eval.code, 0, "{}", eval.stderr);
    vec![
        ("gate-pass", pass.stdout),
        ("gate-fail", fail.stdout),
        ("compare", cmp.stdout),
        ("eval-curve", eval.stdout),
    ]
}

/// Landmarks and headings as a screen reader meets them: the page's whole
/// content in one `<main>` (the script aside), headings that start at h1
/// and never skip a level going down (WCAG 2.2 technique G141), and every
/// sideways scroller reachable by keyboard and named, every wide table in
/// one (tables of the top k aside: two columns of wrapped ids).
#[test]
fn every_page_has_a_main_landmark_headings_in_order_and_focusable_scrollers() {
    for (name, html) in demo_pages() {
        let doc = parse(&html);
        assert_offline(&doc);
        let body = doc.descendants().find(|n| n.has_tag_name("body")).unwrap();
        let children: Vec<&str> = body
            .children()
            .filter(|n| n.is_element())
            .map(|n| n.tag_name().name())
            .collect();
        assert_eq!(children, ["main", "script"], "{name}");
        let levels: Vec<usize> = doc
            .descendants()
            .filter_map(|n| {
                let t = n.tag_name().name();
                let l = t.strip_prefix('h')?.parse::<usize>().ok()?;
                (t.len() == 2 && n.is_element()).then_some(l)
            })
            .collect();
        assert_eq!(levels.first(), Some(&1), "{name}: {levels:?}");
        for w in levels.windows(2) {
            assert!(w[1] <= w[0] + 1, "{name}: h{} after h{}: {levels:?}", w[1], w[0]);
        }
        let wide: Vec<Node> = doc
            .descendants()
            .filter(|n| n.has_tag_name("div") && n.attribute("class") == Some("wide"))
            .collect();
        assert!(!wide.is_empty(), "{name}");
        let mut labels = HashSet::new();
        for d in &wide {
            assert_eq!(d.attribute("tabindex"), Some("0"), "{name}");
            assert_eq!(d.attribute("role"), Some("region"), "{name}");
            let label = d.attribute("aria-label").unwrap_or("");
            assert!(!label.is_empty(), "{name}");
            // Landmarks of one role need names that tell them apart.
            assert!(labels.insert(label), "{name}: two regions named {label}");
        }
        for t in elements(&doc, "table") {
            if t.attribute("class") == Some("top") {
                continue;
            }
            let in_scroller = t
                .ancestors()
                .any(|a| a.has_tag_name("div") && a.attribute("class") == Some("wide"));
            assert!(in_scroller, "{name}: a table outside a scroller: {}", text(t));
        }
    }
}

/// The markdown the views share reaches HTML as HTML: no backtick is left
/// in the compare page's text, and `test` in its settings line is code.
#[test]
fn the_compare_page_shows_no_markdown_backticks() {
    let pages = demo_pages();
    let (_, html) = pages.iter().find(|(n, _)| *n == "compare").unwrap();
    let doc = parse(html);
    let all = text(doc.root());
    assert!(!all.contains('`'), "{all}");
    let settings = doc
        .descendants()
        .find(|n| n.attribute("class") == Some("settings"))
        .unwrap();
    assert!(
        settings
            .descendants()
            .any(|n| n.has_tag_name("code") && text(n) == "test"),
        "{}",
        text(settings)
    );
    // The conclusion comes before the tables.
    let first_table = doc.descendants().position(|n| n.has_tag_name("table")).unwrap();
    let statement = doc
        .descendants()
        .position(|n| n.attribute("class") == Some("lead statement"))
        .unwrap();
    assert!(statement < first_table);
}

/// The relevant chunks of each query of a gold set written as the shipped
/// demo's `gold.yaml` is (`- id: X`, then `relevant: [...]` or, graded,
/// `relevant: {"id": grade, ...}` on its own line; grade 0 is not
/// relevant).
fn demo_relevant() -> std::collections::HashMap<String, Vec<String>> {
    let gold = std::fs::read_to_string(repo("config/demo/gold.yaml")).unwrap();
    let mut out = std::collections::HashMap::new();
    let mut id = String::new();
    for line in gold.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("- id:") {
            id = rest.trim().to_string();
        } else if let Some(rest) = l.strip_prefix("relevant:") {
            let ids: Vec<String> = rest
                .trim()
                .trim_start_matches(['[', '{'])
                .trim_end_matches([']', '}'])
                .split(',')
                .filter_map(|s| {
                    let (id, grade) = s.rsplit_once(':').unwrap_or((s, "1"));
                    let id = id.trim().trim_matches('"').to_string();
                    (!id.is_empty() && grade.trim() != "0").then_some(id)
                })
                .collect();
            out.insert(id.clone(), ids);
        }
    }
    out
}

/// Lost queries a link can reach and a reviewer reads worst first: each
/// under `id="q-<retriever>~<query id>"` (unique on the page), ordered by
/// the number of gated metrics lost, then by how far the first relevant
/// chunk fell (from the shipped files); and a count per metric equal to
/// the JSON report's flips.
#[test]
fn lost_queries_have_anchors_counts_per_metric_and_the_largest_loss_first() {
    let o = regressed_demo(&["--format", "html"]);
    let doc = parse(&o.stdout);
    let ids: Vec<&str> = doc.descendants().filter_map(|n| n.attribute("id")).collect();
    let unique: HashSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "repeated ids");
    let json: Value = serde_json::from_str(&regressed_demo(&["--format", "json"]).stdout).unwrap();
    let relevant = demo_relevant();
    for (section, name, runs) in [
        (
            "r1",
            "hybrid",
            (
                "config/demo/baselines/hybrid.json",
                "config/demo/runs/hybrid-regressed.jsonl",
            ),
        ),
        (
            "r2",
            "reranked",
            (
                "config/demo/baselines/reranked.json",
                "config/demo/runs/reranked-regressed.jsonl",
            ),
        ),
    ] {
        let s = doc
            .descendants()
            .find(|n| n.attribute("id") == Some(section))
            .unwrap();
        let flips: Vec<Node> = s
            .descendants()
            .filter(|n| n.attribute("class") == Some("flip"))
            .collect();
        let r = json["retrievers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap();
        let expected = r["flips"].as_array().unwrap();
        assert_eq!(flips.len(), expected.len());
        // Per stage group (reranked's are all lost in rerank: one group).
        let mut last: Option<(usize, i64)> = None;
        for f in &flips {
            let id = text(f.descendants().find(|n| n.has_tag_name("code")).unwrap());
            assert_eq!(f.attribute("id"), Some(format!("q-{name}~{id}").as_str()));
            let e = expected.iter().find(|e| e["query_id"] == id.as_str()).unwrap();
            let lost = e["lost"].as_array().unwrap().len();
            // The cutoff the page shows: the list's length.
            let k = f
                .descendants()
                .find(|n| n.has_tag_name("ol"))
                .unwrap()
                .children()
                .filter(|n| n.has_tag_name("li"))
                .count();
            let (base, cur) = demo_top(runs.0, runs.1, &id, k);
            let first = |ids: &[String]| {
                ids.iter()
                    .position(|i| relevant[&id].contains(i))
                    .map_or(k as i64 + 1, |p| p as i64 + 1)
            };
            let fall = first(&cur) - first(&base);
            if let Some((l, fl)) = last {
                assert!(
                    lost < l || (lost == l && fall <= fl),
                    "{name}: {id} (lost {lost}, fall {fall}) after (lost {l}, fall {fl})"
                );
            }
            last = Some((lost, fall));
        }
        // The count per metric.
        let t = s
            .descendants()
            .find(|n| n.has_tag_name("table") && n.attribute("class") == Some("lost-per-metric"))
            .expect("a count per metric");
        let rows: Vec<Vec<String>> = t
            .descendants()
            .filter(|n| n.has_tag_name("tr"))
            .skip(1)
            .map(|tr| tr.children().filter(|c| c.is_element()).map(text).collect())
            .collect();
        assert!(!rows.is_empty());
        for row in rows {
            let n = expected
                .iter()
                .filter(|e| e["lost"].as_array().unwrap().iter().any(|m| m == row[0].as_str()))
                .count();
            assert_eq!(row[1], n.to_string(), "{name}: {row:?}");
        }
    }
}

/// An anchor stays a valid, unique id for any query id: the hostile gold
/// set's ids, spelled by hand (`.XX` for each byte outside letters, digits,
/// `-` and `_`).
#[test]
fn hostile_query_ids_get_safe_unique_anchors() {
    let p = hostile();
    let o = p.run(&["gate", "--format", "html"]);
    let doc = parse(&o.stdout);
    let anchors: HashSet<&str> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("flip"))
        .filter_map(|n| n.attribute("id"))
        .collect();
    for a in [
        "q-r~.3Cscript.3E",
        "q-r~q.22onmouseover.3D.22alert.283.29",
        "q-r~q.27.26amp.3B",
        "q-r~q.E2.80.AErtl",
    ] {
        assert!(anchors.contains(a), "{a} in {anchors:?}");
    }
    assert_eq!(anchors.len(), 6, "{anchors:?}");
}

/// A tight tolerance (0.01 on a plot spanning a drop of 0.6: under 3 px
/// from zero) keeps its label clear of zero's: the labels' centres sit at
/// least half their widths apart, a glyph of these labels being at most
/// 0.6 em (Helvetica's and Arial's digits are 0.556 em).
#[test]
fn tolerance_and_zero_labels_do_not_collide() {
    let p = hostile();
    let o = p.run(&["gate", "--format", "html"]);
    let doc = parse(&o.stdout);
    let mut seen = 0;
    for svg in doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("check-plot"))
    {
        let label = |class: &str| {
            svg.descendants()
                .find(|n| n.attribute("class") == Some(class))
                .map(|n| {
                    let size: f64 = n.attribute("font-size").unwrap().parse().unwrap();
                    let x: f64 = n.attribute("x").unwrap().parse().unwrap();
                    (x, text(n).chars().count() as f64 * 0.6 * size)
                })
        };
        let (Some(t), Some(z)) = (label("tolerance-label"), label("zero-label")) else {
            continue;
        };
        let line = |class: &str| -> f64 {
            svg.descendants()
                .find(|n| n.attribute("class") == Some(class))
                .and_then(|n| n.attribute("x1"))
                .unwrap()
                .parse()
                .unwrap()
        };
        seen += 1;
        // The lines are too close for labels centred on them ...
        assert!(
            line("zero") - line("tolerance") < (t.1 + z.1) / 2.0,
            "{} {}",
            line("zero"),
            line("tolerance")
        );
        // ... the labels are not on top of each other.
        assert!(
            z.0 - t.0 >= (t.1 + z.1) / 2.0,
            "tolerance label at {t:?}, zero's at {z:?}"
        );
        let w: f64 = svg.attribute("width").unwrap().parse().unwrap();
        assert!(t.0 - t.1 / 2.0 >= 0.0 && z.0 + z.1 / 2.0 <= w, "{t:?} {z:?}");
    }
    assert!(seen > 0);
}

/// A gold set whose first query has a 600-character unbroken id and text,
/// a 300-character stratum and 200-character chunk ids, lost: nothing may
/// widen the page.
fn long_texts() -> TestProject {
    let long_id = format!("q{}", "x".repeat(599));
    let (mut queries, mut base, mut cur) = (Vec::new(), String::new(), String::new());
    for i in 0..10 {
        let id = if i == 0 { long_id.clone() } else { format!("q{i}") };
        let chunk = format!("d{i}{}", "z".repeat(200));
        let stratum = if i % 2 == 0 {
            format!("s{}", "y".repeat(300))
        } else {
            "s2".into()
        };
        queries.push(json!({"id": id, "text": "T".repeat(600), "stratum": stratum, "relevant": [chunk]}));
        base += &format!(
            "{}\n",
            json!({"query_id": id, "results": [{"id": chunk, "score": 1.0}]})
        );
        let now = if i < 6 {
            format!("other{}", "w".repeat(300))
        } else {
            chunk
        };
        cur += &format!(
            "{}\n",
            json!({"query_id": id, "results": [{"id": now, "score": 1.0}]})
        );
    }
    let p = TestProject::new()
        .with_file("gold.json", json!({"version": 1, "queries": queries}).to_string())
        .with_file("base.jsonl", base)
        .with_file("cur.jsonl", cur)
        .with_file(
            "rgate.yaml",
            "gold: gold.json\nbaselines: baselines\nmetrics: [recall@10]\nretrievers:\n  - name: r\n    run: cur.jsonl\ngate:\n  resamples: 1000\n  rules:\n    - metric: recall@10\n      max_drop: 0.01\n      strata: all\n",
        )
        .with_args(&["--config", "rgate.yaml"]);
    let o = p.run(&["baseline", "update", "--run", "r=base.jsonl"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    p
}

/// `html` without its Content-Security-Policy (a copy for measuring only;
/// the shipped page's CSP is tested above) and with `script` before
/// `</body>`.
fn with_probe(html: &str, script: &str) -> String {
    let start = html.find("<meta http-equiv=\"Content-Security-Policy\"").unwrap();
    let end = start + html[start..].find("/>").unwrap() + 2;
    let html = format!("{}{}", &html[..start], &html[end..]);
    html.replacen("</body>", &format!("<script>{script}</script></body>"), 1)
}

/// Measured in the browser once the page has laid out: the document's
/// width, the check tables' `verdict` and `mde` headers clipped by a
/// scroller or the window, and check plots whose tolerance and zero
/// labels overlap.
const PROBE: &str = r#"addEventListener("load",function(){
var vw=document.documentElement.clientWidth,hidden=[],overlaps=0;
document.querySelectorAll("table.checks thead th").forEach(function(th){
var n=th.textContent.trim();if(n!=="verdict"&&n!=="mde")return;
var r=th.getBoundingClientRect(),clip=vw;
for(var p=th.parentElement;p;p=p.parentElement){if(getComputedStyle(p).overflowX!=="visible")clip=Math.min(clip,p.getBoundingClientRect().right);}
if(r.right>clip+0.5||r.width===0)hidden.push(n);});
document.querySelectorAll("svg.check-plot").forEach(function(s){
var a=s.querySelector(".tolerance-label"),b=s.querySelector(".zero-label");if(!a||!b)return;
var x=a.getBoundingClientRect(),y=b.getBoundingClientRect();
if(x.right>y.left&&y.right>x.left&&x.bottom>y.top&&y.bottom>x.top)overlaps++;});
parent.postMessage("width="+document.documentElement.scrollWidth+" hidden="+hidden.join(",")+" overlaps="+overlaps,"*");});"#;

/// The probe's three figures for `html` in a viewport `width` px wide: an
/// iframe that wide (headless chromium's window is at least 500 px wide),
/// the page posting its figures to the frame's parent.
fn probe(browser: &Path, dir: &Path, name: &str, html: &str, width: u32) -> (u32, String, u32) {
    let inner = format!("{name}-{width}.html");
    std::fs::write(dir.join(&inner), with_probe(html, PROBE)).unwrap();
    let page = dir.join(format!("{name}-{width}-frame.html"));
    std::fs::write(
        &page,
        format!(
            "<!DOCTYPE html><html><body style=\"margin:0\"><iframe src=\"{inner}\" style=\"width:{width}px;height:900px;border:0\"></iframe><script>addEventListener(\"message\",function(e){{document.body.setAttribute(\"data-probe\",e.data);}});</script></body></html>"
        ),
    )
    .unwrap();
    let (dom, log) = render_with(browser, &page, &["--window-size=1400,1000"]);
    let at = dom
        .find("data-probe=\"")
        .unwrap_or_else(|| panic!("{name} at {width}: no probe\n{log}"));
    let probe = &dom[at + 12..];
    let probe = &probe[..probe.find('"').unwrap()];
    let field = |k: &str| {
        probe
            .split(' ')
            .find_map(|f| f.strip_prefix(k))
            .unwrap()
            .to_string()
    };
    (
        field("width=").parse().unwrap(),
        field("hidden="),
        field("overlaps=").parse().unwrap(),
    )
}

/// Issue 47's measures in a real browser: no page is wider than a 390 px
/// phone's screen allows (400 px) or than a 1280 px window; at 1280 px the
/// check tables show `verdict` and `mde` without scrolling; a 600-character
/// unbroken id widens nothing; no tolerance label overlaps zero's.
#[test]
fn pages_fit_a_phone_and_a_laptop_and_show_every_verdict() {
    let Some(browser) = chromium() else {
        eprintln!("SKIPPED pages_fit_a_phone_and_a_laptop_and_show_every_verdict: no chromium on PATH (.ci/run installs it)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut pages = demo_pages();
    let long = long_texts();
    let o = long.run(&["gate", "--format", "html"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    pages.push(("long-texts", o.stdout));
    let o = hostile().run(&["gate", "--format", "html"]);
    pages.push(("tight-tolerance", o.stdout));
    for (name, html) in &pages {
        let (narrow, _, overlaps) = probe(&browser, dir.path(), name, html, 390);
        assert!(narrow <= 400, "{name}: {narrow} px wide at 390");
        assert_eq!(overlaps, 0, "{name} at 390");
        let (wide, hidden, overlaps) = probe(&browser, dir.path(), name, html, 1280);
        assert!(wide <= 1280, "{name}: {wide} px wide at 1280");
        assert_eq!(hidden, "", "{name}: hidden at 1280");
        assert_eq!(overlaps, 0, "{name} at 1280");
    }
}

/// axe-core (the engine of Lighthouse's and Deque's audits) finds nothing
/// on the demo's pages. Needs axe-core's `axe.min.js` at `RGATE_AXE_JS`
/// (.ci/run installs it with npm).
#[test]
fn axe_finds_no_violations() {
    let Some(browser) = chromium() else {
        eprintln!("SKIPPED axe_finds_no_violations: no chromium on PATH (.ci/run installs it)");
        return;
    };
    let Some(axe) = std::env::var_os("RGATE_AXE_JS").and_then(|p| std::fs::read_to_string(p).ok()) else {
        eprintln!("SKIPPED axe_finds_no_violations: RGATE_AXE_JS does not name axe-core's axe.min.js (.ci/run installs it)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, html) in demo_pages() {
        let script = format!(
            "{axe}\n;axe.run(document).then(function(r){{document.body.setAttribute(\"data-axe\",r.violations.map(function(v){{return v.id+\":\"+v.nodes.length;}}).join(\" \")||\"none\");}});"
        );
        let page = dir.path().join(format!("{name}.html"));
        std::fs::write(&page, with_probe(&html, &script)).unwrap();
        let (dom, log) = render_with(
            &browser,
            &page,
            &["--window-size=1280,900", "--virtual-time-budget=20000"],
        );
        let at = dom
            .find("data-axe=\"")
            .unwrap_or_else(|| panic!("{name}: axe did not finish\n{log}"));
        let found = &dom[at + 10..];
        assert_eq!(&found[..found.find('"').unwrap()], "none", "{name}");
    }
}
