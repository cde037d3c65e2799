//! The gold set seen through one label set (SPEC "Gating on model labels"):
//! `--labels people|model|ppi` scores every query with the same metric
//! code, only the labels differ. PPI computes each query's metric twice, on
//! the model's grades for every model-graded query and on people's for the
//! verified ones, then corrects the first mean with the second's
//! differences (Angelopoulos et al., Science 2023; PPI++, Angelopoulos,
//! Duchi and Zrnic 2023). A view keeps the gold set's strata, in order, so
//! stratum numbers mean the same in every view.

use anyhow::Result;
use serde::Deserialize;

use super::{GoldQuery, GoldSet, Labels};
use crate::diag::{excerpt, input_error_hint, name_some};

/// Which labels score the runs (SPEC "Gating on model labels"): people's
/// only, the model's where no person graded (biased by its errors), or a
/// prediction-powered estimate from the model's grades corrected by a
/// random sample people verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LabelMode {
    #[default]
    People,
    Model,
    Ppi,
}

impl LabelMode {
    pub fn name(self) -> &'static str {
        match self {
            LabelMode::People => "people",
            LabelMode::Model => "model",
            LabelMode::Ppi => "ppi",
        }
    }

    /// The command line's and the Python module's spelling.
    pub fn parse(s: &str) -> Option<LabelMode> {
        match s {
            "people" => Some(LabelMode::People),
            "model" => Some(LabelMode::Model),
            "ppi" => Some(LabelMode::Ppi),
            _ => None,
        }
    }
}

/// Which labels a view scores with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelView {
    /// People's labels only: every query but the model-only ones (which
    /// have none); what every gold set was scored with before.
    People,
    /// People's labels where a person graded, the model's elsewhere:
    /// biased by the model's errors, said in every report.
    Model,
    /// PPI's model side: the model's grades, on every model-graded query.
    PpiModel,
    /// PPI's people side: people's labels on the verified model-graded
    /// queries, the pairs that measure the model's bias.
    PpiPeople,
}

impl GoldSet {
    /// This gold set through `view`; the same set (a clone) for `People`
    /// when it has no model grades, so a gold set of people's labels
    /// scores as it always has.
    pub fn view(&self, view: LabelView) -> Result<GoldSet> {
        let l = &self.labeling;
        let drawn = self.drawn();
        let mut queries = Vec::with_capacity(self.len());
        for (i, q) in self.queries.iter().enumerate() {
            let model = l.model_labels(i);
            let labels: Option<Labels> = match view {
                LabelView::People => (!l.is_model_only(i)).then(|| q.labels.clone()),
                LabelView::Model => Some(match model {
                    Some(m) if l.is_model_only(i) => m.clone(),
                    // Per pair: people's grades where people graded, the
                    // model's on pairs it graded after them.
                    Some(m) => {
                        let graded = self.people_graded(i);
                        let mut all = q.labels.clone();
                        for x in m.iter().filter(|x| !graded.contains(x.id)) {
                            all.push(x.id, x.grade);
                        }
                        all
                    }
                    None => q.labels.clone(),
                }),
                LabelView::PpiModel => model.cloned(),
                // Only the recorded draw: a verified query outside it is no
                // part of the random sample.
                LabelView::PpiPeople => {
                    (model.is_some() && l.is_verified(i) && drawn[i]).then(|| q.labels.clone())
                }
            };
            let Some(labels) = labels else { continue };
            // The model grades chunk ids; a view of its grades has no spans.
            let spans = match (view, model) {
                (LabelView::PpiModel, _) => Vec::new(),
                (LabelView::Model, Some(_)) if l.is_model_only(i) => Vec::new(),
                _ => q.spans.clone(),
            };
            queries.push(GoldQuery {
                id: q.id.clone(),
                text: q.text.clone(),
                stratum: q.stratum,
                labels,
                spans,
            });
        }
        GoldSet::from_parts(self.path.clone(), self.format, queries, self.strata.clone())
    }

