//! Paired comparison of two runs' per-query values: the rows `rgate
//! compare` prints, and the numbers every gate check starts from.
//!
//! Pairing is by position: both score vectors follow the gold set's query
//! order. The overall scope is resampled within strata (stratum sizes
//! fixed, tiny strata pooled); a stratum's own scope is resampled as one
//! group; scopes below [`SMALL_SCOPE`] get the exact sign-flip test.
//!
//! Order-free (SPEC "Statistics, second edition"): every test sees a
//! scope's queries in id order and the overall scope's strata in name
//! order ([`crate::gold::GoldSet::stratum_ranks`]), so reordering the
//! lines or the strata of a gold file changes no p-value, bound or mean.

pub mod geo;

use crate::config::{GateSettings, TestKind, Weighting};
use crate::eval::{mean_of, Scores};
use crate::gold::GoldSet;
use crate::metrics::Metric;
use crate::stats::{self, Alternative, BootstrapSettings, Inference, Strata};

/// One metric compared in one scope.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub metric: Metric,
    /// `all` for overall, else a stratum name.
    pub stratum: String,
    pub n: usize,
    pub baseline: f64,
    pub current: f64,
    pub delta: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub p_value: f64,
    pub p_adjusted: f64,
}

/// A `compare` row: the comparison and how many queries won, tied, lost.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareRow {
    pub cmp: Comparison,
    /// One-sided (1 - alpha) bounds of delta.
    pub lower_bound: f64,
    pub upper_bound: f64,
    /// The test that ran (see [`test_for`]).
    pub test: TestKind,
    /// Whether the p carries Monte Carlo error (and so a floor, 1/(B+1)
    /// one-sided).
    pub monte_carlo: bool,
    /// Whether the Holm-adjusted p is below alpha: decided here, once, so
    /// every report marks the same rows (criterion re-decides its
    /// threshold in each renderer; two renderers can then disagree).
    pub significant: bool,
    pub wins: usize,
    pub ties: usize,
    pub losses: usize,
    /// Set when a few queries carry most of the change
    /// ([`skew_of`]).
    pub skew: Option<Skew>,
    /// The paired standardized effect, Cohen's d_z: the mean per-query
    /// delta over the deltas' standard deviation (Cohen 1988, §2.3; Sakai
    /// 2014 asks for an effect size beside every p). NaN where the deltas
    /// have no spread (fewer than two queries, or all equal).
    pub effect_size: f64,
    /// Under `labels: ppi`: the PPI estimate of the delta the row was
    /// tested on ([`crate::ppi::compare_rows`]).
    pub ppi: Option<crate::stats::ppi::PpiCombined>,
}

impl CompareRow {
    /// The test that decided, as reports name it.
    pub fn test_name(&self) -> &'static str {
        if self.ppi.is_some() {
            self.test.ppi_name()
        } else {
            self.test.name()
        }
    }
}

/// A set of query positions, named.
#[derive(Debug, Clone, PartialEq)]
pub struct Scope {
    pub name: String,
    pub members: Vec<usize>,
}

/// `all` (every given query), then each stratum's share of them, members
/// in id order so means round as in `eval` (and trec_eval).
pub fn scopes(gold: &GoldSet, queries: &[usize]) -> Vec<Scope> {
    let mut sorted = queries.to_vec();
    sorted.sort_by(|&a, &b| gold.queries[a].id.as_bytes().cmp(gold.queries[b].id.as_bytes()));
    let queries = &sorted;
    // One pass over the queries, not one per stratum: a stratum per query
    // made that quadratic (100,000 strata took a minute).
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); gold.strata.len()];
    for &q in queries {
        members[gold.queries[q].stratum as usize].push(q);
    }
    let mut out = vec![Scope {
        name: "all".into(),
        members: queries.to_vec(),
    }];
    out.extend(gold.strata.iter().zip(members).map(|(name, members)| Scope {
        name: name.clone(),
        members,
    }));
    out
}

/// The mean a scope reports: the micro mean, except the overall scope under
/// macro weighting, which is the mean of stratum means like the statistic
/// tested.
pub fn scope_mean(values: &[f64], scopes: &[Scope], scope: usize, weighting: Weighting) -> f64 {
    if scope == 0 && weighting == Weighting::Macro {
        // Summed in the strata's name order, so the mean's last bits do
        // not depend on which stratum the file showed first.
        let mut strata: Vec<&Scope> = scopes[1..].iter().filter(|s| !s.members.is_empty()).collect();
        strata.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        let per: Vec<f64> = strata
            .iter()
            .map(|s| mean_of(values, s.members.iter().copied()))
            .collect();
        stats::mean(&per)
    } else {
        mean_of(values, scopes[scope].members.iter().copied())
    }
}

