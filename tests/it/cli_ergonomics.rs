//! Everyday ergonomics (issue 13): formats each command refuses, named
//! compare runs, trec_eval measure names, plurals, messages for unknown
//! metrics, table alignment with wide characters, the history plot.

use crate::common;

use std::fs;

use common::{fixture, repo, run, Out, TestProject};
use serde_json::Value;

const CONFIG: &str = "gold: demo/gold.yaml
baselines: demo/baselines
metrics: [recall@10, hit_rate@3, mrr@10, ndcg@10]
retrievers:
  - name: hybrid
    run: demo/runs/hybrid.jsonl
gate:
  rules:
    - metric: recall@10
      max_drop: 0.02
      strata: all
";

/// A scratch project: the demo gold set and runs, a config, no baselines.
fn project() -> TestProject {
    TestProject::demo(&["bm25", "hybrid", "hybrid-regressed"])
        .with_file("rgate.yaml", CONFIG)
        .with_config("rgate.yaml")
        .with_env("SOURCE_DATE_EPOCH", "1795996800")
}

#[test]
fn history_records_the_run_file_gated() {
    let p = project();
    assert_eq!(p.run(&["baseline", "update", "hybrid"]).code, 0);
    let o = p.run(&[
        "gate",
        "hybrid",
        "--record",
        "--run",
        "hybrid=demo/runs/hybrid-regressed.jsonl",
    ]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let text = fs::read_to_string(p.path("demo/baselines/hybrid.history.jsonl")).unwrap();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0]["run"]
            .as_str()
            .unwrap()
            .ends_with("demo/runs/hybrid.jsonl"),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1]["run"], "demo/runs/hybrid-regressed.jsonl");
}

/// Every command refuses a format it cannot produce, before doing any work,
/// and says which it can.
#[test]
fn refused_formats_exit_2_and_name_the_ones_that_work() {
    let p = project();
    let gold = "demo/gold.yaml";
    let run_ = "demo/runs/hybrid.jsonl";
    let cases: &[(&[&str], &str)] = &[
        (
            &["--format", "junit", "eval", "--gold", gold, "--run", run_],
            "error: `rgate eval` cannot print --format junit\nhint: it prints table, json, markdown, csv, trec or html\n",
        ),
        (
            &["--format", "trec", "compare", "--gold", gold, run_, run_],
            "error: `rgate compare` cannot print --format trec\nhint: it prints table, json, markdown, csv or html\n",
        ),
        (
            &["--format", "junit", "compare", "--gold", gold, run_, run_],
            "error: `rgate compare` cannot print --format junit\nhint: it prints table, json, markdown, csv or html\n",
        ),
        (
            &["--format", "trec", "gate"],
            "error: `rgate gate` cannot print --format trec\nhint: it prints table, json, markdown, csv, junit or html\n",
        ),
        (
            &["--format", "trec", "baseline", "update"],
            "error: `rgate baseline update` cannot print --format trec\nhint: it prints table, json, markdown, csv, junit or html\n",
        ),
        (
            &["--format", "junit", "baseline", "show", "hybrid"],
            "error: `rgate baseline show` cannot print --format junit\nhint: it prints table, json, markdown or csv\n",
        ),
        (
            &["--format", "trec", "baseline", "history", "hybrid"],
            "error: `rgate baseline history` cannot print --format trec\nhint: it prints table, json, markdown or csv\n",
        ),
        (
            &["--format", "csv", "gold", "validate"],
            "error: `rgate gold validate` cannot print --format csv\nhint: it prints table or json\n",
        ),
        (
            &["--format", "markdown", "gold", "validate"],
            "error: `rgate gold validate` cannot print --format markdown\nhint: it prints table or json\n",
        ),
        (
            &["--format", "junit", "gold", "stats"],
            "error: `rgate gold stats` cannot print --format junit\nhint: it prints table, json, markdown or csv\n",
        ),
        (
            &["--format", "trec", "gold", "stats"],
            "error: `rgate gold stats` cannot print --format trec\nhint: it prints table, json, markdown or csv\n",
        ),
        (
            &["--format", "junit", "gold", "import", "sheet.jsonl", "--into", "g.yaml"],
            "error: `rgate gold import` cannot print --format junit\nhint: it prints table or json\n",
        ),
        (
            &["--format", "json", "completions", "bash"],
            "error: `rgate completions` takes no --format\nhint: drop --format; its output has one form\n",
        ),
        (
            &["--format", "json", "man"],
            "error: `rgate man` takes no --format\nhint: drop --format; its output has one form\n",
        ),
        (
            &["--format", "markdown", "init"],
            "error: `rgate init` takes no --format\nhint: drop --format; its output has one form\n",
        ),
        (
            &["--format", "json", "hook", "install"],
            "error: `rgate hook install` takes no --format\nhint: drop --format; its output has one form\n",
        ),
    ];
    for (args, want) in cases {
        let o = p.run(args);
        assert_eq!(
            (o.code, o.stdout.as_str(), o.stderr.as_str()),
            (2, "", *want),
            "{args:?}"
        );
    }
    // The refusal comes first: `gate` wrote no report and touched no store.
    assert!(!p.path("demo/baselines").exists());
}

