//! Every measure of trec_eval's `-m all_trec`, byte for byte against
//! trec_eval's own outputs for its test suite (tests/fixtures/trec_eval/
//! README.md gives the command line that produced each file).

use crate::common;

use std::fs;

use common::{fixture, rgate, run};
use rgate::metrics::Metric;

/// `rgate eval --names trec_eval --per-query --format trec` with `args`,
/// its stdout (stderr must hold only warnings, exit 0).
fn trec_eval_output(gold: &str, results: &str, metrics: &str, extra: &[&str]) -> String {
    let mut c = rgate();
    c.args([
        "eval",
        "--names",
        "trec_eval",
        "--per-query",
        "--format",
        "trec",
        "--metrics",
        metrics,
    ])
    .arg("--gold")
    .arg(fixture(gold))
    .arg("--run")
    .arg(fixture(results))
    .args(extra);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    o.stdout
}

fn expected(name: &str) -> String {
    fs::read_to_string(fixture(name)).unwrap()
}

/// Compares line by line first, so a failure names the first line that
/// differs rather than printing two 387-line strings.
fn assert_same(got: &str, want: &str) {
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "line {}", i + 1);
    }
    assert_eq!(got.lines().count(), want.lines().count());
    assert_eq!(got, want);
}

#[test]
fn all_trec_equals_out_test_aq() {
    let got = trec_eval_output("trec_eval/qrels.test", "trec_eval/results.test", "all_trec", &[]);
    assert_same(&got, &expected("trec_eval/out.test.aq"));
}

/// `-c`: query 302 is absent from results.trunc; trec_eval evaluates it on
/// an empty ranking (num_rel 77, relstring '') and so does rgate.
#[test]
fn all_trec_with_a_missing_query_equals_out_test_aqc() {
    let got = trec_eval_output("trec_eval/qrels.test", "trec_eval/results.trunc", "all_trec", &[]);
    assert_same(&got, &expected("trec_eval/out.test.aqc"));
}

/// `-l2 -mrelstring.20` on graded qrels with grades -1 to 4: bpref,
/// infAP, rbp_resid and relstring see the pooled-but-unjudged documents.
#[test]
fn all_trec_at_relevance_level_two_equals_out_test_aql() {
    let got = trec_eval_output(
        "trec_eval/qrels.rel_level",
        "trec_eval/results.test",
        "all_trec,relstring.20",
        &["--relevance-level", "2"],
    );
    assert_same(&got, &expected("trec_eval/out.test.aql"));
}

/// trec_eval's own `-m` spellings of parameters, as its command line gave
/// them (README), in one `--metrics` list.
#[test]
fn measure_parameters_equal_out_test_meas_params() {
    let got = trec_eval_output(
        "trec_eval/qrels.test",
        "trec_eval/results.test",
        "iprec_at_recall..10,.20,.25,.75,.50,P.5,7,3,recall.20,2000,Rprec_mult.5.0,0.2,0.35,\
         utility.2,-1,0,0,11pt_avg..25,.5,.75,ndcg.1=3,2=9,4=4.5,ndcg_cut.10,20,23.4,success.2,5,20",
        &[],
    );
    assert_same(&got, &expected("trec_eval/out.test.meas_params"));
}

/// Repeated `-m` flags as trec_eval takes them are the same list.
#[test]
fn repeated_metric_flags_join_one_list() {
    let mut c = rgate();
    c.args(["eval", "--names", "trec_eval", "--per-query", "--format", "trec"])
        .args(["-m", "P.5,7,3", "-m", "utility.2,-1,0,0"])
        .arg("--gold")
        .arg(fixture("trec_eval/qrels.test"))
        .arg("--run")
        .arg(fixture("trec_eval/results.test"));
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let want: String = expected("trec_eval/out.test.meas_params")
        .lines()
        .filter(|l| l.starts_with("P_") || l.starts_with("utility"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_same(&o.stdout, &want);
}

/// Every name trec_eval printed reads back as a metric whose trec_eval name
/// is that name; rgate's own spelling reads back as the same metric.
#[test]
fn every_trec_eval_name_reads_back() {
    for file in ["trec_eval/out.test.aql", "trec_eval/out.test.meas_params"] {
        for line in expected(file).lines() {
            let name = line.split('\t').next().unwrap().trim_end();
            let m: Metric = name.parse().unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(m.trec_eval_name().as_deref(), Some(name));
            assert_eq!(m.name().parse::<Metric>().unwrap(), m, "{name} as {}", m.name());
        }
    }
}