/// Scopes with fewer queries than this are tested with the sign-flip
/// randomization test even when the bootstrap is configured: a bootstrap
/// of a handful of deltas sees too little spread (two equal losses
/// resample to the same mean every time and would read as p < 0.0001; the
/// exact sign-flip p is 0.25).
pub const SMALL_SCOPE: usize = 30;

/// Fewer non-zero deltas than this in a bootstrapped scope and the metric
/// is decided by the sign-flip test (see [`test_scope`]).
pub const MIN_MOVED: usize = 10;

/// Strata smaller than this are not resampled on their own in the overall
/// check: they are pooled (and the pool joins the largest stratum when it is
/// still this small), so a stratum of one or two queries, whose resamples
/// never vary, cannot make the overall check look certain.
pub const MIN_RESAMPLED_STRATUM: usize = 10;

/// What one scope's test returned: the test that actually ran (the small
/// scope rule may replace the bootstrap), whether its p-values carry Monte
/// Carlo error, and one [`Inference`] per metric, from which any margin's
/// p-value and any level's bound are read.
#[derive(Debug, Clone)]
pub struct ScopeTest {
    /// Per metric: the test that ran, and whether its p carries Monte
    /// Carlo error.
    pub tests: Vec<TestKind>,
    pub monte_carlo: Vec<bool>,
    pub inferences: Vec<Inference>,
}

/// The test a scope of `n` queries gets under the configured one.
pub fn test_for(configured: TestKind, n: usize) -> TestKind {
    if configured == TestKind::Bootstrap && n < SMALL_SCOPE {
        TestKind::Randomization
    } else {
        configured
    }
}

/// Resampling groups of the overall scope: one per stratum, with strata
/// below [`MIN_RESAMPLED_STRATUM`] pooled (see there). Returns the label of
/// each query and whether any stratum was pooled. Labels are the strata's
/// ranks by name, so the choices below (the pool joins the largest
/// stratum, the last by name among equals; a pool with nowhere to go takes
/// the first small stratum's label) depend on the names, not the file.
fn resampling_labels(labels: &[u32]) -> (Vec<u32>, bool) {
    let mut sizes: std::collections::BTreeMap<u32, usize> = std::collections::BTreeMap::new();
    for &l in labels {
        *sizes.entry(l).or_default() += 1;
    }
    let small: Vec<u32> = sizes
        .iter()
        .filter(|(_, &n)| n < MIN_RESAMPLED_STRATUM)
        .map(|(&l, _)| l)
        .collect();
    if small.is_empty() {
        return (labels.to_vec(), false);
    }
    // A set, not a list: with a stratum per query, `contains` per query
    // was quadratic.
    let is_small: std::collections::HashSet<u32> = small.iter().copied().collect();
    let pooled: usize = small.iter().map(|l| sizes[l]).sum();
    let largest = sizes
        .iter()
        .filter(|(l, _)| !is_small.contains(l))
        .max_by_key(|(_, &n)| n)
        .map(|(&l, _)| l);
    let target = match largest {
        Some(l) if pooled < MIN_RESAMPLED_STRATUM => l,
        _ => small[0],
    };
    let out = labels
        .iter()
        .map(|l| if is_small.contains(l) { target } else { *l })
        .collect();
    (out, true)
}

/// Runs the configured test on query-major deltas of several metrics (see
/// [`test_scope`] for the rules that pick the test and the groups). The
/// bootstrap draws each resample's indices once for all of them; the t-test
/// and randomization test take one metric at a time. Under macro weighting
/// the caller passes deltas already weighted (`n * w_q * d_q`), except for
/// the stratified bootstrap, which weights by itself.
fn run_test(
    test: TestKind,
    deltas: &[f64],
    n_metrics: usize,
    strata: &Strata,
    weighting: stats::Weighting,
    s: &GateSettings,
    monotone: bool,
) -> Vec<Inference> {
    match test {
        TestKind::Bootstrap => stats::bootstrap_percentile(
            deltas,
            n_metrics,
            strata,
            &BootstrapSettings {
                resamples: s.resamples,
                seed: s.seed,
                weighting,
                alpha: s.alpha,
            },
        ),
        TestKind::TTest | TestKind::Randomization => (0..n_metrics)
            .map(|m| {
                let d: Vec<f64> = deltas.iter().skip(m).step_by(n_metrics.max(1)).copied().collect();
                match test {
                    TestKind::TTest if monotone => Inference::t_test_monotone(&d),
                    TestKind::TTest => Inference::t_test(&d),
                    _ => Inference::randomization(&d, s.resamples, s.seed),
                }
            })
            .collect(),
    }
}

