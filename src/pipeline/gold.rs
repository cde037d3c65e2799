//! `gold validate` and `gold stats`: what is wrong with a gold set, and
//! what it can detect.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use anyhow::Result;
use serde_json::json;

use crate::baseline::Store;
use crate::config::{Config, GateSettings};
use crate::diag::{count, name_some};
use crate::gate::{self, PlannedPower};
use crate::gold::{GoldFormat, GoldSet};
use crate::goldbuild::printable;
use crate::goldbuild::provenance;
use crate::goldbuild::sample::{self, LogFields};
use crate::judge::is_relevant;

/// Strata smaller than this cannot carry a per-stratum test worth having.
const SMALL_STRATUM: usize = 10;

/// Which gold set, and what to compare it with.
#[derive(Debug, Clone, Default)]
pub struct GoldOptions {
    /// The config file; without it (and without `gold`), the one found from
    /// the working directory.
    pub config: Option<PathBuf>,
    /// The gold set to read instead of the config's.
    pub gold: Option<PathBuf>,
    /// Strata for TREC qrels.
    pub strata: Option<PathBuf>,
    /// A query log (JSONL or CSV) to compare the strata mix with.
    pub log: Option<PathBuf>,
    /// The log's stratum field (`None`: detected, as `gold sample` does)
    /// and text field.
    pub stratum_field: Option<String>,
    pub text_field: String,
}

/// The gold set named, else the config's; the config too when there is one
/// (it holds the rules and the baselines).
fn load(opts: &GoldOptions) -> Result<(GoldSet, Option<Config>, i32)> {
    let (path, strata, config) = match &opts.gold {
        Some(g) => {
            let config = match &opts.config {
                None if crate::config::discover_here().is_none() => None,
                None => Config::load(None).ok(),
                Some(c) => Some(Config::load(Some(c))?),
            };
            (g.clone(), opts.strata.clone(), config)
        }
        None => {
            let c = Config::load(opts.config.as_deref())?;
            (
                c.gold.clone(),
                opts.strata.clone().or_else(|| c.strata.clone()),
                Some(c),
            )
        }
    };
    let (gold, _warnings) = GoldSet::load_with_provenance(&path, strata.as_deref())?;
    let level = config.as_ref().map_or(1, |c| c.relevance_level);
    Ok((gold, config, level))
}

/// A problem with the gold set that makes its numbers wrong.
pub struct Finding {
    pub query: Option<String>,
    pub message: String,
}

/// What `gold validate` found.
pub struct Validation {
    pub gold: GoldSet,
    /// Errors: the gold set is not valid while there are any.
    pub findings: Vec<Finding>,
    /// Queries without a relevant label (they can never be hit and score
    /// 0 in every mean): reported, not failing. A real collection has
    /// some (12 of NFCorpus's 200 test queries, as its qrels ship), and a
    /// pre-commit hook that refused them would block every commit until
    /// someone labels or drops them; `prepare` warns about them at every
    /// eval and gate as well.
    pub no_relevant: Vec<Finding>,
    /// Advice that does not make it invalid.
    pub notes: Vec<String>,
    /// How it was built: see [`build_notes`].
    pub provenance: serde_json::Value,
    /// Model grades and verified queries per scope; `None` for a gold set
    /// of people's labels only.
    pub labeling: Option<Vec<LabelingCounts>>,
}

impl Validation {
    pub fn valid(&self) -> bool {
        self.findings.is_empty()
    }
}

