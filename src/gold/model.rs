//! What a gold set is made of: labels (packed per query), span labels,
//! queries and the input forms.

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The stratum of queries that name none.
pub const DEFAULT_STRATUM: &str = "default";

/// Names reserved for aggregate rows in reports; a stratum may not take them.
pub const RESERVED_STRATA: [&str; 2] = ["all", "macro"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub id: String,
    /// trec_eval semantics: >= relevance level is relevant, 0.. is judged,
    /// negative is "in the pool, not judged".
    pub grade: i32,
}

/// A query's chunk-id labels, packed: every id in one buffer, and the end
/// of each id and its grade. A String per label made loading 500,000 qrels
/// lines half a million allocations and three times the memory; labels
/// are read in order or looked up through [`crate::judge::QueryLabels`],
/// never changed one at a time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels {
    pub(super) ids: String,
    /// (end of the id in `ids`, grade) per label, in order.
    pub(super) ends: Vec<(usize, i32)>,
}

/// One label of a [`Labels`], borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabelRef<'a> {
    pub id: &'a str,
    pub grade: i32,
}

impl LabelRef<'_> {
    pub fn to_label(self) -> Label {
        Label {
            id: self.id.to_string(),
            grade: self.grade,
        }
    }
}

impl Labels {
    /// Room for `labels` labels whose ids take `id_bytes` bytes together.
    pub fn with_capacity(labels: usize, id_bytes: usize) -> Labels {
        Labels {
            ids: String::with_capacity(id_bytes),
            ends: Vec::with_capacity(labels),
        }
    }

    pub fn push(&mut self, id: &str, grade: i32) {
        self.ids.push_str(id);
        self.ends.push((self.ids.len(), grade));
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<LabelRef<'_>> {
        let &(end, grade) = self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1].0 };
        Some(LabelRef {
            id: &self.ids[start..end],
            grade,
        })
    }

    pub fn iter(&self) -> LabelIter<'_> {
        LabelIter {
            labels: self,
            start: 0,
            next: 0,
        }
    }

    /// Every id, one after the other: the bytes [`Labels::iter`] slices.
    pub fn id_bytes(&self) -> &str {
        &self.ids
    }

    /// The grades in order, without slicing out the ids.
    pub fn grades(&self) -> impl ExactSizeIterator<Item = i32> + '_ {
        self.ends.iter().map(|&(_, grade)| grade)
    }
}

impl FromIterator<Label> for Labels {
    fn from_iter<I: IntoIterator<Item = Label>>(it: I) -> Labels {
        let mut out = Labels::default();
        for l in it {
            out.push(&l.id, l.grade);
        }
        out
    }
}

impl From<Vec<Label>> for Labels {
    fn from(v: Vec<Label>) -> Labels {
        let mut out = Labels::with_capacity(v.len(), v.iter().map(|l| l.id.len()).sum());
        for l in &v {
            out.push(&l.id, l.grade);
        }
        out
    }
}

impl<'a> IntoIterator for &'a Labels {
    type Item = LabelRef<'a>;
    type IntoIter = LabelIter<'a>;
    fn into_iter(self) -> LabelIter<'a> {
        self.iter()
    }
}

/// The labels of a [`Labels`] in order.
#[derive(Debug, Clone)]
pub struct LabelIter<'a> {
    labels: &'a Labels,
    /// Where the next id starts.
    start: usize,
    next: usize,
}

impl<'a> Iterator for LabelIter<'a> {
    type Item = LabelRef<'a>;

    #[inline]
    fn next(&mut self) -> Option<LabelRef<'a>> {
        let &(end, grade) = self.labels.ends.get(self.next)?;
        let id = &self.labels.ids[self.start..end];
        self.start = end;
        self.next += 1;
        Some(LabelRef { id, grade })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.labels.ends.len() - self.next;
        (n, Some(n))
    }
}

impl ExactSizeIterator for LabelIter<'_> {}

/// A labeled range of a source document. Offsets are whatever unit the
/// team's chunker reports (characters, by SPEC); rgate never reads the
/// document, it only compares ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanLabel {
    pub doc: String,
    pub start: u64,
    /// Exclusive; always greater than `start`.
    pub end: u64,
    pub grade: i32,
}

