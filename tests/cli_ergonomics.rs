//! Everyday ergonomics (issue 13): formats each command refuses, named
//! compare runs, trec_eval measure names, plurals, messages for unknown
//! metrics, table alignment with wide characters, the history plot.

mod common;

use std::fs;
use std::path::PathBuf;

use common::{run, Out};
use serde_json::Value;

fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
}

const CONFIG: &str = "gold: demo/gold.yaml
baselines: demo/baselines
metrics: [recall@10, hit_rate@3, mrr@10, ndcg@10]
retrievers:
  - name: hybrid
    run: demo/runs/hybrid.jsonl
gate:
  rules:
    - metric: recall@10
      max_drop: 0.02
      strata: all
";

/// A scratch project: the demo gold set and runs, a config, no baselines.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let demo = dir.path().join("demo");
        fs::create_dir_all(demo.join("runs")).unwrap();
        fs::copy(repo("config/demo/gold.yaml"), demo.join("gold.yaml")).unwrap();
        for r in ["bm25", "hybrid", "hybrid-regressed"] {
            fs::copy(
                repo(&format!("config/demo/runs/{r}.jsonl")),
                demo.join(format!("runs/{r}.jsonl")),
            )
            .unwrap();
        }
        fs::write(dir.path().join("rgate.yaml"), CONFIG).unwrap();
        Project { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// rgate in the project directory, with its config.
    fn rgate(&self, args: &[&str]) -> Out {
        let mut c = common::rgate();
        c.current_dir(self.dir.path())
            .env("SOURCE_DATE_EPOCH", "1795996800")
            .arg("--config")
            .arg(self.path("rgate.yaml"))
            .args(args);
        run(c)
    }
}

#[test]
fn history_records_the_run_file_gated() {
    let p = Project::new();
    assert_eq!(p.rgate(&["baseline", "update", "hybrid"]).code, 0);
    let o = p.rgate(&[
        "gate",
        "hybrid",
        "--record",
        "--run",
        "hybrid=demo/runs/hybrid-regressed.jsonl",
    ]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let text = fs::read_to_string(p.path("demo/baselines/hybrid.history.jsonl")).unwrap();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0]["run"]
            .as_str()
            .unwrap()
            .ends_with("demo/runs/hybrid.jsonl"),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1]["run"], "demo/runs/hybrid-regressed.jsonl");
}