/// Checks a gold set: queries that can never be hit, duplicate texts, small
/// strata, missing texts, and how it was built.
pub fn gold_validate(opts: &GoldOptions) -> Result<Validation> {
    let (gold, _, level) = load(opts)?;
    // A recorded draw must reproduce from its seed (exit 2 otherwise).
    let draw_note = gold.check_draw()?;
    let mut findings: Vec<Finding> = Vec::new();
    let mut no_relevant: Vec<Finding> = Vec::new();
    for (i, q) in gold.queries.iter().enumerate() {
        // A query only the model graded has no person labels to hit: its
        // model grades are what `labels: model|ppi` score it with.
        if let Some(m) = gold
            .labeling
            .model_labels(i)
            .filter(|_| gold.labeling.is_model_only(i))
        {
            if !m.grades().any(|g| is_relevant(g, level)) {
                no_relevant.push(Finding {
                    query: Some(q.id.clone()),
                    message: format!(
                        "no model grade >= {level}: with model labels the query can never be hit, and drags every mean down"
                    ),
                });
            }
            continue;
        }
        if !q.grades().any(|g| is_relevant(g, level)) {
            no_relevant.push(Finding {
                query: Some(q.id.clone()),
                message: format!(
                    "no label with grade >= {level}: the query can never be hit, and drags every mean down"
                ),
            });
        }
    }
    let mut texts: HashMap<String, &str> = HashMap::new();
    for q in &gold.queries {
        if let Some(t) = &q.text {
            let folded = t.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
            if let Some(first) = texts.insert(folded, &q.id) {
                findings.push(Finding {
                    query: Some(q.id.clone()),
                    message: format!("same text as `{first}`: a duplicate counts twice in every mean"),
                });
            }
        }
    }
    let mut notes = shape_notes(&gold);
    notes.extend(draw_note);
    let examples = crate::goldbuild::import::template_ids(
        gold.queries.iter().map(|q| (q.id.as_str(), q.text.as_deref())),
    );
    if !examples.is_empty() {
        let names: Vec<&str> = examples.iter().map(String::as_str).collect();
        notes.push(format!(
            "{} the examples `rgate init` wrote ({}): replace them with real queries (`rgate gold import SHEET --into GOLD --drop-template` drops them)",
            count(names.len(), "query is", "queries are"),
            name_some(&names, 5)
        ));
    }
    let (built, provenance) = build_notes(&gold, opts)?;
    notes.extend(built);
    let labeling = labeling_counts(&gold);
    notes.extend(labeling_notes(&gold, labeling.as_deref()));
    Ok(Validation {
        gold,
        findings,
        no_relevant,
        notes,
        provenance,
        labeling,
    })
}

/// How many queries of a scope (`all`, then each stratum) carry which
/// labels (SPEC "Gating on model labels"): what `labels: ppi` has to
/// work with, and how far the verification draw has got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelingCounts {
    pub scope: String,
    pub queries: usize,
    /// Queries with model grades.
    pub model: usize,
    /// With model grades and no person's.
    pub model_only: usize,
    /// People graded every pooled pair.
    pub verified: usize,
    /// Verified and model-graded: the pairs PPI corrects the model with.
    pub verified_with_model: usize,
    /// Drawn by `gold verify-sample`.
    pub drawn: usize,
    /// Drawn and not verified yet.
    pub drawn_unverified: usize,
    /// Verified, model-graded and outside the recorded draw: people's
    /// labels under `labels: people`, no part of PPI's sample.
    pub verified_not_drawn: usize,
    /// Pairs the model graded on verified queries that no person graded
    /// (model grades added after the verification): model grades still.
    pub model_pairs_on_verified: usize,
}

/// The counts per scope, or `None` when the gold set has people's labels
/// only (its reports stay as they were).
pub fn labeling_counts(gold: &GoldSet) -> Option<Vec<LabelingCounts>> {
    let l = &gold.labeling;
    if l.is_empty() {
        return None;
    }
    let drawn: std::collections::HashSet<usize> = l
        .verify_sample
        .iter()
        .flat_map(|s| s.ids.iter().filter_map(|id| gold.position(id)))
        .collect();
    let blank = |scope: &str| LabelingCounts {
        scope: scope.to_string(),
        queries: 0,
        model: 0,
        model_only: 0,
        verified: 0,
        verified_with_model: 0,
        drawn: 0,
        drawn_unverified: 0,
        verified_not_drawn: 0,
        model_pairs_on_verified: 0,
    };
    let mut all = blank("all");
    let mut per: Vec<LabelingCounts> = gold.strata.iter().map(|s| blank(s)).collect();
    for (i, q) in gold.queries.iter().enumerate() {
        let (m, v, d) = (l.model.contains_key(&i), l.is_verified(i), drawn.contains(&i));
        // Verification is per pair: the model's grades of pairs people did
        // not grade stay the model's.
        let open = match (v, l.model_labels(i)) {
            (true, Some(model)) => {
                let graded = gold.people_graded(i);
                model.iter().filter(|x| !graded.contains(x.id)).count()
            }
            _ => 0,
        };
        for c in [&mut all, &mut per[q.stratum as usize]] {
            c.verified_not_drawn += usize::from(m && v && !d && l.verify_sample.is_some());
            c.model_pairs_on_verified += open;
            c.queries += 1;
            c.model += usize::from(m);
            c.model_only += usize::from(m && !v);
            c.verified += usize::from(v);
            c.verified_with_model += usize::from(m && v);
            c.drawn += usize::from(d);
            c.drawn_unverified += usize::from(d && !v);
        }
    }
    let mut out = vec![all];
    out.extend(per);
    Some(out)
}

