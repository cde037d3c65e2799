//! The one place queries and strata enter a gold set, whichever reader
//! found them: ids, strata and labels are checked here, with the line the
//! reader gives.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;

use super::index::{id_hash, QueryIndex};
use super::{
    GoldFormat, GoldQuery, GoldSet, Labeling, Labels, ProvenanceMap, QueryExtra, SpanLabel, RESERVED_STRATA,
};
use crate::diag::{excerpt, input_error, input_error_hint};

/// Whether a query id contains white space, which TREC runs split on.
pub(super) fn bad_query_id(id: &str) -> bool {
    id.chars().any(char::is_whitespace)
}

/// Collects queries and strata, checking uniqueness as they arrive.
pub(super) struct Builder<'a> {
    pub(super) path: &'a Path,
    pub(super) queries: Vec<GoldQuery>,
    pub(super) strata: Vec<String>,
    pub(super) stratum_index: HashMap<String, u32>,
    pub(super) index: QueryIndex,
    pub(super) extras: HashMap<usize, QueryExtra>,
    pub(super) provenance: ProvenanceMap,
    pub(super) labeling: Labeling,
    /// Whether the provenance read is kept (else checked and dropped).
    pub(super) keep_provenance: bool,
}

impl<'a> Builder<'a> {
    pub(super) fn new(path: &'a Path) -> Self {
        Builder {
            path,
            queries: Vec::new(),
            strata: Vec::new(),
            stratum_index: HashMap::new(),
            index: QueryIndex::default(),
            extras: HashMap::new(),
            provenance: ProvenanceMap::new(),
            labeling: Labeling::default(),
            keep_provenance: true,
        }
    }

    pub(super) fn stratum(&mut self, name: &str, line: Option<usize>) -> Result<u32> {
        self.stratum_at(name, || line)
    }

    /// [`Builder::stratum`] with the line found only for an error: the
    /// JSON reader locates a query's fields only then.
    pub(super) fn stratum_at(&mut self, name: &str, line: impl Fn() -> Option<usize>) -> Result<u32> {
        if let Some(&i) = self.stratum_index.get(name) {
            return Ok(i);
        }
        if name.trim().is_empty() {
            return Err(input_error(self.path, line(), "empty stratum name"));
        }
        if RESERVED_STRATA.contains(&name) {
            return Err(input_error_hint(
                self.path,
                line(),
                format!("stratum name `{name}` is reserved"),
                "`all` and `macro` name the aggregate rows in reports; rename the stratum",
            ));
        }
        let i = self.strata.len() as u32;
        self.strata.push(name.to_string());
        self.stratum_index.insert(name.to_string(), i);
        Ok(i)
    }

    /// Adds a query after checking its id and labels. `labels_checked`:
    /// the caller already refused empty and repeated label ids (the qrels
    /// reader does, with the line of each judgment).
    pub(super) fn add(&mut self, q: GoldQuery, line: Option<usize>, labels_checked: bool) -> Result<()> {
        self.add_at(q, || line, labels_checked)
    }

    /// [`Builder::add`] with the line found only for an error.
    pub(super) fn add_at(
        &mut self,
        q: GoldQuery,
        line: impl Fn() -> Option<usize>,
        labels_checked: bool,
    ) -> Result<()> {
        // The line only for an error: finding it may cost a parse.
        if q.id.is_empty() || bad_query_id(&q.id) || q.id.contains('\0') {
            self.check_id(&q.id, line())?;
        }
        if !labels_checked {
            if q.labels.iter().any(|l| l.id.is_empty()) {
                return Err(input_error(
                    self.path,
                    line(),
                    format!("query `{}`: empty label id", excerpt(&q.id)),
                ));
            }
            if let Some(dup) = repeated_label(&q.labels) {
                return Err(input_error_hint(
                    self.path,
                    line(),
                    format!(
                        "query `{}`: label `{}` appears twice",
                        excerpt(&q.id),
                        excerpt(q.labels.get(dup).map_or("", |l| l.id))
                    ),
                    "keep one entry per chunk id, with the grade you mean",
                ));
            }
        }
        if let Some(dup) = repeated_span(&q.spans) {
            let s = &q.spans[dup];
            return Err(input_error_hint(
                self.path,
                line(),
                format!(
                    "query `{}`: span {}..{} of `{}` appears twice",
                    excerpt(&q.id),
                    s.start,
                    s.end,
                    excerpt(&s.doc)
                ),
                "keep one entry per span, with the grade you mean (overlapping spans are fine)",
            ));
        }
        let pos = self.queries.len() as u32;
        let h = id_hash(q.id.as_bytes());
        match self.index.find(&self.queries, q.id.as_bytes(), h) {
            Ok(first) => {
                return Err(input_error_hint(
                    self.path,
                    line(),
                    format!(
                        "duplicate query id `{}` (query #{} has it already)",
                        excerpt(&q.id),
                        first + 1
                    ),
                    "query ids must be unique; rename or merge the two queries",
                ));
            }
            Err(slot) => self.index.insert(slot, h, pos),
        }
        self.queries.push(q);
        Ok(())
    }

