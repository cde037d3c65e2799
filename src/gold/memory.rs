//! Gold sets held in memory rather than in a file: pytrec_eval's and
//! ir_measures' qrels dict `{qid: {doc: grade}}`, a list of relevant
//! documents `{qid: [doc, ...]}` (grade 1), a DataFrame's rows, with an
//! optional `{qid: stratum}`. They enter through the same [`Builder`] as
//! every file, so the same ids and labels are refused with the same words.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;

use super::builder::Builder;
use super::{GoldFormat, GoldQuery, GoldSet, Labels, DEFAULT_STRATUM};
use crate::diag::{input_error_hint, name_some, Warnings};

/// A gold set in memory. `name` stands where a file's path would in
/// warnings and errors.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryGold {
    pub name: String,
    /// Queries in the caller's order, each with its `(document, grade)`
    /// labels; a negative grade is "in the pool, not judged", as in qrels.
    pub queries: Vec<(String, Vec<(String, i32)>)>,
    /// Each query's stratum; a query not named here is in `default`.
    pub strata: Option<Vec<(String, String)>>,
}

impl MemoryGold {
    /// A gold set from `(query, document, grade)` rows, queries in order of
    /// first appearance. A document given twice for a query is refused when
    /// the set is built, as a qrels file's repeated judgment is.
    pub fn from_rows(
        name: impl Into<String>,
        rows: impl IntoIterator<Item = (String, String, i32)>,
    ) -> MemoryGold {
        let mut queries: Vec<(String, Vec<(String, i32)>)> = Vec::new();
        let mut at: HashMap<String, usize> = HashMap::new();
        for (q, d, g) in rows {
            let i = match at.get(&q) {
                Some(&i) => i,
                None => {
                    at.insert(q.clone(), queries.len());
                    queries.push((q, Vec::new()));
                    queries.len() - 1
                }
            };
            queries[i].1.push((d, g));
        }
        MemoryGold {
            name: name.into(),
            queries,
            strata: None,
        }
    }

    /// The gold set, checked as a file's is: ids without white space,
    /// unique queries, unique labels per query, stratum names allowed, at
    /// least one query. Strata for queries the set lacks are a warning, as
    /// in a strata file.
    pub fn build(&self) -> Result<(GoldSet, Warnings)> {
        let path = Path::new(&self.name);
        let mut warnings = Warnings::default();
        let mut b = Builder::new(path);
        let stratum_of: HashMap<&str, &str> = self
            .strata
            .iter()
            .flatten()
            .map(|(q, s)| (q.as_str(), s.as_str()))
            .collect();
        for (qid, labels) in &self.queries {
            let stratum = b.stratum(
                stratum_of.get(qid.as_str()).copied().unwrap_or(DEFAULT_STRATUM),
                None,
            )?;
            let mut l = Labels::with_capacity(labels.len(), labels.iter().map(|(d, _)| d.len()).sum());
            for (d, g) in labels {
                l.push(d, *g);
            }
            b.add(
                GoldQuery {
                    id: qid.clone(),
                    text: None,
                    stratum,
                    labels: l,
                    spans: Vec::new(),
                },
                None,
                false,
            )?;
        }
        if b.queries.is_empty() {
            return Err(input_error_hint(
                path,
                None,
                "the gold set has no queries",
                "pass at least one query: {qid: {doc: grade}}",
            ));
        }
        let gold = b.finish(GoldFormat::Qrels);
        let unknown: Vec<&str> = stratum_of
            .keys()
            .copied()
            .filter(|q| gold.position(q).is_none())
            .collect();
        if !unknown.is_empty() {
            let mut unknown = unknown;
            unknown.sort_unstable();
            warnings.push(format!(
                "the strata name {} quer{} absent from {}: {}",
                unknown.len(),
                if unknown.len() == 1 { "y" } else { "ies" },
                path.display(),
                name_some(&unknown, 5)
            ));
        }
        Ok((gold, warnings))
    }
}
