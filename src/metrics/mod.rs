//! The metric registry: names, aliases, cutoffs, and which trec_eval
//! measure each one must equal. One file per family, as trec_eval keeps one
//! file per measure: [`set`] (counts in the top k), [`rank`] (positions of
//! relevant documents), [`graded`] (nDCG).
//!
//! Values are computed from a [`Ranking`] and a [`QueryContext`] with the
//! same operations in the same order as trec_eval 9, so that the 4 printed
//! decimals agree exactly, not just closely.

pub mod graded;
pub mod rank;
pub mod set;

use std::fmt;
use std::str::FromStr;

use crate::diag::{suggest, usage_error};
use crate::judge::{QueryContext, Ranking};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Recall,
    HitRate,
    Precision,
    Mrr,
    Ndcg,
    Map,
    RPrecision,
    Judged,
}

/// Which ranking of a two-stage pipeline a metric scores (SPEC "Two
/// stages"): the final run the reader sees, or the candidate list the
/// reranker was given, named with the prefix `candidates:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Stage {
    #[default]
    Final,
    Candidates,
}

/// The prefix that names a metric of the candidate list.
pub const CANDIDATES_PREFIX: &str = "candidates:";

/// A metric with its cutoff. `cutoff: None` means the whole ranking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Metric {
    pub kind: Kind,
    pub cutoff: Option<u32>,
    pub stage: Stage,
}

/// Spellings accepted for each kind: rgate's, ir_measures', trec_eval's.
const NAMES: &[(&str, Kind)] = &[
    ("recall", Kind::Recall),
    ("r", Kind::Recall),
    ("hit_rate", Kind::HitRate),
    ("hitrate", Kind::HitRate),
    ("success", Kind::HitRate),
    ("precision", Kind::Precision),
    ("p", Kind::Precision),
    ("mrr", Kind::Mrr),
    ("rr", Kind::Mrr),
    ("recip_rank", Kind::Mrr),
    ("ndcg", Kind::Ndcg),
    ("ndcg_cut", Kind::Ndcg),
    ("map", Kind::Map),
    ("ap", Kind::Map),
    ("map_cut", Kind::Map),
    ("r_precision", Kind::RPrecision),
    ("rprec", Kind::RPrecision),
    ("judged", Kind::Judged),
];

const CANONICAL: &[&str] = &[
    "recall@k",
    "hit_rate@k",
    "precision@k",
    "mrr",
    "mrr@k",
    "ndcg",
    "ndcg@k",
    "map",
    "map@k",
    "r_precision",
    "judged@k",
];

impl Kind {
    fn canonical(self) -> &'static str {
        match self {
            Kind::Recall => "recall",
            Kind::HitRate => "hit_rate",
            Kind::Precision => "precision",
            Kind::Mrr => "mrr",
            Kind::Ndcg => "ndcg",
            Kind::Map => "map",
            Kind::RPrecision => "r_precision",
            Kind::Judged => "judged",
        }
    }

    fn needs_cutoff(self) -> bool {
        matches!(
            self,
            Kind::Recall | Kind::HitRate | Kind::Precision | Kind::Judged
        )
    }

    fn takes_cutoff(self) -> bool {
        self != Kind::RPrecision
    }
}

impl Metric {
    pub const fn new(kind: Kind, cutoff: Option<u32>) -> Metric {
        Metric {
            kind,
            cutoff,
            stage: Stage::Final,
        }
    }

    /// The same metric on the candidate list.
    pub const fn of_candidates(self) -> Metric {
        Metric {
            stage: Stage::Candidates,
            ..self
        }
    }

    /// The same metric on the final run.
    pub const fn of_final(self) -> Metric {
        Metric {
            stage: Stage::Final,
            ..self
        }
    }

    pub fn is_candidates(&self) -> bool {
        self.stage == Stage::Candidates
    }

