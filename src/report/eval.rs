//! `rgate eval` output in every format.
//!
//! JSON shape (stable): `{"schema_version", "gold", "run", "relevance_level",
//! "queries", "strata": {name: n}, "metrics": {metric: {"all": mean,
//! <stratum>: mean, ..., "macro": mean}}, "missing_queries": [ids],
//! "warnings": [..]}`, plus with `--per-query` a `"per_query"` list of
//! `{"query_id", "stratum", <metric>: value, ...}` in gold order.
//!
//! With `--candidates`: `"candidates"` (the file), `"stages": {"cutoff",
//! "lost": {scope: {"reached", "dropped_by_rerank", "missed_by_retrieval"}},
//! "ceiling": {metric: {scope: value}}}` exactly as SPEC "Two stages"
//! defines it (scopes `all` and each stratum; `cutoff` null for the whole
//! run), `"absent_from_candidates": {query_id: [ids]}` (final results the
//! candidates lack), and per query a `"stage"` (its fate at the cutoff).

use serde_json::{json, Map, Value};

use super::table::{f4, Table};
use crate::diag::{count, Warnings};
use crate::escape;
use crate::eval::{Row, Scores, Summary};
use crate::prepared::Prepared;
use crate::report::Format;
use crate::run::JudgedRun;
use crate::stages::{self, Stages};

/// The candidate list beside the final run, and what the two stages say.
pub struct StageView<'a> {
    pub run: &'a JudgedRun,
    pub stages: &'a Stages,
    /// Warnings about the two stages together (chunks the reranker added).
    pub warnings: &'a Warnings,
}

pub struct EvalView<'a> {
    pub prep: &'a Prepared,
    pub run: &'a JudgedRun,
    pub candidates: Option<StageView<'a>>,
    pub scores: &'a Scores,
    pub summary: &'a Summary,
    pub per_query: bool,
    pub by_stratum: bool,
    /// `--format trec` in trec_eval's measure names, order and layout
    /// (the command has checked that every metric has a trec_eval name).
    pub trec_names: bool,
}