/// What the counts mean for `labels: ppi`: a draw not verified yet, no
/// draw at all, strata with too few verified queries for PPI.
fn labeling_notes(gold: &GoldSet, counts: Option<&[LabelingCounts]>) -> Vec<String> {
    let Some(counts) = counts else { return Vec::new() };
    let mut notes = Vec::new();
    let all = &counts[0];
    if all.model > 0 && gold.labeling.verify_sample.is_none() {
        notes.push(format!(
            "{} model grades and no verification draw: `labels: ppi` needs one (`rgate gold verify-sample`)",
            count(all.model, "query has", "queries have")
        ));
    }
    if all.drawn_unverified > 0 {
        notes.push(format!(
            "{} of the {} drawn for verification {} not verified yet: `labels: ppi` refuses the gold set until {} (`rgate gold import`)",
            all.drawn_unverified,
            count(all.drawn, "query", "queries"),
            if all.drawn_unverified == 1 { "is" } else { "are" },
            if all.drawn_unverified == 1 { "it is" } else { "they are" },
        ));
    }
    if let Some(s) = &gold.labeling.verify_sample {
        notes.push(format!(
            "the verification draw is draw {n} of {n} (seed {}, {}, {}){}",
            s.seed,
            count(s.ids.len(), "query", "queries"),
            match s.show_model {
                Some(true) => "people saw the model's grades: PPI is flagged as not independent",
                Some(false) => "model grades hidden from people",
                None => "recorded before rgate kept whether people saw the model's grades",
            },
            if s.history.is_empty() {
                String::new()
            } else {
                let seeds: Vec<String> = s.history.iter().map(|h| h.seed.to_string()).collect();
                format!("; earlier seeds discarded with --replace: {}", seeds.join(", "))
            },
            n = s.number(),
        ));
    }
    if all.verified_not_drawn > 0 {
        notes.push(format!(
            "{} outside the recorded draw: `labels: people` counts their labels; `labels: ppi` does not (they are no part of the random sample)",
            count(all.verified_not_drawn, "verified query with model grades is", "verified queries with model grades are"),
        ));
    }
    if all.model_pairs_on_verified > 0 {
        notes.push(format!(
            "{} on verified queries only the model graded (added after people verified them): they stay model grades until a person grades them; on drawn queries `labels: ppi` refuses until then",
            count(all.model_pairs_on_verified, "pair", "pairs"),
        ));
    }
    for c in &counts[1..] {
        if c.model > 0 && c.verified_with_model < crate::stats::ppi::MIN_VERIFIED {
            notes.push(format!(
                "stratum `{}` has {} with model grades: PPI needs {}, so it uses people's labels only there",
                c.scope,
                count(c.verified_with_model, "verified query", "verified queries"),
                crate::stats::ppi::MIN_VERIFIED
            ));
        }
    }
    notes
}

/// Small strata, and queries without text.
fn shape_notes(gold: &GoldSet) -> Vec<String> {
    let mut notes = Vec::new();
    for (name, n) in gold.strata.iter().zip(gold.stratum_sizes()) {
        if n < SMALL_STRATUM {
            notes.push(format!(
                "stratum `{name}` has {n} quer{}: too few for a per-stratum test to detect much",
                if n == 1 { "y" } else { "ies" }
            ));
        }
    }
    let untitled: Vec<&str> = gold
        .queries
        .iter()
        .filter(|q| q.text.is_none())
        .map(|q| q.id.as_str())
        .collect();
    if !untitled.is_empty() && gold.format != GoldFormat::Qrels {
        notes.push(format!(
            "{} quer{} no text (reports show text beside lost queries): {}",
            untitled.len(),
            if untitled.len() == 1 { "y has" } else { "ies have" },
            name_some(&untitled, 5)
        ));
    }
    notes
}

