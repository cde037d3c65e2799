//! `rgate init`, config discovery and `rgate hook install`, in temporary
//! repositories.

use crate::common;

use common::{git, rgate, run};

const WRITTEN: [&str; 3] = [
    "config/rgate.yaml",
    "eval/gold.yaml",
    ".github/workflows/rgate.yml",
];

#[test]
fn init_writes_a_working_setup_once() {
    let tmp = tempfile::tempdir().unwrap();
    git(tmp.path(), &["init", "-q"]);
    let sub = tmp.path().join("some/dir");
    std::fs::create_dir_all(&sub).unwrap();

    // From a subdirectory: the files land at the repository root.
    let o = run({
        let mut c = rgate();
        c.arg("init").current_dir(&sub);
        c
    });
    assert_eq!(o.code, 0, "{}", o.stderr);
    for f in WRITTEN {
        assert!(tmp.path().join(f).is_file(), "{f} not written: {}", o.stderr);
    }
    let workflow = std::fs::read_to_string(tmp.path().join(".github/workflows/rgate.yml")).unwrap();
    assert!(workflow.contains(&format!("--version {}", env!("CARGO_PKG_VERSION"))));
    assert!(
        !workflow.contains("{{VERSION"),
        "template placeholders left: {workflow}"
    );

    // The written config reads the written gold set, found from the
    // subdirectory: three queries in three strata, all valid.
    let o = run({
        let mut c = rgate();
        c.args(["gold", "validate", "--format", "json"]).current_dir(&sub);
        c
    });
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["valid"], true);
    assert_eq!(v["queries"], 3);
    assert_eq!(v["gold"], "../../eval/gold.yaml");

    // Twice: refused, exit 2, nothing changed.
    std::fs::write(tmp.path().join("eval/gold.yaml"), "edited\n").unwrap();
    std::fs::remove_file(tmp.path().join("config/rgate.yaml")).unwrap();
    let o = run({
        let mut c = rgate();
        c.arg("init").current_dir(tmp.path());
        c
    });
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("eval/gold.yaml"), "{}", o.stderr);
    assert!(o.stderr.contains("hint:"), "{}", o.stderr);
    assert!(
        !tmp.path().join("config/rgate.yaml").exists(),
        "a file was written on refusal"
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("eval/gold.yaml")).unwrap(),
        "edited\n"
    );
}

#[test]
fn init_outside_git_writes_into_the_working_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run({
        let mut c = rgate();
        c.arg("init")
            .current_dir(tmp.path())
            .env("GIT_CEILING_DIRECTORIES", tmp.path().parent().unwrap());
        c
    });
    assert_eq!(o.code, 0, "{}", o.stderr);
    for f in WRITTEN {
        assert!(tmp.path().join(f).is_file(), "{f}");
    }
}

#[test]
fn config_is_found_from_a_subdirectory() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::create_dir_all(root.join("config")).unwrap();
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::fs::write(
        root.join("config/rgate.yaml"),
        "gold: gold.yaml\nretrievers:\n  - name: r\n    run: run.json\n",
    )
    .unwrap();
    std::fs::write(
        root.join("config/gold.yaml"),
        "version: 1\nqueries:\n  - id: q1\n    text: t\n    relevant: [d1]\n  - id: q2\n    text: u\n    relevant: [d2]\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("config/baselines")).unwrap();
    // q1 hit at rank 1, q2 missed: recall@10 mean 0.5.
    std::fs::write(root.join("config/run.json"), r#"{"q1": ["d1"], "q2": ["x"]}"#).unwrap();
    let o = run({
        let mut c = rgate();
        c.args(["gate", "--format", "json"]).current_dir(root.join("a/b"));
        c
    });
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["retrievers"][0]["run"], "../../config/run.json");

    // Nowhere to be found: exit 2 with a way forward.
    let empty = tempfile::tempdir().unwrap();
    let o = run({
        let mut c = rgate();
        c.arg("gate").current_dir(empty.path());
        c
    });
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("no config found"), "{}", o.stderr);
    assert!(o.stderr.contains("hint: run `rgate init`"), "{}", o.stderr);
}

#[test]
fn hook_install_writes_its_own_hook_and_leaves_others_alone() {
    let tmp = tempfile::tempdir().unwrap();
    git(tmp.path(), &["init", "-q"]);
    let hook = tmp.path().join(".git/hooks/pre-push");
    let install = || {
        run({
            let mut c = rgate();
            c.args(["hook", "install"]).current_dir(tmp.path());
            c
        })
    };
    let o = install();
    assert_eq!(o.code, 0, "{}", o.stderr);
    let text = std::fs::read_to_string(&hook).unwrap();
    assert!(text.starts_with("#!/bin/sh\n"), "{text}");
    assert!(text.contains("exec rgate gate"), "{text}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&hook).unwrap().permissions().mode() & 0o111,
            0o111
        );
    }
    // Its own hook: installing again is a no-op.
    let o = install();
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.contains("installed already"), "{}", o.stderr);
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), text);

    // Someone else's hook: refused, untouched.
    std::fs::write(&hook, "#!/bin/sh\nmake lint\n").unwrap();
    let o = install();
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("did not write"), "{}", o.stderr);
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), "#!/bin/sh\nmake lint\n");

    // Outside a repository: exit 2.
    let empty = tempfile::tempdir().unwrap();
    let o = run({
        let mut c = rgate();
        c.args(["hook", "install"])
            .current_dir(empty.path())
            .env("GIT_CEILING_DIRECTORIES", empty.path().parent().unwrap());
        c
    });
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("not inside a git repository"), "{}", o.stderr);
}

