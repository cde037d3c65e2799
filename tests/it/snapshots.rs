//! Snapshots of the shipped demo's reports, every format the command
//! prints: exit code, stdout and stderr together in one file each (as uv's
//! CLI tests keep them), so that a change to a report is reviewed as a diff
//! of `tests/it/snapshots/`. Update after a deliberate change with
//! `INSTA_UPDATE=always cargo test --test it snapshots::` (or `cargo insta
//! review`), then read the diff before committing it.
//!
//! What varies from run to run or machine to machine is masked: the
//! scratch directory of a test, the clock (`created_at`), and rgate's
//! version. Everything else is the demo's own, fixed by its seed.

use std::path::Path;

use crate::common::{command, repo};

/// The regressed run the demo ships, gated in place of `hybrid`'s.
const REGRESSED: &str = "hybrid=config/demo/runs/hybrid-regressed.jsonl";

/// `rgate ARGS` in `dir` with `env`, as one text: the exit code, then
/// stdout, then stderr.
fn transcript(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut c = command();
    c.current_dir(dir).args(args).env("COLUMNS", "120");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    format!(
        "exit: {}\n----- stdout -----\n{}\n----- stderr -----\n{}",
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Filters for what is not the demo's: `dir` (a scratch copy), the clock,
/// the version.
fn filters(dir: &Path) -> Vec<(String, String)> {
    let mut f = vec![
        (
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z".to_string(),
            "[TIME]".to_string(),
        ),
        (regex_escape(env!("CARGO_PKG_VERSION")), "[VERSION]".to_string()),
    ];
    let shown = dir.display().to_string();
    if !shown.is_empty() {
        f.insert(0, (regex_escape(&shown), "[DIR]".to_string()));
    }
    f
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '/' || c == '-' {
                c.to_string()
            } else {
                format!("\\{c}")
            }
        })
        .collect()
}

fn assert_snap(name: &str, dir: &Path, text: &str) {
    let mut settings = insta::Settings::clone_current();
    for (re, with) in filters(dir) {
        settings.add_filter(&re, with);
    }
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(name, text));
}

/// The gate on the shipped demo in place: `--config config/rgate.yaml`
/// from the repository's root, as the README runs it.
fn demo(name: &str, args: &[&str], env: &[(&str, &str)]) {
    let root = repo("");
    let mut all = vec!["--config", "config/rgate.yaml"];
    all.extend_from_slice(args);
    let t = transcript(&root, &all, env);
    assert_snap(name, &root, &t);
}

const GATE_FORMATS: [&str; 5] = ["table", "json", "markdown", "csv", "junit"];

#[test]
fn gate_pass_in_every_format() {
    for f in GATE_FORMATS {
        demo(&format!("gate_pass_{f}"), &["gate", "--format", f], &[]);
    }
}

#[test]
fn gate_fail_in_every_format() {
    for f in GATE_FORMATS {
        demo(
            &format!("gate_fail_{f}"),
            &["gate", "--run", REGRESSED, "--format", f],
            &[],
        );
    }
}

#[test]
fn gate_fail_in_a_narrow_terminal_and_quiet() {
    demo(
        "gate_fail_table_80",
        &["gate", "--run", REGRESSED],
        &[("COLUMNS", "80")],
    );
    demo("gate_fail_quiet", &["gate", "-q", "--run", REGRESSED], &[]);
}

/// The job summary and annotations of the failing gate in GitHub Actions.
#[test]
fn gate_fail_job_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let summary = tmp.path().join("summary.md");
    let root = repo("");
    let t = transcript(
        &root,
        &[
            "--config",
            "config/rgate.yaml",
            "gate",
            "--run",
            REGRESSED,
            "--format",
            "json",
            "--output",
            tmp.path().join("report.json").to_str().unwrap(),
        ],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
            ("RUNNER_TEMP", tmp.path().to_str().unwrap()),
        ],
    );
    let text = format!(
        "{t}\n----- job summary -----\n{}",
        std::fs::read_to_string(&summary).unwrap()
    );
    assert_snap("gate_fail_job_summary", tmp.path(), &text);
}

#[test]
fn compare_and_eval_on_the_demo() {
    let runs = [
        "bm25=config/demo/runs/bm25.jsonl",
        "hybrid=config/demo/runs/hybrid.jsonl",
    ];
    for f in ["table", "markdown", "json", "csv"] {
        let mut args = vec!["compare", "--gold", "config/demo/gold.yaml", "--by-stratum"];
        args.extend_from_slice(&runs);
        args.extend_from_slice(&["--format", f]);
        let root = repo("");
        assert_snap(&format!("compare_{f}"), &root, &transcript(&root, &args, &[]));
    }
    for f in ["table", "markdown", "json", "csv"] {
        let args = [
            "eval",
            "--gold",
            "config/demo/gold.yaml",
            "--run",
            "config/demo/runs/hybrid.jsonl",
            "--by-stratum",
            "--format",
            f,
        ];
        let root = repo("");
        assert_snap(&format!("eval_{f}"), &root, &transcript(&root, &args, &[]));
    }
}