/// One scope's label counts: `all`, then each stratum.
pub struct ScopeStats {
    pub name: String,
    pub queries: usize,
    pub labels_per_query: f64,
    pub relevant_per_query: f64,
    pub min_relevant: usize,
    pub max_relevant: usize,
    /// Queries with a grade above 1.
    pub graded: usize,
}

/// A gated check's power, from a retriever's baseline.
pub struct CheckPower {
    pub retriever: String,
    pub planned: PlannedPower,
}

/// What `gold stats` shows.
pub struct GoldStats {
    pub gold: GoldSet,
    pub scopes: Vec<ScopeStats>,
    /// Labels by grade.
    pub grades: BTreeMap<i32, usize>,
    /// The config's gate settings; `None` without a config.
    pub gate: Option<GateSettings>,
    /// Minimum detectable drop per gated check, as the gate computes it for
    /// an unchanged run (the library's baseline_power), so the two agree.
    pub power: Vec<CheckPower>,
    /// Configured retrievers with no baseline yet.
    pub without_baseline: Vec<String>,
    /// See [`build_notes`].
    pub notes: Vec<String>,
    pub provenance: serde_json::Value,
    /// See [`LabelingCounts`].
    pub labeling: Option<Vec<LabelingCounts>>,
}

/// Strata sizes, labels, grades, and the smallest drop each rule can
/// detect.
pub fn gold_stats(opts: &GoldOptions) -> Result<GoldStats> {
    let (gold, config, level) = load(opts)?;
    let (mut notes, provenance) = build_notes(&gold, opts)?;
    let labeling = labeling_counts(&gold);
    notes.extend(labeling_notes(&gold, labeling.as_deref()));
    // Members of each stratum in one pass over the queries (a pass per
    // stratum was quadratic: 100,000 strata took 54 s).
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); gold.strata.len()];
    for (i, q) in gold.queries.iter().enumerate() {
        members[q.stratum as usize].push(i);
    }
    let mut scopes: Vec<(String, Vec<usize>)> = vec![("all".into(), (0..gold.len()).collect())];
    scopes.extend(gold.strata.iter().cloned().zip(members));
    let mut grades: BTreeMap<i32, usize> = BTreeMap::new();
    for q in &gold.queries {
        for g in q.grades() {
            *grades.entry(g).or_default() += 1;
        }
    }
    let scopes = scopes
        .into_iter()
        .map(|(name, idx)| scope_stats(&gold, level, name, &idx))
        .collect();
    let mut power = Vec::new();
    let mut without_baseline = Vec::new();
    if let Some(c) = &config {
        let store = Store::new(&c.baselines);
        let mut loaded = Vec::new();
        for r in &c.retrievers {
            match store.load(&r.name)? {
                Some(b) => loaded.push((r.name.clone(), b)),
                None => without_baseline.push(r.name.clone()),
            }
        }
        // The gate corrects across every retriever's checks by default, so
        // the level each is held to counts them all.
        let family_m = (c.gate.correction_scope == crate::config::CorrectionScope::Gate).then(|| {
            loaded
                .iter()
                .map(|(_, b)| gate::baseline_power(&gold, &c.gate, b, None).len())
                .sum::<usize>()
        });
        for (name, b) in &loaded {
            for planned in gate::baseline_power(&gold, &c.gate, b, family_m) {
                power.push(CheckPower {
                    retriever: name.clone(),
                    planned,
                });
            }
        }
    }
    Ok(GoldStats {
        gold,
        scopes,
        grades,
        gate: config.map(|c| c.gate),
        power,
        without_baseline,
        notes,
        provenance,
        labeling,
    })
}

fn scope_stats(gold: &GoldSet, level: i32, name: String, idx: &[usize]) -> ScopeStats {
    let n = idx.len().max(1) as f64;
    let labels: usize = idx.iter().map(|&i| gold.queries[i].label_count()).sum();
    let rel: Vec<usize> = idx
        .iter()
        .map(|&i| {
            gold.queries[i]
                .grades()
                .filter(|&g| is_relevant(g, level))
                .count()
        })
        .collect();
    let graded = idx
        .iter()
        .filter(|&&i| gold.queries[i].grades().any(|g| g > 1))
        .count();
    ScopeStats {
        name,
        queries: idx.len(),
        labels_per_query: labels as f64 / n,
        relevant_per_query: rel.iter().sum::<usize>() as f64 / n,
        min_relevant: rel.iter().min().copied().unwrap_or(0),
        max_relevant: rel.iter().max().copied().unwrap_or(0),
        graded,
    }
}

