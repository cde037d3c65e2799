//! `rgate init`: a commented config, a gold-set template and a pull-request
//! workflow, written into the repository so a team starts from something
//! that runs. It never overwrites: when the config or the workflow exists,
//! nothing is written; a gold set already at `eval/gold.yaml` is kept (the
//! config is written beside it, its tolerances sized to its queries); when
//! a write fails partway, the files and directories this run made are
//! removed again.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::cli::Global;
use crate::diag::{input_error, input_error_hint};

const CONFIG: &str = include_str!("../templates/rgate.yaml");
const GOLD: &str = include_str!("../templates/gold.yaml");
const WORKFLOW: &str = include_str!("../templates/workflow.yml");

/// Where `init` writes the gold-set template, and looks for a gold set.
pub const GOLD_PATH: &str = "eval/gold.yaml";

/// The gold set size the template's tolerances are written for when
/// `init` finds none (its own template holds three example queries).
pub const TEMPLATE_QUERIES: usize = 100;

/// The recall@10 tolerance is `RECALL_SCALE / sqrt(n)` for a gold set of n
/// queries (rounded up to 0.01): 0.10 at 100 queries, 0.15 at 50. Under
/// `decision: confident-drop` a true drop inside the tolerance fails at
/// most alpha of the time whatever the size; what the size sets is the
/// catch rate: with Holm over the two rules a true drop of 2.5 times the
/// tolerance is caught about when
/// `1.5 * tol >= (z(1 - alpha/2) + z(0.8)) * se`, and the standard error of a mean recall@10 delta is `sd /
/// sqrt(n)` with sd about 0.45 in the hardest world measured, so `tol >=
/// 0.84 / sqrt(n)`; 1.0 leaves room for noisier runs. Measured through the
/// binary (`scripts/calibrate_binary.py --only q`; README "Put rgate in
/// front of your own retriever" has the rates).
pub const RECALL_SCALE: f64 = 1.0;

/// The nDCG@10 tolerance, in percent of the baseline mean, per unit of the
/// recall@10 one: 10% beside 0.07 (the ratio of the rules init wrote
/// before), 15% beside 0.10.
pub const NDCG_PCT_PER_RECALL: f64 = 10.0 / 0.07;

/// Below this many queries a gold set is sized as if it had this many:
/// the tolerances would pass for almost any drop anyway.
pub const MIN_SIZED_QUERIES: usize = 20;

/// The template's recall@10 and nDCG@10 rule lines, as written for
/// [`TEMPLATE_QUERIES`]; `init` rewrites their values for the gold set it
/// finds.
const RECALL_LINE: &str = "      max_drop: 0.10         # absolute, in metric units";
const NDCG_LINE: &str = "      max_drop_pct: 15       # relative to the baseline mean";
const SIZE_MARK: &str = "{{GOLD_SIZE}}";

/// Rounds up, ignoring the last bits of floating-point error (0.7 / 10 is
/// 0.06999999999999999, 0.7 / 20 * 10 / 0.07 is 5.000000000000001).
fn ceil(x: f64) -> f64 {
    (x - 1e-9).ceil()
}

/// The recall@10 tolerance (`max_drop`) `init` writes for `n` queries.
pub fn recall_tolerance(n: usize) -> f64 {
    let n = n.max(MIN_SIZED_QUERIES) as f64;
    (ceil(RECALL_SCALE / n.sqrt() * 100.0) / 100.0).clamp(0.01, 0.5)
}

/// The nDCG@10 tolerance (`max_drop_pct`) `init` writes for `n` queries.
pub fn ndcg_tolerance_pct(n: usize) -> u32 {
    ceil(RECALL_SCALE / (n.max(MIN_SIZED_QUERIES) as f64).sqrt() * NDCG_PCT_PER_RECALL).clamp(1.0, 50.0)
        as u32
}