impl SpanLabel {
    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

/// Who gave a label, when, and whether a person verified it
/// ([`crate::goldbuild::provenance`] reads and writes it; metrics ignore
/// it). Kept in the gold layer so that one parse of a gold file gives both
/// its labels and their provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labeler: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    #[serde(default)]
    pub verified: bool,
    /// A model's grade: the sha256 (hex) of its prompt text, as the sheet
    /// records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The other grades the labeling sheet held for this pair when it was
    /// imported (a model's first pass a person then corrected, a second
    /// person's blind grade): kept so `gold agreement` can still measure
    /// how far the sources agree after the sheet is gone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opinions: Vec<Opinion>,
}

/// One more grade for a labeled pair, beside the one the gold set keeps
/// (see [`Provenance::opinions`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Opinion {
    pub grade: i32,
    /// `person` or `model`.
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labeler: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// Query id -> chunk id -> provenance; empty for TREC qrels, which have no
/// place for it.
pub type ProvenanceMap = HashMap<String, HashMap<String, Provenance>>;

#[derive(Debug, Clone, PartialEq)]
pub struct GoldQuery {
    pub id: String,
    pub text: Option<String>,
    /// Index into [`GoldSet::strata`].
    pub stratum: u32,
    pub labels: Labels,
    /// Span labels, beside the chunk-id labels (a query may mix both).
    pub spans: Vec<SpanLabel>,
}

impl GoldQuery {
    /// Grades of every label, chunk ids first, then spans.
    pub fn grades(&self) -> impl Iterator<Item = i32> + '_ {
        self.labels.grades().chain(self.spans.iter().map(|s| s.grade))
    }

    /// How many labels of either kind.
    pub fn label_count(&self) -> usize {
        self.labels.len() + self.spans.len()
    }
}

/// A model's grades and people's verification marks beside the labels
/// people gave (SPEC "Gating on model labels"): what prediction-powered
/// inference (Angelopoulos et al., Science 2023) needs, a model's grade
/// for many queries and people's for a random sample of them.
///
/// Kept beside the queries, not in each [`GoldQuery`]: a gold set of
/// people's labels alone (every gold set before model labels) holds two
/// empty collections and no per-query cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Labeling {
    /// Query position -> the model's grades of its pooled pairs (0..3).
    pub model: HashMap<usize, Labels>,
    /// Positions of the queries people graded in full (`verified: true`),
    /// ascending.
    pub verified: Vec<u32>,
    /// The random draw of queries for people to verify, as
    /// `gold verify-sample` recorded it.
    pub verify_sample: Option<VerifySample>,
}

impl Labeling {
    /// Whether the gold set carries anything beyond people's labels.
    pub fn is_empty(&self) -> bool {
        self.model.is_empty() && self.verified.is_empty() && self.verify_sample.is_none()
    }

    pub fn is_verified(&self, query: usize) -> bool {
        u32::try_from(query).is_ok_and(|q| self.verified.binary_search(&q).is_ok())
    }

    pub fn model_labels(&self, query: usize) -> Option<&Labels> {
        self.model.get(&query)
    }

    /// A query with model grades and no person's: people's labels do not
    /// speak for it.
    pub fn is_model_only(&self, query: usize) -> bool {
        self.model.contains_key(&query) && !self.is_verified(query)
    }
}

/// `verify_sample:` of a gold set: which queries were drawn for people to
/// verify, with what seed and when, and what recomputes the draw (its
/// size, and a fingerprint of the queries it was drawn from). PPI is valid
/// only when the verified queries are a uniform random sample, so the draw
/// is recorded where the labels are, and recomputed from its seed before
/// any PPI estimate ([`super::draw`]).
#[derive(Debug, Clone, PartialEq)]
pub struct VerifySample {
    pub seed: u64,
    /// Query ids, as drawn; each names a query of the gold set once.
    pub ids: Vec<String>,
    /// RFC 3339, UTC.
    pub drawn_at: String,
    /// `per_stratum` or `fraction`; `None` in a record written before
    /// rgate kept it (then the draw is checked per stratum at the counts
    /// recorded, see [`super::draw`]).
    pub size: Option<DrawSize>,
    /// Whether the sheet showed people the model's grades; `None` in an
    /// older record.
    pub show_model: Option<bool>,
    /// Per stratum, the model-graded queries the draw was taken from (its
    /// name, how many, and a sha256 of their sorted ids); empty in an older
    /// record.
    pub eligible: Vec<Eligible>,
    /// The draws `--replace` discarded, oldest first: a seed redrawn until
    /// the sample looks kind shows in the file's diff.
    pub history: Vec<EarlierDraw>,
    /// The line of the record in its file (for errors), when known.
    pub line: Option<usize>,
}

