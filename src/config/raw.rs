//! The config file's shape, as read: every value a later check may refuse
//! carries its position ([`Spanned`]), so the error names the line of the
//! offending key or value rather than a guess.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::{Correction, CorrectionScope, Decision, LabelMode, OnInconclusive, TestKind, Weighting};

/// The 1-based line a value was read from; `None` for a value serde had to
/// buffer (an untagged enum's inside), whose position serde-saphyr loses.
pub(super) fn line<T>(v: &Spanned<T>) -> Option<usize> {
    Some(v.referenced.line() as usize).filter(|&l| l > 0)
}

/// Reads the text (byte order mark and guard already handled); the error
/// is the line and the parser's message.
pub(super) fn read(text: &str) -> Result<RawConfig, (Option<usize>, String)> {
    serde_saphyr::from_str_with_options(text, crate::diag::yaml_options())
        .map_err(|e| crate::diag::yaml_error(&e, text))
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a config: a map with `gold:` and optionally `retrievers:`, `gate:`, ..."
)]
pub(super) struct RawConfig {
    pub gold: String,
    #[serde(default)]
    pub strata: Option<String>,
    #[serde(default)]
    pub baselines: Option<String>,
    #[serde(default)]
    pub baseline_depth: Option<Spanned<RawDepth>>,
    #[serde(default)]
    pub relevance_level: Option<Spanned<Num<i32>>>,
    #[serde(default)]
    pub span_coverage: Option<Spanned<Num<f64>>>,
    #[serde(default)]
    pub labels: Option<LabelMode>,
    #[serde(default)]
    pub metrics: Option<Spanned<Vec<Spanned<String>>>>,
    /// `Option`: serde_yaml read a bare `retrievers:` (null) as an empty
    /// list, serde-saphyr refuses null for a list.
    #[serde(default)]
    pub retrievers: Option<Vec<Spanned<RawRetriever>>>,
    #[serde(default)]
    pub gate: Option<RawGate>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a retriever: a map with `name` and `run`")]
pub(super) struct RawRetriever {
    pub name: Spanned<String>,
    #[serde(default)]
    pub run: Option<String>,
    #[serde(default)]
    pub run_format: Option<Spanned<String>>,
    #[serde(default)]
    pub command: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    pub timeout_s: Option<Spanned<Num<f64>>>,
    #[serde(default)]
    pub chunks: Option<String>,
    pub candidates: Option<Spanned<RawCandidates>>,
}

/// `candidates: path` or `candidates: [program, args...]`.
#[derive(Deserialize)]
#[serde(untagged, expecting = "a file path or a command list")]
pub(super) enum RawCandidates {
    File(String),
    Command(Vec<String>),
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "gate settings: a map such as `alpha`, `rules`"
)]
pub(super) struct RawGate {
    #[serde(default)]
    pub alpha: Option<Spanned<Num<f64>>>,
    #[serde(default)]
    pub resamples: Option<Spanned<Num<u32>>>,
    #[serde(default)]
    pub seed: Option<Num<u64>>,
    #[serde(default)]
    pub test: Option<TestKind>,
    #[serde(default)]
    pub decision: Option<Spanned<Decision>>,
    #[serde(default)]
    pub correction: Option<Correction>,
    #[serde(default)]
    pub correction_scope: Option<CorrectionScope>,
    #[serde(default)]
    pub on_inconclusive: Option<OnInconclusive>,
    #[serde(default)]
    pub weighting: Option<Weighting>,
    #[serde(default)]
    pub lock_timeout_s: Option<Spanned<Num<f64>>>,
    /// `Option` for a bare `rules:`, as `retrievers:`.
    #[serde(default)]
    pub rules: Option<Vec<Spanned<RawRule>>>,
    #[serde(default)]
    pub max_missing: Option<Spanned<Num<f64>>>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a rule: a map with `metric` and `max_drop` or `max_drop_pct`"
)]
pub(super) struct RawRule {
    pub metric: Spanned<String>,
    #[serde(default)]
    pub max_drop: Option<Spanned<Num<f64>>>,
    #[serde(default)]
    pub max_drop_pct: Option<Spanned<Num<f64>>>,
    #[serde(default)]
    pub strata: Option<Spanned<RawStrata>>,
}