/// Tests every metric of `metrics` (indices into the score vectors) in one
/// scope: one inference per metric, in order. The margin tests of the gate
/// read the same inference at a shifted null (`p_less(-tolerance)`), so
/// the decision's p and its bound come from one test.
///
/// Rules: a scope below [`SMALL_SCOPE`] queries gets the sign-flip test in
/// place of the bootstrap; the overall scope is resampled within strata,
/// with tiny strata pooled; under macro weighting the overall statistic is
/// the mean of stratum means for every test (each query weighted by
/// 1 / (strata * stratum size)).
#[allow(clippy::too_many_arguments)]
pub fn test_scope(
    gold: &GoldSet,
    scopes: &[Scope],
    scope: usize,
    metrics: &[usize],
    geometric: &[bool],
    base: &dyn Fn(usize, usize) -> f64,
    cur: &dyn Fn(usize, usize) -> f64,
    settings: &GateSettings,
    monotone: bool,
) -> ScopeTest {
    let members = &scopes[scope].members;
    let n = members.len();
    let test = test_for(settings.test, n);
    // Groups by the stratum's rank by name, not its number (first
    // appearance in the file): the groups' order decides which random
    // stream draws which stratum, and in which order their sums add up.
    let labels: Vec<u32> = if scope == 0 {
        let rank = gold.stratum_ranks();
        members
            .iter()
            .map(|&q| rank[gold.queries[q].stratum as usize])
            .collect()
    } else {
        vec![0; n]
    };
    // Per-query weight relative to the micro mean: n * w_q.
    let macro_overall = scope == 0 && settings.weighting == Weighting::Macro;
    let (groups, pooled) = resampling_labels(&labels);
    let pre_weight = macro_overall && (pooled || test != TestKind::Bootstrap);
    let weight: Vec<f64> = if pre_weight {
        let mut size: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
        for &l in &labels {
            *size.entry(l).or_default() += 1;
        }
        let h = size.len() as f64;
        labels.iter().map(|l| n as f64 / (h * size[l] as f64)).collect()
    } else {
        vec![1.0; n]
    };
    let m = metrics.len();
    let mut deltas = Vec::with_capacity(n * m);
    for (i, &q) in members.iter().enumerate() {
        for &mi in metrics {
            deltas.push((cur(mi, q) - base(mi, q)) * weight[i]);
        }
    }
    let strata = Strata::from_labels(&groups);
    let weighting = if macro_overall && !pre_weight {
        stats::Weighting::Macro
    } else {
        stats::Weighting::Micro
    };
    let mut inferences = run_test(test, &deltas, m, &strata, weighting, settings, monotone);
    let mut tests = vec![test; m];
    // The percentile bootstrap reads the spread of resampled means, which
    // a handful of moved queries cannot show: a metric with fewer than
    // MIN_MOVED of them, and a geometric mean (a query whose AP falls to
    // 0 moves its log by up to 11.5: heavy tails), are decided by the
    // sign-flip test, exact at margin 0 whatever the deltas look like.
    if test == TestKind::Bootstrap {
        for k in 0..m {
            let column: Vec<f64> = deltas.iter().skip(k).step_by(m.max(1)).copied().collect();
            let moved = column.iter().filter(|&&d| d != 0.0).count();
            // No delta moved at all: every test gives p = 1 and the point
            // 0, and the bootstrap that was configured keeps its name.
            if moved > 0 && (moved < MIN_MOVED || geometric.get(k) == Some(&true)) {
                inferences[k] = Inference::randomization(&column, settings.resamples, settings.seed);
                tests[k] = TestKind::Randomization;
            }
        }
    }
    let monte_carlo = tests
        .iter()
        .map(|t| match t {
            TestKind::Bootstrap => true,
            TestKind::Randomization => n > stats::signflip::EXACT_N,
            TestKind::TTest => false,
        })
        .collect();
    ScopeTest {
        tests,
        monte_carlo,
        inferences,
    }
}