    fn prefix(&self) -> &'static str {
        match self.stage {
            Stage::Final => "",
            Stage::Candidates => CANDIDATES_PREFIX,
        }
    }

    /// rgate's canonical spelling, used in every output.
    pub fn name(&self) -> String {
        match self.cutoff {
            Some(k) => format!("{}{}@{k}", self.prefix(), self.kind.canonical()),
            None => format!("{}{}", self.prefix(), self.kind.canonical()),
        }
    }

    /// The trec_eval measure this metric must equal, where there is one; a
    /// metric of the candidate list keeps its `candidates:` prefix, so the
    /// two stages' lines stay apart.
    pub fn trec_eval_name(&self) -> Option<String> {
        self.of_final_trec_name().map(|n| format!("{}{n}", self.prefix()))
    }

    fn of_final_trec_name(&self) -> Option<String> {
        Some(match (self.kind, self.cutoff) {
            (Kind::Recall, Some(k)) => format!("recall_{k}"),
            (Kind::HitRate, Some(k)) => format!("success_{k}"),
            (Kind::Precision, Some(k)) => format!("P_{k}"),
            (Kind::Mrr, None) => "recip_rank".into(),
            (Kind::Ndcg, None) => "ndcg".into(),
            (Kind::Ndcg, Some(k)) => format!("ndcg_cut_{k}"),
            (Kind::Map, None) => "map".into(),
            (Kind::Map, Some(k)) => format!("map_cut_{k}"),
            (Kind::RPrecision, None) => "Rprec".into(),
            _ => return None,
        })
    }

    /// Where trec_eval prints this measure among the others (its measure
    /// table's order: map, Rprec, recip_rank, P, recall, ndcg, ndcg_cut,
    /// map_cut, success), so output in trec_eval's names diffs cleanly
    /// against trec_eval's own.
    pub fn trec_eval_order(&self) -> u8 {
        match (self.kind, self.cutoff) {
            (Kind::Map, None) => 0,
            (Kind::RPrecision, _) => 1,
            (Kind::Mrr, _) => 2,
            (Kind::Precision, _) => 3,
            (Kind::Recall, _) => 4,
            (Kind::Ndcg, None) => 5,
            (Kind::Ndcg, Some(_)) => 6,
            (Kind::Map, Some(_)) => 7,
            (Kind::HitRate, _) => 8,
            (Kind::Judged, _) => 9,
        }
    }

    /// How deep into a ranking this metric looks (`None`: all of it).
    pub fn depth(&self) -> Option<u32> {
        match self.kind {
            Kind::RPrecision => None,
            _ => self.cutoff,
        }
    }

    /// The per-query value.
    pub fn compute(&self, r: &Ranking, q: &QueryContext) -> f64 {
        let k = self.cutoff.unwrap_or(u32::MAX);
        match self.kind {
            Kind::Recall => set::recall(r, q, k),
            Kind::HitRate => set::hit_rate(r, q, k),
            Kind::Precision => set::precision(r, q, k),
            Kind::Judged => set::judged(r, k),
            Kind::Mrr => rank::reciprocal_rank(r, q, k),
            Kind::Map => rank::average_precision(r, q, k),
            Kind::RPrecision => rank::r_precision(r, q),
            Kind::Ndcg => graded::ndcg(r, q, k),
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// Measures that trec_eval, ir_measures or ranx compute and rgate does not,
/// lowercased. A name that starts with one of these (followed by `_`, `.`,
/// `@` or `(`, as in `rbp.95`, `Rprec_mult_0.20`, `ERR@10`, `RBP(p=0.95)`)
/// is refused as unsupported instead of getting a "did you mean" that
/// names a different measure (`bpref` is not `r_precision`, `ERR@10` is not
/// `mrr@10`, `rbp.95` is not `recall@95`).
const FOREIGN: &[&str] = &[
    // trec_eval 9 (its `-m all_trec` measures and the `-m` extras)
    "11pt_avg",
    "bing",
    "bpref",
    "g",
    "gm_bpref",
    "gm_map",
    "infap",
    "iprec_at_recall",
    "map_avgjg",
    "ndcg_rel",
    "num_nonrel_judged_ret",
    "num_q",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "p_avgjg",
    "prefs",
    "rbp",
    "relative_p",
    "relstring",
    "rndcg",
    "rprec_mult",
    "set_f",
    "set_map",
    "set_p",
    "set_recall",
    "set_relative_p",
    "unj",
    "utility",
    "yaap",
    // ir_measures
    "accuracy",
    "alpha_ndcg",
    "alphandcg",
    "ap_ia",
    "bpm",
    "compat",
    "err",
    "err_ia",
    "inst",
    "insq",
    "iprec",
    "nerr8",
    "nerr9",
    "nerr10",
    "nerr11",
    "nerr_ia",
    "nrbp",
    "numq",
    "numrel",
    "numrelret",
    "numret",
    "p_ia",
    "sdcg",
    "setap",
    "setf",
    "setp",
    "setr",
    "strecall",
    // ranx
    "dcg",
    "dcg_burges",
    "f1",
    "hits",
    "ndcg_burges",
];

/// Whether `lower` (a lowercased measure name) is one of [`FOREIGN`], with
/// or without a cutoff or parameters.
fn is_foreign(lower: &str) -> bool {
    FOREIGN.iter().any(|f| {
        lower
            .strip_prefix(f)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['_', '.', '@', '(']))
    })
}

fn kind_named(lower: &str) -> Option<Kind> {
    NAMES.iter().find(|(n, _)| *n == lower).map(|(_, k)| *k)
}

impl FromStr for Metric {
    type Err = anyhow::Error;