#[test]
fn eval_and_compare_refuse_a_typed_config_but_not_the_environment() {
    let p = project();
    let o = p.bare(&[
        "eval",
        "--config",
        "missing.yaml",
        "--gold",
        "demo/gold.yaml",
        "--run",
        "demo/runs/hybrid.jsonl",
    ]);
    assert_eq!(o.code, 2);
    assert_eq!(
        o.stderr,
        "error: `rgate eval` reads no config (--config missing.yaml)\nhint: give the gold set, runs and metrics as options (--gold, --metrics, ...); `rgate gate` is the command that reads the config\n"
    );
    let o = p.bare(&[
        "--config",
        "rgate.yaml",
        "compare",
        "--gold",
        "demo/gold.yaml",
        "demo/runs/bm25.jsonl",
        "demo/runs/hybrid.jsonl",
    ]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .starts_with("error: `rgate compare` reads no config (--config rgate.yaml)\nhint: "),
        "{}",
        o.stderr
    );
    // RGATE_CONFIG set for the gate in a CI shell does not break `eval`.
    let mut c = common::rgate();
    c.current_dir(p.path(""))
        .env("RGATE_CONFIG", "missing.yaml")
        .args([
            "eval",
            "--gold",
            "demo/gold.yaml",
            "--run",
            "demo/runs/hybrid.jsonl",
        ]);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
}

#[test]
fn quiet_gate_prints_no_warnings_but_the_whole_report() {
    let p = project();
    assert_eq!(p.run(&["baseline", "update", "hybrid"]).code, 0);
    // A run that lacks 9 of the 90 gold queries (10%, as many as
    // gate.max_missing allows): a warning, which CSV cannot carry, so it
    // goes to stderr unless -q.
    let full = fs::read_to_string(p.path("demo/runs/hybrid.jsonl")).unwrap();
    let short: String = full.lines().take(81).map(|l| format!("{l}\n")).collect();
    fs::write(p.path("short.jsonl"), short).unwrap();
    let args = ["--format", "csv", "gate", "hybrid", "--run", "hybrid=short.jsonl"];
    let loud = p.run(&args);
    assert!(
        loud.stderr.contains("9 of 90 gold queries are absent"),
        "{}",
        loud.stderr
    );
    let mut quiet_args = vec!["-q"];
    quiet_args.extend_from_slice(&args);
    let quiet = p.run(&quiet_args);
    assert_eq!(quiet.stderr, "");
    assert_eq!(quiet.code, loud.code);
    assert_eq!(quiet.stdout, loud.stdout);
    assert!(quiet.stdout.starts_with("retriever,"), "{}", quiet.stdout);
}

