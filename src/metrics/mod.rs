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

/// A measure family: the key of its [`FAMILIES`] entry. Variants are in
/// the table's order (a test checks it), so [`Kind::family`] is an index.
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

/// Whether a family is written with a cutoff `@k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cutoff {
    /// `recall@10`: a count in the top k means nothing without k.
    Required,
    /// `ndcg` or `ndcg@10`: without k, the whole ranking.
    Optional,
    /// `r_precision`: the rank looked at comes from the labels.
    None,
}

/// A trec_eval measure a family's values equal, and its place in
/// trec_eval's measure table (`TREC_MEAS` in trec_eval's `meas_init.c`),
/// which is the order trec_eval prints measures in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrecMeasure {
    /// The whole name (`map`), or, for a measure at a cutoff, the part
    /// before k (`map_cut_`).
    pub name: &'static str,
    pub order: u8,
}

/// One measure family, as one line of trec_eval's `TREC_MEAS`: everything
/// that names, parses, orders or computes the family's metrics reads it
/// here, so a new measure is one entry plus its function in its family's
/// file.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    pub kind: Kind,
    /// rgate's spelling, used in every output.
    pub name: &'static str,
    /// Other spellings accepted (lowercase): ir_measures' and trec_eval's.
    pub aliases: &'static [&'static str],
    pub cutoff: Cutoff,
    /// trec_eval's measure of the whole ranking (written without a cutoff).
    pub trec_eval: Option<TrecMeasure>,
    /// trec_eval's measure at a cutoff k (`name` then k).
    pub trec_eval_cut: Option<TrecMeasure>,
    /// The per-query value at cutoff k (`u32::MAX`: the whole ranking).
    /// A plain function pointer: calling it costs what the `match` it
    /// replaced did, with nothing allocated or compared by name.
    pub compute: fn(&Ranking, &QueryContext, u32) -> f64,
}

const fn trec(name: &'static str, order: u8) -> Option<TrecMeasure> {
    Some(TrecMeasure { name, order })
}

/// Where a metric without a trec_eval measure sorts among trec_eval's.
const UNLISTED: u8 = u8::MAX;

/// The measure families, in [`Kind`]'s order. The order of the names and
/// aliases here is also the order "did you mean" considers them in.
pub const FAMILIES: &[Family] = &[
    Family {
        kind: Kind::Recall,
        name: "recall",
        aliases: &["r"],
        cutoff: Cutoff::Required,
        trec_eval: None,
        trec_eval_cut: trec("recall_", 4),
        compute: set::recall,
    },
    Family {
        kind: Kind::HitRate,
        name: "hit_rate",
        aliases: &["hitrate", "success"],
        cutoff: Cutoff::Required,
        trec_eval: None,
        trec_eval_cut: trec("success_", 8),
        compute: set::hit_rate,
    },
    Family {
        kind: Kind::Precision,
        name: "precision",
        aliases: &["p"],
        cutoff: Cutoff::Required,
        trec_eval: None,
        trec_eval_cut: trec("P_", 3),
        compute: set::precision,
    },
    Family {
        kind: Kind::Mrr,
        name: "mrr",
        aliases: &["rr", "recip_rank"],
        cutoff: Cutoff::Optional,
        trec_eval: trec("recip_rank", 2),
        trec_eval_cut: None,
        compute: rank::reciprocal_rank,
    },
    Family {
        kind: Kind::Ndcg,
        name: "ndcg",
        aliases: &["ndcg_cut"],
        cutoff: Cutoff::Optional,
        trec_eval: trec("ndcg", 5),
        trec_eval_cut: trec("ndcg_cut_", 6),
        compute: graded::ndcg,
    },
    Family {
        kind: Kind::Map,
        name: "map",
        aliases: &["ap", "map_cut"],
        cutoff: Cutoff::Optional,
        trec_eval: trec("map", 0),
        trec_eval_cut: trec("map_cut_", 7),
        compute: rank::average_precision,
    },
    Family {
        kind: Kind::RPrecision,
        name: "r_precision",
        aliases: &["rprec"],
        cutoff: Cutoff::None,
        trec_eval: trec("Rprec", 1),
        trec_eval_cut: None,
        compute: |r, q, _| rank::r_precision(r, q),
    },
    Family {
        kind: Kind::Judged,
        name: "judged",
        aliases: &[],
        cutoff: Cutoff::Required,
        trec_eval: None,
        trec_eval_cut: None,
        compute: |r, _, k| set::judged(r, k),
    },
];

