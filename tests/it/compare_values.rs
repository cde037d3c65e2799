//! `rgate compare` checked value by value against numbers computed without
//! rgate: `tests/fixtures/compare/make.py` wrote the fixtures and printed
//! every expected value below (scipy's `ttest_1samp` for the t-test, brute
//! enumeration of all sign patterns for the exact randomization test, Holm
//! by its definition, means by hand). Each metric gets its own p-value, the
//! two tests give different ones, and the Holm column is the adjusted one,
//! so swapping the tests, reusing one metric's deltas or dropping the
//! correction fails here.

use crate::common;

use common::{fixture, rgate, run};
use serde_json::Value;

fn compare(args: &[&str], base: &str, cand: &str) -> Value {
    let mut c = rgate();
    c.args(["compare", "--format", "json", "-m", "mrr,hit_rate@1", "--gold"])
        .arg(fixture("compare/gold.json"))
        .args(args)
        .arg(fixture(base))
        .arg(fixture(cand));
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", o.stdout))
}

fn row<'a>(v: &'a Value, metric: &str, stratum: &str) -> &'a Value {
    v["runs"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == metric && c["stratum"] == stratum)
        .unwrap_or_else(|| panic!("no row {metric}/{stratum} in {v}"))
}

fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

/// (metric, stratum, mean delta, p, Holm-adjusted p), as make.py prints them.
type Expected = [(&'static str, &'static str, f64, f64, f64); 6];

fn assert_rows(v: &Value, want: &Expected, tol: f64) {
    assert_eq!(v["runs"][0]["checks"].as_array().unwrap().len(), want.len());
    for &(metric, stratum, delta, p, p_adj) in want {
        let r = row(v, metric, stratum);
        let what = format!("{metric}/{stratum}");
        assert!((f(r, "delta") - delta).abs() < 1e-12, "{what}: delta {r}");
        assert!(
            (f(r, "p_value") - p).abs() < tol,
            "{what}: p_value {r}, expected {p}"
        );
        assert!(
            (f(r, "p_adjusted") - p_adj).abs() < tol,
            "{what}: p_adjusted {r}, expected {p_adj}"
        );
    }
}

const VARIED: [&str; 2] = ["compare/base.json", "compare/cand.json"];

#[test]
fn t_test_two_sided_per_metric_and_stratum() {
    let v = compare(&["--test", "t-test", "--by-stratum"], VARIED[0], VARIED[1]);
    // scipy.stats.ttest_1samp(d, 0).pvalue per row; Holm leaves all at 1.
    let want: Expected = [
        ("mrr", "all", -0.18, 0.3183401975263149, 1.0),
        ("hit_rate@1", "all", -0.2, 0.44333185016966015, 1.0),
        ("mrr", "a", -0.041666666666666664, 0.8606126061209897, 1.0),
        ("hit_rate@1", "a", 0.0, 1.0, 1.0),
        ("mrr", "b", -0.3875, 0.23081793200251574, 1.0),
        ("hit_rate@1", "b", -0.5, 0.18169011381620936, 1.0),
    ];
    assert_rows(&v, &want, 1e-9);
}

#[test]
fn t_test_one_sided_with_holm() {
    let v = compare(
        &["--test", "t-test", "--by-stratum", "--alternative", "less"],
        VARIED[0],
        VARIED[1],
    );
    // scipy ttest_1samp(d, 0, alternative="less"); Holm over the six rows
    // (Bonferroni would give 0.9550 for mrr/all, none 0.1592).
    let want: Expected = [
        ("mrr", "all", -0.18, 0.15917009876315746, 0.6366803950526299),
        ("hit_rate@1", "all", -0.2, 0.22166592508483007, 0.6649977752544902),
        (
            "mrr",
            "a",
            -0.041666666666666664,
            0.43030630306049483,
            0.8606126061209897,
        ),
        ("hit_rate@1", "a", 0.0, 0.5, 0.8606126061209897),
        ("mrr", "b", -0.3875, 0.11540896600125787, 0.5770448300062894),
        ("hit_rate@1", "b", -0.5, 0.09084505690810468, 0.5450703414486281),
    ];
    assert_rows(&v, &want, 1e-9);
}