#[test]
fn counts_agree_in_number() {
    let p = project();
    fs::write(
        p.path("one.yaml"),
        "queries:\n  - id: q1\n    stratum: only\n    relevant: [d1]\n",
    )
    .unwrap();
    fs::write(
        p.path("one.jsonl"),
        "{\"query_id\": \"q1\", \"results\": [\"d1\"]}\n",
    )
    .unwrap();
    let o = p.bare(&[
        "eval",
        "--gold",
        "one.yaml",
        "--run",
        "one.jsonl",
        "--metrics",
        "mrr",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        o.stdout.lines().next().unwrap(),
        "gold one.yaml (1 query, 1 stratum) · run one.jsonl"
    );
    let o = p.bare(&["gold", "validate", "--gold", "one.yaml"]);
    assert!(
        o.stdout
            .starts_with("gold one.yaml: 1 query, 1 stratum, fingerprint "),
        "{}",
        o.stdout
    );
    let o = p.bare(&[
        "compare",
        "--gold",
        "one.yaml",
        "one.jsonl",
        "one.jsonl",
        "--metrics",
        "mrr",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.starts_with("rgate compare · gold one.yaml (1 query) · "),
        "{}",
        o.stdout
    );
    assert!(
        o.stderr.starts_with("warning: only 1 query: resampling tests"),
        "{}",
        o.stderr
    );
}

fn json_of(o: &Out) -> Value {
    assert_eq!(o.code, 0, "{}", o.stderr);
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", o.stdout))
}

#[test]
fn compare_runs_can_be_named() {
    let p = project();
    let compare = |runs: &[&str]| {
        let mut a = vec![
            "--format",
            "json",
            "compare",
            "--gold",
            "demo/gold.yaml",
            "-m",
            "mrr@10",
        ];
        a.extend_from_slice(runs);
        p.bare(&a)
    };
    let v = json_of(&compare(&[
        "v1=demo/runs/bm25.jsonl",
        "v2=demo/runs/hybrid.jsonl",
    ]));
    assert_eq!(v["baseline_run"]["name"], "v1");
    assert_eq!(v["baseline_run"]["path"], "demo/runs/bm25.jsonl");
    assert_eq!(v["runs"][0]["name"], "v2");
    assert_eq!(v["runs"][0]["path"], "demo/runs/hybrid.jsonl");

    // Named and plain paths mix; a plain path is named by its stem.
    let v = json_of(&compare(&["demo/runs/bm25.jsonl", "new=demo/runs/hybrid.jsonl"]));
    assert_eq!(v["baseline_run"]["name"], "bm25");
    assert_eq!(v["runs"][0]["name"], "new");

    // A file whose name holds `=` is still a path.
    fs::copy(p.path("demo/runs/hybrid.jsonl"), p.path("k=v.jsonl")).unwrap();
    let v = json_of(&compare(&["demo/runs/bm25.jsonl", "k=v.jsonl"]));
    assert_eq!(v["runs"][0]["name"], "k=v");
    assert_eq!(v["runs"][0]["path"], "k=v.jsonl");

    let want = |n: &str| {
        format!("error: two runs are named `{n}`\nhint: name each run: rgate compare --gold G v1=a.jsonl v2=b.jsonl\n")
    };
    let o = compare(&["x=demo/runs/bm25.jsonl", "x=demo/runs/hybrid.jsonl"]);
    assert_eq!((o.code, o.stderr), (2, want("x")));
    let o = compare(&["demo/runs/bm25.jsonl", "bm25=demo/runs/hybrid.jsonl"]);
    assert_eq!((o.code, o.stderr), (2, want("bm25")));
}

/// `--names trec_eval` prints exactly trec_eval's lines for the measures
/// rgate has: trec_eval's own output on its test collection, filtered to
/// those measures, is the expected text (runs cover every qrels query, so
/// `-q` and `-q -c` agree).
#[test]
fn trec_eval_names_reproduce_trec_eval_output() {
    let measures = [
        "map",
        "Rprec",
        "recip_rank",
        "P_5",
        "P_10",
        "recall_10",
        "recall_1000",
        "ndcg",
        "ndcg_cut_10",
        "map_cut_5",
        "success_1",
        "success_10",
    ];
    let expected: String = fs::read_to_string(fixture("trec_eval/out.test.aq"))
        .unwrap()
        .lines()
        .filter(|l| measures.contains(&l.split('\t').next().unwrap().trim_end()))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(expected.lines().count(), 4 * measures.len());
    let mut c = common::rgate();
    // rgate's spellings, in an order trec_eval would not print them.
    c.args(["eval", "--per-query", "--format", "trec", "--names", "trec_eval"])
        .args(["-m", "success@10,ndcg@10,P@10,recall@10,mrr,map,r_precision,ndcg"])
        .args(["-m", "map@5,P@5,recall@1000,hit_rate@1", "--gold"])
        .arg(fixture("trec_eval/qrels.test"))
        .arg("--run")
        .arg(fixture("trec_eval/results.test"));
    let o = run(c);
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    assert_eq!(o.stdout, expected);
}

#[test]
fn trec_eval_names_refuse_metrics_trec_eval_lacks() {
    let gold = fixture("trec_eval/qrels.test");
    let run_ = fixture("trec_eval/results.test");
    let eval = |extra: &[&str]| {
        let mut c = common::rgate();
        c.arg("eval")
            .args(extra)
            .arg("--gold")
            .arg(&gold)
            .arg("--run")
            .arg(&run_);
        run(c)
    };
    let o = eval(&[
        "--format",
        "trec",
        "--names",
        "trec_eval",
        "-m",
        "mrr@10,P@10,judged@10",
    ]);
    assert_eq!(o.code, 2);
    assert_eq!(
        o.stderr,
        "error: `mrr@10`, `judged@10` have no trec_eval measure, so a script reading trec_eval's names would not find them\n\
         hint: trec_eval measures: runid, num_q, num_ret, num_rel, num_rel_ret, map, map@k, gm_map, r_precision, bpref, \
         mrr (recip_rank, no cutoff), iprec_at_recall@x, precision@k, relstring, relstring@k, recall@k, \
         infap, gm_bpref, rprec_mult@x, utility, 11pt_avg, bing, g, ndcg, ndcg@k, ndcg_rel, rndcg, \
         relative_p@k, hit_rate@k (success), set_p, set_relative_p, set_recall, set_map, set_f, \
         num_nonrel_judged_ret, rbp, rbp_resid, unj@k; pass those with --metrics, or drop --names trec_eval\n"
    );
    let o = eval(&["--names", "trec_eval", "-m", "P@10"]);
    assert_eq!(o.code, 2);
    assert_eq!(
        o.stderr,
        "error: --names trec_eval names measures in --format trec output\nhint: add --format trec\n"
    );
}

/// `rgate eval -m NAME` on trec_eval's test collection.
fn eval_metric(name: &str) -> Out {
    let mut c = common::rgate();
    c.args(["eval", "-m", name, "--gold"])
        .arg(fixture("trec_eval/qrels.test"))
        .arg("--run")
        .arg(fixture("trec_eval/results.test"));
    run(c)
}

#[test]
fn a_bad_cutoff_is_echoed_as_typed() {
    let o = eval_metric("mrr@1O");
    assert_eq!(
        (o.code, o.stderr.as_str()),
        (
            2,
            "error: metric `mrr@1O`: cutoff `1O` is not a positive integer\nhint: write it as mrr@10\n"
        )
    );
}

const RGATE_METRICS: &str = "recall@k, hit_rate@k, precision@k, mrr, mrr@k, ndcg, ndcg@k, map, map@k, \
     r_precision, judged@k, runid, num_q, num_ret, num_rel, num_rel_ret, gm_map, bpref, \
     iprec_at_recall@x, relstring, relstring@k, infap, gm_bpref, rprec_mult@x, utility, 11pt_avg, \
     bing, g, ndcg_rel, rndcg, relative_p@k, set_p, set_relative_p, set_recall, set_map, set_f, \
     num_nonrel_judged_ret, rbp, rbp_resid, unj@k, err@k";

/// Measures rgate lacks get "not supported", never a near-match that
/// names a different measure: trec_eval's measures outside all_trec,
/// ir_measures' and ranx's that rgate does not compute. (Every measure of
/// all_trec is computed: measures_trec_eval.rs.)
#[test]
fn measures_rgate_lacks_are_not_supported_rather_than_near_matches() {
    for m in [
        "alpha_nDCG@20",
        "hits@10",
        "yaap",
        "P_avgjg",
        "prefs_simp",
        "dcg",
        "nERR_IA@10",
        "StRecall",
    ] {
        let o = eval_metric(m);
        assert_eq!(
            (o.code, o.stdout.as_str(), o.stderr.clone()),
            (
                2,
                "",
                format!(
                    "error: metric `{m}` is not supported by rgate\nhint: trec_eval or ir_measures compute it; rgate computes: {RGATE_METRICS}\n"
                )
            ),
            "{m}"
        );
    }
}

#[test]
fn parameters_that_do_not_fit_are_refused_and_typos_still_get_a_suggestion() {
    for (typed, why, hint) in [
        (
            "P(p=2)@10",
            "these parameters do not fit it",
            "write it as precision@10, or precision(rel=2)@10 for another relevance level",
        ),
        (
            "utility(1,2)",
            "these parameters do not fit it",
            "write it as utility(1,-1,0,0): numbers, comma separated",
        ),
        (
            "num_ret(x=1)",
            "these parameters do not fit it",
            "num_ret takes no parameters",
        ),
    ] {
        let o = eval_metric(typed);
        assert_eq!(
            (o.code, o.stderr),
            (2, format!("error: metric `{typed}`: {why}\nhint: {hint}\n")),
            "{typed}"
        );
    }
    for (typed, meant) in [
        ("recal@10", "recall@10"),
        ("ndgc@10", "ndcg@10"),
        ("precison@5", "precision@5"),
    ] {
        let o = eval_metric(typed);
        assert_eq!(
            (o.code, o.stderr),
            (
                2,
                format!("error: unknown metric `{typed}`\nhint: did you mean `{meant}`? Metrics: {RGATE_METRICS}\n")
            ),
            "{typed}"
        );
    }
}

/// Columns line up in a terminal when ids and strata hold CJK characters,
/// each two columns wide: `質問-1` and `日本語` are 6 columns, not 4 and 3
/// characters.
#[test]
fn tables_align_wide_characters_by_display_width() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("gold.yaml"),
        "version: 1\nqueries:\n  - {id: 質問-1, stratum: 日本語, relevant: [d1]}\n  - {id: q2, stratum: 日本語, relevant: [d2]}\n  - {id: q3, stratum: en, relevant: [d3]}\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("run.jsonl"),
        "{\"query_id\": \"質問-1\", \"results\": [\"d1\", \"x\"]}\n{\"query_id\": \"q2\", \"results\": [\"x\", \"d2\"]}\n{\"query_id\": \"q3\", \"results\": [\"x\", \"y\"]}\n",
    )
    .unwrap();
    let mut c = common::rgate();
    c.current_dir(dir.path()).args([
        "eval",
        "--gold",
        "gold.yaml",
        "--run",
        "run.jsonl",
        "-m",
        "mrr@10",
        "--per-query",
        "--by-stratum",
        "--resamples",
        "0",
    ]);
    let o = run(c);
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    // Reciprocal ranks 1, 1/2 and 0; the 日本語 stratum's mean is 0.75, the
    // macro mean (0.75 + 0) / 2.
    let want = "\
query   stratum  mrr@10
------  -------  ------
質問-1  日本語   1.0000
q2      日本語   0.5000
q3      en       0.0000

scope   n  mrr@10
------  -  ------
all     3  0.5000
日本語  2  0.7500
en      1  0.0000
macro   3  0.3750
";
    assert_eq!(o.stdout.split_once("\n\n").unwrap().1, want);
}