/// The config `init` writes: the template with its tolerances sized to a
/// gold set of `gold_queries` (`None`: none found, sized for
/// [`TEMPLATE_QUERIES`]).
pub fn config_text(gold_queries: Option<usize>) -> String {
    let n = gold_queries.unwrap_or(TEMPLATE_QUERIES);
    let size = match gold_queries {
        Some(n) => format!("the {n} queries of eval/gold.yaml"),
        None => format!("about {TEMPLATE_QUERIES} queries (none found)"),
    };
    CONFIG
        .replace(SIZE_MARK, &size)
        .replace(
            RECALL_LINE,
            &RECALL_LINE.replace("0.10", &format!("{:<4}", recall_tolerance(n))),
        )
        .replace(
            NDCG_LINE,
            &NDCG_LINE.replace("15 ", &format!("{:<3}", ndcg_tolerance_pct(n))),
        )
}

/// What `init` writes, relative to the repository root (the config sized
/// for a gold set of `gold_queries`).
pub fn files(gold_queries: Option<usize>) -> [(&'static str, String); 3] {
    [
        (crate::config::DEFAULT_CONFIG, config_text(gold_queries)),
        (GOLD_PATH, GOLD.to_string()),
        (
            ".github/workflows/rgate.yml",
            WORKFLOW.replace("{{VERSION}}", env!("CARGO_PKG_VERSION")),
        ),
    ]
}

/// The top of the git work tree around the working directory, else the
/// working directory itself: the workflow must sit at the repository root.
pub fn repo_root() -> Result<PathBuf> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--show-toplevel"])
        .stderr(std::process::Stdio::null())
        .output();
    if let Ok(o) = out {
        if o.status.success() {
            let top = String::from_utf8_lossy(&o.stdout).trim().to_string();
            if !top.is_empty() {
                return Ok(PathBuf::from(top));
            }
        }
    }
    std::env::current_dir().map_err(|e| {
        input_error(
            Path::new("."),
            None,
            format!("cannot read the working directory: {e}"),
        )
    })
}

pub fn run(global: &Global) -> Result<u8> {
    let root = repo_root()?;
    // A gold set built first (`gold sample`, `gold import`) is kept: the
    // config goes beside it, sized to it. It must read as a gold set: a
    // config naming a file the gate cannot load helps no one.
    let gold_path = root.join(GOLD_PATH);
    let kept = if gold_path.exists() {
        let (gold, _) = crate::gold::GoldSet::load(&gold_path, None)?;
        Some(gold.len())
    } else {
        None
    };
    let files = files(kept);
    let existing: Vec<String> = files
        .iter()
        .filter(|(rel, _)| !(kept.is_some() && *rel == GOLD_PATH))
        .map(|(rel, _)| root.join(rel))
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if !existing.is_empty() {
        return Err(input_error_hint(
            &root,
            None,
            format!("not written, these exist already: {}", existing.join(", ")),
            "rgate init never overwrites; move them aside to start afresh, or edit them",
        ));
    }
    let mut written: Vec<PathBuf> = Vec::new();
    let mut made: Vec<PathBuf> = Vec::new();
    for (rel, text) in &files {
        if kept.is_some() && *rel == GOLD_PATH {
            continue;
        }
        let path = root.join(rel);
        if let Err(e) = create_new(&path, text.as_bytes(), &mut made) {
            // All or nothing: take back what this run wrote, files first,
            // then the directories it made, deepest first (each only if
            // empty: someone may have put a file there meanwhile).
            for p in &written {
                let _ = std::fs::remove_file(p);
            }
            for d in made.iter().rev() {
                let _ = std::fs::remove_dir(d);
            }
            return Err(e);
        }
        written.push(path);
    }
    if !global.quiet {
        for p in &written {
            eprintln!("wrote {}", p.display());
        }
        if let Some(n) = kept {
            eprintln!(
                "kept {} ({} queries; not overwritten): the config's tolerances are sized to it (recall@10 max_drop {}, nDCG@10 max_drop_pct {})",
                gold_path.display(),
                n,
                recall_tolerance(n),
                ndcg_tolerance_pct(n)
            );
        }
        eprintln!(
            "next: put real queries in eval/gold.yaml (`rgate gold validate` checks it), make your retriever write \
eval/runs/search.jsonl, then `rgate baseline update --note \"first baseline\"` and commit"
        );
    }
    Ok(0)
}