    /// Accepts `recall@10`, `R@10`, `recall_10`, `recall.10`, `nDCG@10`,
    /// `ndcg_cut_10`, `RR`, `recip_rank`, `AP`, `Rprec`, ... case-insensitively.
    /// Messages quote the name as typed. A `candidates:` prefix (any case)
    /// names the metric of the candidate list.
    fn from_str(s: &str) -> anyhow::Result<Metric> {
        let raw = s.trim();
        let (stage, name) = match raw.get(..CANDIDATES_PREFIX.len()) {
            Some(p) if p.eq_ignore_ascii_case(CANDIDATES_PREFIX) => {
                (Stage::Candidates, raw[CANDIDATES_PREFIX.len()..].trim_start())
            }
            _ => (Stage::Final, raw),
        };
        let metrics = CANONICAL.join(", ");
        // ir_measures' parameters: `P(rel=2)@10`, `nDCG(dcg='exp-log2')@10`.
        if let Some(open) = name.find('(') {
            let head = name[..open].to_ascii_lowercase();
            if let Some(kind) = kind_named(&head) {
                let cutoff = raw.rsplit_once(")@").map(|(_, c)| c);
                let guess = match cutoff {
                    Some(c) if kind.takes_cutoff() => format!("{}@{c}", kind.canonical()),
                    _ if kind.needs_cutoff() => format!("{}@10", kind.canonical()),
                    _ => kind.canonical().to_string(),
                };
                return Err(usage_error(
                    format!("metric `{raw}`: rgate takes no measure parameters"),
                    format!(
                        "write it as {guess}; set the relevance level with the config's `relevance_level` or `--relevance-level`"
                    ),
                ));
            }
        }
        let (base_raw, cutoff) = split_cutoff(name);
        let base = base_raw.to_ascii_lowercase();
        let kind = match kind_named(&base) {
            Some(k) => k,
            None if is_foreign(&name.to_ascii_lowercase()) => {
                return Err(usage_error(
                    format!("metric `{raw}` is not supported by rgate"),
                    format!("trec_eval or ir_measures compute it; rgate computes: {metrics}"),
                ));
            }
            None => {
                let kinds: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
                let hint = match suggest(&base, &kinds) {
                    Some(s) => {
                        let k = kind_named(s).map_or(s, Kind::canonical);
                        let pre = if stage == Stage::Candidates {
                            CANDIDATES_PREFIX
                        } else {
                            ""
                        };
                        let guess = cutoff.map_or_else(|| format!("{pre}{k}"), |c| format!("{pre}{k}@{c}"));
                        format!("did you mean `{guess}`? Metrics: {metrics}")
                    }
                    None => format!("metrics: {metrics} (k is a cutoff such as 10)"),
                };
                return Err(usage_error(format!("unknown metric `{raw}`"), hint));
            }
        };
        let cutoff = match cutoff {
            None => None,
            Some(c) => {
                let k: u32 = c.parse().ok().filter(|&k| k > 0).ok_or_else(|| {
                    usage_error(
                        format!("metric `{raw}`: cutoff `{c}` is not a positive integer"),
                        format!("write it as {}@10", kind.canonical()),
                    )
                })?;
                Some(k)
            }
        };
        if cutoff.is_none() && kind.needs_cutoff() {
            return Err(usage_error(
                format!("metric `{raw}` needs a cutoff"),
                format!("write it as {}@10 (or another depth)", kind.canonical()),
            ));
        }
        if cutoff.is_some() && !kind.takes_cutoff() {
            return Err(usage_error(
                format!("metric `{raw}` takes no cutoff"),
                "r_precision looks at rank R, the number of relevant labels",
            ));
        }
        Ok(Metric { kind, cutoff, stage })
    }
}

fn split_cutoff(s: &str) -> (&str, Option<&str>) {
    if let Some((b, c)) = s.split_once('@') {
        return (b, Some(c));
    }
    if let Some((b, c)) = s.rsplit_once(['_', '.']) {
        if c.chars().all(|ch| ch.is_ascii_digit()) && !c.is_empty() {
            return (b, Some(c));
        }
    }
    (s, None)
}

/// Parses a list of metric names (comma separated or repeated), dropping
/// repeats while keeping the order given.
pub fn parse_list<S: AsRef<str>>(items: &[S]) -> anyhow::Result<Vec<Metric>> {
    let mut out: Vec<Metric> = Vec::new();
    for item in items {
        for part in item.as_ref().split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let m: Metric = part.parse()?;
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    if out.is_empty() {
        return Err(usage_error(
            "no metrics given",
            "for example --metrics recall@10,mrr@10,ndcg@10",
        ));
    }
    Ok(out)
}

/// The metrics used when neither the command line nor a config names any.
pub fn default_metrics() -> Vec<Metric> {
    vec![
        Metric::new(Kind::Recall, Some(10)),
        Metric::new(Kind::HitRate, Some(3)),
        Metric::new(Kind::Mrr, Some(10)),
        Metric::new(Kind::Ndcg, Some(10)),
    ]
}

/// The metrics with a trec_eval measure, as a hint lists them (with the
/// trec_eval name where it differs from rgate's); a test below checks each
/// against [`Metric::trec_eval_name`].
pub fn trec_eval_measures() -> &'static str {
    "map, map@k, r_precision, mrr (recip_rank, no cutoff), precision@k, recall@k, ndcg, ndcg@k, hit_rate@k (success)"
}