/// `candidate` against `baseline` on every metric, overall and (with
/// `by_stratum`) per stratum; Holm across all the rows.
pub fn compare(
    gold: &GoldSet,
    baseline: &Scores,
    candidate: &Scores,
    settings: &GateSettings,
    alternative: Alternative,
    by_stratum: bool,
) -> Vec<CompareRow> {
    let all: Vec<usize> = (0..gold.len()).collect();
    let scopes = scopes(gold, &all);
    let metrics: Vec<usize> = (0..baseline.metrics.len()).collect();
    // A geometric mean is tested on the log scale (see [`geo`]).
    let (tested_base, tested_cand) = (geo::logged(baseline), geo::logged(candidate));
    let (tb, tc) = (
        tested_base.as_ref().unwrap_or(baseline),
        tested_cand.as_ref().unwrap_or(candidate),
    );
    let geometric: Vec<bool> = baseline.metrics.iter().map(geo::is_geometric).collect();
    let mut rows = Vec::new();
    for si in 0..scopes.len() {
        if (si > 0 && !by_stratum) || scopes[si].members.is_empty() {
            continue;
        }
        let tested = test_scope(
            gold,
            &scopes,
            si,
            &metrics,
            &geometric,
            &|m, q| tb.values[m][q],
            &|m, q| tc.values[m][q],
            settings,
            false,
        );
        for (m, inference) in tested.inferences.iter().enumerate() {
            let t = inference.outcome(settings.alpha);
            let deltas = |a: &Scores, b: &Scores| -> Vec<f64> {
                a.values[m].iter().zip(&b.values[m]).map(|(c, b)| c - b).collect()
            };
            // The skew in the metric's own per-query changes; the effect
            // size in the units tested.
            let d = deltas(candidate, baseline);
            let skew = skew_of(&d, gold, &scopes, si, settings.weighting);
            let d_tested = if geometric[m] { deltas(tc, tb) } else { d.clone() };
            let effect_size = effect_size(scopes[si].members.iter().map(|&q| d_tested[q]));
            let (mut wins, mut ties, mut losses) = (0, 0, 0);
            for &q in &scopes[si].members {
                let d = candidate.values[m][q] - baseline.values[m][q];
                if d > 0.0 {
                    wins += 1;
                } else if d < 0.0 {
                    losses += 1;
                } else {
                    ties += 1;
                }
            }
            let mut cmp = Comparison {
                metric: baseline.metrics[m],
                stratum: scopes[si].name.clone(),
                n: scopes[si].members.len(),
                baseline: scope_mean(&tb.values[m], &scopes, si, settings.weighting),
                current: scope_mean(&tc.values[m], &scopes, si, settings.weighting),
                delta: t.mean_delta,
                ci_low: t.ci_low,
                ci_high: t.ci_high,
                p_value: t.p(alternative),
                p_adjusted: f64::NAN,
            };
            let (mut lower_bound, mut upper_bound) = (t.lower_bound, t.upper_bound);
            if geometric[m] {
                let back = geo::to_units(&mut cmp);
                lower_bound = back.delta(lower_bound);
                upper_bound = back.delta(upper_bound);
            }
            let metric = cmp.metric;
            let fit = |x: f64| within_range(&metric, cmp.baseline, x);
            let (lower_bound, upper_bound) = (fit(lower_bound), fit(upper_bound));
            cmp.ci_low = fit(cmp.ci_low);
            cmp.ci_high = fit(cmp.ci_high);
            rows.push(CompareRow {
                cmp,
                lower_bound,
                upper_bound,
                test: tested.tests[m],
                monte_carlo: tested.monte_carlo[m],
                significant: false,
                wins,
                ties,
                losses,
                skew,
                effect_size,
                ppi: None,
            });
        }
    }
    correct(&mut [&mut rows], Correction::Holm, settings.alpha);
    rows
}

/// What [`retest_at_floor`] did: the larger B, how many rows it re-tested,
/// and whether the family still needs a p below what that B can give.
#[derive(Debug, Clone, PartialEq)]
pub struct FloorRetest {
    pub resamples: u32,
    pub rows: usize,
    pub still_bound: bool,
    /// The smallest p a row can reach at that B (its Monte Carlo floor).
    pub floor: f64,
}