/// `baseline_depth:` as written: a count, or a word (only `all` is valid;
/// the build step says so). A number that cannot be a count is refused
/// here, saying why (`-1` is negative, `1.5` not whole), at its line.
pub(super) enum RawDepth {
    Ids(u32),
    Word(String),
}

impl<'de> Deserialize<'de> for RawDepth {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        const HINT: &str =
            "give how many ranked ids a baseline keeps per query (1 or more, e.g. 100), or `all`";
        impl Visitor<'_> for V {
            type Value = RawDepth;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number of ranked ids, or `all`")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawDepth, E> {
                u32::try_from(v)
                    .map(RawDepth::Ids)
                    .map_err(|_| E::custom(format!("baseline_depth {v} is too large; {HINT}")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawDepth, E> {
                match u64::try_from(v) {
                    Ok(u) => self.visit_u64(u),
                    Err(_) => Err(E::custom(format!("baseline_depth {v} is negative; {HINT}"))),
                }
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawDepth, E> {
                let n = crate::diag::number(v);
                Err(E::custom(if v.fract() != 0.0 || !v.is_finite() {
                    format!("baseline_depth {n} is not a whole number; {HINT}")
                } else if v < 0.0 {
                    format!("baseline_depth {n} is negative; {HINT}")
                } else if v > f64::from(u32::MAX) {
                    format!("baseline_depth {n} is too large; {HINT}")
                } else {
                    format!(
                        "baseline_depth {n} is written as a decimal number; write {}",
                        v as u64
                    )
                }))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RawDepth, E> {
                Ok(RawDepth::Word(s.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// `strata: name` or `strata: [a, b]`, each name with its line (an
/// untagged enum would lose them).
pub(super) enum RawStrata {
    One(String),
    Many(Vec<Spanned<Name>>),
}

impl<'de> Deserialize<'de> for RawStrata {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawStrata;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a stratum name, a list of them, `all` or `overall`")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RawStrata, E> {
                Ok(RawStrata::One(s.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawStrata, A::Error> {
                let mut out = Vec::new();
                while let Some(n) = seq.next_element()? {
                    out.push(n);
                }
                Ok(RawStrata::Many(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// A stratum name: text as YAML types it, so `[1]` and `[true]` are
/// refused as before rather than read as the names "1" and "true".
pub(super) struct Name(pub String);

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Name;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a stratum name")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Name, E> {
                Ok(Name(s.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A number as YAML types it (serde's `deserialize_any`), then converted:
/// serde-saphyr reading straight into a number would also take `"0.5"`
/// (quoted) and `1_000`, which serde_yaml refused. `T` names itself in the
/// type error.
pub(super) struct Num<T>(pub T);

pub(super) trait FromYamlNumber: Sized {
    const EXPECTING: &'static str;
    fn from_u64(v: u64) -> Option<Self>;
    fn from_i64(v: i64) -> Option<Self>;
    fn from_f64(v: f64) -> Option<Self>;
}

/// Whole numbers: taken when they fit the type, never from a float.
macro_rules! whole_number {
    ($($t:ty),*) => {$(
        impl FromYamlNumber for $t {
            const EXPECTING: &'static str = stringify!($t);
            fn from_u64(v: u64) -> Option<Self> {
                v.try_into().ok()
            }
            fn from_i64(v: i64) -> Option<Self> {
                v.try_into().ok()
            }
            fn from_f64(_: f64) -> Option<Self> {
                None
            }
        }
    )*};
}

whole_number!(u32, u64, i32);

impl FromYamlNumber for f64 {
    const EXPECTING: &'static str = "f64";
    fn from_u64(v: u64) -> Option<Self> {
        Some(v as f64)
    }
    fn from_i64(v: i64) -> Option<Self> {
        Some(v as f64)
    }
    fn from_f64(v: f64) -> Option<Self> {
        Some(v)
    }
}

impl<'de, T: FromYamlNumber> Deserialize<'de> for Num<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<T: FromYamlNumber> Visitor<'_> for V<T> {
            type Value = Num<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(T::EXPECTING)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num<T>, E> {
                T::from_u64(v)
                    .map(Num)
                    .ok_or_else(|| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num<T>, E> {
                T::from_i64(v)
                    .map(Num)
                    .ok_or_else(|| E::invalid_value(de::Unexpected::Signed(v), &self))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num<T>, E> {
                T::from_f64(v)
                    .map(Num)
                    .ok_or_else(|| E::invalid_type(de::Unexpected::Float(v), &self))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}