    /// Refuses `labels: ppi` on a gold set whose verified queries are not
    /// known to be a random draw: PPI's interval is valid only when they
    /// are a uniform sample (a hand-picked sample of easy queries would
    /// make the model look right), so the draw must be recorded, reproduce
    /// from its seed ([`GoldSet::check_draw`]), and every pair the model
    /// graded on a drawn query must be graded by people (verification is
    /// per pair). Returns what the reports say beside the estimate: an
    /// older record, verified queries outside the draw (not used), a draw
    /// that was redrawn, people who saw the model's grades.
    pub fn check_ppi_ready(&self) -> Result<Vec<String>> {
        let draw_hint = "draw the queries people verify with `rgate gold verify-sample --gold GOLD --per-stratum 30 --seed S --output SHEET`, grade the sheet, then `rgate gold import --with-model SHEET --into GOLD`";
        let Some(sample) = &self.labeling.verify_sample else {
            return Err(input_error_hint(
                &self.path,
                None,
                "labels: ppi needs the record of a random verification draw (`verify_sample`), and the gold set has none",
                draw_hint,
            ));
        };
        let mut notes: Vec<String> = self.check_draw()?.into_iter().collect();
        let open: Vec<&str> = sample
            .ids
            .iter()
            .filter(|id| self.position(id).is_none_or(|p| !self.labeling.is_verified(p)))
            .map(String::as_str)
            .collect();
        if !open.is_empty() {
            let shown: Vec<String> = open.iter().map(|id| excerpt(id)).collect();
            let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
            return Err(input_error_hint(
                &self.path,
                None,
                format!(
                    "labels: ppi needs every query of the verification draw verified; {} of {} are not: {}",
                    open.len(),
                    sample.ids.len(),
                    name_some(&shown, 5)
                ),
                "grade them in the sheet `rgate gold verify-sample` wrote, then `rgate gold import --with-model SHEET --into GOLD` (PPI is valid only on the whole random draw)",
            ));
        }
        let ungraded = self.drawn_ungraded();
        if !ungraded.is_empty() {
            let pairs: usize = ungraded.iter().map(|u| u.1).sum();
            let shown: Vec<String> = ungraded
                .iter()
                .map(|&(i, _)| excerpt(&self.queries[i].id))
                .collect();
            let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
            return Err(input_error_hint(
                &self.path,
                None,
                format!(
                    "labels: ppi reads people's grades on the drawn queries, and {} of them {} {} only the model graded (added after people verified): {}",
                    ungraded.len(),
                    if ungraded.len() == 1 { "has" } else { "have" },
                    crate::diag::count(pairs, "pair", "pairs"),
                    name_some(&shown, 5)
                ),
                format!(
                    "run `rgate gold verify-sample --gold GOLD --seed {} {}{} --output SHEET` again: the same draw, a sheet of just those pairs; grade it, then `rgate gold import --with-model SHEET --into GOLD`",
                    sample.seed,
                    sample.size.map_or_else(|| "--per-stratum N".to_string(), |s| s.flag()),
                    if sample.show_model == Some(true) { " --show-model" } else { "" },
                ),
            ));
        }
        let drawn = self.drawn();
        let outside = (0..self.len())
            .filter(|&i| !drawn[i] && self.labeling.is_verified(i) && self.labeling.model_labels(i).is_some())
            .count();
        if outside > 0 {
            notes.push(format!(
                "{}: {} outside the recorded draw {} not part of the PPI estimate (a sample people chose is no random sample; their labels count under `labels: people`)",
                crate::escape::path(&self.path),
                crate::diag::count(outside, "verified query with model grades", "verified queries with model grades"),
                if outside == 1 { "is" } else { "are" },
            ));
        }
        if sample.number() > 1 {
            let seeds: Vec<String> = sample.history.iter().map(|h| h.seed.to_string()).collect();
            notes.push(format!(
                "labels: ppi: the verified sample is draw {n} of {n} (seed {}; earlier seeds {} were discarded with --replace): a seed redrawn until the sample looks kind is no random sample",
                sample.seed,
                seeds.join(", "),
                n = sample.number(),
            ));
        }
        if sample.show_model == Some(true) {
            notes.push(
                "labels: ppi: people saw the model's grades when they verified the draw (`show_model: true`), so their grades are not independent of the model: PPI's correction and the judge's kappa lean toward the model (draw again without --show-model for an independent check)"
                    .to_string(),
            );
        }
        Ok(notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gold::tests::load_str;

    /// q1 model-only, q2 verified with model grades, q3 people's only, q4
    /// verified without model grades; q2 drawn.
    const GOLD: &str = "queries:\n- id: q1\n  stratum: a\n  model:\n    c1: 3\n- id: q2\n  stratum: a\n  relevant:\n    c2: 2\n  model:\n    c2: 0\n    c9: 1\n  verified: true\n- id: q3\n  stratum: b\n  relevant:\n    c3: 1\n- id: q4\n  stratum: b\n  relevant:\n    c4: 1\n  verified: true\nverify_sample:\n  seed: 1\n  ids:\n  - q2\n  drawn_at: 2026-12-07T01:00:00Z\n";

    /// A query as a view holds it: id, stratum, (chunk, grade) labels.
    type Seen = (String, u32, Vec<(String, i32)>);
    type Want<'a> = (&'a str, u32, &'a [(&'a str, i32)]);

    fn seen(g: &GoldSet) -> Vec<Seen> {
        g.queries
            .iter()
            .map(|q| {
                let labels = q.labels.iter().map(|l| (l.id.to_string(), l.grade)).collect();
                (q.id.clone(), q.stratum, labels)
            })
            .collect()
    }

    fn want(rows: &[Want]) -> Vec<Seen> {
        rows.iter()
            .map(|(q, s, l)| {
                (
                    q.to_string(),
                    *s,
                    l.iter().map(|(c, g)| (c.to_string(), *g)).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn each_view_holds_the_labels_it_names() {
        let (g, _) = load_str("g.yaml", GOLD).unwrap();
        let v = |view| g.view(view).unwrap();
        assert_eq!(
            seen(&v(LabelView::People)),
            want(&[
                ("q2", 0, &[("c2", 2)]),
                ("q3", 1, &[("c3", 1)]),
                ("q4", 1, &[("c4", 1)])
            ])
        );
        // Per pair: q2's c9, which only the model graded, is the model's.
        assert_eq!(
            seen(&v(LabelView::Model)),
            want(&[
                ("q1", 0, &[("c1", 3)]),
                ("q2", 0, &[("c2", 2), ("c9", 1)]),
                ("q3", 1, &[("c3", 1)]),
                ("q4", 1, &[("c4", 1)])
            ])
        );
        assert_eq!(
            seen(&v(LabelView::PpiModel)),
            want(&[("q1", 0, &[("c1", 3)]), ("q2", 0, &[("c2", 0), ("c9", 1)])])
        );
        assert_eq!(seen(&v(LabelView::PpiPeople)), want(&[("q2", 0, &[("c2", 2)])]));
        // Every view keeps the strata, so stratum 1 is `b` in each.
        assert_eq!(v(LabelView::PpiPeople).strata, ["a", "b"]);
        // A gold set of people's labels only is itself in the people view.
        let (old, _) = load_str("o.yaml", "queries:\n- id: q1\n  relevant: [a]\n").unwrap();
        assert_eq!(seen(&old.view(LabelView::People).unwrap()), seen(&old));
    }

    #[test]
    fn ppi_refuses_a_gold_set_without_a_whole_verified_draw() {
        // q2's c9 was graded by the model only: PPI refuses until people
        // grade it (verification is per pair).
        let (g, _) = load_str("g.yaml", GOLD).unwrap();
        let err = format!("{:?}", g.check_ppi_ready().unwrap_err());
        assert!(
            err.contains("1 of them has 1 pair only the model graded"),
            "{err}"
        );
        const GRADED: &str = concat!(
            "queries:\n- id: q1\n  stratum: a\n  model:\n    c1: 3\n- id: q2\n  stratum: a\n  relevant:\n    c2: 2\n    c9: 0\n",
            "  model:\n    c2: 0\n    c9: 1\n  verified: true\n- id: q3\n  stratum: b\n  relevant:\n    c3: 1\n- id: q4\n  stratum: b\n  relevant:\n    c4: 1\n  verified: true\n",
            "verify_sample:\n  seed: 1\n  ids:\n  - q2\n  drawn_at: 2026-12-07T01:00:00Z\n"
        );
        let (g, _) = load_str("g.yaml", GRADED).unwrap();
        // A record without size and fingerprints: read, with a warning.
        let notes = g.check_ppi_ready().unwrap();
        assert!(
            notes[0].contains("verify_sample has no size or `eligible` fingerprints"),
            "{notes:?}"
        );
        let no_draw = GOLD.split("verify_sample:").next().unwrap();
        let err = load_str("g.yaml", no_draw)
            .unwrap()
            .0
            .check_ppi_ready()
            .unwrap_err();
        let text = format!("{err:?}");
        assert!(
            text.contains("needs the record of a random verification draw"),
            "{text}"
        );
        assert!(text.contains("rgate gold verify-sample"), "{text}");
        let open = GOLD.replace("  - q2\n", "  - q2\n  - q1\n  - q3\n");
        let err = load_str("g.yaml", &open)
            .unwrap()
            .0
            .check_ppi_ready()
            .unwrap_err();
        let text = format!("{err:?}");
        assert!(text.contains("2 of 3 are not: `q1`, `q3`"), "{text}");
        assert!(text.contains("rgate gold verify-sample"), "{text}");
    }
}
