//! The baseline store under real processes (issue 10 items 3 and 4, issue
//! 18 "data safety"): a lock held by another process makes `baseline
//! update` wait and then proceed; updates killed with SIGKILL at any point
//! never block the next one nor leave a baseline without its history line;
//! concurrent updates queue and all succeed. Kept to a few seconds.

#![cfg(unix)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rgate::baseline::{Lock, Store};

use crate::common::TestProject;

/// The demo's gold set and runs with a cheap gate (few resamples: these
/// tests are about files, not statistics) and a short lock timeout.
fn project() -> TestProject {
    TestProject::demo(&["hybrid", "hybrid-regressed"])
        .with_file(
            "rgate.yaml",
            "gold: demo/gold.yaml\nbaselines: store\nmetrics: [recall@10, ndcg@10]\nretrievers:\n  - name: hybrid\n    run: demo/runs/hybrid.jsonl\ngate:\n  resamples: 200\n  lock_timeout_s: 20\n",
        )
        .with_args(&["--config", "rgate.yaml"])
        .with_env("GITHUB_SHA", "0123456789abcdef")
}

fn update(p: &TestProject, note: &str, run: &str) -> Command {
    let mut c = p.command();
    c.args(["baseline", "update", "hybrid"])
        .args(["--run", &format!("hybrid=demo/runs/{run}.jsonl")])
        .args(["--allow-regression", "--note", note])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

fn finish(child: Child) -> (i32, String) {
    let o = child.wait_with_output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The note of the stored baseline, and the notes of the history's
/// baseline-update lines, read as a user would (not through rgate).
fn notes(dir: &Path) -> (Option<String>, Vec<String>) {
    let store = dir.join("store");
    let baseline = fs::read_to_string(store.join("hybrid.json"))
        .ok()
        .map(|t| serde_json::from_str::<serde_json::Value>(&t).unwrap())
        .map(|v| v["note"].as_str().unwrap().to_string());
    let history = fs::read_to_string(store.join("hybrid.history.jsonl")).unwrap_or_default();
    let lines = history
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["kind"].as_str().unwrap().starts_with("baseline-update"))
        .map(|v| v["note"].as_str().unwrap().to_string())
        .collect();
    (baseline, lines)
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir.join("store"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

const HOLDER: &str = "RGATE_TEST_LOCK_HOLDER_DIR";

/// The lock is seen from another process: while a second process holds
/// it, `baseline update` says it waits and writes nothing; when that
/// process is killed, the kernel releases the lock and the update
/// proceeds. (This test runs itself again as the holder.)
#[test]
fn update_waits_for_a_lock_held_by_another_process() {
    if let Ok(store) = std::env::var(HOLDER) {
        let store = PathBuf::from(store);
        let _lock = Lock::acquire(&store, "hybrid", Duration::ZERO, &mut |_: &str| {}).unwrap();
        fs::write(store.join("holder-ready"), "").unwrap();
        std::thread::sleep(Duration::from_secs(60));
        return;
    }
    let p = project();
    let store = p.root().join("store");
    fs::create_dir_all(&store).unwrap();
    // This test's name in the test binary: its path without the crate's.
    let me = concat!(
        module_path!(),
        "::update_waits_for_a_lock_held_by_another_process"
    );
    let me = me.split_once("::").map_or(me, |(_, rest)| rest);
    let mut holder = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", me, "--test-threads", "1"])
        .env(HOLDER, &store)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !store.join("holder-ready").exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the holder never locked"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut waiting = update(&p, "after the holder", "hybrid").spawn().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        waiting.try_wait().unwrap().is_none(),
        "the update did not wait for the lock"
    );
    assert!(
        !store.join("hybrid.json").exists(),
        "the update wrote while another process held the lock"
    );
    holder.kill().unwrap();
    holder.wait().unwrap();
    let (code, stderr) = finish(waiting);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(&format!("waiting for another rgate (pid {} since ", holder.id())),
        "{stderr}"
    );
    assert!(
        stderr.contains("to finish with the baseline of `hybrid`"),
        "{stderr}"
    );
    assert_eq!(
        notes(p.root()),
        (Some("after the holder".into()), vec!["after the holder".into()])
    );
    assert_eq!(
        files(p.root()),
        ["holder-ready", "hybrid.history.jsonl", "hybrid.json"]
    );
}

/// SIGKILL at spread-out moments of many updates: the next update never
/// waits for a dead process, and once the store is next locked, the stored
/// baseline is the one the last baseline-update history line describes,
/// with no temp, journal or lock file left over.
#[test]
fn killed_updates_never_block_the_next_or_lose_its_history() {
    let p = project();
    let (code, stderr) = finish(update(&p, "first", "hybrid").spawn().unwrap());
    assert_eq!(code, 0, "{stderr}");
    // How long one update takes here, to spread the kills over it.
    let t = Instant::now();
    let (code, stderr) = finish(update(&p, "second", "hybrid-regressed").spawn().unwrap());
    assert_eq!(code, 0, "{stderr}");
    let span = t.elapsed().as_micros().max(1000) as u64;
    let store = Store::new(p.root().join("store"));
    let mut completed = 0;
    for i in 0..40u64 {
        let run = if i % 2 == 0 { "hybrid" } else { "hybrid-regressed" };
        let mut child = update(&p, &format!("kill {i}"), run).spawn().unwrap();
        // Kill points from early start-up to past the end, in a scrambled
        // but fixed order.
        let at = span * ((i * 37) % 41) / 36;
        std::thread::sleep(Duration::from_micros(at));
        let _ = child.kill();
        let status = child.wait().unwrap();
        if status.success() {
            completed += 1;
        }
        // What the next locked operation sees: the lock is free at once.
        let t = Instant::now();
        let lock = store
            .lock("hybrid", Duration::ZERO, &mut |m: &str| {
                panic!("waited after kill {i}: {m}")
            })
            .unwrap();
        assert!(t.elapsed() < Duration::from_secs(2));
        drop(lock);
        let (baseline, history) = notes(p.root());
        assert_eq!(
            baseline.as_deref(),
            history.last().map(String::as_str),
            "after kill {i} the baseline and the history disagree: {history:?}"
        );
        assert_eq!(
            files(p.root()),
            ["hybrid.history.jsonl", "hybrid.json"],
            "after kill {i}"
        );
    }
    // The kills landed at different points: some updates finished, some
    // did not.
    assert!(completed < 40, "no update was killed");
    let (code, stderr) = finish(update(&p, "last", "hybrid").spawn().unwrap());
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(notes(p.root()).0.as_deref(), Some("last"));
}

/// Several updates at once: each waits its turn and succeeds; every one
/// leaves its history line, and the baseline is the last one's.
#[test]
fn concurrent_updates_queue_and_all_succeed() {
    let p = project();
    let children: Vec<Child> = (0..6)
        .map(|i| {
            let run = if i % 2 == 0 { "hybrid" } else { "hybrid-regressed" };
            update(&p, &format!("job {i}"), run).spawn().unwrap()
        })
        .collect();
    for c in children {
        let (code, stderr) = finish(c);
        assert_eq!(code, 0, "{stderr}");
    }
    let (baseline, mut history) = notes(p.root());
    assert_eq!(baseline.as_deref(), history.last().map(String::as_str));
    history.sort();
    assert_eq!(history, (0..6).map(|i| format!("job {i}")).collect::<Vec<_>>());
    assert_eq!(files(p.root()), ["hybrid.history.jsonl", "hybrid.json"]);
}

/// A history file that is a symbolic link is refused (exit 2), and the
/// file it points to is left alone.
#[test]
fn a_symlinked_history_is_refused() {
    let p = project();
    let store = p.root().join("store");
    fs::create_dir_all(&store).unwrap();
    let outside = p.root().join("outside.txt");
    fs::write(&outside, "mine\n").unwrap();
    std::os::unix::fs::symlink(&outside, store.join("hybrid.history.jsonl")).unwrap();
    let (code, stderr) = finish(update(&p, "x", "hybrid").spawn().unwrap());
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "hybrid.history.jsonl: is a symbolic link; rgate does not write the baseline store through links"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("\nhint: "), "{stderr}");
    assert_eq!(fs::read_to_string(&outside).unwrap(), "mine\n");
    assert!(!store.join("hybrid.json").exists());
}