/// A copy of the demo's config and data in a scratch directory, for the
/// commands that write baselines.
fn demo_copy() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&repo("config"), &tmp.path().join("config"));
    tmp
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn baseline_update_accepting_a_regression() {
    for f in ["table", "markdown", "json", "csv", "junit"] {
        let tmp = demo_copy();
        let t = transcript(
            tmp.path(),
            &[
                "--config",
                "config/rgate.yaml",
                "baseline",
                "update",
                "hybrid",
                "--run",
                REGRESSED,
                "--allow-regression",
                "--note",
                "tokenizer change reviewed in #12",
                "--format",
                f,
            ],
            &[],
        );
        assert_snap(&format!("baseline_update_allow_regression_{f}"), tmp.path(), &t);
    }
}

/// The lines of `text` in columns (every report here is uncoloured).
fn widest(text: &str) -> usize {
    text.lines()
        .map(rgate::report::table::display_width)
        .max()
        .unwrap_or(0)
}

fn out(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut c = command();
    c.current_dir(dir).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The pull request comment of the regressed demo, measured as a reviewer
/// meets it: at most 6 KB; a headline naming `hybrid`, recall@10's drop
/// (0.8861 -> 0.7861: 0.1, by the demo's baseline) and its tolerance
/// (0.07, the config's); a first table of at most 7 columns; the 12 lost
/// identifier lookups counted against the stratum's 30 queries; the
/// command that accepts the drop; the passing retrievers in one line.
#[test]
fn the_demo_comment_leads_with_what_failed() {
    let (code, md, _) = out(
        &repo(""),
        &[
            "--config",
            "config/rgate.yaml",
            "gate",
            "--run",
            REGRESSED,
            "--format",
            "markdown",
        ],
        &[],
    );
    assert_eq!(code, 1);
    assert!(md.len() <= 6000, "{} bytes:\n{md}", md.len());
    let first = md.lines().next().unwrap();
    assert_eq!(
        first,
        "## ❌ rgate gate: **FAIL** · hybrid: recall@10 fell 0.1 (tolerance 0.07), +2 more checks"
    );
    let header = md.lines().find(|l| l.starts_with('|')).unwrap();
    assert_eq!(header.matches(" | ").count() + 1, 7, "{header}");
    assert!(
        md.contains("12 of 30 identifier-lookup queries lost their answer"),
        "{md}"
    );
    assert!(
        md.contains("rgate --config config/rgate.yaml baseline update hybrid --run 'hybrid=config/demo/runs/hybrid-regressed.jsonl' --allow-regression --note"),
        "{md}"
    );
    assert!(
        md.contains("✅ Passed: bm25 (3 checks), reranked (4 checks)"),
        "{md}"
    );
    // Failing first: hybrid's block before the passing retrievers' line.
    let hybrid = md.find("### ❌ hybrid").unwrap();
    assert!(md.find("✅ Passed: bm25").unwrap() > hybrid);
}

/// A gate whose queries lose by the hundred: 2,000 queries, 343 of them
/// lost (recall@10 from 1 to 0 on each, by construction), still posts a
/// comment of at most 12 KB, the verdict whole and the lists cut.
#[test]
fn a_comment_stays_under_12_kb_whatever_the_gold_set() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut gold = String::from("version: 1\nqueries:\n");
    let mut good = String::new();
    let mut bad = String::new();
    for i in 0..2000 {
        gold += &format!(
            "  - id: q{i:04}\n    text: \"query number {i} about some long identifier-like thing\"\n    stratum: s{}\n    relevant: [d{i}]\n",
            i % 7
        );
        good += &format!("{{\"query_id\": \"q{i:04}\", \"results\": [\"d{i}\"]}}\n");
        // The first 343 queries (every stratum) lose their answer.
        let lose = i < 343;
        let doc = if lose { "x".to_string() } else { format!("d{i}") };
        bad += &format!("{{\"query_id\": \"q{i:04}\", \"results\": [\"{doc}\"]}}\n");
    }
    let lost = 343;
    std::fs::write(d.join("gold.yaml"), gold).unwrap();
    std::fs::write(d.join("good.jsonl"), good).unwrap();
    std::fs::write(d.join("bad.jsonl"), bad).unwrap();
    std::fs::write(
        d.join("rgate.yaml"),
        "gold: gold.yaml\nbaselines: baselines\nmetrics: [recall@10]\nretrievers:\n  - name: r\n    run: good.jsonl\ngate:\n  test: t-test\n  rules:\n    - metric: recall@10\n      max_drop: 0.05\n      strata: all\n",
    )
    .unwrap();
    let (code, _, err) = out(d, &["--config", "rgate.yaml", "baseline", "update", "r"], &[]);
    assert_eq!(code, 0, "{err}");
    let (code, md, err) = out(
        d,
        &[
            "--config",
            "rgate.yaml",
            "gate",
            "--run",
            "r=bad.jsonl",
            "--format",
            "markdown",
        ],
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert!(md.len() <= 12_000, "{} bytes", md.len());
    assert!(
        md.starts_with("## ❌ rgate gate: **FAIL** · r: recall@10 fell "),
        "{md}"
    );
    assert!(md.contains(&format!("({lost} went from hit to miss")), "{md}");
    assert!(md.contains(&format!("…and {} more", lost - 8)), "{md}");
    eprintln!("2,000-query comment: {} bytes, {lost} lost", md.len());
}

/// The regressed demo's terminal report fits the terminal: 120 columns
/// and 80, the reason wrapped, and `-q` short.
#[test]
fn the_terminal_report_fits_its_width() {
    for w in [120, 80] {
        let (code, text, _) = out(
            &repo(""),
            &["--config", "config/rgate.yaml", "gate", "--run", REGRESSED],
            &[("COLUMNS", &w.to_string())],
        );
        assert_eq!(code, 1);
        assert!(widest(&text) <= w, "{w}: {} columns\n{text}", widest(&text));
        assert!(
            text.starts_with("rgate gate: FAIL · hybrid: recall@10 fell 0.1"),
            "{text}"
        );
        // Failing retriever first.
        assert!(text.find("FAIL hybrid").unwrap() < text.find("PASS bm25").unwrap());
        assert!(text.contains("Next steps:"), "{text}");
        eprintln!("terminal at {w}: widest line {} columns", widest(&text));
    }
    let (_, quiet, _) = out(
        &repo(""),
        &["--config", "config/rgate.yaml", "gate", "-q", "--run", REGRESSED],
        &[("COLUMNS", "120")],
    );
    assert!(widest(&quiet) <= 120, "{quiet}");
    assert!(
        quiet.lines().any(|l| l.starts_with(
            "FAIL hybrid: recall@10 fell 0.1 (tolerance 0.07), ndcg@10 fell 0.1135 (tolerance 0.0705)"
        )),
        "{quiet}"
    );
}

/// `baseline update --allow-regression` says it recorded, with the note,
/// in place of FAIL, in every format that has a headline.
#[test]
fn an_accepted_regression_reads_recorded() {
    let note = "tokenizer change reviewed in #12";
    for (f, want) in [
        ("table", format!("rgate baseline update: recorded (regression accepted: {note}) · hybrid: recall@10 fell 0.1")),
        ("markdown", format!("## ⚠️ rgate baseline update: recorded (regression accepted: {note}) · hybrid: recall@10 fell 0.1")),
    ] {
        let tmp = demo_copy();
        let (code, text, err) = out(
            tmp.path(),
            &["--config", "config/rgate.yaml", "baseline", "update", "hybrid", "--run", REGRESSED,
              "--allow-regression", "--note", note, "--format", f],
            &[],
        );
        assert_eq!(code, 0, "{err}");
        assert!(text.starts_with(&want), "{f}:\n{text}");
        assert!(!text.lines().next().unwrap().contains("FAIL"), "{text}");
    }
    let tmp = demo_copy();
    let (code, text, _) = out(
        tmp.path(),
        &[
            "--config",
            "config/rgate.yaml",
            "baseline",
            "update",
            "hybrid",
            "--run",
            REGRESSED,
            "--allow-regression",
            "--note",
            note,
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["recorded"]["regression_accepted"], true);
    assert_eq!(v["recorded"]["note"], note);
    assert_eq!(v["verdict"], "fail");
}

/// A gate failing only because its judge disagrees with people (the
/// fixture's kappa 0.16 against min_kappa 0.6, see gate_judge.rs) names
/// the judge on the headline and the job summary's first line, and
/// annotates it as an error.
#[test]
fn a_judge_only_failure_is_named_first_and_annotated() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::copy(crate::common::fixture("judge/gold.yaml"), d.join("gold.yaml")).unwrap();
    std::fs::copy(crate::common::fixture("judge/run.jsonl"), d.join("run.jsonl")).unwrap();
    std::fs::write(
        d.join("rgate.yaml"),
        "gold: gold.yaml\nbaselines: baselines\nmetrics: [hit_rate@3]\nretrievers:\n  - name: r\n    run: run.jsonl\ngate:\n  judge:\n    min_kappa: 0.6\n    on_low: fail\n",
    )
    .unwrap();
    let (code, _, err) = out(d, &["--config", "rgate.yaml", "baseline", "update", "r"], &[]);
    assert_eq!(code, 0, "{err}");
    let summary = d.join("summary.md");
    let (code, text, err) = out(
        d,
        &["--config", "rgate.yaml", "gate"],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
            ("RUNNER_TEMP", d.to_str().unwrap()),
        ],
    );
    assert_eq!(code, 1);
    assert!(
        text.starts_with("rgate gate: FAIL · the judge failed: kappa 0.1600 below min_kappa 0.6\n"),
        "{text}"
    );
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("::error")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].starts_with("::error title=rgate%3A the judge failed the gate::the judge failed (gate.judge, on_low: fail): the judge disagrees with people: kappa 0.16 < 0.6"),
        "{}",
        errors[0]
    );
    let s = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(
        s.lines().next().unwrap(),
        "## ❌ rgate gate: **FAIL** · the judge failed: kappa 0.1600 below min_kappa 0.6"
    );
}