/// A Monte Carlo p is never below its floor, 1/(B+1) (2/(B+1) two-sided):
/// in a family of m rows Holm needs p below alpha/m at its first step, so
/// at B = 10,000 a family of 256 two-sided rows could never be
/// significant, however large the effects (32 variants x 2 metrics x 4
/// scopes, every variant +0.075 nDCG@10: "no variant is significantly
/// better"). Where the family needs a p near that floor, every row whose
/// p lies within 20 floors of it is re-tested with ten or a hundred times
/// as many resamples (at most [`stats::MAX_RESAMPLES`]), so the rows that
/// could not be told apart from the floor get their own p; the seed stays,
/// so the re-test is as reproducible as the first. `rows[k]`: variant k
/// against `base`; `family_m`: the rows the correction runs over.
#[allow(clippy::too_many_arguments)]
pub fn retest_at_floor(
    gold: &GoldSet,
    base: &Scores,
    variants: &[&Scores],
    rows: &mut [Vec<CompareRow>],
    settings: &GateSettings,
    alternative: Alternative,
    by_stratum: bool,
) -> Option<FloorRetest> {
    let m: usize = rows.iter().map(Vec::len).sum();
    let sides = if alternative == Alternative::TwoSided {
        2.0
    } else {
        1.0
    };
    let floor = |b: u32| sides / (f64::from(b) + 1.0);
    // Within a few resamples of the floor, a p says "beyond what B can
    // resolve": fewer than 20 of B resampled statistics reached it.
    let at_floor = |r: &CompareRow, b: u32| r.monte_carlo && r.cmp.p_value <= 20.0 * floor(b);
    // Room for the family's strictest level: m floors below alpha / 5.
    let enough = |b: u32| (m as f64) * floor(b) < settings.alpha / 5.0;
    if m == 0 || enough(settings.resamples) || !rows.iter().flatten().any(|r| at_floor(r, settings.resamples))
    {
        return None;
    }
    let max = stats::MAX_RESAMPLES;
    let mut b = settings.resamples;
    while !enough(b) && b < max {
        b = b.saturating_mul(10).min(max);
    }
    if b == settings.resamples {
        return Some(FloorRetest {
            resamples: b,
            rows: 0,
            still_bound: true,
            floor: floor(b),
        });
    }
    let more = GateSettings {
        resamples: b,
        ..settings.clone()
    };
    let mut count = 0;
    for (k, list) in rows.iter_mut().enumerate() {
        if !list.iter().any(|r| at_floor(r, settings.resamples)) {
            continue;
        }
        let again = compare(gold, base, variants[k], &more, alternative, by_stratum);
        for (row, new) in list.iter_mut().zip(again) {
            if at_floor(row, settings.resamples) {
                *row = new;
                count += 1;
            }
        }
    }
    Some(FloorRetest {
        resamples: b,
        rows: count,
        still_bound: !enough(b),
        floor: floor(b),
    })
}

/// A bound or interval end of a mean delta, kept to the deltas the metric
/// can show: a mean of values in `[lo, hi]` moves by at most `hi - b`
/// up and `b - lo` down from a baseline mean `b`. A test that cannot reach
/// a level has no bound there (+-inf); the metric's range still has one,
/// and a lower bound of -1.0003 for a 0/1 metric is no bound anyone can
/// read. NaN (undefined input) stays NaN. Verdicts do not move: a check
/// fails on a bound beyond -tolerance, which the range never cuts off.
pub fn within_range(metric: &Metric, baseline_mean: f64, x: f64) -> f64 {
    if x.is_nan() || !baseline_mean.is_finite() {
        return x;
    }
    let (lo, hi) = metric.family().range();
    x.max(lo - baseline_mean).min(hi - baseline_mean)
}

/// [`within_range`] in the units a metric is tested in: a geometric
/// mean's deltas are of the logs ([`geo`]), whose values lie between the
/// log of its floor and 0.
pub fn within_tested_range(metric: &Metric, baseline_mean: f64, x: f64) -> f64 {
    if !geo::is_geometric(metric) {
        return within_range(metric, baseline_mean, x);
    }
    if x.is_nan() || !baseline_mean.is_finite() {
        return x;
    }
    let (lo, hi) = (geo::log_value(0.0), geo::log_value(1.0));
    x.max(lo - baseline_mean).min(hi - baseline_mean)
}

/// Cohen's d_z of paired deltas: mean over sample standard deviation; NaN
/// without spread.
pub fn effect_size(deltas: impl Iterator<Item = f64>) -> f64 {
    let d: Vec<f64> = deltas.collect();
    if d.len() < 2 {
        return f64::NAN;
    }
    let sd = stats::sample_sd(&d);
    if sd > 0.0 && sd.is_finite() {
        stats::mean(&d) / sd
    } else {
        f64::NAN
    }
}

/// The multiplicity correction `compare` applies across its family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Correction {
    /// Holm's step-down: the family-wise error rate, under any dependence.
    #[default]
    Holm,
    /// Benjamini-Hochberg: the false discovery rate (the family-wise rate
    /// when nothing differs), for many variants where Holm is too strict.
    Bh,
    /// No correction: each row at alpha on its own.
    None,
}

impl Correction {
    pub fn name(self) -> &'static str {
        match self {
            Correction::Holm => "holm",
            Correction::Bh => "bh",
            Correction::None => "none",
        }
    }

    /// What it controls, in words for a report.
    pub fn words(self) -> &'static str {
        match self {
            Correction::Holm => "Holm (family-wise error)",
            Correction::Bh => "Benjamini-Hochberg (false discovery rate)",
            Correction::None => "no correction",
        }
    }
}

