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
    let body = doc.descendants().find(|n| n.has_tag_name("body")).unwrap();
    let first_reason = text(
        body.descendants()
            .find(|n| n.has_tag_name("li"))
            .expect("the retrievers' list"),
    );
    assert!(first_reason.starts_with("bm25: PASS"), "{first_reason}");
    // The config's tolerance and the test that ran are columns.
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
            "upper bound",
            "level",
            "tolerance",
            "test",
            "p (1-sided)",
            "p_adj",
            "mde",
            "verdict"
        ]
    );
    let rows = check_rows(&doc, "r1");
    let fail: Vec<&Vec<String>> = rows.iter().filter(|r| r[14] == "fail").collect();
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
    assert_eq!((f[9].as_str(), f[10].as_str()), ("0.2000", "randomization"));
    // ndcg@10's 10% of its baseline mean 0.7046, in the same precision.
    let ndcg = rows.iter().find(|r| r[0] == "ndcg@10").unwrap();
    assert_eq!(ndcg[9], "0.0705");
    // One precision per column: every p in the column has three decimals
    // at B = 10,000, "<0.001" included.
    for r in &rows {
        for p in [&r[11], &r[12]] {
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
    assert_eq!(summary, "q-005 “LMN-4290”: lost recall@10, hit_rate@3, ndcg@10");
    let (base, cur) = demo_top(
        "config/demo/baselines/hybrid.json",
        "config/demo/runs/hybrid-regressed.jsonl",
        "q-005",
        10,
    );
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
    assert_eq!(points, with_value);
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
            "--virtual-time-budget=2000",
        ])
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
    assert!(summary.ends_with("lost hit_rate@3"), "{summary}");
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