#[test]
fn exact_randomization_two_sided_per_metric_and_stratum() {
    let v = compare(&["--test", "randomization", "--by-stratum"], VARIED[0], VARIED[1]);
    // Counts over all 2^k sign patterns of the k non-zero deltas.
    let want: Expected = [
        ("mrr", "all", -0.18, 0.32421875, 1.0),
        ("hit_rate@1", "all", -0.2, 0.6875, 1.0),
        ("mrr", "a", -0.041666666666666664, 0.875, 1.0),
        ("hit_rate@1", "a", 0.0, 1.0, 1.0),
        ("mrr", "b", -0.3875, 0.25, 1.0),
        ("hit_rate@1", "b", -0.5, 0.5, 1.0),
    ];
    assert_rows(&v, &want, 1e-12);
}

#[test]
fn exact_randomization_one_sided_with_holm() {
    let v = compare(
        &["--test", "randomization", "--by-stratum", "--alternative", "less"],
        VARIED[0],
        VARIED[1],
    );
    let want: Expected = [
        ("mrr", "all", -0.18, 0.162109375, 0.810546875),
        ("hit_rate@1", "all", -0.2, 0.34375, 1.0),
        ("mrr", "a", -0.041666666666666664, 0.4375, 1.0),
        ("hit_rate@1", "a", 0.0, 0.6875, 1.0),
        ("mrr", "b", -0.3875, 0.125, 0.75),
        ("hit_rate@1", "b", -0.5, 0.25, 1.0),
    ];
    assert_rows(&v, &want, 1e-12);
}

