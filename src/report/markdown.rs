//! `--format markdown`: GitHub-flavoured Markdown for a pull request
//! comment or a job summary, every value from a user's file passed through
//! [`crate::escape::markdown`].

use anyhow::Result;

use super::baseline::{HistoryView, ShowView};
use super::compare::CompareView;
use super::eval::EvalView;
use super::gate::{flips, skewed, FlipSyntax, GateView, SKEW_HEADING};
use super::{Exporter, Report};
use crate::escape::{markdown as md, markdown_code};
use crate::gate::{Flip, Verdict};

pub struct Markdown;

impl Exporter for Markdown {
    fn name(&self) -> &'static str {
        "markdown"
    }

    fn reports(&self) -> &'static [Report] {
        Report::ALL
    }

    fn gate(&self, v: &GateView) -> Result<String> {
        let o = v.outcome;
        let icon = match o.verdict() {
            Verdict::Pass => "✅",
            Verdict::Fail => "❌",
        };
        let mut out = format!(
            "## {icon} {}\n\n",
            v.headline()
                .replace("PASS", "**PASS**")
                .replace("FAIL", "**FAIL**")
        );
        for r in &o.retrievers {
            out += &format!(
                "- **{}**: {} — {}\n",
                md(&r.name),
                r.verdict().name(),
                md(&v.summary(r))
            );
        }
        out += &format!("\n<sub>{}</sub>\n", v.settings_line());
        for w in &o.warnings {
            out += &format!("\n> **Warning**: {}\n", md(w));
        }
        for r in &o.retrievers {
            // A passing retriever folds away: the reviewer's eye goes to
            // what failed.
            let folded = r.verdict() == Verdict::Pass;
            if folded {
                out += &format!("\n<details><summary><b>{}</b> — pass</summary>\n", md(&r.name));
            }
            out += &format!(
                "\n### {} — {}\n\n{} · {}\n\n",
                md(&r.name),
                r.verdict().name(),
                markdown_code(&r.run),
                md(&GateView::baseline_desc(r))
            );
            if !r.checks.is_empty() {
                out += &v.check_table(r).markdown();
                out.push('\n');
            }
            if let Some(t) = v.ppi_table(r) {
                out += &format!(
                    "<details><summary>Prediction-powered estimates beside people's labels alone</summary>\n\n{}\n</details>\n\n",
                    t.markdown()
                );
            }
            if let Some(imp) = v.improvements(r) {
                out += &format!("{}\n\n", md(&imp));
            }
            let skewed = skewed(r);
            if !skewed.is_empty() {
                out += &format!("**{SKEW_HEADING}:**\n\n");
                for s in &skewed {
                    out += &format!("- {}\n", md(s));
                }
                out.push('\n');
            }
            if let Some(st) = &r.stages {
                out += &format!("**{}**\n\n", md(&GateView::stage_title(st)));
                out += &GateView::lost_table(st).markdown();
                out.push('\n');
                out += &GateView::ceiling_table(st, false).markdown();
                out.push('\n');
            }
            out += &flips(r, &Lists);
            if !r.warnings.is_empty() {
                out += "\n**Warnings**\n\n";
                for w in &r.warnings {
                    out += &format!("- {}\n", md(w));
                }
            }
            if folded {
                out += "\n</details>\n";
            }
        }
        Ok(out)
    }

    fn compare(&self, v: &CompareView) -> Result<String> {
        let mut out = format!("**{}**\n\n<sub>{}</sub>\n\n", md(&v.title()), v.settings_line());
        out += &v.means_table().markdown();
        out += &format!("\n{}\n", md(&v.statement()));
        if v.family.ranking.len() > 1 {
            out += &format!("\n**ranking by {}**\n\n", md(&v.family.metric.name()));
            out += &v.ranking_table().markdown();
        }
        for k in 0..v.comparisons.len() {
            out += &format!("\n**{} vs {}**\n\n", md(&v.runs[k + 1].name), md(&v.runs[0].name));
            out += &v.rows_table(k).markdown();
            let skewed = v.skewed(k);
            if !skewed.is_empty() {
                out += &format!("\n**{SKEW_HEADING}:**\n\n");
                for s in &skewed {
                    out += &format!("- {}\n", md(s));
                }
            }
        }
        Ok(out)
    }

    fn eval(&self, v: &EvalView) -> Result<String> {
        let mut out = format!("**rgate eval** · {}\n\n", md(&v.title()));
        out += &v.means_table().markdown();
        if let Some(note) = v.interval_note() {
            out += &format!("\n<sub>{}</sub>\n", md(&note));
        }
        if let Some(t) = v.ppi_table() {
            out += &format!("\n{}", t.markdown());
        }
        if let Some(sv) = &v.candidates {
            out += &format!("\n**{}**\n\n", md(&v.stage_title(sv)));
            out += &v.lost_table(sv).markdown();
            out.push('\n');
            out += &v.ceiling_table(sv).markdown();
        }
        for c in v.curves {
            out += &format!("\n**{}**\n\n", md(&v.curve_title(c)));
            out += &v.curve_table(c).markdown();
            let lines = v.target_lines(c);
            if let Some((head, rest)) = lines.split_first() {
                out += &format!("\n{}\n\n", md(head));
                for line in rest {
                    out += &format!("- {}\n", md(line));
                }
            }
        }
        if v.per_query {
            out.push('\n');
            out += &v.query_table().markdown();
        }
        Ok(out)
    }

    fn baseline_show(&self, v: &ShowView) -> Result<String> {
        Ok(format!(
            "**baseline {}**\n\n{}",
            markdown_code(&v.baseline.retriever),
            v.table().markdown()
        ))
    }

    fn baseline_history(&self, v: &HistoryView) -> Result<String> {
        Ok(v.table().markdown())
    }
}

/// Flips as nested lists.
struct Lists;

impl FlipSyntax for Lists {
    fn heading(&self, n: usize) -> String {
        format!("**Queries that went from hit to miss ({n}):**\n")
    }

    fn group(&self, title: &str, n: usize) -> String {
        format!("- *{title}* ({n})\n")
    }

    fn stratum(&self, pad: &str, stratum: &str) -> String {
        format!("{pad}- {}\n", md(stratum))
    }

    fn flip(&self, pad: &str, f: &Flip) -> String {
        let text = f
            .text
            .as_deref()
            .map(|t| format!(" \"{}\"", md(t)))
            .unwrap_or_default();
        format!(
            "{pad}  - {}{text}: lost {}\n",
            markdown_code(&f.query_id),
            f.lost.join(", ")
        )
    }
}