/// Adjusts the p-values of every row of every list as one family and
/// marks the rows below alpha significant.
pub fn correct(rows: &mut [&mut Vec<CompareRow>], correction: Correction, alpha: f64) {
    let p: Vec<f64> = rows
        .iter()
        .flat_map(|r| r.iter().map(|c| c.cmp.p_value))
        .collect();
    let adjusted = match correction {
        Correction::Holm => stats::holm(&p),
        Correction::Bh => stats::benjamini_hochberg(&p),
        Correction::None => p
            .iter()
            .map(|&x| if x.is_nan() { 1.0 } else { x.clamp(0.0, 1.0) })
            .collect(),
    };
    let mut it = adjusted.into_iter();
    for list in rows.iter_mut() {
        for r in list.iter_mut() {
            let a = it.next().unwrap_or(1.0);
            r.cmp.p_adjusted = a;
            r.significant = a < alpha;
        }
    }
}

/// A variant's place in the ranking on the first metric, overall.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    /// Index of the run (0 is the baseline; variants from 1).
    pub run: usize,
    pub mean: f64,
    /// Its row against the baseline (first metric, scope `all`).
    pub delta: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub p_adjusted: f64,
    pub test: TestKind,
    /// Tested on its PPI estimate (`labels: ppi`).
    pub ppi: bool,
    pub effect_size: f64,
    /// Significantly better than the baseline: the row is significant
    /// after the family's correction and its delta is positive.
    pub better: bool,
}

/// The best variant against the one closest to it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerUp {
    /// Index of the runner-up run: the variant with the highest mean other
    /// than the best.
    pub run: usize,
    /// best - runner-up, and the two-sided test of it; the interval is
    /// at the level the claim is held to (below).
    pub delta: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub p_value: f64,
    pub test: TestKind,
    /// Pairs of variants the claim is corrected over: k (k - 1) / 2. The
    /// pair was picked by looking (the two highest means, the first of
    /// them significantly better than the baseline), and a pair picked so
    /// is further apart than a pair fixed in advance: two equal variants
    /// tested at alpha were called different in .148 of the trials where
    /// they were the top two. A claim about any pair, held to alpha over
    /// all pairs (Bonferroni), holds whichever pair the data pick.
    pub pairs: usize,
    /// The level the claim is held to: alpha / pairs.
    pub level: f64,
    /// The best is significantly better: p below `level` and delta positive.
    pub better: bool,
}

/// What `compare` concludes across all its variants (SPEC "Tuning knobs"):
/// the family the correction ran over, the variants ranked by the first
/// metric, and the best variant significantly better than the baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    pub correction: Correction,
    /// Tests in the family: variants x metrics x scopes.
    pub tests: usize,
    /// The metric the ranking and the statement read (the first).
    pub metric: Metric,
    /// The baseline's mean on it.
    pub baseline_mean: f64,
    /// Variants by mean, highest first (ties in the order given).
    pub ranking: Vec<Ranked>,
    /// Index of the best variant significantly better than the baseline:
    /// the highest mean among those that are; none when none is.
    pub best: Option<usize>,
    /// Set when there is a best and another variant.
    pub runner_up: Option<RunnerUp>,
}