/// The regressed demo run gated from the repository root (exit 1, so the
/// report has a FAIL and a failed check), colour settings by environment.
fn gate_regressed(color: Option<&str>, env: &[(&str, &str)]) -> Out {
    let mut c = common::rgate();
    c.current_dir(repo(""))
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CI")
        .args(["gate", "--run", "hybrid=config/demo/runs/hybrid-regressed.jsonl"]);
    if let Some(choice) = color {
        c.args(["--color", choice]);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    run(c)
}

/// `text` without its SGR sequences (`ESC [ params m`), and the parameter
/// lists of the sequences that open each painted `word`.
fn unpaint(text: &str, word: &str) -> (String, Vec<Vec<u32>>) {
    let mut plain = String::new();
    let mut opened: Vec<Vec<u32>> = Vec::new();
    let mut pending: Vec<u32> = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("\x1b[") {
        plain.push_str(&rest[..at]);
        if at > 0 {
            pending.clear();
        }
        let after = &rest[at + 2..];
        let end = after.find('m').expect("an unterminated escape");
        pending.extend(after[..end].split(';').map(|p| p.parse::<u32>().unwrap()));
        rest = &after[end + 1..];
        if rest.starts_with(word) && !pending.contains(&0) {
            opened.push(std::mem::take(&mut pending));
        }
    }
    plain.push_str(rest);
    (plain, opened)
}

#[test]
fn colour_follows_the_flag_and_the_environment_and_off_is_plain() {
    let plain = gate_regressed(Some("never"), &[("CLICOLOR_FORCE", "1")]);
    assert_eq!(plain.code, 1);
    assert!(plain.stdout.contains("FAIL") && !plain.stdout.contains('\x1b'));
    // Off: byte-identical to --color never, whatever turned it off.
    for (color, env) in [
        (None, vec![]),
        (None, vec![("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")]),
        (Some("auto"), vec![("TERM", "xterm-256color")]),
    ] {
        let o = gate_regressed(color, &env);
        assert_eq!((o.code, &o.stdout), (1, &plain.stdout), "{color:?} {env:?}");
    }
    // On: the same text, with FAIL in bold red (SGR 1 and 31) and reset.
    for (color, env) in [
        (None, vec![("CLICOLOR_FORCE", "1")]),
        (Some("always"), vec![("NO_COLOR", "1")]),
    ] {
        let o = gate_regressed(color, &env);
        assert_eq!(o.code, 1);
        let (text, fails) = unpaint(&o.stdout, "FAIL");
        assert_eq!(text, plain.stdout, "{color:?} {env:?}");
        assert!(!fails.is_empty(), "{}", o.stdout);
        for mut sgr in fails {
            sgr.sort_unstable();
            assert_eq!(sgr, [1, 31], "{color:?} {env:?}");
        }
        assert!(o.stdout.contains("FAIL\x1b[0m"), "{}", o.stdout);
    }
}

/// On a terminal (a pseudo-terminal from util-linux `script`), `auto`
/// colours unless `TERM=dumb`.
#[cfg(target_os = "linux")]
#[test]
fn colour_on_a_terminal_unless_term_is_dumb() {
    let bin = env!("CARGO_BIN_EXE_rgate");
    let on_tty = |term: &str| {
        let mut script = std::process::Command::new("script");
        common::clean_env(&mut script);
        let o = script
            .args(["-q", "-e", "-c"])
            .arg(format!(
                "{bin} gate --run hybrid=config/demo/runs/hybrid-regressed.jsonl"
            ))
            .arg("/dev/null")
            .current_dir(repo(""))
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR")
            .env_remove("CLICOLOR_FORCE")
            .env_remove("CI")
            .env("TERM", term)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("util-linux `script` runs the command on a pseudo-terminal");
        assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stdout));
        String::from_utf8(o.stdout).unwrap()
    };
    let coloured = on_tty("xterm-256color");
    let (_, fails) = unpaint(&coloured, "FAIL");
    assert!(!fails.is_empty(), "{coloured}");
    let dumb = on_tty("dumb");
    assert!(dumb.contains("FAIL") && !dumb.contains('\x1b'), "{dumb}");
}

