//! Issue 27 item 8: `gold suggest --command` keeps rgate's own flags.

use crate::common;

use common::TestProject;
use serde_json::{json, Value};

// ---- gold suggest --command ---------------------------------------------------

/// Grades every row 1 and writes the arguments it was given to args.json.
const ARGS_JUDGE: &str = "import sys, json\njson.dump(sys.argv[1:], open('args.json', 'w'))\nfor l in sys.stdin:\n    r = json.loads(l)\n    print(json.dumps({'query_id': r['query_id'], 'chunk_id': r['chunk_id'], 'grade': 1}))\n";

fn suggest_project() -> TestProject {
    TestProject::new()
        .with_file(
            "sheet.jsonl",
            "{\"query_id\":\"q1\",\"query\":\"t\",\"stratum\":\"s\",\"chunk_id\":\"c1\",\"grade\":null,\"source\":null,\"labeler\":null,\"verified\":false}\n",
        )
        .with_file("my judge.py", ARGS_JUDGE)
}

fn labeler(p: &TestProject) -> Value {
    let row: Value = serde_json::from_str(p.read("sheet.jsonl").lines().next().unwrap()).unwrap();
    row["labeler"].clone()
}

#[test]
fn rgates_flags_after_the_command_stay_rgates() {
    // A quoted command line: its own flags go to it, rgate's after it
    // stay rgate's (before the fix, `--timeout-s 5 --name gpt` reached the
    // script and rgate's timeout was silently the default).
    let p = suggest_project();
    let o = p.run(&[
        "gold",
        "suggest",
        "sheet.jsonl",
        "--command",
        "python3 'my judge.py' --model m",
        "--timeout-s",
        "5",
        "--name",
        "gpt",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let args: Value = serde_json::from_str(&p.read("args.json")).unwrap();
    assert_eq!(args, json!(["--model", "m"]));
    assert_eq!(labeler(&p), "gpt");

    // After `--`, everything is the command's, flags included; the default
    // name is the script's file name, not the interpreter's.
    let p = suggest_project();
    let o = p.run(&[
        "gold",
        "suggest",
        "sheet.jsonl",
        "--timeout-s",
        "5",
        "--",
        "python3",
        "my judge.py",
        "--timeout-s",
        "9",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let args: Value = serde_json::from_str(&p.read("args.json")).unwrap();
    assert_eq!(args, json!(["--timeout-s", "9"]));
    assert_eq!(labeler(&p), "my judge.py");
    assert!(
        o.stderr
            .contains("my judge.py suggested grades for 1 of 1 row asked"),
        "{}",
        o.stderr
    );

    // An unclosed quote is refused before anything runs.
    let o = p.run(&[
        "gold",
        "suggest",
        "sheet.jsonl",
        "--command",
        "python3 'my judge.py",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("has an unclosed quote"), "{}", o.stderr);
    // The old form, the command's words after --command, says what to do.
    let o = p.run(&[
        "gold",
        "suggest",
        "sheet.jsonl",
        "--command",
        "python3",
        "judge.py",
        "--timeout-s",
        "5",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains(
            "error: `judge.py` follows --command `python3`, which takes the whole command as one string\nhint: quote it, --command \"python3 judge.py\", or put it last: -- python3 judge.py\n"
        ),
        "{}",
        o.stderr
    );
    // Neither form: clap says one is needed.
    let o = p.run(&["gold", "suggest", "sheet.jsonl"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
}