impl EvalView<'_> {
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Json => {
                escape::json(serde_json::to_string_pretty(&self.json()).unwrap_or_default() + "\n")
            }
            Format::Trec => self.trec(),
            Format::Csv => self.csv(),
            Format::Markdown => self.markdown(),
            Format::Table | Format::Junit => self.text(),
        }
    }

    fn metric_names(&self) -> Vec<String> {
        self.scores.metrics.iter().map(|m| m.name()).collect()
    }

    fn rows(&self) -> Vec<&Row> {
        let mut rows = vec![&self.summary.all];
        if self.by_stratum {
            rows.extend(self.summary.strata.iter());
            rows.push(&self.summary.macro_mean);
        }
        rows
    }

    fn means_table(&self) -> Table {
        let mut headers = vec!["scope".to_string(), "n".to_string()];
        headers.extend(self.metric_names());
        let mut t = Table::new(headers, 1);
        for r in self.rows() {
            let mut cells = vec![r.scope.clone(), r.n.to_string()];
            cells.extend(r.means.iter().map(|v| f4(*v)));
            t.push(cells);
        }
        t
    }

    fn query_table(&self) -> Table {
        let mut headers = vec!["query".to_string(), "stratum".to_string()];
        headers.extend(self.metric_names());
        let mut t = Table::new(headers, 2);
        for (i, q) in self.prep.gold.queries.iter().enumerate() {
            let mut cells = vec![q.id.clone(), self.prep.gold.stratum_name(i).to_string()];
            cells.extend(self.scores.values.iter().map(|v| f4(v[i])));
            t.push(cells);
        }
        t
    }

    /// Queries by stage at the cutoff, overall and per stratum.
    fn lost_table(&self, sv: &StageView) -> Table {
        let headers = [
            "scope",
            "n",
            "reached",
            "dropped_by_rerank",
            "missed_by_retrieval",
        ];
        let mut t = Table::new(headers.iter().map(|h| h.to_string()).collect(), 1);
        for (scope, l) in &sv.stages.lost {
            let n = l.reached + l.dropped_by_rerank + l.missed_by_retrieval;
            t.push(vec![
                scope.clone(),
                n.to_string(),
                l.reached.to_string(),
                l.dropped_by_rerank.to_string(),
                l.missed_by_retrieval.to_string(),
            ]);
        }
        t
    }

    /// Each final metric beside its ceiling and their ratio, per scope
    /// shown in the means table.
    fn ceiling_table(&self, sv: &StageView) -> Table {
        let headers = ["metric", "scope", "final", "ceiling", "final/ceiling"];
        let mut t = Table::new(headers.iter().map(|h| h.to_string()).collect(), 2);
        let ceil = &sv.stages.ceiling;
        let ceil_rows: Vec<&Row> = std::iter::once(&sv.stages.ceiling_summary.all)
            .chain(if self.by_stratum {
                sv.stages.ceiling_summary.strata.iter().collect::<Vec<_>>()
            } else {
                Vec::new()
            })
            .collect();
        for (cm, metric) in ceil.metrics.iter().enumerate() {
            let Some(m) = self.scores.metrics.iter().position(|x| x == metric) else {
                continue;
            };
            for (row, crow) in self.rows().iter().zip(&ceil_rows) {
                let (fin, c) = (row.means[m], crow.means[cm]);
                t.push(vec![
                    metric.name(),
                    row.scope.clone(),
                    f4(fin),
                    f4(c),
                    stages::ratio(fin, c).map_or_else(|| "-".to_string(), f4),
                ]);
            }
        }
        t
    }

    fn stage_title(&self, sv: &StageView) -> String {
        format!(
            "two stages · candidates {} · cutoff {}",
            sv.run.path.display(),
            sv.stages
                .cutoff
                .map_or_else(|| "none (whole run)".to_string(), |k| k.to_string())
        )
    }

    fn title(&self) -> String {
        let g = &self.prep.gold;
        format!(
            "gold {} ({}, {}) · run {}",
            g.path.display(),
            count(g.len(), "query", "queries"),
            count(g.strata.len(), "stratum", "strata"),
            self.run.path.display()
        )
    }

    fn text(&self) -> String {
        let mut out = escape::terminal(&self.title()).into_owned() + "\n\n";
        if self.per_query {
            out += &self.query_table().text();
            out.push('\n');
        }
        out += &self.means_table().text();
        if let Some(sv) = &self.candidates {
            out += &format!("\n{}\n\n", escape::terminal(&self.stage_title(sv)));
            out += &self.lost_table(sv).text();
            out.push('\n');
            out += &self.ceiling_table(sv).text();
        }
        out
    }

    fn markdown(&self) -> String {
        let mut out = format!("**rgate eval** · {}\n\n", escape::markdown(&self.title()));
        out += &self.means_table().markdown();
        if let Some(sv) = &self.candidates {
            out += &format!("\n**{}**\n\n", escape::markdown(&self.stage_title(sv)));
            out += &self.lost_table(sv).markdown();
            out.push('\n');
            out += &self.ceiling_table(sv).markdown();
        }
        if self.per_query {
            out.push('\n');
            out += &self.query_table().markdown();
        }
        out
    }

    /// One table: per-query rows when asked for, else the means.
    fn csv(&self) -> String {
        if self.per_query {
            self.query_table().csv()
        } else {
            self.means_table().csv()
        }
    }

    /// trec_eval's `-q` layout: each query's lines, then `all`. In
    /// trec_eval's names, also its order of measures (cutoffs ascending, as
    /// in its default output) and its `%-22s` name column, so the lines equal what `trec_eval -q -c -m ...` prints.
    /// trec_eval's `runid` and `num_q` lines are left out, as trec_eval
    /// leaves them out when measures are named with `-m`.
    fn trec(&self) -> String {
        let metrics = &self.scores.metrics;
        let mut order: Vec<usize> = (0..metrics.len()).collect();
        let names: Vec<String> = if self.trec_names {
            order.sort_by_key(|&m| (metrics[m].trec_eval_order(), metrics[m].cutoff));
            metrics
                .iter()
                .map(|m| m.trec_eval_name().unwrap_or_else(|| m.name()))
                .map(|n| format!("{n:<22}"))
                .collect()
        } else {
            self.metric_names()
        };
        let mut out = String::new();
        if self.per_query {
            for (i, q) in self.prep.gold.queries.iter().enumerate() {
                let id = escape::terminal(&q.id);
                for &m in &order {
                    out.push_str(&format!("{}\t{id}\t{}\n", names[m], f4(self.scores.values[m][i])));
                }
            }
        }
        for &m in &order {
            out.push_str(&format!("{}\tall\t{}\n", names[m], f4(self.summary.all.means[m])));
        }
        out
    }

    fn json(&self) -> Value {
        let g = &self.prep.gold;
        let names = self.metric_names();
        let mut metrics = Map::new();
        for (m, name) in names.iter().enumerate() {
            let mut o = Map::new();
            o.insert("all".into(), json!(self.summary.all.means[m]));
            for s in &self.summary.strata {
                o.insert(s.scope.clone(), json!(s.means[m]));
            }
            o.insert("macro".into(), json!(self.summary.macro_mean.means[m]));
            metrics.insert(name.clone(), Value::Object(o));
        }
        let strata: Map<String, Value> = self
            .summary
            .strata
            .iter()
            .map(|s| (s.scope.clone(), json!(s.n)))
            .collect();
        let mut root = Map::new();
        root.insert("schema_version".into(), json!(1));
        root.insert("gold".into(), json!(g.path.display().to_string()));
        root.insert("gold_fingerprint".into(), json!(self.prep.fingerprint()));
        root.insert("run".into(), json!(self.run.path.display().to_string()));
        root.insert("run_format".into(), json!(self.run.format.to_string()));
        root.insert("relevance_level".into(), json!(self.prep.relevance_level));
        root.insert("queries".into(), json!(g.len()));
        root.insert("strata".into(), Value::Object(strata));
        root.insert("metrics".into(), Value::Object(metrics));
        let missing: Vec<&str> = self.run.missing().map(|i| g.queries[i].id.as_str()).collect();
        root.insert("missing_queries".into(), json!(missing));
        if let Some(sv) = &self.candidates {
            root.insert("candidates".into(), json!(sv.run.path.display().to_string()));
            root.insert("stages".into(), stages_json(sv.stages));
            let absent: Map<String, Value> = sv
                .stages
                .absent
                .iter()
                .map(|(q, ids)| (g.queries[*q].id.clone(), json!(ids)))
                .collect();
            root.insert("absent_from_candidates".into(), Value::Object(absent));
        }
        if self.per_query {
            let rows: Vec<Value> = g
                .queries
                .iter()
                .enumerate()
                .map(|(i, q)| {
                    let mut o = Map::new();
                    o.insert("query_id".into(), json!(q.id));
                    o.insert("stratum".into(), json!(g.stratum_name(i)));
                    for (m, name) in names.iter().enumerate() {
                        o.insert(name.clone(), json!(self.scores.values[m][i]));
                    }
                    if let Some(sv) = &self.candidates {
                        o.insert("stage".into(), json!(sv.stages.fates[i].name()));
                    }
                    Value::Object(o)
                })
                .collect();
            root.insert("per_query".into(), Value::Array(rows));
        }
        let stage_warnings = self
            .candidates
            .iter()
            .flat_map(|sv| sv.run.warnings.iter().chain(sv.warnings.iter()));
        let warnings: Vec<&String> = self
            .prep
            .warnings
            .iter()
            .chain(self.run.warnings.iter())
            .chain(stage_warnings)
            .collect();
        root.insert("warnings".into(), json!(warnings));
        Value::Object(root)
    }
}

/// SPEC's `stages` object: `{cutoff, lost: {scope: {...}}, ceiling:
/// {metric: {scope: value}}}`, scopes `all` then each stratum.
pub fn stages_json(s: &Stages) -> Value {
    let lost: Map<String, Value> = s
        .lost
        .iter()
        .map(|(scope, l)| {
            (
                scope.clone(),
                json!({
                    "reached": l.reached,
                    "dropped_by_rerank": l.dropped_by_rerank,
                    "missed_by_retrieval": l.missed_by_retrieval,
                }),
            )
        })
        .collect();
    let sum = &s.ceiling_summary;
    let ceiling: Map<String, Value> = s
        .ceiling
        .metrics
        .iter()
        .enumerate()
        .map(|(m, metric)| {
            let scopes: Map<String, Value> = std::iter::once(&sum.all)
                .chain(sum.strata.iter())
                .map(|r| (r.scope.clone(), json!(r.means[m])))
                .collect();
            (metric.name(), Value::Object(scopes))
        })
        .collect();
    json!({"cutoff": s.cutoff, "lost": lost, "ceiling": ceiling})
}