/// Writes a file that must not exist yet (no race with another writer),
/// making its directories as needed; the ones it made are added to `made`,
/// outermost first, so a failed `init` can take them back.
fn create_new(path: &Path, bytes: &[u8], made: &mut Vec<PathBuf>) -> Result<()> {
    if let Some(dir) = path.parent() {
        let mut missing: Vec<&Path> = dir
            .ancestors()
            .take_while(|d| !d.as_os_str().is_empty() && std::fs::symlink_metadata(d).is_err())
            .collect();
        missing.reverse();
        for d in missing {
            match std::fs::create_dir(d) {
                Ok(()) => made.push(d.to_path_buf()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(input_error(d, None, format!("cannot create directory: {e}"))),
            }
        }
    }
    let r = (|| -> std::io::Result<()> {
        let mut f = OpenOptions::new().write(true).create_new(true).open(path)?;
        f.write_all(bytes)?;
        f.sync_all()
    })();
    r.map_err(|e| input_error(path, None, format!("cannot write: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The template holds the lines `init` rewrites, and every size gives a
    /// config with no placeholder left and the values asked for.
    #[test]
    fn the_template_is_sized() {
        assert!(CONFIG.contains(RECALL_LINE) && CONFIG.contains(NDCG_LINE) && CONFIG.contains(SIZE_MARK));
        for n in [
            None,
            Some(3),
            Some(50),
            Some(90),
            Some(100),
            Some(1000),
            Some(100_000),
        ] {
            let text = config_text(n);
            assert!(!text.contains("{{"), "{n:?}");
            let q = n.unwrap_or(TEMPLATE_QUERIES);
            let recall = format!("max_drop: {:<4}", recall_tolerance(q));
            let ndcg = format!("max_drop_pct: {:<3}", ndcg_tolerance_pct(q));
            assert!(text.contains(&recall), "{n:?}: {recall}\n{text}");
            assert!(text.contains(&ndcg), "{n:?}: {ndcg}\n{text}");
        }
    }

    /// Property: the tolerances never grow with the gold set, stay within
    /// their bounds, and never round below the formula (the catch rate
    /// sized for it holds for the value written).
    #[test]
    fn tolerances_shrink_with_the_gold_set() {
        let mut last = (f64::INFINITY, u32::MAX);
        for n in 1..=20_000usize {
            let (r, p) = (recall_tolerance(n), ndcg_tolerance_pct(n));
            assert!(r <= last.0 && p <= last.1, "n = {n}");
            assert!((0.01..=0.5).contains(&r) && (1..=50).contains(&p), "n = {n}");
            let exact = RECALL_SCALE / (n.max(MIN_SIZED_QUERIES) as f64).sqrt();
            assert!(r >= exact.min(0.5) - 1e-9 || r == 0.5, "n = {n}: {r} < {exact}");
            assert!(
                r < exact.max(0.01) + 0.01 + 1e-9,
                "n = {n}: {r} rounds up by more than 0.01"
            );
            last = (r, p);
        }
        // Hand values: 1 / sqrt(100) = 0.1 and 0.1 * 10 / 0.07 = 14.3 -> 15;
        // 1 / sqrt(50) = 0.1414 -> 0.15; below 20 queries as 20: 0.2236 -> 0.23.
        assert_eq!(recall_tolerance(100), 0.10);
        assert_eq!(ndcg_tolerance_pct(100), 15);
        assert_eq!(recall_tolerance(50), 0.15);
        assert_eq!(recall_tolerance(5), 0.23);
    }
}