/// The metrics of the final run, in order.
pub fn final_only(metrics: &[Metric]) -> Vec<Metric> {
    metrics.iter().copied().filter(|m| !m.is_candidates()).collect()
}

/// The deepest rank any of `metrics` looks at (`None`: the whole ranking).
pub fn max_depth(metrics: &[Metric]) -> Option<u32> {
    let mut deepest = 0;
    for m in metrics {
        deepest = deepest.max(m.depth()?);
    }
    Some(deepest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_measure_the_trec_eval_hint_lists_has_a_trec_eval_name() {
        // The notes in parentheses hold commas too: drop them first.
        let mut names = String::new();
        let mut depth = 0;
        for c in trec_eval_measures().chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ if depth == 0 => names.push(c),
                _ => {}
            }
        }
        for item in names.split(',') {
            let name = item.trim().replace("@k", "@10");
            let m: Metric = name.parse().unwrap();
            assert!(m.trec_eval_name().is_some(), "{item}");
        }
    }

    #[test]
    fn aliases_and_spellings() {
        for (s, want) in [
            ("recall@10", "recall@10"),
            ("R@10", "recall@10"),
            ("recall_10", "recall@10"),
            ("recall.10", "recall@10"),
            ("success@5", "hit_rate@5"),
            ("P@10", "precision@10"),
            ("P_10", "precision@10"),
            ("RR", "mrr"),
            ("RR@10", "mrr@10"),
            ("recip_rank", "mrr"),
            ("nDCG@10", "ndcg@10"),
            ("ndcg_cut_10", "ndcg@10"),
            ("nDCG", "ndcg"),
            ("AP", "map"),
            ("AP@100", "map@100"),
            ("map_cut_5", "map@5"),
            ("Rprec", "r_precision"),
            ("Judged@10", "judged@10"),
        ] {
            assert_eq!(s.parse::<Metric>().unwrap().name(), want, "{s}");
        }
    }

    #[test]
    fn bad_names_get_hints() {
        let e = "recal@10".parse::<Metric>().unwrap_err().to_string();
        assert!(e.contains("unknown metric `recal@10`"), "{e}");
        assert!(e.contains("hint:"), "{e}");
        let e = "recall".parse::<Metric>().unwrap_err().to_string();
        assert!(e.contains("needs a cutoff"), "{e}");
        let e = "recall@0".parse::<Metric>().unwrap_err().to_string();
        assert!(e.contains("not a positive integer"), "{e}");
        let e = "rprec@5".parse::<Metric>().unwrap_err().to_string();
        assert!(e.contains("takes no cutoff"), "{e}");
    }

    #[test]
    fn trec_names() {
        let m: Metric = "ndcg@10".parse().unwrap();
        assert_eq!(m.trec_eval_name().unwrap(), "ndcg_cut_10");
        let m: Metric = "mrr@10".parse().unwrap();
        assert_eq!(m.trec_eval_name(), None);
    }

    #[test]
    fn candidates_prefix_names_the_first_stage() {
        let m: Metric = "Candidates:R@50".parse().unwrap();
        assert_eq!(m.name(), "candidates:recall@50");
        assert!(m.is_candidates());
        assert_eq!(m.of_final().name(), "recall@50");
        assert_eq!(m.trec_eval_name().as_deref(), Some("candidates:recall_50"));
        assert_ne!(m, "recall@50".parse::<Metric>().unwrap());
        let e = "candidates:recal@50".parse::<Metric>().unwrap_err().to_string();
        assert!(e.contains("unknown metric `candidates:recal@50`"), "{e}");
        let ms = parse_list(&["recall@50,candidates:recall@50,CANDIDATES:recall@50"]).unwrap();
        assert_eq!(ms.len(), 2);
        assert_eq!(final_only(&ms), vec![ms[0]]);
    }

    #[test]
    fn lists_dedupe_in_order() {
        let ms = parse_list(&["recall@10,mrr", "R@10", "ndcg@5"]).unwrap();
        let names: Vec<String> = ms.iter().map(Metric::name).collect();
        assert_eq!(names, ["recall@10", "mrr", "ndcg@5"]);
        assert_eq!(max_depth(&ms), None);
        assert_eq!(max_depth(&ms[..1]), Some(10));
    }
}