/// A gold set of `n` queries in three strata, one label each.
fn gold_of(n: usize) -> String {
    let mut s = String::from("version: 1\nqueries:\n");
    for i in 0..n {
        s += &format!(
            "  - id: q{i}\n    text: query number {i}\n    stratum: s{}\n    relevant: [\"docs/{i}.md#1\"]\n",
            i % 3
        );
    }
    s
}

/// #49: `init` beside a gold set built first keeps it byte for byte, says
/// so, and writes a config that parses, with the margin test and the
/// tolerances sized to its queries.
#[test]
fn init_writes_the_config_beside_an_existing_gold_set() {
    use rgate::config::{Config, Decision, Tolerance};
    // Hand values of 1 / sqrt(n) rounded up to 0.01 (recall@10) and
    // 1 / sqrt(n) * 10 / 0.07 rounded up (nDCG@10, percent): n = 50:
    // 0.1414 -> 0.15 and 20.2 -> 21; n = 100: 0.10 and 14.3 -> 15; n = 400:
    // 0.05 and 7.14 -> 8.
    for (n, recall, ndcg) in [(50, 0.15, 21.0), (100, 0.10, 15.0), (400, 0.05, 8.0)] {
        let tmp = tempfile::tempdir().unwrap();
        git(tmp.path(), &["init", "-q"]);
        let gold = gold_of(n);
        std::fs::create_dir_all(tmp.path().join("eval")).unwrap();
        std::fs::write(tmp.path().join("eval/gold.yaml"), &gold).unwrap();
        let o = run({
            let mut c = rgate();
            c.arg("init").current_dir(tmp.path());
            c
        });
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("eval/gold.yaml")).unwrap(),
            gold
        );
        assert!(o.stderr.contains("kept "), "{}", o.stderr);
        assert!(
            o.stderr.contains(&format!("({n} queries; not overwritten)")),
            "{}",
            o.stderr
        );
        assert!(tmp.path().join(".github/workflows/rgate.yml").is_file());
        let text = std::fs::read_to_string(tmp.path().join("config/rgate.yaml")).unwrap();
        assert!(!text.contains("{{"), "placeholder left: {text}");
        assert!(
            text.contains(&format!("the {n} queries of eval/gold.yaml")),
            "{text}"
        );
        let c = Config::load(Some(&tmp.path().join("config/rgate.yaml"))).unwrap();
        assert_eq!(c.gate.decision, Decision::ConfidentDrop, "n = {n}");
        let tol = |name: &str| {
            c.gate
                .rules
                .iter()
                .find(|r| r.metric.name() == name)
                .map(|r| r.tolerance.clone())
                .unwrap_or_else(|| panic!("no {name} rule: {text}"))
        };
        assert!(
            matches!(tol("recall@10"), Tolerance::Absolute(t) if (t - recall).abs() < 1e-12),
            "n = {n}: {text}"
        );
        assert!(
            matches!(tol("ndcg@10"), Tolerance::Percent(t) if (t - ndcg).abs() < 1e-12),
            "n = {n}: {text}"
        );
        // The written setup works: the gold set validates under it.
        let o = run({
            let mut c = rgate();
            c.args(["gold", "validate"]).current_dir(tmp.path());
            c
        });
        assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    }
}

/// Without a gold set, the config is the template's, sized for about 100
/// queries, and also parses with the margin test.
#[test]
fn init_config_without_a_gold_set_has_the_margin_test() {
    use rgate::config::{Config, Decision};
    let tmp = tempfile::tempdir().unwrap();
    git(tmp.path(), &["init", "-q"]);
    let o = run({
        let mut c = rgate();
        c.arg("init").current_dir(tmp.path());
        c
    });
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!o.stderr.contains("kept "), "{}", o.stderr);
    let text = std::fs::read_to_string(tmp.path().join("config/rgate.yaml")).unwrap();
    assert!(text.contains("about 100 queries (none found)"), "{text}");
    let c = Config::load(Some(&tmp.path().join("config/rgate.yaml"))).unwrap();
    assert_eq!(c.gate.decision, Decision::ConfidentDrop);
    assert_eq!(c.gate.rules.len(), 2);
}

/// A file at eval/gold.yaml that is no gold set: exit 2 naming it, nothing
/// written.
#[test]
fn init_refuses_beside_an_unreadable_gold_set() {
    let tmp = tempfile::tempdir().unwrap();
    git(tmp.path(), &["init", "-q"]);
    std::fs::create_dir_all(tmp.path().join("eval")).unwrap();
    std::fs::write(tmp.path().join("eval/gold.yaml"), "queries: 7\n").unwrap();
    let o = run({
        let mut c = rgate();
        c.arg("init").current_dir(tmp.path());
        c
    });
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("gold.yaml"), "{}", o.stderr);
    assert!(!tmp.path().join("config").exists());
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("eval/gold.yaml")).unwrap(),
        "queries: 7\n"
    );
}
