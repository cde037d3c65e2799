//! Writes that must not land on what the command reads (#25 item 9, 10):
//! `--output` onto an input or a baseline, `hook install` over an edited
//! or foreign hook, a symlinked `baselines/` directory, and the empty
//! directories a failed `init` left behind.

use std::fs;
use std::path::Path;

use crate::common::{git, rgate, run, TestProject};

/// The demo gold set and run, a config, and a recorded baseline in
/// `store/` (few resamples: these tests are about files).
fn project() -> TestProject {
    let p = TestProject::demo(&["hybrid"])
        .with_file(
            "rgate.yaml",
            "gold: demo/gold.yaml\nbaselines: store\nmetrics: [recall@10, ndcg@10]\nretrievers:\n  - name: hybrid\n    run: demo/runs/hybrid.jsonl\ngate:\n  resamples: 200\n",
        )
        .with_args(&["--config", "rgate.yaml"]);
    let o = p.run(&["baseline", "update", "--note", "first"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    p
}

/// Every file under the project, with its bytes, for "nothing written".
fn snapshot(root: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            if rel.starts_with(".git") {
                continue;
            }
            let m = fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                out.push((rel + "/", Vec::new()));
                walk(root, &p, out);
            } else {
                out.push((rel, fs::read(&p).unwrap_or_default()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

fn assert_refused(p: &TestProject, args: &[&str], says: &str) {
    let before = snapshot(p.root());
    let o = p.run(args);
    assert_eq!(o.code, 2, "{args:?}\n{}", o.stderr);
    assert!(o.stderr.contains(says), "{args:?}\n{}", o.stderr);
    assert!(o.stderr.contains("nothing written"), "{}", o.stderr);
    assert!(o.stderr.contains("\nhint: "), "{}", o.stderr);
    assert_eq!(snapshot(p.root()), before, "{args:?} wrote something");
}

#[test]
fn eval_and_compare_refuse_an_output_onto_an_input() {
    // No config: eval and compare read none.
    let p = TestProject::demo(&["hybrid"]);
    let eval = [
        "eval",
        "--gold",
        "demo/gold.yaml",
        "--run",
        "demo/runs/hybrid.jsonl",
        "-m",
        "recall@10",
    ];
    let with = |extra: &[&'static str]| {
        let mut v: Vec<&str> = eval.to_vec();
        v.extend_from_slice(extra);
        v
    };
    // Written another way than the input, still the same file.
    assert_refused(
        &p,
        &with(&["--output", "./demo/runs/../gold.yaml"]),
        "--output names the gold set of this command (demo/gold.yaml)",
    );
    assert_refused(
        &p,
        &with(&["--output", "demo/runs/hybrid.jsonl"]),
        "--output names the run of this command",
    );
    #[cfg(unix)]
    {
        fs::hard_link(p.path("demo/gold.yaml"), p.path("also-gold.yaml")).unwrap();
        assert_refused(&p, &with(&["--output", "also-gold.yaml"]), "the gold set");
    }
    assert_refused(
        &p,
        &[
            "compare",
            "--gold",
            "demo/gold.yaml",
            "-m",
            "recall@10",
            "a=demo/runs/hybrid.jsonl",
            "b=demo/runs/hybrid.jsonl",
            "--output",
            "demo/runs/hybrid.jsonl",
        ],
        "--output names a run of this command",
    );
    // Another file is written as before.
    let o = p.run(&with(&["--output", "report.txt"]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(p.read("report.txt").contains("recall@10"));
}

#[test]
fn gate_refuses_an_output_onto_its_config_gold_run_baselines_or_report_dir() {
    let p = project();
    for (out, says) in [
        (
            "store/hybrid.json",
            "--output is inside the baselines directory (store)",
        ),
        ("store/new.md", "--output is inside the baselines directory"),
        ("rgate.yaml", "--output names the config of this command"),
        ("demo/gold.yaml", "--output names the gold set"),
        ("demo/runs/hybrid.jsonl", "--output names the run of `hybrid`"),
    ] {
        assert_refused(&p, &["gate", "--output", out], says);
        assert_refused(&p, &["baseline", "update", "--note", "x", "--output", out], says);
    }
    assert_refused(
        &p,
        &["gate", "--report-dir", "out", "--output", "out/report.md"],
        "--output names a file of --report-dir",
    );
    assert_refused(
        &p,
        &["baseline", "show", "hybrid", "--output", "store/hybrid.json"],
        "baselines directory",
    );
    assert_refused(
        &p,
        &[
            "baseline", "history", "hybrid", "--plot", "h.svg", "--output", "h.svg",
        ],
        "--output names the --plot chart",
    );
    let o = p.run(&["baseline", "history", "hybrid", "--plot", "store/h.svg"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("--plot is inside the baselines directory"),
        "{}",
        o.stderr
    );
    // The baseline still loads: it was never overwritten.
    let o = p.run(&["gate", "--output", "report.txt"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
}

#[test]
fn gold_commands_refuse_an_output_onto_their_inputs() {
    let p = project();
    p.write(
        "sheet.jsonl",
        "{\"query_id\":\"q1\",\"query\":\"x\",\"stratum\":\"s\",\"chunk_id\":\"c1\",\"grade\":1,\"labeler\":\"ann\",\"source\":\"human\",\"verified\":true}\n",
    );
    assert_refused(
        &p,
        &["gold", "validate", "--output", "demo/gold.yaml"],
        "the gold set",
    );
    assert_refused(
        &p,
        &[
            "gold",
            "stats",
            "--gold",
            "demo/gold.yaml",
            "--output",
            "demo/gold.yaml",
        ],
        "the gold set",
    );
    assert_refused(
        &p,
        &[
            "gold",
            "import",
            "sheet.jsonl",
            "--into",
            "new.yaml",
            "--output",
            "sheet.jsonl",
        ],
        "the sheet",
    );
    // The gold set import would create: not there yet, still the same path.
    assert_refused(
        &p,
        &[
            "gold",
            "import",
            "sheet.jsonl",
            "--into",
            "new.yaml",
            "--output",
            "./new.yaml",
        ],
        "the gold set it merges into",
    );
    assert_refused(
        &p,
        &[
            "gold",
            "pool",
            "--queries",
            "demo/gold.yaml",
            "--run",
            "demo/runs/hybrid.jsonl",
            "--depth",
            "2",
            "--output",
            "demo/runs/hybrid.jsonl",
        ],
        "a run",
    );
}

#[test]
fn hook_install_keeps_an_edited_or_foreign_hook_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    git(tmp.path(), &["init", "-q"]);
    let hook = tmp.path().join(".git/hooks/pre-push");
    let install = |args: &[&str]| {
        run({
            let mut c = rgate();
            c.args(["hook", "install"]).args(args).current_dir(tmp.path());
            c
        })
    };
    let o = install(&[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let ours = fs::read_to_string(&hook).unwrap();

    // A local edit of rgate's own hook is kept, and said so.
    let edited = ours.replace("exec rgate gate --quiet", "make lint && exec rgate gate --quiet");
    fs::write(&hook, &edited).unwrap();
    let o = install(&[]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("was edited since `rgate hook install` wrote it; left unchanged"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("rgate hook install --force"), "{}", o.stderr);
    assert_eq!(fs::read_to_string(&hook).unwrap(), edited);

    // --force replaces it and keeps the edited one beside it.
    let o = install(&["--force"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.contains("pre-push.old"), "{}", o.stderr);
    assert_eq!(fs::read_to_string(&hook).unwrap(), ours);
    assert_eq!(
        fs::read_to_string(tmp.path().join(".git/hooks/pre-push.old")).unwrap(),
        edited
    );

    // Another tool's hook: refused without --force, replaced with it.
    fs::write(&hook, "#!/bin/sh\nmake lint\n").unwrap();
    let o = install(&[]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("did not write"), "{}", o.stderr);
    assert!(o.stderr.contains("--force"), "{}", o.stderr);
    assert_eq!(fs::read_to_string(&hook).unwrap(), "#!/bin/sh\nmake lint\n");
    let o = install(&["--force"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(fs::read_to_string(&hook).unwrap(), ours);
    assert_eq!(
        fs::read_to_string(tmp.path().join(".git/hooks/pre-push.old")).unwrap(),
        "#!/bin/sh\nmake lint\n"
    );
}

/// A `baselines:` directory that is a symbolic link: `baseline update`
/// and `gate --record` refuse it (exit 2) and write nothing where it points,
/// not even a lock file; `gate` still reads through it.
#[cfg(unix)]
#[test]
fn a_symlinked_baselines_directory_is_not_written_through() {
    let p = project();
    fs::rename(p.path("store"), p.path("elsewhere")).unwrap();
    std::os::unix::fs::symlink(p.path("elsewhere"), p.path("store")).unwrap();
    let before = snapshot(&p.path("elsewhere"));
    for args in [
        &["baseline", "update", "--note", "again"][..],
        &["gate", "--record"][..],
    ] {
        let o = p.run(args);
        assert_eq!(o.code, 2, "{args:?}: {}", o.stderr);
        assert!(
            o.stderr
                .contains("store: the baselines directory is a symbolic link"),
            "{}",
            o.stderr
        );
        assert!(
            o.stderr.contains("\nhint: make it a real directory"),
            "{}",
            o.stderr
        );
        assert_eq!(
            snapshot(&p.path("elsewhere")),
            before,
            "{args:?} wrote through the link"
        );
    }
    let o = p.run(&["gate"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
}

/// `init` that fails on its last file (`.github` is a file here) takes
/// back the files and the directories it made: the repository is as it was.
#[test]
fn a_failed_init_leaves_nothing_it_made() {
    let p = TestProject::new()
        .git_init()
        .with_file(".github", "not a directory\n");
    let before = snapshot(p.root());
    let o = p.bare(&["init"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains(".github/workflows: cannot create directory"),
        "{}",
        o.stderr
    );
    assert_eq!(snapshot(p.root()), before);
    // A directory that was there before stays.
    fs::remove_file(p.path(".github")).unwrap();
    fs::create_dir_all(p.path("eval/old")).unwrap();
    fs::write(p.path(".github"), "still a file\n").unwrap();
    let before = snapshot(p.root());
    let o = p.bare(&["init"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert_eq!(snapshot(p.root()), before);
}

/// Commands that print no report refuse --output instead of dropping it
/// silently (a user expecting a file there would find none).
#[test]
fn commands_without_a_report_refuse_output() {
    let p = TestProject::new().with_file(
        "sheet.jsonl",
        "{\"query_id\":\"q1\",\"query\":\"x\",\"stratum\":\"s\",\"chunk_id\":\"a\",\"grade\":null}\n",
    );
    for args in [
        vec!["gold", "label", "sheet.jsonl", "--output", "out.txt"],
        vec![
            "gold",
            "suggest",
            "sheet.jsonl",
            "--output",
            "out.txt",
            "--command",
            "true",
        ],
        vec!["init", "--output", "out.txt"],
        vec!["hook", "install", "--output", "out.txt"],
    ] {
        let o = p.run(&args);
        assert_eq!(o.code, 2, "{args:?}: {}", o.stderr);
        assert!(
            o.stderr
                .contains("prints no report, so --output out.txt would be ignored"),
            "{args:?}: {}",
            o.stderr
        );
        assert!(!p.path("out.txt").exists());
        assert!(!p.path("config").exists(), "{args:?} wrote the config");
    }
}