/// What `gold validate` and `gold stats` add about how a gold set was built:
/// notes on unverified labels and single-labeler queries (from provenance),
/// and how its strata mix drifts from a query log's (with a log).
pub fn build_notes(gold: &GoldSet, opts: &GoldOptions) -> Result<(Vec<String>, serde_json::Value)> {
    let mut notes = Vec::new();
    // Read with the labels, in the one parse of the gold file.
    let t = provenance::trust(gold, &gold.provenance);
    if !t.unverified.is_empty() {
        let ids: Vec<String> = t.unverified.iter().map(|(q, c)| format!("{q}/{c}")).collect();
        let names: Vec<&str> = ids.iter().map(String::as_str).collect();
        notes.push(format!(
            "{} no person verified (model suggestions): {}; verify them with `rgate gold label`",
            count(t.unverified.len(), "label", "labels"),
            name_some(&names, 5)
        ));
    }
    if !t.single_labeler.is_empty() {
        let names: Vec<&str> = t.single_labeler.iter().map(String::as_str).collect();
        notes.push(format!(
            "{} judged by a single labeler: {}",
            count(t.single_labeler.len(), "query was", "queries were"),
            name_some(&names, 5)
        ));
    }
    let mut drift_json = serde_json::Value::Null;
    if let Some(log) = &opts.log {
        let (note, json) = log_drift(gold, log, opts)?;
        notes.push(note);
        drift_json = json;
    }
    let j = json!({
        "labels_with_provenance": t.recorded,
        "unverified_labels": t.unverified.len(),
        "single_labeler_queries": t.single_labeler,
        "log_drift": drift_json,
    });
    Ok((notes, j))
}

/// How the gold set's strata mix drifts from a query log's.
fn log_drift(
    gold: &GoldSet,
    log: &std::path::Path,
    opts: &GoldOptions,
) -> Result<(String, serde_json::Value)> {
    let fields = LogFields {
        text: opts.text_field.clone(),
        stratum: opts.stratum_field.clone(),
    };
    let read = sample::read_log(log, &fields)?;
    if !read.stratum.found() {
        // Every log query in `default` against a gold set with strata is a
        // distance near 1 that measures nothing but the missing field.
        let why = read.stratum.note().unwrap_or_default();
        let note = format!(
            "strata mix vs the log {} not measured: {}",
            printable(&log.display().to_string()),
            why.replace(
                "every query went to stratum `default`",
                "its queries have no stratum"
            )
        );
        let json = json!({
            "log": log.display().to_string(),
            "distance": null,
            "reason": why,
            "strata": [],
        });
        return Ok((note, json));
    }
    let queries = read.queries;
    let sizes: Vec<(String, usize)> = gold.strata.iter().cloned().zip(gold.stratum_sizes()).collect();
    let (rows, tvd) = sample::drift(&sizes, &queries);
    let worst = rows
        .iter()
        .max_by(|a, b| (a.1 - a.2).abs().total_cmp(&(b.1 - b.2).abs()));
    let note = format!(
        "strata mix vs the log {}{}: distance {:.2} (0 = same mix){}",
        printable(&log.display().to_string()),
        match &read.stratum {
            sample::StratumSource::Detected(f) if f != "stratum" =>
                format!(" (its `{}` field)", printable(f)),
            _ => String::new(),
        },
        tvd,
        worst
            .filter(|w| (w.1 - w.2).abs() >= 0.005)
            .map(|w| format!(
                "; most off: `{}` is {:.0}% of the gold set and {:.0}% of the log",
                printable(&w.0),
                100.0 * w.1,
                100.0 * w.2
            ))
            .unwrap_or_default()
    );
    let json = json!({
        "log": log.display().to_string(),
        "distance": tvd,
        "strata": rows.iter().map(|(s, g, l)| json!({"stratum": s, "gold_share": g, "log_share": l})).collect::<Vec<_>>(),
    });
    Ok((note, json))
}