#[test]
fn overall_only_holm_counts_only_the_printed_rows() {
    // Without --by-stratum there are two rows: Holm over {0.1592, 0.2217}
    // is {0.3183, 0.3183} (2 * 0.1592, then the running maximum).
    let v = compare(
        &["--test", "t-test", "--alternative", "less"],
        VARIED[0],
        VARIED[1],
    );
    let checks = v["runs"][0]["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 2);
    let (m, h) = (row(&v, "mrr", "all"), row(&v, "hit_rate@1", "all"));
    assert!((f(m, "p_value") - 0.15917009876315746).abs() < 1e-9, "{m}");
    assert!((f(m, "p_adjusted") - 0.3183401975263149).abs() < 1e-9, "{m}");
    assert!((f(h, "p_adjusted") - 0.3183401975263149).abs() < 1e-9, "{h}");
}

#[test]
fn one_sided_bounds_and_counts_per_metric() {
    let v = compare(&["--test", "t-test", "--by-stratum"], VARIED[0], VARIED[1]);
    // hit@1 deltas overall: -1 +1 0 +1 -1 0 -1 0 -1 0 -> 2 wins, 4 ties, 4 losses;
    // mrr: only q03 ties.
    let h = row(&v, "hit_rate@1", "all");
    let counts = |r: &Value| (r["wins"].as_u64(), r["ties"].as_u64(), r["losses"].as_u64());
    assert_eq!(counts(h), (Some(2), Some(4), Some(4)), "{h}");
    let m = row(&v, "mrr", "all");
    assert_eq!(counts(m), (Some(3), Some(1), Some(6)), "{m}");
    // t interval: mean +- t(0.975, 9) * sd / sqrt(10); scipy: sd(hit@1 deltas)
    // = 0.7888106377466155, t.ppf(0.975, 9) = 2.262157162798205.
    // Its lower end, -0.764, lies past the largest drop a hit rate of 0.5
    // can show (-0.5), and is printed there.
    let half = 2.262157162798205 * 0.7888106377466155 / 10f64.sqrt();
    assert!(-0.2 - half < -0.5);
    assert_eq!(f(h, "ci_low"), -0.5, "{h}");
    assert!((f(h, "ci_high") - (-0.2 + half)).abs() < 1e-9, "{h}");
}

const CONST: [&str; 2] = ["compare/base_const.json", "compare/cand_const.json"];

/// Stratum a (6 queries) loses rank 1 -> 2 everywhere, stratum b (4) does
/// not change: the deltas are constant within each stratum. A stratified
/// bootstrap would draw the same mean in every resample and call it
/// p = 1 / (B + 1); ten queries are below the small-scope size, so the
/// exact sign-flip test runs instead: of the 2^6 sign patterns of the six
/// equal non-zero deltas, 2 are as extreme (two-sided), p = 1/32.
#[test]
fn small_constant_strata_get_the_exact_sign_flip_p() {
    let v = compare(&["--by-stratum"], CONST[0], CONST[1]);
    // micro: mrr 0.7333 -> 0.4333 (6 * 1 + 4 / 3) / 10 -> (6 / 2 + 4 / 3) / 10;
    // hit@1 0.6 -> 0.
    for (metric, base, cur, delta) in [
        ("mrr", 0.7333333333333333, 0.4333333333333333, -0.3),
        ("hit_rate@1", 0.6, 0.0, -0.6),
    ] {
        let r = row(&v, metric, "all");
        assert!((f(r, "baseline") - base).abs() < 1e-12, "{r}");
        assert!((f(r, "current") - cur).abs() < 1e-12, "{r}");
        assert!((f(r, "delta") - delta).abs() < 1e-12, "{r}");
        assert_eq!(r["test"], "randomization", "{r}");
        assert!(f(r, "ci_low") < f(r, "ci_high"), "{r}");
        assert_eq!(f(r, "p_value"), 1.0 / 32.0, "{r}");
        // Six rows, four of them (overall and stratum a) at 1/32: Holm gives
        // each of those 6/32 (the running maximum of 6p, 5p, ...).
        assert!((f(r, "p_adjusted") - 6.0 / 32.0).abs() < 1e-15, "{r}");
    }
    let b = row(&v, "mrr", "b");
    assert_eq!((f(b, "delta"), f(b, "p_value")), (0.0, 1.0), "{b}");
}

/// Macro weighting on unequal strata (6 and 4 queries): the overall means
/// are the mean of the two stratum means, not the mean over queries.
#[test]
fn macro_weighting_on_unequal_strata() {
    let v = compare(&["--weighting", "macro"], CONST[0], CONST[1]);
    // mrr: a 1 -> 1/2, b 1/3 -> 1/3: (1 + 1/3) / 2 -> (1/2 + 1/3) / 2.
    // hit@1: a 1 -> 0, b 0 -> 0: 0.5 -> 0.
    for (metric, base, cur, delta) in [
        ("mrr", 0.6666666666666666, 0.41666666666666663, -0.25),
        ("hit_rate@1", 0.5, 0.0, -0.5),
    ] {
        let r = row(&v, metric, "all");
        assert!((f(r, "baseline") - base).abs() < 1e-12, "{r}");
        assert!((f(r, "current") - cur).abs() < 1e-12, "{r}");
        assert!((f(r, "delta") - delta).abs() < 1e-12, "{r}");
        // The sign-flip test on the macro-weighted deltas (six equal
        // non-zero ones in stratum a): two of 2^6 patterns, p = 1/32.
        assert_eq!(f(r, "p_value"), 1.0 / 32.0, "{r}");
    }
    assert_eq!(v["settings"]["weighting"], "macro", "{}", v["settings"]);
}

fn compare_strat(args: &[&str]) -> Value {
    let mut c = rgate();
    c.args(["compare", "--format", "json", "-m", "mrr,hit_rate@1", "--gold"])
        .arg(fixture("compare/gold_strat.json"))
        .args(args)
        .arg(fixture("compare/base_strat.json"))
        .arg(fixture("compare/cand_strat.json"));
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", o.stdout))
}

/// Two-sided p of a percentile bootstrap of 40 queries whose every
/// resample is at the observed mean: twice `1 - F_t39(z(1 - 1/10001) /
/// sqrt(40/39))`, by scipy 1.17 (`2*(1-stats.t.cdf(stats.norm.ppf(1-1/10001)
/// /math.sqrt(40/39), 39))`).
const EXPANDED_FLOOR_TWO_SIDED: f64 = 0.000719504443990937;

/// The same constant strata on 40 queries (24 in `a`, 16 in `b`), large
/// enough for the overall scope to be bootstrapped with each stratum
/// resampled on its own. Only a stratified bootstrap (stratum sizes fixed)
/// draws the same mean in every resample, so its interval has zero width at
/// the observed mean and its p-value is the smallest possible, 1 / (B + 1);
/// an unstratified one draws 0 to 40 queries of `a` and spreads.
#[test]
fn stratified_bootstrap_on_constant_strata_has_zero_width() {
    let v = compare_strat(&["--by-stratum", "--test", "bootstrap"]);
    // The same proportions as above (0.6 / 0.4), so the same micro means.
    for (metric, base, cur, delta) in [
        ("mrr", 0.7333333333333333, 0.4333333333333333, -0.3),
        ("hit_rate@1", 0.6, 0.0, -0.6),
    ] {
        let r = row(&v, metric, "all");
        assert_eq!(r["test"], "bootstrap", "{r}");
        assert!((f(r, "baseline") - base).abs() < 1e-12, "{r}");
        assert!((f(r, "current") - cur).abs() < 1e-12, "{r}");
        assert!((f(r, "delta") - delta).abs() < 1e-12, "{r}");
        assert_eq!(f(r, "ci_low"), f(r, "delta"), "{r}");
        assert_eq!(f(r, "ci_high"), f(r, "delta"), "{r}");
        // Two-sided: twice the one-sided p, the share 1 / (B + 1) of
        // resamples at or above 0 read at Hesterberg's expanded level for
        // n = 40: 1 - F_t39(z(1 - 1/10001) / sqrt(40/39)) (scipy).
        assert!(
            (f(r, "p_value") / EXPANDED_FLOOR_TWO_SIDED - 1.0).abs() < 1e-9,
            "{r}"
        );
        // Six rows: stratum a's two (24 equal losses, exact sign-flip:
        // 2 / 2^24) are smallest, then these two, which Holm multiplies
        // by 4 (then 3, kept at the running maximum 4).
        assert!(
            (f(r, "p_adjusted") / (4.0 * EXPANDED_FLOOR_TWO_SIDED) - 1.0).abs() < 1e-9,
            "{r}"
        );
        let a = row(&v, metric, "a");
        assert_eq!(f(a, "p_value"), 2.0 / f64::from(1 << 24), "{a}");
    }
}

/// Macro weighting on the bootstrapped 40-query set: the overall statistic
/// is the mean of stratum means in every resample, so the interval is zero
/// width at -0.25 (mrr) and -0.5 (hit_rate@1), not at the micro -0.3, -0.6.
#[test]
fn macro_weighting_in_the_stratified_bootstrap() {
    let v = compare_strat(&["--weighting", "macro", "--test", "bootstrap"]);
    for (metric, base, cur, delta) in [
        ("mrr", 0.6666666666666666, 0.41666666666666663, -0.25),
        ("hit_rate@1", 0.5, 0.0, -0.5),
    ] {
        let r = row(&v, metric, "all");
        assert_eq!(r["test"], "bootstrap", "{r}");
        assert!((f(r, "baseline") - base).abs() < 1e-12, "{r}");
        assert!((f(r, "current") - cur).abs() < 1e-12, "{r}");
        assert!((f(r, "delta") - delta).abs() < 1e-12, "{r}");
        assert_eq!((f(r, "ci_low"), f(r, "ci_high")), (delta, delta), "{r}");
        assert!(
            (f(r, "p_value") / EXPANDED_FLOOR_TWO_SIDED - 1.0).abs() < 1e-9,
            "{r}"
        );
    }
}