/// A history of `hybrid` written by hand: a baseline update, a passing
/// gate one day later, a failing one ten days after the first; each with
/// overall and `how-to` means of recall@10.
fn project_with_history() -> TestProject {
    let p = project();
    fs::create_dir_all(p.path("demo/baselines")).unwrap();
    let line = |time: &str, kind: &str, verdict: &str, all: f64, howto: f64| {
        format!(
            "{{\"time\":\"{time}\",\"commit\":null,\"kind\":\"{kind}\",\"verdict\":{verdict},\"aggregates\":{{\"all\":{{\"recall@10\":{all}}},\"how-to\":{{\"recall@10\":{howto}}}}}}}\n"
        )
    };
    let text = line("2026-11-01T00:00:00Z", "baseline-update", "null", 0.8, 0.6)
        + &line("2026-11-02T00:00:00Z", "gate", "\"pass\"", 0.81, 0.62)
        + &line("2026-11-11T00:00:00Z", "gate", "\"fail\"", 0.7, 0.4);
    fs::write(p.path("demo/baselines/hybrid.history.jsonl"), text).unwrap();
    p
}

#[test]
fn history_plot_has_a_time_axis_and_marks_gate_results() {
    let p = project_with_history();
    let o = p.run(&["baseline", "history", "hybrid", "--plot", "h.svg"]);
    assert_eq!((o.code, o.stderr.as_str()), (0, "wrote h.svg\n"));
    let svg = fs::read_to_string(p.path("h.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let class = |n: &roxmltree::Node, c: &str| n.attribute("class") == Some(c);
    let num = |n: &roxmltree::Node, a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap();
    // The baseline update is a square, the gate records dots.
    let squares: Vec<f64> = doc
        .descendants()
        .filter(|n| class(n, "point baseline-update"))
        .map(|n| num(&n, "x") + 3.5)
        .collect();
    let dots: Vec<f64> = doc
        .descendants()
        .filter(|n| class(n, "point gate"))
        .map(|n| num(&n, "cx"))
        .collect();
    assert_eq!((squares.len(), dots.len()), (1, 2));
    // x follows time: day 1 sits a tenth of the way from day 0 to day 10.
    let (x0, x1, x2) = (squares[0], dots[0], dots[1]);
    assert!(x0 < x1 && x1 < x2);
    let share = (x1 - x0) / (x2 - x0);
    assert!((share - 0.1).abs() < 0.005, "{share}");
    // One pass and one fail mark, above the two gate records.
    let marks: Vec<(String, f64)> = doc
        .descendants()
        .filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("verdict ")))
        .map(|n| (n.attribute("class").unwrap().to_string(), num(&n, "x")))
        .collect();
    assert_eq!(
        marks,
        [("verdict pass".to_string(), x1), ("verdict fail".to_string(), x2)]
    );
    // Tick labels: distinct dates, in order, at least the ends' span.
    let ticks: Vec<&str> = doc
        .descendants()
        .filter(|n| class(n, "tick"))
        .map(|n| n.text().unwrap())
        .collect();
    assert!(ticks.len() >= 3, "{ticks:?}");
    let mut sorted = ticks.clone();
    sorted.dedup();
    sorted.sort_unstable();
    assert_eq!(sorted, ticks, "distinct and in time order");
    assert!(
        ticks.iter().all(|t| ("2026-11-01".."2026-11-12").contains(t)),
        "{ticks:?}"
    );
}

