//! The metric registry: names, aliases, cutoffs, parameters, and which
//! trec_eval measure each one must equal. One file per family, as trec_eval
//! keeps one file per measure: [`set`] (counts in the top k), [`rank`]
//! (positions of relevant documents), [`graded`] (nDCG), [`counts`] (set
//! measures over everything retrieved), [`incomplete`] (bpref, infAP,
//! unjudged), [`interpolated`] (interpolated precision, R multiples),
//! [`gain`] (gain tables, G, rbp).
//!
//! Values are computed from a [`Ranking`] and a [`QueryContext`] with the
//! same operations in the same order as trec_eval, so that the 4 printed
//! decimals agree exactly, not just closely.

pub mod counts;
pub mod gain;
pub mod graded;
pub mod incomplete;
pub mod interpolated;
pub mod params;
pub mod rank;
pub mod set;

use std::fmt;
use std::str::FromStr;

use crate::diag::{suggest, usage_error};
use crate::judge::{QueryContext, Ranking};
pub use params::{Param, Params};

/// A measure family: the key of its [`FAMILIES`] entry. Variants are in
/// the table's order (a test checks it), so [`Kind::family`] is an index.
/// New families go at the end: a stored baseline names metrics, not
/// indices, but the order keeps every earlier entry where it was.
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
    RunId,
    NumQ,
    NumRet,
    NumRel,
    NumRelRet,
    GmMap,
    Bpref,
    IprecAtRecall,
    RelString,
    InfAp,
    GmBpref,
    RprecMult,
    Utility,
    ElevenPtAvg,
    BinG,
    G,
    NdcgRel,
    Rndcg,
    RelativeP,
    SetP,
    SetRelativeP,
    SetRecall,
    SetMap,
    SetF,
    NumNonrelJudgedRet,
    Rbp,
    RbpResid,
    Unjudged,
    Err,
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

/// A metric with its cutoff and parameters. `cutoff: None` means the whole
/// ranking (or the family's default, as relstring's 10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Metric {
    pub kind: Kind,
    pub cutoff: Option<u32>,
    pub stage: Stage,
    /// Measure parameters ([`params`]); [`Param::NONE`] for most metrics.
    pub param: Param,
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

/// What parameters a family takes, beside a cutoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamStyle {
    /// Only ir_measures' `rel=` (the relevance level), or none.
    Rel,
    /// None at all (the counts and summaries).
    None,
    /// One number, required, spelled with `@` (`iprec_at_recall@0.10`) or
    /// as trec_eval does (`iprec_at_recall_0.10`).
    Float,
    /// A list of numbers (`utility(2,-1,0,0)`, `11pt_avg(.25,.5,.75)`).
    List,
    /// `name=value` pairs: gains by grade (`ndcg(1=3,2=9)`), `p=`, `beta=`.
    Pairs,
}

/// How trec_eval prints a measure's value, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// `%6.4f`.
    Float,
    /// A count, `%ld`.
    Int,
    /// A string: the run's tag, the relevance string.
    Text,
}

/// How the `all` line is formed from the per-query values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agg {
    Mean,
    /// trec_eval prints the sum of the `num_*` counts.
    Sum,
    /// exp of the mean of ln(max(v, 0.00001)): trec_eval's `gm_map` and
    /// `gm_bpref` (MIN_GEO_MEAN in trec_eval.h).
    GeoMean,
}

/// Which lines trec_eval prints for a measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    Both,
    /// Only the `all` line (runid, num_q, gm_map, gm_bpref).
    Summary,
    /// Only per query (relstring).
    PerQuery,
}

/// A trec_eval measure a family's values equal, and its place in
/// trec_eval's measure table (`te_trec_measures` in trec_eval 10's
/// `measures.c`), which is the order trec_eval prints measures in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrecMeasure {
    /// The whole name (`map`), or, for a measure at a cutoff, the part
    /// before k (`map_cut_`).
    pub name: &'static str,
    pub order: u8,
}

/// How a family computes its per-query value.
#[derive(Debug, Clone, Copy)]
pub enum Compute {
    /// From the cutoff alone (`u32::MAX`: the whole ranking). A plain
    /// function pointer: calling it costs what the `match` it replaced did,
    /// with nothing allocated or compared by name.
    Cut(fn(&Ranking, &QueryContext, u32) -> f64),
    /// From the cutoff and the parameters.
    Param(fn(&Ranking, &QueryContext, u32, &Params) -> f64),
    /// The first without parameters, the second with.
    Both(
        fn(&Ranking, &QueryContext, u32) -> f64,
        fn(&Ranking, &QueryContext, u32, &Params) -> f64,
    ),
}

/// One measure family, as one line of trec_eval's measure table: everything
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
    pub params: ParamStyle,
    /// trec_eval's measure of the whole ranking (written without a cutoff).
    pub trec_eval: Option<TrecMeasure>,
    /// trec_eval's measure at a cutoff k (`name` then k), or with a float
    /// parameter (`iprec_at_recall_` then 0.10).
    pub trec_eval_cut: Option<TrecMeasure>,
    pub compute: Compute,
    pub value: Value,
    pub agg: Agg,
    pub shown: Shown,
    /// Whether per-query values lie in [0, 1] (the intervals on means clamp
    /// to it).
    pub unit: bool,
    /// The cutoffs (or float parameters, times 100) `-m all_trec` gives it,
    /// in trec_eval's order; empty: the family once, as written. `None`:
    /// not in all_trec.
    pub all_trec: Option<&'static [u32]>,
}

const fn trec(name: &'static str, order: u8) -> Option<TrecMeasure> {
    Some(TrecMeasure { name, order })
}

/// Where a metric without a trec_eval measure sorts among trec_eval's.
const UNLISTED: u8 = u8::MAX;

/// trec_eval's default cutoffs for P, recall, ndcg_cut, map_cut, relative_P.
const LONG_CUTOFFS: &[u32] = &[5, 10, 15, 20, 30, 100, 200, 500, 1000];