impl Kind {
    /// This kind's table entry.
    pub fn family(self) -> &'static Family {
        &FAMILIES[self as usize]
    }

    fn canonical(self) -> &'static str {
        self.family().name
    }

    fn needs_cutoff(self) -> bool {
        self.family().cutoff == Cutoff::Required
    }

    fn takes_cutoff(self) -> bool {
        self.family().cutoff != Cutoff::None
    }
}

impl Family {
    /// Every spelling, rgate's first.
    fn spellings(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.name).chain(self.aliases.iter().copied())
    }

    /// The forms a user writes: `mrr, mrr@k`, `recall@k`, `r_precision`.
    fn forms(&self) -> Vec<String> {
        match self.cutoff {
            Cutoff::Required => vec![format!("{}@k", self.name)],
            Cutoff::Optional => vec![self.name.to_string(), format!("{}@k", self.name)],
            Cutoff::None => vec![self.name.to_string()],
        }
    }
}

/// Every metric form rgate computes, for messages: `recall@k, ..., judged@k`.
fn metric_forms() -> String {
    FAMILIES
        .iter()
        .flat_map(Family::forms)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The metrics that have a trec_eval measure, in trec_eval's order, for the
/// message that refuses the others under `--names trec_eval`: `map, map@k,
/// ..., mrr (recip_rank, no cutoff), ...`. trec_eval's name is added where
/// rgate's does not begin with it, and "no cutoff" where trec_eval has the
/// measure only for the whole ranking.
pub fn trec_eval_measures() -> String {
    let mut families: Vec<&Family> = FAMILIES
        .iter()
        .filter(|f| f.trec_eval.is_some() || f.trec_eval_cut.is_some())
        .collect();
    let first = |f: &Family| {
        f.trec_eval
            .into_iter()
            .chain(f.trec_eval_cut)
            .map(|t| t.order)
            .min()
    };
    families.sort_by_key(|f| first(f));
    let mut out = Vec::new();
    for f in families {
        let mut forms = Vec::new();
        if f.trec_eval.is_some() {
            forms.push(f.name.to_string());
        }
        if f.trec_eval_cut.is_some() {
            forms.push(format!("{}@k", f.name));
        }
        let trec_name = f
            .trec_eval
            .or(f.trec_eval_cut)
            .map_or("", |t| t.name.trim_end_matches('_'));
        let mut notes = Vec::new();
        if !f
            .name
            .replace('_', "")
            .starts_with(&trec_name.replace('_', "").to_ascii_lowercase())
        {
            notes.push(trec_name);
        }
        if f.cutoff != Cutoff::None && f.trec_eval_cut.is_none() {
            notes.push("no cutoff");
        }
        let mut last = forms.pop().unwrap_or_default();
        if !notes.is_empty() {
            last = format!("{last} ({})", notes.join(", "));
        }
        out.extend(forms);
        out.push(last);
    }
    out.join(", ")
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
        let f = self.kind.family();
        match self.cutoff {
            None => f.trec_eval.map(|t| t.name.to_string()),
            Some(k) => f.trec_eval_cut.map(|t| format!("{}{k}", t.name)),
        }
    }

    /// Where trec_eval prints this measure among the others (its measure
    /// table's order, [`TrecMeasure::order`]), so output in trec_eval's
    /// names diffs cleanly against trec_eval's own; a metric trec_eval
    /// lacks sorts last.
    pub fn trec_eval_order(&self) -> u8 {
        let f = self.kind.family();
        let (own, other) = match self.cutoff {
            Some(_) => (f.trec_eval_cut, f.trec_eval),
            None => (f.trec_eval, f.trec_eval_cut),
        };
        own.or(other).map_or(UNLISTED, |t| t.order)
    }

    /// How deep into a ranking this metric looks (`None`: all of it).
    pub fn depth(&self) -> Option<u32> {
        match self.kind.family().cutoff {
            Cutoff::None => None,
            _ => self.cutoff,
        }
    }

    /// The per-query value.
    #[inline]
    pub fn compute(&self, r: &Ranking, q: &QueryContext) -> f64 {
        (self.kind.family().compute)(r, q, self.cutoff.unwrap_or(u32::MAX))
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
    FAMILIES
        .iter()
        .find(|f| f.spellings().any(|n| n == lower))
        .map(|f| f.kind)
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
        let metrics = metric_forms();
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
                let kinds: Vec<&str> = FAMILIES.iter().flat_map(Family::spellings).collect();
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

    /// Every entry of the table reads back from each of its spellings and
    /// from its trec_eval names, with and without a cutoff as its rule
    /// allows, and the table's order is [`Kind`]'s.
    #[test]
    fn every_family_parses_back_from_its_names() {
        for (i, f) in FAMILIES.iter().enumerate() {
            assert_eq!(f.kind as usize, i, "{} is out of Kind's order", f.name);
            let cutoffs: &[Option<u32>] = match f.cutoff {
                Cutoff::Required => &[Some(10)],
                Cutoff::Optional => &[None, Some(10)],
                Cutoff::None => &[None],
            };
            for &cutoff in cutoffs {
                let want = Metric::new(f.kind, cutoff);
                let mut names: Vec<String> = f
                    .spellings()
                    .map(|n| cutoff.map_or_else(|| n.to_string(), |k| format!("{n}@{k}")))
                    .collect();
                names.extend(want.trec_eval_name());
                assert_eq!(want.name().parse::<Metric>().unwrap(), want);
                for n in names {
                    let got: Metric = n.parse().unwrap_or_else(|e| panic!("{n}: {e}"));
                    assert_eq!(got, want, "{n}");
                }
            }
            if f.cutoff == Cutoff::None {
                assert!(format!("{}@5", f.name).parse::<Metric>().is_err());
            }
            if f.cutoff == Cutoff::Required {
                assert!(f.name.parse::<Metric>().is_err());
            }
        }
    }

    /// The order and names trec_eval prints (its `TREC_MEAS`, trec_eval
    /// 9.0.7 `meas_init.c`: map, Rprec, recip_rank, P, recall, ndcg,
    /// ndcg_cut, map_cut, success), written out by hand.
    #[test]
    fn trec_eval_order_follows_its_measure_table() {
        let ms =
            parse_list(&["hit_rate@5,map@5,ndcg@5,ndcg,recall@5,precision@5,mrr,r_precision,map,judged@5"])
                .unwrap();
        let mut sorted = ms.clone();
        sorted.sort_by_key(Metric::trec_eval_order);
        let names: Vec<String> = sorted
            .iter()
            .map(|m| m.trec_eval_name().unwrap_or_else(|| m.name()))
            .collect();
        assert_eq!(
            names,
            [
                "map",
                "Rprec",
                "recip_rank",
                "P_5",
                "recall_5",
                "ndcg",
                "ndcg_cut_5",
                "map_cut_5",
                "success_5",
                "judged@5"
            ]
        );
    }

    /// The list `eval --names trec_eval` gives when it refuses a metric, as
    /// it was written by hand before the table.
    #[test]
    fn trec_eval_measures_read_as_before() {
        assert_eq!(
            trec_eval_measures(),
            "map, map@k, r_precision, mrr (recip_rank, no cutoff), precision@k, recall@k, ndcg, ndcg@k, hit_rate@k (success)"
        );
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
