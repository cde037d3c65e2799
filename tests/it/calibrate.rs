//! Small versions of issue #26's calibration scenarios, the full-size ones
//! being `scripts/calibrate_binary.py` (through the binary, hundreds of
//! trials, Wilson intervals). Each test here holds on the code it ships with;
//! the script's report lists the scenarios that do not hold yet.

use crate::common::TestProject;

#[test]
fn the_init_rules_fail_the_regressed_demo_and_pass_the_unchanged_run() {
    // SPEC "Statistics, second edition": the rules `rgate init` writes fail
    // the shipped regressed demo run and pass the unchanged one.
    let p = TestProject::new();
    let o = p.bare(&["init"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let p = p
        .with_copy("eval/gold.yaml", crate::common::repo("config/demo/gold.yaml"))
        .with_copy(
            "eval/runs/search.jsonl",
            crate::common::repo("config/demo/runs/hybrid.jsonl"),
        )
        .with_copy(
            "regressed.jsonl",
            crate::common::repo("config/demo/runs/hybrid-regressed.jsonl"),
        );
    let o = p.bare(&["baseline", "update", "--note", "first"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = p.bare(&["gate"]);
    assert_eq!(o.code, 0, "unchanged: {}{}", o.stdout, o.stderr);
    let o = p.bare(&["gate", "--run", "search=regressed.jsonl"]);
    assert_eq!(o.code, 1, "regressed: {}{}", o.stdout, o.stderr);
}