/// Corrects every variant's rows as one family (`rows[k]`: variant k + 1
/// against the baseline `runs[0]`), ranks the variants on the first
/// metric overall, and names the best one significantly better than the
/// baseline, testing it against the runner-up with the same test.
pub fn family(
    gold: &GoldSet,
    runs: &[&Scores],
    rows: &mut [Vec<CompareRow>],
    correction: Correction,
    settings: &GateSettings,
) -> Family {
    {
        let mut lists: Vec<&mut Vec<CompareRow>> = rows.iter_mut().collect();
        correct(&mut lists, correction, settings.alpha);
    }
    let tests = rows.iter().map(Vec::len).sum();
    let metric = runs[0].metrics[0];
    // The baseline's mean as its rows show it (macro weighting included).
    let baseline_mean = rows
        .iter()
        .flatten()
        .find(|r| r.cmp.metric == metric && r.cmp.stratum == "all")
        .map_or_else(
            || mean_of(&runs[0].values[0], gold.id_order()),
            |r| r.cmp.baseline,
        );
    let mut ranking: Vec<Ranked> = rows
        .iter()
        .enumerate()
        .filter_map(|(k, list)| {
            let r = list
                .iter()
                .find(|r| r.cmp.metric == metric && r.cmp.stratum == "all")?;
            Some(Ranked {
                run: k + 1,
                mean: r.cmp.current,
                delta: r.cmp.delta,
                ci_low: r.cmp.ci_low,
                ci_high: r.cmp.ci_high,
                p_adjusted: r.cmp.p_adjusted,
                test: r.test,
                ppi: r.ppi.is_some(),
                effect_size: r.effect_size,
                better: r.significant && r.cmp.delta > 0.0,
            })
        })
        .collect();
    // Stable: equal means keep the order the runs were given in.
    ranking.sort_by(|a, b| b.mean.total_cmp(&a.mean));
    let best = ranking.iter().find(|r| r.better).map(|r| r.run);
    let runner_up = best.and_then(|b| {
        let other = ranking.iter().find(|r| r.run != b)?.run;
        let all: Vec<usize> = (0..gold.len()).collect();
        let sc = scopes(gold, &all);
        let (cur, base) = (runs[b], runs[other]);
        let log = geo::is_geometric(&metric);
        let value = |s: &Scores, q: usize| {
            let v = s.values[0][q];
            if log {
                geo::log_value(v)
            } else {
                v
            }
        };
        let tested = test_scope(
            gold,
            &sc,
            0,
            &[0],
            &[log],
            &|_, q| value(base, q),
            &|_, q| value(cur, q),
            settings,
            false,
        );
        let k = ranking.len();
        let pairs = (k * k.saturating_sub(1) / 2).max(1);
        let level = settings.alpha / pairs as f64;
        let t = tested.inferences[0].outcome(level);
        // A geometric mean's change back in its units, about the
        // runner-up's geometric mean.
        let gm = log.then(|| {
            let logs: Vec<f64> = (0..gold.len()).map(|q| value(base, q)).collect();
            scope_mean(&logs, &sc, 0, settings.weighting).exp()
        });
        let back = |x: f64| gm.map_or(x, |gm_b| geo::Back { gm_b }.delta(x));
        Some(RunnerUp {
            run: other,
            delta: back(t.mean_delta),
            ci_low: back(t.ci_low),
            ci_high: back(t.ci_high),
            p_value: t.p_two_sided,
            test: tested.tests[0],
            pairs,
            level,
            better: t.p_two_sided < level && t.mean_delta > 0.0,
        })
    });
    Family {
        correction,
        tests,
        metric,
        baseline_mean,
        ranking,
        best,
        runner_up,
    }
}

/// At most this many carriers of a skewed change are named; the count
/// says how many there are.
pub const SKEW_MAX_NAMED: usize = 10;

/// A flagged check: how skewed, which way, and who carries it.
#[derive(Debug, Clone, PartialEq)]
pub struct Skew {
    pub skewness: f64,
    pub direction: stats::skew::Direction,
    pub share: f64,
    /// Queries carrying the change (at most ceil(5% n)).
    pub carriers: usize,
    /// Queries that moved in the carriers' direction at all.
    pub movers: usize,
    /// The largest [`SKEW_MAX_NAMED`] carriers: query id and its delta (the
    /// metric's own delta, unweighted), largest first.
    pub queries: Vec<(String, f64)>,
}

/// The skew diagnostic of one check or row ([`stats::skew`] has the
/// criterion) on the summands of its statistic: the deltas, or for the
/// overall scope under macro weighting each weighted by n / (H n_h), so
/// their mean is the mean of stratum means. `d` holds every gold query's
/// delta (indexed like the gold set); the scope's members say which count.
pub fn skew_of(
    d: &[f64],
    gold: &GoldSet,
    scopes: &[Scope],
    scope: usize,
    weighting: Weighting,
) -> Option<Skew> {
    let members = &scopes[scope].members;
    let weights = summand_weights(scopes, scope, weighting);
    let summands: Vec<f64> = members
        .iter()
        .zip(&weights)
        .map(|(&q, w)| d.get(q).copied().unwrap_or(0.0) * w)
        .collect();
    let found = stats::skew::detect(&summands)?;
    let queries = found
        .carriers
        .iter()
        .take(SKEW_MAX_NAMED)
        .map(|&i| {
            let q = members[i];
            (gold.queries[q].id.clone(), d.get(q).copied().unwrap_or(0.0))
        })
        .collect();
    Some(Skew {
        skewness: found.skewness,
        direction: found.direction,
        share: found.share,
        carriers: found.carriers.len(),
        movers: found.movers,
        queries,
    })
}

