//! `rgate completions SHELL` and `rgate man`. The expected markers are each
//! shell's and man(7)'s own registration syntax, not rgate's output.

use crate::common;

use std::fs;

use common::{rgate, run};

/// How each shell's completion system learns which command a script is for
/// (bash `complete`, zsh `#compdef`, fish `complete -c`, PowerShell's
/// `Register-ArgumentCompleter`).
const SHELLS: [(&str, &str); 4] = [
    ("bash", "complete -F _rgate"),
    ("zsh", "#compdef rgate"),
    ("fish", "complete -c rgate"),
    (
        "powershell",
        "Register-ArgumentCompleter -Native -CommandName 'rgate'",
    ),
];

#[test]
fn each_shell_gets_a_script_that_knows_the_subcommands() {
    for (shell, marker) in SHELLS {
        let mut c = rgate();
        c.args(["completions", shell]);
        let o = run(c);
        assert_eq!(o.code, 0, "{shell}: {}", o.stderr);
        assert_eq!(o.stderr, "", "{shell}");
        assert!(
            o.stdout.contains(marker),
            "{shell}: no `{marker}` in\n{}",
            o.stdout
        );
        for sub in ["gate", "baseline", "compare", "eval"] {
            assert!(o.stdout.contains(sub), "{shell}: `{sub}` missing");
        }
    }
}

#[cfg(unix)]
#[test]
fn bash_script_parses() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("rgate.bash");
    let mut c = rgate();
    c.args(["completions", "bash", "--output"]).arg(&script);
    assert_eq!(run(c).code, 0);
    let status = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn unknown_shell_is_a_usage_error() {
    let mut c = rgate();
    c.args(["completions", "tcsh"]);
    let o = run(c);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("tcsh"), "{}", o.stderr);
    assert_eq!(o.stdout, "");
}

#[test]
fn man_page_is_roff_for_rgate() {
    let mut c = rgate();
    c.arg("man");
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("\n.TH rgate 1 "), "{}", o.stdout);
    assert!(o.stdout.contains("\n.SH SYNOPSIS\n"));
    // The exit codes from the help text reach the page.
    assert!(o.stdout.contains("0 pass, 1 regression"));
}

/// The top page lists subcommands as `rgate-gate(1)` and so on; `--dir`
/// must write exactly the pages those references name, no fewer.
#[test]
fn man_dir_writes_every_page_the_top_page_names() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = rgate();
    c.args(["man", "--dir"]).arg(dir.path());
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut referenced = vec!["rgate.1".to_string()];
    for name in &names {
        let page = fs::read_to_string(dir.path().join(name)).unwrap();
        let stem = name.trim_end_matches(".1");
        assert!(page.contains(&format!("\n.TH {stem} 1 ")), "{name}");
        for line in page.lines() {
            if let Some(r) = line.strip_suffix("(1)") {
                referenced.push(format!("{}.1", r.replace("\\-", "-")));
            }
        }
    }
    referenced.sort();
    referenced.dedup();
    assert_eq!(names, referenced);
    assert!(names.contains(&"rgate-baseline-update.1".to_string()));
    assert!(!names.iter().any(|n| n.contains("help")), "{names:?}");
}