    /// Records the model's grades and the `verified` mark of the query
    /// just added (SPEC "Gating on model labels"). Refused: a model grade
    /// outside 0..3 (the scale `gold judge` grades on), an empty, NUL-holding
    /// or repeated chunk id, and people's labels on a query that is not
    /// verified (a query with model grades and no `verified` has no person
    /// labels; labels there would be read as people's by `labels: people`).
    pub(super) fn add_labeling(
        &mut self,
        model: Option<Vec<super::Label>>,
        verified: bool,
        line: impl Fn() -> Option<usize>,
    ) -> Result<()> {
        let Some(pos) = self.queries.len().checked_sub(1) else {
            return Ok(());
        };
        let q = &self.queries[pos];
        let hint = "`model:` maps each pooled chunk id to the model's grade, 0..3; `verified: true` marks a query people graded in full";
        if let Some(model) = &model {
            // A set, not a scan of the ids before: a query's pool may hold
            // thousands of graded chunks.
            let mut seen: std::collections::HashSet<&str> =
                std::collections::HashSet::with_capacity(model.len());
            for l in model {
                let why = if l.id.is_empty() {
                    Some("an empty chunk id in `model`".to_string())
                } else if l.id.contains('\0') {
                    Some(format!(
                        "chunk id `{}` in `model` holds a NUL character",
                        excerpt(&l.id)
                    ))
                } else if !(0..=3).contains(&l.grade) {
                    Some(format!(
                        "the model's grade {} of `{}` is outside 0..3",
                        l.grade,
                        excerpt(&l.id)
                    ))
                } else if !seen.insert(l.id.as_str()) {
                    Some(format!("chunk `{}` appears twice in `model`", excerpt(&l.id)))
                } else {
                    None
                };
                if let Some(why) = why {
                    return Err(input_error_hint(
                        self.path,
                        line(),
                        format!("query `{}`: {why}", excerpt(&q.id)),
                        hint,
                    ));
                }
            }
            if !verified && q.label_count() > 0 {
                return Err(input_error_hint(
                    self.path,
                    line(),
                    format!(
                        "query `{}` has model grades and people's labels (`relevant`) but is not `verified`",
                        excerpt(&q.id)
                    ),
                    "add `verified: true` if people graded every pooled pair of the query, else drop `relevant` (the model's grades go under `model:`)",
                ));
            }
        }
        if let Some(model) = model {
            self.labeling.model.insert(pos, model.into());
        }
        if verified {
            self.labeling.verified.push(pos as u32);
        }
        Ok(())
    }