/// Each member's weight in the scope's statistic relative to the micro
/// mean: 1, or for the overall scope under macro weighting n / (H n_h).
fn summand_weights(scopes: &[Scope], scope: usize, weighting: Weighting) -> Vec<f64> {
    let members = &scopes[scope].members;
    if scope != 0 || weighting != Weighting::Macro {
        return vec![1.0; members.len()];
    }
    let strata: Vec<&Scope> = scopes[1..].iter().filter(|s| !s.members.is_empty()).collect();
    let h = strata.len() as f64;
    let n = members.len() as f64;
    let mut weight = std::collections::HashMap::new();
    for s in &strata {
        for &q in &s.members {
            weight.insert(q, n / (h * s.members.len() as f64));
        }
    }
    members
        .iter()
        .map(|q| weight.get(q).copied().unwrap_or(1.0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bootstrap of fewer than 30 queries is replaced by the exact
    /// sign-flip test (README, Statistics); 30 queries are bootstrapped,
    /// and a configured t-test or randomization test is never replaced.
    #[test]
    fn scopes_below_thirty_queries_get_the_sign_flip_test() {
        assert_eq!(test_for(TestKind::Bootstrap, 29), TestKind::Randomization);
        assert_eq!(test_for(TestKind::Bootstrap, 30), TestKind::Bootstrap);
        assert_eq!(test_for(TestKind::TTest, 5), TestKind::TTest);
        assert_eq!(test_for(TestKind::Randomization, 500), TestKind::Randomization);
    }

    /// The macro mean adds the stratum means in name order: with means
    /// 1e16, 1 and -1e16 the sum depends on the order (1e16 + 1 rounds back
    /// to 1e16), so a file naming the strata in another order used to give
    /// another mean. In name order (a, b, c: 1e16 + 1 - 1e16) the 1 is lost
    /// for any file order: (1e16 + 1) - 1e16 = 0, over 3 strata.
    #[test]
    fn the_macro_mean_does_not_follow_the_files_stratum_order() {
        use crate::gold::{GoldFormat, GoldQuery, Labels};
        let q = |id: &str, stratum: u32| GoldQuery {
            id: id.into(),
            text: None,
            stratum,
            spans: Vec::new(),
            labels: Labels::default(),
        };
        // Strata a (1e16), b (1), c (-1e16), listed in two file orders.
        let value = |name: &str| match name {
            "a" => 1e16,
            "b" => 1.0,
            _ => -1e16,
        };
        for names in [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]] {
            let strata: Vec<String> = names.iter().map(|s| s.to_string()).collect();
            let queries: Vec<GoldQuery> = names.iter().enumerate().map(|(k, n)| q(n, k as u32)).collect();
            let gold = GoldSet::from_parts("g", GoldFormat::Yaml, queries, strata).unwrap();
            let ranks = gold.stratum_ranks();
            let want: Vec<u32> = names.iter().map(|n| (n.as_bytes()[0] - b'a') as u32).collect();
            assert_eq!(ranks, want, "{names:?}");
            let values: Vec<f64> = names.iter().map(|n| value(n)).collect();
            let all: Vec<usize> = (0..3).collect();
            let sc = scopes(&gold, &all);
            assert_eq!(scope_mean(&values, &sc, 0, Weighting::Macro), 0.0, "{names:?}");
        }
    }

    /// The row says whether it is significant, so no renderer decides it:
    /// 20 of 40 queries falling from 1 to 0 is (any paired test gives p
    /// far below 0.05), an unchanged run is not (every delta is 0).
    #[test]
    fn rows_carry_their_significance() {
        use crate::gold::{GoldFormat, GoldQuery, Labels};
        let queries: Vec<GoldQuery> = (0..40)
            .map(|i| GoldQuery {
                id: format!("q{i:02}"),
                text: None,
                stratum: 0,
                spans: Vec::new(),
                labels: Labels::default(),
            })
            .collect();
        let gold = GoldSet::from_parts("g", GoldFormat::Yaml, queries, vec!["s".into()]).unwrap();
        let metric = Metric::new(crate::metrics::Kind::Mrr, None);
        let scores = |v: Vec<f64>| Scores {
            metrics: vec![metric],
            values: vec![v],
        };
        let base = scores(vec![1.0; 40]);
        let dropped = scores((0..40).map(|i| if i < 20 { 0.0 } else { 1.0 }).collect());
        let settings = GateSettings::default();
        for (cand, want) in [(&dropped, true), (&base, false)] {
            let rows = compare(&gold, &base, cand, &settings, Alternative::TwoSided, false);
            assert_eq!(rows.len(), 1);
            assert_eq!(rows[0].significant, want, "{:?}", rows[0].cmp);
            assert_eq!(rows[0].significant, rows[0].cmp.p_adjusted < settings.alpha);
        }
    }
}
