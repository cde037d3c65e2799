//! Where each label of a gold set came from: who graded it (a person or a
//! model), when, and whether a person verified it. Kept beside the labels
//! in the native gold file, per query:
//!
//! ```yaml
//! provenance:
//!   docs/auth.md#3: {source: person, labeler: ana, at: "2026-11-30T10:00:00Z", verified: true}
//! ```
//!
//! Metrics ignore it; `gold validate` and `gold stats` read it to warn about
//! unverified labels and queries judged by a single labeler.

/// The types live in the gold layer, whose loader reads them in the same
/// parse as the labels ([`crate::gold::GoldSet::load_with_provenance`]).
pub use crate::gold::{Provenance, ProvenanceMap};

/// A sheet's opinion as the gold set's provenance keeps it.
pub fn to_gold(o: &super::sheet::Opinion) -> crate::gold::Opinion {
    crate::gold::Opinion {
        grade: o.grade,
        source: o.source.clone(),
        labeler: o.labeler.clone(),
        prompt: o.prompt.clone(),
        at: o.labeled_at.clone(),
    }
}

/// A gold set's recorded opinion as a sheet's.
pub fn from_gold(o: &crate::gold::Opinion) -> super::sheet::Opinion {
    super::sheet::Opinion {
        grade: o.grade,
        source: o.source.clone(),
        labeler: o.labeler.clone(),
        prompt: o.prompt.clone(),
        labeled_at: o.at.clone(),
    }
}

/// What a gold set's provenance says about how far to trust it.
#[derive(Debug, Default, PartialEq)]
pub struct Trust {
    /// (query, chunk) of labels no person verified.
    pub unverified: Vec<(String, String)>,
    /// Queries whose recorded labels all come from one labeler: nobody
    /// second-guessed them.
    pub single_labeler: Vec<String>,
    /// Labels with a recorded provenance, and all labels.
    pub recorded: usize,
    pub labels: usize,
}

pub fn trust(gold: &crate::gold::GoldSet, prov: &ProvenanceMap) -> Trust {
    let mut t = Trust::default();
    for q in &gold.queries {
        t.labels += q.labels.len();
        let Some(p) = prov.get(&q.id) else {
            continue;
        };
        let mut labelers: Vec<&str> = Vec::new();
        for l in &q.labels {
            let Some(lp) = p.get(l.id) else {
                continue;
            };
            t.recorded += 1;
            if !lp.verified {
                t.unverified.push((q.id.clone(), l.id.to_string()));
            }
            let who = lp.labeler.as_deref().unwrap_or(lp.source.as_str());
            if !labelers.contains(&who) {
                labelers.push(who);
            }
        }
        if labelers.len() == 1 && q.labels.len() > 1 {
            t.single_labeler.push(q.id.clone());
        }
    }
    t
}