    /// Records `verify_sample:` once every query is in: each id must name
    /// one query of the gold set, once, and the time read as RFC 3339.
    pub(super) fn set_verify_sample(
        &mut self,
        sample: std::result::Result<super::VerifySample, String>,
        line: Option<usize>,
    ) -> Result<()> {
        let hint = "`verify_sample:` is written by `rgate gold verify-sample`: {seed, per_stratum or fraction, show_model, eligible, ids: [query ids], drawn_at: RFC 3339, history}; draw it again rather than edit it";
        let bad = |msg: String| input_error_hint(self.path, line, format!("verify_sample: {msg}"), hint);
        let sample = sample.map_err(&bad)?;
        if let Some(h) = sample
            .history
            .iter()
            .find(|h| crate::diag::parse_rfc3339(&h.drawn_at).is_none())
        {
            return Err(bad(format!(
                "history: `drawn_at` `{}` is not an RFC 3339 time",
                excerpt(&h.drawn_at)
            )));
        }
        if sample.ids.is_empty() {
            return Err(bad("`ids` is empty".into()));
        }
        if crate::diag::parse_rfc3339(&sample.drawn_at).is_none() {
            return Err(bad(format!(
                "`drawn_at` `{}` is not an RFC 3339 time",
                excerpt(&sample.drawn_at)
            )));
        }
        let mut seen = std::collections::HashSet::with_capacity(sample.ids.len());
        for id in &sample.ids {
            if id.is_empty() {
                return Err(bad("an empty query id".into()));
            }
            if id.contains('\0') {
                return Err(bad(format!("query id `{}` holds a NUL character", excerpt(id))));
            }
            if self.index.get(&self.queries, id.as_bytes()).is_none() {
                return Err(bad(format!("query `{}` is not in the gold set", excerpt(id))));
            }
            if !seen.insert(id.as_str()) {
                return Err(bad(format!("query `{}` is drawn twice", excerpt(id))));
            }
        }
        self.labeling.verify_sample = Some(sample);
        Ok(())
    }

    /// Refuses a query id that is empty or contains white space.
    pub(super) fn check_id(&self, id: &str, line: Option<usize>) -> Result<()> {
        if id.is_empty() {
            return Err(input_error(self.path, line, "empty query id"));
        }
        if id.contains('\0') {
            return Err(input_error_hint(
                self.path,
                line,
                format!("query id `{}` holds a NUL character", excerpt(id)),
                "an id is printable text: a NUL ends it for C programs such as trec_eval",
            ));
        }
        if bad_query_id(id) {
            return Err(input_error_hint(
                self.path,
                line,
                format!("query id `{}` contains white space", excerpt(id)),
                "TREC runs split on white space, so ids cannot contain it",
            ));
        }
        Ok(())
    }

    pub(super) fn finish(self, format: GoldFormat) -> GoldSet {
        GoldSet {
            path: self.path.to_path_buf(),
            format,
            queries: self.queries,
            strata: self.strata,
            extras: self.extras,
            provenance: self.provenance,
            labeling: self.labeling,
            index: self.index,
        }
    }
}

/// The index of the second occurrence of a repeated label id, if any.
/// Most queries have a handful of labels: compared pairwise; large pools
/// are sorted by id instead of hashed (no map per query).
fn repeated_label(labels: &Labels) -> Option<usize> {
    let ids: Vec<&str> = labels.iter().map(|l| l.id).collect();
    if ids.len() <= 16 {
        for j in 1..ids.len() {
            if ids[..j].contains(&ids[j]) {
                return Some(j);
            }
        }
        return None;
    }
    let mut idx: Vec<u32> = (0..ids.len() as u32).collect();
    idx.sort_unstable_by(|&a, &b| ids[a as usize].cmp(ids[b as usize]).then(a.cmp(&b)));
    idx.windows(2)
        .find(|w| ids[w[0] as usize] == ids[w[1] as usize])
        .map(|w| w[1] as usize)
}

/// The index of a span that repeats an earlier one (same document and
/// offsets), if any. Overlapping spans are allowed: a chunker with overlap,
/// migrated to spans, gives them.
fn repeated_span(spans: &[SpanLabel]) -> Option<usize> {
    if spans.len() < 2 {
        return None;
    }
    let mut idx: Vec<u32> = (0..spans.len() as u32).collect();
    let key = |i: u32| {
        let s = &spans[i as usize];
        (s.doc.as_str(), s.start, s.end)
    };
    idx.sort_unstable_by(|&a, &b| key(a).cmp(&key(b)).then(a.cmp(&b)));
    idx.windows(2)
        .filter(|w| key(w[0]) == key(w[1]))
        .map(|w| w[1] as usize)
        .min()
}