#[test]
fn history_shows_and_plots_a_stratum() {
    let p = project_with_history();
    let o = p.run(&[
        "--format",
        "csv",
        "baseline",
        "history",
        "hybrid",
        "--stratum",
        "how-to",
        "--plot",
        "s.svg",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        o.stdout,
        "time,kind,commit,verdict,recall@10,hit_rate@3,mrr@10,ndcg@10,note\n\
         2026-11-01T00:00:00Z,baseline-update,-,-,0.6000,-,-,-,\n\
         2026-11-02T00:00:00Z,gate,-,pass,0.6200,-,-,-,\n\
         2026-11-11T00:00:00Z,gate,-,fail,0.4000,-,-,-,\n"
    );
    let svg = fs::read_to_string(p.path("s.svg")).unwrap();
    assert!(
        svg.contains("stratum `how-to` means over 3 recorded results"),
        "{svg}"
    );
    for v in ["0.6000", "0.6200", "0.4000"] {
        assert!(svg.contains(&format!(": {v}</title>")), "{v}");
    }
    assert!(
        !svg.contains(": 0.8000</title>"),
        "the overall means are not plotted"
    );
    let o = p.run(&["baseline", "history", "hybrid", "--stratum", "howto"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.ends_with("no stratum `howto` in the history of `hybrid`\nhint: did you mean `how-to`? Strata in this history: `how-to`\n"),
        "{}",
        o.stderr
    );
}

#[test]
fn history_plot_refuses_a_name_that_is_not_svg() {
    let p = project_with_history();
    for name in ["h.png", "h", "h.svg.png"] {
        let o = p.run(&["baseline", "history", "hybrid", "--plot", name]);
        let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
        assert_eq!(
            (o.code, o.stdout.as_str(), o.stderr),
            (
                2,
                "",
                format!(
                    "error: --plot {name}: the chart is SVG, and this name says otherwise\n\
                     hint: name it {stem}.svg; convert it afterwards if you need another format (rsvg-convert, inkscape, a browser)\n"
                )
            )
        );
        assert!(!p.path(name).exists());
    }
    let o = p.run(&["baseline", "history", "hybrid", "--plot", "H.SVG"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
}