/// A family in the common form: mean of a value in [0, 1], shown per query
/// and overall. Every field can be overridden with `..`.
const BASE: Family = Family {
    kind: Kind::Recall,
    name: "",
    aliases: &[],
    cutoff: Cutoff::None,
    params: ParamStyle::Rel,
    trec_eval: None,
    trec_eval_cut: None,
    compute: Compute::Cut(set::recall),
    value: Value::Float,
    agg: Agg::Mean,
    shown: Shown::Both,
    unit: true,
    all_trec: None,
};

/// A count summed over queries (`num_ret`, ...).
const COUNT: Family = Family {
    params: ParamStyle::None,
    value: Value::Int,
    agg: Agg::Sum,
    unit: false,
    all_trec: Some(&[]),
    ..BASE
};

/// A trec_eval measure over the whole ranking, no parameters.
const WHOLE: Family = Family {
    params: ParamStyle::None,
    all_trec: Some(&[]),
    ..BASE
};

/// The measure families, in [`Kind`]'s order. The order of the names and
/// aliases here is also the order "did you mean" considers them in.
pub const FAMILIES: &[Family] = &[
    Family {
        kind: Kind::Recall,
        name: "recall",
        aliases: &["r"],
        cutoff: Cutoff::Required,
        trec_eval_cut: trec("recall_", 13),
        compute: Compute::Cut(set::recall),
        all_trec: Some(LONG_CUTOFFS),
        ..BASE
    },
    Family {
        kind: Kind::HitRate,
        name: "hit_rate",
        aliases: &["hitrate", "success"],
        cutoff: Cutoff::Required,
        trec_eval_cut: trec("success_", 29),
        compute: Compute::Cut(set::hit_rate),
        all_trec: Some(&[1, 5, 10]),
        ..BASE
    },
    Family {
        kind: Kind::Precision,
        name: "precision",
        aliases: &["p"],
        cutoff: Cutoff::Required,
        trec_eval_cut: trec("P_", 11),
        compute: Compute::Cut(set::precision),
        all_trec: Some(LONG_CUTOFFS),
        ..BASE
    },
    Family {
        kind: Kind::Mrr,
        name: "mrr",
        aliases: &["rr", "recip_rank"],
        cutoff: Cutoff::Optional,
        trec_eval: trec("recip_rank", 9),
        compute: Compute::Cut(rank::reciprocal_rank),
        all_trec: Some(&[]),
        ..BASE
    },
    Family {
        kind: Kind::Ndcg,
        name: "ndcg",
        aliases: &["ndcg_cut"],
        cutoff: Cutoff::Optional,
        params: ParamStyle::Pairs,
        trec_eval: trec("ndcg", 23),
        trec_eval_cut: trec("ndcg_cut_", 26),
        compute: Compute::Both(graded::ndcg, gain::ndcg_gains),
        all_trec: Some(&[0, 5, 10, 15, 20, 30, 100, 200, 500, 1000]),
        ..BASE
    },
    Family {
        kind: Kind::Map,
        name: "map",
        aliases: &["ap", "map_cut"],
        cutoff: Cutoff::Optional,
        trec_eval: trec("map", 5),
        trec_eval_cut: trec("map_cut_", 27),
        compute: Compute::Cut(rank::average_precision),
        all_trec: Some(&[0, 5, 10, 15, 20, 30, 100, 200, 500, 1000]),
        ..BASE
    },
    Family {
        kind: Kind::RPrecision,
        name: "r_precision",
        aliases: &["rprec"],
        trec_eval: trec("Rprec", 7),
        compute: Compute::Cut(|r, q, _| rank::r_precision(r, q)),
        all_trec: Some(&[]),
        ..BASE
    },
    Family {
        kind: Kind::Judged,
        name: "judged",
        cutoff: Cutoff::Required,
        params: ParamStyle::None,
        compute: Compute::Cut(|r, _, k| set::judged(r, k)),
        ..BASE
    },
    Family {
        kind: Kind::RunId,
        name: "runid",
        trec_eval: trec("runid", 0),
        compute: Compute::Cut(|_, _, _| 0.0),
        value: Value::Text,
        shown: Shown::Summary,
        unit: false,
        ..WHOLE
    },
    Family {
        kind: Kind::NumQ,
        name: "num_q",
        aliases: &["numq"],
        trec_eval: trec("num_q", 1),
        compute: Compute::Param(counts::num_q),
        shown: Shown::Summary,
        ..COUNT
    },
    Family {
        kind: Kind::NumRet,
        name: "num_ret",
        aliases: &["numret"],
        trec_eval: trec("num_ret", 2),
        compute: Compute::Param(counts::num_ret),
        ..COUNT
    },
    Family {
        kind: Kind::NumRel,
        name: "num_rel",
        aliases: &["numrel"],
        params: ParamStyle::Rel,
        trec_eval: trec("num_rel", 3),
        compute: Compute::Param(counts::num_rel),
        ..COUNT
    },
    Family {
        kind: Kind::NumRelRet,
        name: "num_rel_ret",
        aliases: &["numrelret"],
        params: ParamStyle::Rel,
        trec_eval: trec("num_rel_ret", 4),
        compute: Compute::Param(counts::num_rel_ret),
        ..COUNT
    },
    Family {
        kind: Kind::GmMap,
        name: "gm_map",
        trec_eval: trec("gm_map", 6),
        compute: Compute::Cut(rank::average_precision),
        agg: Agg::GeoMean,
        shown: Shown::Summary,
        ..WHOLE
    },
    Family {
        kind: Kind::Bpref,
        name: "bpref",
        params: ParamStyle::Rel,
        trec_eval: trec("bpref", 8),
        compute: Compute::Param(incomplete::bpref),
        ..WHOLE
    },
    Family {
        kind: Kind::IprecAtRecall,
        name: "iprec_at_recall",
        aliases: &["iprec"],
        params: ParamStyle::Float,
        trec_eval_cut: trec("iprec_at_recall_", 10),
        compute: Compute::Param(interpolated::iprec_at_recall),
        all_trec: Some(&[0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]),
        ..BASE
    },
    Family {
        kind: Kind::RelString,
        name: "relstring",
        cutoff: Cutoff::Optional,
        trec_eval: trec("relstring", 12),
        trec_eval_cut: trec("relstring_", 12),
        compute: Compute::Cut(|_, _, _| 0.0),
        value: Value::Text,
        shown: Shown::PerQuery,
        unit: false,
        ..WHOLE
    },
    Family {
        kind: Kind::InfAp,
        name: "infap",
        trec_eval: trec("infAP", 14),
        compute: Compute::Param(incomplete::inf_ap),
        ..WHOLE
    },
    Family {
        kind: Kind::GmBpref,
        name: "gm_bpref",
        trec_eval: trec("gm_bpref", 15),
        compute: Compute::Param(incomplete::bpref),
        agg: Agg::GeoMean,
        shown: Shown::Summary,
        ..WHOLE
    },
    Family {
        kind: Kind::RprecMult,
        name: "rprec_mult",
        params: ParamStyle::Float,
        trec_eval_cut: trec("Rprec_mult_", 16),
        compute: Compute::Param(interpolated::rprec_mult),
        all_trec: Some(&[20, 40, 60, 80, 100, 120, 140, 160, 180, 200]),
        ..BASE
    },
    Family {
        kind: Kind::Utility,
        name: "utility",
        params: ParamStyle::List,
        trec_eval: trec("utility", 17),
        compute: Compute::Param(counts::utility),
        unit: false,
        ..WHOLE
    },
    Family {
        kind: Kind::ElevenPtAvg,
        name: "11pt_avg",
        params: ParamStyle::List,
        trec_eval: trec("11pt_avg", 18),
        compute: Compute::Param(interpolated::eleven_pt_avg),
        ..WHOLE
    },
    Family {
        kind: Kind::BinG,
        name: "bing",
        trec_eval: trec("binG", 19),
        compute: Compute::Param(gain::bin_g),
        ..WHOLE
    },
    Family {
        kind: Kind::G,
        name: "g",
        params: ParamStyle::Pairs,
        trec_eval: trec("G", 20),
        compute: Compute::Param(gain::g),
        ..WHOLE
    },
    Family {
        kind: Kind::NdcgRel,
        name: "ndcg_rel",
        params: ParamStyle::Pairs,
        trec_eval: trec("ndcg_rel", 24),
        compute: Compute::Param(gain::ndcg_rel),
        ..WHOLE
    },
    Family {
        kind: Kind::Rndcg,
        name: "rndcg",
        params: ParamStyle::Pairs,
        trec_eval: trec("Rndcg", 25),
        compute: Compute::Param(gain::rndcg),
        ..WHOLE
    },
    Family {
        kind: Kind::RelativeP,
        name: "relative_p",
        cutoff: Cutoff::Required,
        trec_eval_cut: trec("relative_P_", 28),
        compute: Compute::Cut(set::relative_precision),
        all_trec: Some(LONG_CUTOFFS),
        ..BASE
    },
    Family {
        kind: Kind::SetP,
        name: "set_p",
        aliases: &["setp"],
        params: ParamStyle::Rel,
        trec_eval: trec("set_P", 30),
        compute: Compute::Param(counts::set_p),
        ..WHOLE
    },
    Family {
        kind: Kind::SetRelativeP,
        name: "set_relative_p",
        trec_eval: trec("set_relative_P", 31),
        compute: Compute::Param(counts::set_relative_p),
        ..WHOLE
    },
    Family {
        kind: Kind::SetRecall,
        name: "set_recall",
        aliases: &["setr"],
        params: ParamStyle::Rel,
        trec_eval: trec("set_recall", 32),
        compute: Compute::Param(counts::set_recall),
        ..WHOLE
    },
    Family {
        kind: Kind::SetMap,
        name: "set_map",
        aliases: &["setap"],
        trec_eval: trec("set_map", 33),
        compute: Compute::Param(counts::set_map),
        ..WHOLE
    },
    Family {
        kind: Kind::SetF,
        name: "set_f",
        aliases: &["setf"],
        params: ParamStyle::Pairs,
        trec_eval: trec("set_F", 34),
        compute: Compute::Param(counts::set_f),
        ..WHOLE
    },
    Family {
        kind: Kind::NumNonrelJudgedRet,
        name: "num_nonrel_judged_ret",
        trec_eval: trec("num_nonrel_judged_ret", 35),
        compute: Compute::Param(counts::num_nonrel_judged_ret),
        ..COUNT
    },
    Family {
        kind: Kind::Rbp,
        name: "rbp",
        params: ParamStyle::Pairs,
        trec_eval: trec("rbp", 54),
        compute: Compute::Param(gain::rbp),
        ..WHOLE
    },
    Family {
        kind: Kind::RbpResid,
        name: "rbp_resid",
        params: ParamStyle::Pairs,
        trec_eval: trec("rbp_resid", 55),
        compute: Compute::Param(gain::rbp_resid),
        ..WHOLE
    },
    Family {
        kind: Kind::Unjudged,
        name: "unj",
        cutoff: Cutoff::Required,
        params: ParamStyle::None,
        trec_eval_cut: trec("unj_", 56),
        compute: Compute::Param(incomplete::unjudged),
        all_trec: Some(&[5, 10, 20]),
        ..BASE
    },
    Family {
        kind: Kind::Err,
        name: "err",
        cutoff: Cutoff::Required,
        params: ParamStyle::None,
        compute: Compute::Cut(graded::err),
        ..BASE
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
    /// The values one query's value (and so a mean) can take: [0, 1] for
    /// the proportions, any count for the `num_*` counts and the gains,
    /// and any number for utility, whose coefficients may be negative.
    pub fn range(&self) -> (f64, f64) {
        if self.unit {
            (0.0, 1.0)
        } else if self.kind == Kind::Utility {
            (f64::NEG_INFINITY, f64::INFINITY)
        } else {
            (0.0, f64::INFINITY)
        }
    }

    /// Every spelling, rgate's first.
    fn spellings(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.name).chain(self.aliases.iter().copied())
    }

    /// The forms a user writes: `mrr, mrr@k`, `recall@k`, `r_precision`.
    fn forms(&self) -> Vec<String> {
        self.forms_of(self.name)
    }

    /// [`Family::forms`] of one of its spellings.
    fn forms_of(&self, name: &str) -> Vec<String> {
        if self.params == ParamStyle::Float {
            return vec![format!("{name}@x")];
        }
        match self.cutoff {
            Cutoff::Required => vec![format!("{name}@k")],
            Cutoff::Optional => vec![name.to_string(), format!("{name}@k")],
            Cutoff::None => vec![name.to_string()],
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
/// message that refuses the others under `--names trec_eval`: `runid,
/// num_q, ..., mrr (recip_rank, no cutoff), ...`. trec_eval's name is added
/// where rgate's does not begin with it, and "no cutoff" where trec_eval
/// has the measure only for the whole ranking.
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
            let x = if f.params == ParamStyle::Float { "x" } else { "k" };
            forms.push(format!("{}@{x}", f.name));
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

/// One family's names, for `rgate eval --list-metrics`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricNames {
    /// The forms rgate reads: `recall@k`, `mrr, mrr@k`.
    pub forms: Vec<String>,
    /// Other spellings rgate accepts for the family, in the same forms.
    pub aliases: Vec<String>,
    /// The parameters it takes, as written in parentheses after the name.
    pub parameters: String,
    /// trec_eval's measure names (`P_k` for a cutoff family).
    pub trec_eval: Vec<String>,
    /// ir_measures' spellings, where it registers the family.
    pub ir_measures: Vec<String>,
}

/// Every family rgate computes, in [`FAMILIES`]' order, with trec_eval's
/// and ir_measures' names beside rgate's.
pub fn metric_table() -> Vec<MetricNames> {
    FAMILIES
        .iter()
        .map(|f| {
            let x = if f.params == ParamStyle::Float { "x" } else { "k" };
            let trec_eval = f
                .trec_eval
                .into_iter()
                .chain(f.trec_eval_cut)
                .map(|t| {
                    if t.name.ends_with('_') {
                        format!("{}{x}", t.name)
                    } else {
                        t.name.to_string()
                    }
                })
                .collect();
            let ir_measures = IR_MEASURES
                .iter()
                .filter(|(k, _)| *k == f.kind)
                .flat_map(|(_, n)| n.split(", "))
                .map(str::to_string)
                .collect();
            MetricNames {
                forms: f.forms(),
                aliases: f.aliases.iter().flat_map(|a| f.forms_of(a)).collect(),
                parameters: param_forms(f).to_string(),
                trec_eval,
                ir_measures,
            }
        })
        .collect()
}

/// What [`parse_params`] accepts for `f`, in words for the table.
fn param_forms(f: &Family) -> &'static str {
    match (f.params, f.kind) {
        (ParamStyle::Rel, _) => "rel=l",
        (ParamStyle::None, _) => "",
        (ParamStyle::Float, _) => "x: a number after @",
        (ParamStyle::List, Kind::Utility) => "four coefficients (a,b,c,d)",
        (ParamStyle::List, _) => "recall levels (0.25,0.5,0.75)",
        (ParamStyle::Pairs, Kind::Rbp) => "p=, rel=l, gains by grade (1=1,2=2)",
        (ParamStyle::Pairs, Kind::RbpResid) => "p=, gains by grade (1=1,2=2)",
        (ParamStyle::Pairs, Kind::SetF) => "beta= (or one number)",
        (ParamStyle::Pairs, _) => "rel=l, gains by grade (1=3,2=9)",
    }
}

/// ir_measures' spelling of each family rgate shares with it (its measure
/// registry, `ir_measures/measures/*.py`), for [`metric_table`].
const IR_MEASURES: &[(Kind, &str)] = &[
    (Kind::Recall, "R@k"),
    (Kind::HitRate, "Success@k"),
    (Kind::Precision, "P@k, P(rel=l)@k"),
    (Kind::Mrr, "RR, RR@k, RR(rel=l)"),
    (Kind::Ndcg, "nDCG, nDCG@k"),
    (Kind::Map, "AP, AP@k, AP(rel=l)"),
    (Kind::RPrecision, "Rprec"),
    (Kind::Judged, "Judged@k"),
    (Kind::NumQ, "NumQ"),
    (Kind::NumRet, "NumRet"),
    (Kind::NumRel, "NumRel"),
    (Kind::NumRelRet, "NumRelRet"),
    (Kind::Bpref, "Bpref"),
    (Kind::IprecAtRecall, "IPrec@x"),
    (Kind::InfAp, "infAP"),
    (Kind::SetP, "SetP"),
    (Kind::SetRecall, "SetR"),
    (Kind::SetMap, "SetAP"),
    (Kind::SetF, "SetF"),
    (Kind::Rbp, "RBP(p=...)"),
    (Kind::Err, "ERR@k"),
];

/// The metrics `-m all_trec` prints, in trec_eval's order, with each
/// family's default cutoffs and parameters.
pub fn all_trec() -> Vec<Metric> {
    let mut fams: Vec<&Family> = FAMILIES.iter().filter(|f| f.all_trec.is_some()).collect();
    fams.sort_by_key(|f| Metric::new(f.kind, None).trec_eval_order());
    let mut out = Vec::new();
    for f in fams {
        let list = f.all_trec.unwrap_or(&[]);
        if list.is_empty() {
            out.push(Metric::new(f.kind, None));
            continue;
        }
        for &k in list {
            out.push(match (f.params, k) {
                (ParamStyle::Float, _) => Metric::new(f.kind, None)
                    .with_param(Param::intern(params::float_cutoff(f64::from(k) / 100.0))),
                (_, 0) => Metric::new(f.kind, None),
                _ => Metric::new(f.kind, Some(k)),
            });
        }
    }
    out
}

impl Metric {
    pub const fn new(kind: Kind, cutoff: Option<u32>) -> Metric {
        Metric {
            kind,
            cutoff,
            stage: Stage::Final,
            param: Param::NONE,
        }
    }

    /// The same metric with parameters `param`.
    pub const fn with_param(self, param: Param) -> Metric {
        Metric { param, ..self }
    }

    /// The same metric on the candidate list.
    pub const fn of_candidates(self) -> Metric {
        Metric {
            stage: Stage::Candidates,
            ..self
        }
    }

    /// Why the gate's and compare's paired tests cannot compare two runs on
    /// this metric, and what to do instead: both test per-query
    /// differences, and a text measure (the run's tag, the relevance
    /// string) has none. (A geometric mean is tested on the log scale:
    /// see `compare::geo`.)
    pub fn paired_refusal(&self) -> Option<(String, String)> {
        let f = self.family();
        (f.value == Value::Text).then(|| {
            (
                format!(
                    "{self} is text (trec_eval's {}), not a number a paired test can compare",
                    f.name
                ),
                "it prints in `rgate eval --format trec`; gate or compare a numeric metric".into(),
            )
        })
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

    pub fn family(&self) -> &'static Family {
        self.kind.family()
    }

    fn prefix(&self) -> &'static str {
        match self.stage {
            Stage::Final => "",
            Stage::Candidates => CANDIDATES_PREFIX,
        }
    }

    /// rgate's canonical spelling, used in every output: the family's name,
    /// its parameters (`@0.10` for a float parameter, `(...)` for others),
    /// then `@k`.
    pub fn name(&self) -> String {
        let mut s = format!("{}{}", self.prefix(), self.kind.canonical());
        if !self.param.is_none() {
            let p = self.param.get();
            if self.family().params == ParamStyle::Float {
                s.push('@');
                s.push_str(&p.text);
            } else {
                s.push('(');
                s.push_str(&p.text);
                s.push(')');
            }
        }
        if let Some(k) = self.cutoff {
            s.push_str(&format!("@{k}"));
        }
        s
    }

    /// The trec_eval measure this metric must equal, where there is one; a
    /// metric of the candidate list keeps its `candidates:` prefix, so the
    /// two stages' lines stay apart.
    pub fn trec_eval_name(&self) -> Option<String> {
        self.of_final_trec_name().map(|n| format!("{}{n}", self.prefix()))
    }

    fn of_final_trec_name(&self) -> Option<String> {
        let f = self.kind.family();
        let p = self.param.get();
        if p.rel().is_some() {
            // ir_measures' relevance level: trec_eval sets it for all
            // measures at once (`-l`), so no single measure name says it.
            return None;
        }
        if f.params == ParamStyle::Float {
            return f.trec_eval_cut.map(|t| format!("{}{}", t.name, p.trec));
        }
        match self.cutoff {
            None if self.param.is_none() => f.trec_eval.map(|t| t.name.to_string()),
            None => f.trec_eval.map(|t| format!("{}_{}", t.name, p.trec)),
            Some(_) if !self.param.is_none() => None,
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

    /// The order trec_eval prints measures in: its table's order, then the
    /// cutoffs (or float parameters) ascending, as trec_eval sorts them.
    pub fn trec_eval_sort_key(&self) -> (u8, u32, u64) {
        let x = self.param.get().nums.first().copied().unwrap_or(0.0);
        (
            self.trec_eval_order(),
            self.cutoff.unwrap_or(0),
            // Non-negative floats order as their bits do.
            if x >= 0.0 { x.to_bits() } else { 0 },
        )
    }

    /// How deep into a ranking this metric looks (`None`: all of it).
    pub fn depth(&self) -> Option<u32> {
        match self.kind.family().cutoff {
            Cutoff::None => None,
            _ if self.kind == Kind::RelString => Some(self.relstring_len()),
            _ => self.cutoff,
        }
    }

    /// How many ranks relstring shows: trec_eval's default is 10.
    pub fn relstring_len(&self) -> u32 {
        self.cutoff.unwrap_or(10)
    }

    /// The per-query value.
    #[inline]
    pub fn compute(&self, r: &Ranking, q: &QueryContext) -> f64 {
        let k = self.cutoff.unwrap_or(u32::MAX);
        let compute = self.kind.family().compute;
        if self.param.is_none() {
            return match compute {
                Compute::Cut(f) | Compute::Both(f, _) => f(r, q, k),
                Compute::Param(f) => f(r, q, k, self.param.get()),
            };
        }
        let p = self.param.get();
        let at;
        let q = match p.rel() {
            Some(level) => {
                at = q.at_level(level);
                &at
            }
            None => q,
        };
        match compute {
            Compute::Cut(f) => f(r, q, k),
            // Only `rel=` given: the fast function at that level.
            Compute::Both(f, _) if p.gains().next().is_none() => f(r, q, k),
            Compute::Param(f) | Compute::Both(_, f) => f(r, q, k, p),
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// Mean of the values at `idx` (summed in order, as trec_eval sums).
pub fn mean_of(values: &[f64], idx: impl IntoIterator<Item = usize>) -> f64 {
    let mut sum = 0.0;
    let mut n = 0usize;
    for i in idx {
        sum += values[i];
        n += 1;
    }
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

/// The mean the gate and compare show of `values` at `idx`: the geometric
/// mean for a geometric-mean metric (what they test, on the log scale),
/// else the arithmetic mean, also for a count (what a paired test of
/// per-query differences tests; [`sum_note`] says so).
pub fn paired_mean(m: &Metric, values: &[f64], idx: impl IntoIterator<Item = usize>) -> f64 {
    match m.family().agg {
        Agg::GeoMean => aggregate(m, values, idx),
        Agg::Mean | Agg::Sum => mean_of(values, idx),
    }
}

/// The floor of each value under a geometric mean (`MIN_GEO_MEAN` in
/// trec_eval.h): a query scoring 0 would make the mean 0.
pub const MIN_GEO_MEAN: f64 = 0.00001;

/// The all-query (or stratum) value of `values` at `idx`, as trec_eval
/// forms its `all` line: summed in order, then divided (or not, for a
/// count; or on the log scale, for a geometric mean).
pub fn aggregate(m: &Metric, values: &[f64], idx: impl IntoIterator<Item = usize>) -> f64 {
    match m.family().agg {
        Agg::Mean => mean_of(values, idx),
        Agg::Sum => idx.into_iter().map(|i| values[i]).sum(),
        Agg::GeoMean => {
            let mut sum = 0.0;
            let mut n = 0usize;
            for i in idx {
                sum += values[i].max(MIN_GEO_MEAN).ln();
                n += 1;
            }
            if n == 0 {
                0.0
            } else {
                (sum / n as f64).exp()
            }
        }
    }
}

/// Measures that trec_eval, ir_measures or ranx compute and rgate does not,
/// lowercased. A name that starts with one of these (followed by `_`, `.`,
/// `@` or `(`, as in `ERR@10`, `alpha_nDCG@10`) is refused as unsupported
/// instead of getting a "did you mean" that names a different measure
/// (`ERR@10` is not `mrr@10`).
const FOREIGN: &[&str] = &[
    // trec_eval's `-m` extras outside all_trec
    "dcg",
    "ideal_dcg",
    "map_avgjg",
    "num_nonjudged_ret",
    "p_avgjg",
    "prefs",
    "rprec_mult_avgjg",
    "yaap",
    // ir_measures
    "accuracy",
    "alpha_ndcg",
    "alphandcg",
    "ap_ia",
    "bpm",
    "compat",
    "err_ia",
    "inst",
    "insq",
    "nerr8",
    "nerr9",
    "nerr10",
    "nerr11",
    "nerr_ia",
    "nrbp",
    "p_ia",
    "sdcg",
    "strecall",
    // ranx
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

/// The family whose spelling `lower` starts with (the longest such, so
/// `ndcg_cut_10` is ndcg_cut's and `num_rel_ret` is not num_rel's), and
/// where the spelling ends.
fn family_prefix(lower: &str) -> Option<(Kind, usize)> {
    FAMILIES
        .iter()
        .flat_map(|f| f.spellings().map(move |s| (f.kind, s)))
        .filter(|(_, s)| {
            lower
                .strip_prefix(s)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['_', '.', '@', '(']))
        })
        .max_by_key(|(_, s)| s.len())
        .map(|(k, s)| (k, s.len()))
}

/// An integer cutoff as trec_eval reads one (`atol`: `23.4` is 23), or as
/// rgate writes one after `@` (digits only).
fn parse_cutoff(raw: &str, c: &str, kind: Kind, trec_form: bool) -> anyhow::Result<u32> {
    let digits = if trec_form {
        c.split_once('.').map_or(c, |(whole, frac)| {
            if !whole.is_empty() && frac.chars().all(|ch| ch.is_ascii_digit()) {
                whole
            } else {
                c
            }
        })
    } else {
        c
    };
    digits
        .parse::<u32>()
        .ok()
        .filter(|&k| k > 0 && digits.chars().all(|ch| ch.is_ascii_digit()))
        .ok_or_else(|| {
            usage_error(
                format!("metric `{raw}`: cutoff `{c}` is not a positive integer"),
                format!("write it as {}@10", kind.canonical()),
            )
        })
}

/// The parameters of `kind` written `text` (inside parentheses, or after
/// trec_eval's `_`/`.`), checked against what the family takes.
fn parse_params(raw: &str, kind: Kind, text: &str, trec_form: bool) -> anyhow::Result<Param> {
    let f = kind.family();
    let bad = |why: &str| {
        usage_error(
            format!("metric `{raw}`: {why}"),
            match f.params {
                ParamStyle::Rel | ParamStyle::None if f.cutoff == Cutoff::Required => {
                    format!(
                        "write it as {}@10, or {}(rel=2)@10 for another relevance level",
                        f.name, f.name
                    )
                }
                ParamStyle::Rel => format!("{} takes only ir_measures' rel=, as {}(rel=2)", f.name, f.name),
                ParamStyle::None => format!("{} takes no parameters", f.name),
                ParamStyle::Float => format!("write it as {}@0.5 (a number)", f.name),
                ParamStyle::List => format!("write it as {}(1,-1,0,0): numbers, comma separated", f.name),
                ParamStyle::Pairs => format!(
                    "write it as {}(1=3,2=9): gains by grade, or p= for rbp, beta= for set_f",
                    f.name
                ),
            },
        )
    };
    if f.params == ParamStyle::Float {
        let v = params::number(text).ok_or_else(|| bad("the parameter is not a number"))?;
        return Ok(Param::intern(params::float_cutoff(v)));
    }
    // ir_measures writes `dcg='log2'`, its default and trec_eval's: no
    // parameter at all.
    let cleaned: Vec<&str> = text
        .split(',')
        .filter(|item| {
            let compact: String = item
                .chars()
                .filter(|c| !c.is_whitespace() && *c != '\'' && *c != '"')
                .collect();
            compact != "dcg=log2"
        })
        .collect();
    if cleaned.is_empty() {
        return Ok(Param::NONE);
    }
    let text = cleaned.join(",");
    let mut p = params::parse(&text).ok_or_else(|| bad("parameters must be numbers or name=number"))?;
    let ok = match f.params {
        ParamStyle::None => false,
        ParamStyle::Rel => p.nums.is_empty() && p.pairs.iter().all(|(n, _)| n == "rel"),
        ParamStyle::Float => unreachable!(),
        ParamStyle::List => {
            p.pairs.is_empty() && (kind != Kind::Utility || p.nums.len() == 4) && !p.nums.is_empty()
        }
        ParamStyle::Pairs => match kind {
            Kind::Rbp => {
                p.nums.is_empty()
                    && p.pairs
                        .iter()
                        .all(|(n, _)| n == "p" || n == "rel" || n.parse::<i64>().is_ok())
                    && p.pair("p").is_none_or(|v| (0.0..1.0).contains(&v))
            }
            Kind::RbpResid => {
                p.nums.is_empty()
                    && p.pairs.iter().all(|(n, _)| n == "p" || n.parse::<i64>().is_ok())
                    && p.pair("p").is_none_or(|v| (0.0..1.0).contains(&v))
            }
            Kind::SetF => {
                (p.pairs.is_empty() && p.nums.len() == 1)
                    || (p.nums.is_empty() && p.pairs.iter().all(|(n, _)| n == "beta"))
            }
            _ => {
                p.nums.is_empty()
                    && p.pairs
                        .iter()
                        .all(|(n, _)| n == "rel" || n.parse::<i64>().is_ok())
            }
        },
    };
    if !ok {
        return Err(bad("these parameters do not fit it"));
    }
    if let Some(rel) = p.rel() {
        if p.pair("rel") != Some(f64::from(rel)) {
            return Err(bad("rel= must be a whole number"));
        }
    }
    if kind == Kind::Utility && p.nums.len() != 4 {
        return Err(bad("utility takes four coefficients"));
    }
    if !trec_form {
        p.trec = p.text.clone();
    }
    Ok(Param::intern(p))
}

impl FromStr for Metric {
    type Err = anyhow::Error;

    /// Accepts `recall@10`, `R@10`, `recall_10`, `recall.10`, `nDCG@10`,
    /// `ndcg_cut_10`, `RR`, `recip_rank`, `AP`, `Rprec`, ir_measures'
    /// `P(rel=2)@10`, trec_eval's `iprec_at_recall_0.10`,
    /// `utility_2,-1,0,0`, `ndcg_1=3,2=9`, ... case-insensitively. Messages
    /// quote the name as typed. A `candidates:` prefix (any case) names the
    /// metric of the candidate list.
    fn from_str(s: &str) -> anyhow::Result<Metric> {
        let raw = s.trim();
        let (stage, name) = match raw.get(..CANDIDATES_PREFIX.len()) {
            Some(p) if p.eq_ignore_ascii_case(CANDIDATES_PREFIX) => {
                (Stage::Candidates, raw[CANDIDATES_PREFIX.len()..].trim_start())
            }
            _ => (Stage::Final, raw),
        };
        let metrics = metric_forms();
        let lower = name.to_ascii_lowercase();
        if is_foreign(&lower) {
            return Err(usage_error(
                format!("metric `{raw}` is not supported by rgate"),
                format!("trec_eval or ir_measures compute it; rgate computes: {metrics}"),
            ));
        }
        let Some((kind, end)) = family_prefix(&lower) else {
            let (base_raw, cutoff) = split_cutoff(name);
            let base = base_raw.to_ascii_lowercase();
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
        };
        let f = kind.family();
        let rest = &name[end..];
        let mut param = Param::NONE;
        let mut cutoff: Option<u32> = None;
        if let Some(inner) = rest.strip_prefix('(') {
            let Some((text, after)) = inner.split_once(')') else {
                return Err(usage_error(
                    format!("metric `{raw}`: `(` is not closed"),
                    format!("write it as {}(rel=2)", f.name),
                ));
            };
            param = parse_params(raw, kind, text, false)?;
            match after.strip_prefix('@') {
                Some(c) => cutoff = Some(parse_cutoff(raw, c, kind, false)?),
                None if after.is_empty() => {}
                None => {
                    return Err(usage_error(
                        format!("metric `{raw}`: unexpected `{after}` after the parameters"),
                        format!("write it as {}(rel=2)@10", f.name),
                    ))
                }
            }
        } else if let Some(c) = rest.strip_prefix('@') {
            if f.params == ParamStyle::Float {
                param = parse_params(raw, kind, c, false)?;
            } else {
                cutoff = Some(parse_cutoff(raw, c, kind, false)?);
            }
        } else if !rest.is_empty() {
            // trec_eval's `name_param` (as it prints) or `name.param` (as
            // `-m` takes it).
            let text = &rest[1..];
            match f.params {
                ParamStyle::Float | ParamStyle::List | ParamStyle::Pairs
                    if !(f.cutoff != Cutoff::None && number_like(text)) =>
                {
                    param = parse_params(raw, kind, text, true)?;
                }
                _ => cutoff = Some(parse_cutoff(raw, text, kind, true)?),
            }
        }
        if f.params == ParamStyle::Float && param.is_none() {
            return Err(usage_error(
                format!("metric `{raw}` needs a recall level or multiple"),
                format!(
                    "write it as {}@0.5 (or pass all_trec for trec_eval's defaults)",
                    f.name
                ),
            ));
        }
        if cutoff.is_none() && kind.needs_cutoff() {
            return Err(usage_error(
                format!("metric `{raw}` needs a cutoff"),
                format!("write it as {}@10 (or another depth)", kind.canonical()),
            ));
        }
        if cutoff.is_some() && !kind.takes_cutoff() {
            return Err(usage_error(
                format!("metric `{raw}` takes no cutoff"),
                match kind {
                    Kind::RPrecision => {
                        "r_precision looks at rank R, the number of relevant labels".to_string()
                    }
                    _ => format!("{} looks at the whole ranking", f.name),
                },
            ));
        }
        if cutoff.is_some() && param.get().gains().next().is_some() {
            return Err(usage_error(
                format!("metric `{raw}`: gains by grade are computed over the whole ranking"),
                format!("drop the cutoff: {}({})", f.name, param.get().text),
            ));
        }
        Ok(Metric {
            kind,
            cutoff,
            stage,
            param,
        })
    }
}

/// Digits, optionally with a fraction: a cutoff as trec_eval's `-m` takes
/// one (it reads `23.4` as 23), not a parameter list.
fn number_like(text: &str) -> bool {
    let (whole, frac) = text.split_once('.').unwrap_or((text, "0"));
    !whole.is_empty()
        && !frac.is_empty()
        && whole.chars().all(|c| c.is_ascii_digit())
        && frac.chars().all(|c| c.is_ascii_digit())
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

/// The word that stands for every measure of trec_eval's `-m all_trec`.
pub const ALL_TREC: &str = "all_trec";

/// Splits a `--metrics` value on the commas outside parentheses.
fn split_items(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth <= 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// Whether `item` continues the trec_eval parameter list of the item
/// before it (`P.5,7,3`: `7` and `3`; `utility.2,-1,0,0`; `ndcg.1=3,2=9`)
/// rather than naming a metric.
fn continues(item: &str) -> bool {
    let lower = item.to_ascii_lowercase();
    let lower = lower.strip_prefix(CANDIDATES_PREFIX).unwrap_or(&lower);
    family_prefix(lower).is_none()
        && lower != ALL_TREC
        && item.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+' || c == '.')
}

/// Parses one group: a metric, or trec_eval's `name.p1,p2,...`, which is
/// one metric per cutoff for a family of cutoffs (`P.5,7,3`) and one metric
/// with all of them for a family of parameters (`utility.2,-1,0,0`).
fn parse_group(head: &str, more: &[&str], out: &mut Vec<Metric>) -> anyhow::Result<()> {
    if more.is_empty() {
        out.push(head.parse()?);
        return Ok(());
    }
    let lower = head.to_ascii_lowercase();
    let stripped = lower.strip_prefix(CANDIDATES_PREFIX).unwrap_or(&lower);
    let kind = family_prefix(stripped.trim_start()).map(|(k, _)| k);
    let one = matches!(
        kind.map(|k| k.family().params),
        Some(ParamStyle::List | ParamStyle::Pairs)
    ) && !matches!(kind.map(|k| k.family().cutoff), Some(Cutoff::Required));
    let ndcg_cut = stripped.starts_with("ndcg_cut");
    if one && !ndcg_cut {
        let joined = std::iter::once(head)
            .chain(more.iter().copied())
            .collect::<Vec<_>>()
            .join(",");
        out.push(joined.parse()?);
        return Ok(());
    }
    let m: Metric = head.parse()?;
    out.push(m);
    for item in more {
        let name = format!("{}{}.{}", m.prefix(), m.kind.canonical(), item.trim());
        out.push(name.parse()?);
    }
    Ok(())
}

/// Parses a list of metric names (comma separated or repeated), dropping
/// repeats while keeping the order given. `all_trec` stands for every
/// measure trec_eval's `-m all_trec` prints; a family also named on its own
/// (`all_trec,relstring@20`, `all_trec,P.5,7`) takes the cutoffs and
/// parameters given instead of its defaults, as trec_eval's `-m` does.
pub fn parse_list<S: AsRef<str>>(items: &[S]) -> anyhow::Result<Vec<Metric>> {
    let mut parsed: Vec<Metric> = Vec::new();
    let mut all_trec_at: Vec<(usize, Stage)> = Vec::new();
    // The command line splits `--metrics` on every comma: joined again,
    // parentheses (`utility(2,-1,0,0)`) and trec_eval's lists hold.
    let joined = items.iter().map(AsRef::as_ref).collect::<Vec<&str>>().join(",");
    {
        let pieces: Vec<&str> = split_items(&joined)
            .into_iter()
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        let mut i = 0;
        while i < pieces.len() {
            let head = pieces[i];
            let mut j = i + 1;
            while j < pieces.len() && continues(pieces[j]) {
                j += 1;
            }
            let lower = head.to_ascii_lowercase();
            if lower == ALL_TREC || lower == format!("{CANDIDATES_PREFIX}{ALL_TREC}") {
                let stage = if lower.starts_with(CANDIDATES_PREFIX) {
                    Stage::Candidates
                } else {
                    Stage::Final
                };
                all_trec_at.push((parsed.len(), stage));
            } else {
                parse_group(head, &pieces[i + 1..j], &mut parsed)?;
            }
            i = j;
        }
    }
    let mut expanded: Vec<Metric> = Vec::new();
    let mut next = 0;
    for (at, stage) in &all_trec_at {
        expanded.extend_from_slice(&parsed[next..*at]);
        next = *at;
        for m in all_trec() {
            let m = Metric { stage: *stage, ..m };
            if !parsed.iter().any(|p| p.kind == m.kind && p.stage == m.stage) {
                expanded.push(m);
            }
        }
    }
    expanded.extend_from_slice(&parsed[next..]);
    let mut out: Vec<Metric> = Vec::new();
    for m in expanded {
        if !out.contains(&m) {
            out.push(m);
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

/// The note the gate and compare add when a metric that trec_eval sums
/// over queries (`num_ret`, `num_rel`, ...) is among `metrics`: they
/// compare it as a mean a query, which is what a paired test of per-query
/// differences tests, where eval prints trec_eval's sum.
pub fn sum_note(metrics: &[Metric]) -> Option<String> {
    let sums: Vec<String> = metrics
        .iter()
        .filter(|m| m.family().agg == Agg::Sum)
        .map(Metric::name)
        .collect();
    if sums.is_empty() {
        return None;
    }
    Some(format!(
        "{} compared as the mean a query (rgate eval prints trec_eval's sum over the queries)",
        sums.join(", ")
    ))
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
            let name = item.trim().replace("@k", "@10").replace("@x", "@0.5");
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
            if f.params == ParamStyle::Float {
                let m: Metric = format!("{}@0.5", f.name).parse().unwrap();
                assert_eq!(m.name(), format!("{}@0.50", f.name));
                let t = m.trec_eval_name().unwrap();
                assert_eq!(t.parse::<Metric>().unwrap(), m, "{t}");
                assert!(f.name.parse::<Metric>().is_err());
                continue;
            }
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
            "runid, num_q, num_ret, num_rel, num_rel_ret, map, map@k, gm_map, r_precision, bpref, \
             mrr (recip_rank, no cutoff), iprec_at_recall@x, precision@k, relstring, relstring@k, recall@k, \
             infap, gm_bpref, rprec_mult@x, utility, 11pt_avg, bing, g, ndcg, ndcg@k, ndcg_rel, rndcg, \
             relative_p@k, hit_rate@k (success), set_p, set_relative_p, set_recall, set_map, set_f, \
             num_nonrel_judged_ret, rbp, rbp_resid, unj@k"
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