impl VerifySample {
    /// A short id of this draw (seed, time and ids): the sheet
    /// `gold verify-sample` writes carries it, so `gold import` can tell a
    /// sheet of another draw.
    pub fn draw_id(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(format!("rgate-draw-v1\n{}\n{}\n", self.seed, self.drawn_at).as_bytes());
        let mut ids: Vec<&str> = self.ids.iter().map(String::as_str).collect();
        ids.sort_unstable();
        for id in ids {
            h.update(id.as_bytes());
            h.update(b"\n");
        }
        let d = h.finalize();
        let hex: String = d[..6].iter().map(|b| format!("{b:02x}")).collect();
        format!("{}-{hex}", self.seed)
    }

    /// Which draw this is, counting those `--replace` discarded: 1 for a
    /// first draw.
    pub fn number(&self) -> usize {
        self.history.len() + 1
    }
}

/// How many queries a draw takes from each stratum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DrawSize {
    /// Up to N per stratum (all of a smaller stratum).
    PerStratum(usize),
    /// This share of each stratum's model-graded queries, rounded up, so
    /// a stratum with any gets at least one.
    Fraction(f64),
}

impl DrawSize {
    /// How many of a stratum's `n` eligible queries are drawn.
    pub fn of(self, n: usize) -> usize {
        match self {
            DrawSize::PerStratum(k) => k.min(n),
            // Less a hair: 0.2 x 10 is 2.0000000000000004 in binary.
            DrawSize::Fraction(f) => (((f * n as f64) - 1e-9).ceil().max(0.0) as usize).min(n),
        }
    }

    /// As the command line spells it: `--per-stratum 30`, `--fraction 0.1`.
    pub fn flag(self) -> String {
        match self {
            DrawSize::PerStratum(k) => format!("--per-stratum {k}"),
            DrawSize::Fraction(f) => format!("--fraction {f}"),
        }
    }
}

/// One stratum's queries a draw was taken from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Eligible {
    pub stratum: String,
    pub queries: usize,
    /// `sha256:` and the hex digest of the sorted ids, one a line.
    pub sha256: String,
}

/// A draw that `--replace` discarded.
#[derive(Debug, Clone, PartialEq)]
pub struct EarlierDraw {
    pub seed: u64,
    pub drawn_at: String,
    pub size: Option<DrawSize>,
    pub show_model: Option<bool>,
    /// How many queries it drew.
    pub queries: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoldFormat {
    Yaml,
    Json,
    Jsonl,
    Qrels,
}

impl fmt::Display for GoldFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GoldFormat::Yaml => "yaml",
            GoldFormat::Json => "json",
            GoldFormat::Jsonl => "jsonl",
            GoldFormat::Qrels => "qrels",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_labels_give_back_each_id_and_grade() {
        let v = vec![
            Label {
                id: "a#1".into(),
                grade: 2,
            },
            Label {
                id: "".into(),
                grade: 0,
            },
            Label {
                id: "bcd".into(),
                grade: -1,
            },
        ];
        let l: Labels = v.clone().into();
        assert_eq!(l.len(), 3);
        assert_eq!(l.iter().len(), 3);
        let got: Vec<(&str, i32)> = l.iter().map(|x| (x.id, x.grade)).collect();
        assert_eq!(got, [("a#1", 2), ("", 0), ("bcd", -1)]);
        assert_eq!(l.get(2), Some(LabelRef { id: "bcd", grade: -1 }));
        assert_eq!(l.get(3), None);
        assert_eq!(l.id_bytes(), "a#1bcd");
        assert_eq!(l.grades().collect::<Vec<_>>(), [2, 0, -1]);
        assert_eq!(v.into_iter().collect::<Labels>(), l);
        assert!(Labels::default().is_empty());
    }
}
