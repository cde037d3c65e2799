//! The composite action's scripts, run as the runner runs them.
//!
//! `comment.sh` against a fake `gh` on PATH: the first run creates the
//! comment, the next edits it in place; a comment by someone else that
//! carries the marker is left alone; the token's identity comes from the
//! GraphQL `viewer`; a report over GitHub's limit is cut with a pointer to
//! the job summary; a token without write permission and a missing `gh`
//! each get a message saying what happened.
//!
//! `args.sh` and the action's gate step: a multi-line `args: |` is split as
//! a shell splits one command line (checked against bash itself), and what
//! a shell would expand is refused.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A stand-in for `gh api` keeping comments as `<id>.body` and
/// `<id>.author` in $FAKE_GH_DIR/comments, logging each call. The token's
/// identity is $FAKE_GH_ME (GITHUB_TOKEN's by default): `graphql` answers
/// the viewer query with it (or fails under $FAKE_GH_NO_VIEWER), POST
/// records it as the author, and PATCH of anyone else's comment is refused
/// with 403, as GitHub refuses it. The comment list is filtered by the
/// script's own --jq expression, run by jq over the comments as GitHub's
/// REST API shapes them.
const FAKE_GH: &str = r#"#!/usr/bin/env bash
set -euo pipefail
echo "$*" >> "$FAKE_GH_DIR/calls"
[ "$1" = api ] || exit 64
shift
me=${FAKE_GH_ME:-github-actions[bot]}
c="$FAKE_GH_DIR/comments"
if [ "$1" = graphql ]; then
  [ "$*" = "graphql -f query={viewer{login}} --jq .data.viewer.login" ] || { echo "fake gh: unexpected: $*" >&2; exit 64; }
  if [ -n "${FAKE_GH_NO_VIEWER:-}" ]; then echo "HTTP 401: Bad credentials" >&2; exit 1; fi
  echo "$me"
  exit 0
fi
if [ -n "${FAKE_GH_READONLY:-}" ] && [ "$1" = --method ]; then
  echo "HTTP 403: Resource not accessible by integration" >&2
  exit 1
fi
case "$1 $2" in
  "--paginate repos/o/r/issues/7/comments")
    [ "$3" = --jq ] && [ "$#" = 4 ] || exit 64
    for f in "$c"/*.body; do
      [ -e "$f" ] || continue
      id=$(basename "$f" .body)
      jq -n --arg id "$id" --rawfile body "$f" --arg login "$(cat "$c/$id.author")" \
        '{id: ($id | tonumber), body: $body, user: {login: $login, type: (if ($login | endswith("[bot]")) then "Bot" else "User" end)}}'
    done | jq -s -r "$4" ;;
  "--method POST")
    [ "$3" = repos/o/r/issues/7/comments ] && [ "$4" = -F ] || exit 64
    n=$(cat "$FAKE_GH_DIR/next" 2> /dev/null || echo 201)
    cp "${5#body=@}" "$c/$n.body"
    echo "$me" > "$c/$n.author"
    echo $((n + 1)) > "$FAKE_GH_DIR/next"
    echo '{}' ;;
  "--method PATCH")
    id=${3#repos/o/r/issues/comments/}
    [ "$4" = -F ] || exit 64
    [ -e "$c/$id.body" ] || { echo "HTTP 404: Not Found" >&2; exit 1; }
    [ "$(cat "$c/$id.author")" = "$me" ] || { echo "HTTP 403: Resource not accessible by integration" >&2; exit 1; }
    cp "${5#body=@}" "$c/$id.body"
    echo '{}' ;;
  *) echo "fake gh: unexpected: $*" >&2; exit 64 ;;
esac
"#;

pub(crate) const MARKER: &str = "<!-- rgate-report -->";

pub(crate) fn action_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".github/actions/rgate")
}

/// `name`'s absolute path on the test's PATH.
pub(crate) fn which(name: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is not on PATH"))
}

pub(crate) fn write_exec(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

pub(crate) fn setup() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(tmp.path().join("comments")).unwrap();
    write_exec(&bin.join("gh"), FAKE_GH);
    add_comment(tmp.path(), 100, "octocat", "LGTM\n");
    tmp
}

fn add_comment(dir: &Path, id: u32, author: &str, body: &str) {
    std::fs::write(dir.join(format!("comments/{id}.body")), body).unwrap();
    std::fs::write(dir.join(format!("comments/{id}.author")), format!("{author}\n")).unwrap();
}

/// Runs comment.sh on `report` with the fake gh first on PATH (or, with
/// `path` given, that PATH alone); `env` adds variables.
fn comment_with(dir: &Path, report: &str, env: &[(&str, &str)], path: Option<&Path>) -> (i32, String) {
    std::fs::write(dir.join("report.md"), report).unwrap();
    let path = match path {
        Some(p) => p.as_os_str().to_owned(),
        None => std::env::join_paths(std::iter::once(dir.join("bin")).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )))
        .unwrap(),
    };
    let mut c = Command::new(which("bash"));
    c.arg(action_dir().join("comment.sh"))
        .env_clear()
        .env("PATH", path)
        .env("FAKE_GH_DIR", dir)
        .env("REPORT", dir.join("report.md"))
        .env("PR_NUMBER", "7")
        .env("GITHUB_REPOSITORY", "o/r")
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_RUN_ID", "42")
        .env("GH_TOKEN", "t");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
    )
}

pub(crate) fn comment(dir: &Path, report: &str, env: &[(&str, &str)]) -> (i32, String) {
    comment_with(dir, report, env, None)
}

/// (id, author, body) of every comment, by id.
pub(crate) fn comments(dir: &Path) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = std::fs::read_dir(dir.join("comments"))
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            let id = p.file_name()?.to_str()?.strip_suffix(".body")?.to_string();
            let author = std::fs::read_to_string(p.with_extension("author")).unwrap();
            Some((
                id,
                author.trim().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            ))
        })
        .collect();
    v.sort();
    v
}

pub(crate) fn ours(id: &str, body: &str) -> (String, String, String) {
    (
        id.into(),
        "github-actions[bot]".into(),
        format!("{MARKER}\n{body}"),
    )
}

pub(crate) fn lgtm() -> (String, String, String) {
    ("100".into(), "octocat".into(), "LGTM\n".into())
}

pub(crate) fn calls(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("calls")).unwrap_or_default()
}

#[test]
fn creates_then_updates_one_comment() {
    let tmp = setup();
    let dir = tmp.path();
    let (code, out) = comment(dir, "## FAIL\n", &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(comments(dir), vec![lgtm(), ours("201", "## FAIL\n")]);
    let (code, out) = comment(dir, "## PASS\n", &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("updated comment 201"), "{out}");
    assert_eq!(comments(dir), vec![lgtm(), ours("201", "## PASS\n")]);
    let calls = calls(dir);
    assert_eq!(
        calls.lines().filter(|l| l.contains("--method POST")).count(),
        1,
        "{calls}"
    );
    assert_eq!(
        calls.lines().filter(|l| l.contains("--method PATCH")).count(),
        1,
        "{calls}"
    );
}

#[test]
fn a_fork_without_write_permission_gets_a_notice_with_githubs_reason() {
    let tmp = setup();
    let dir = tmp.path();
    let (code, out) = comment(dir, "## FAIL\n", &[("FAKE_GH_READONLY", "1")]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(
            "::notice title=rgate::cannot create the pull request comment: HTTP 403: Resource not accessible by integration"
        ),
        "{out}"
    );
    assert_eq!(comments(dir), vec![lgtm()]);
}

/// Someone pasted the marker into their own comment, before ours: it is
/// neither edited (GitHub would refuse with 403, and the report would
/// never be posted) nor taken for ours.
#[test]
fn a_comment_by_someone_else_with_the_marker_is_left_alone() {
    let tmp = setup();
    let dir = tmp.path();
    let decoy = format!("{MARKER}\n## PASS (not really)\n");
    add_comment(dir, 150, "mallory", &decoy);
    let (code, out) = comment(dir, "## FAIL\n", &[]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("::notice"), "{out}");
    assert!(out.contains("commented on #7"), "{out}");
    let (code, out) = comment(dir, "## FAIL again\n", &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("updated comment 201"), "{out}");
    let decoy_kept = ("150".to_string(), "mallory".to_string(), decoy);
    assert_eq!(
        comments(dir),
        vec![lgtm(), decoy_kept, ours("201", "## FAIL again\n")]
    );
    assert!(!calls(dir).contains("issues/comments/150"), "{}", calls(dir));
}

/// With an app's token the comment is the app's: the default token's
/// earlier comment (another workflow's) is not edited. When GitHub cannot
/// say who the token is, the default token's identity is assumed.
#[test]
fn the_comment_is_the_tokens_own() {
    let tmp = setup();
    let dir = tmp.path();
    add_comment(dir, 160, "github-actions[bot]", &format!("{MARKER}\nold\n"));
    add_comment(dir, 161, "my-app[bot]", &format!("{MARKER}\nmine\n"));
    let (code, out) = comment(dir, "new\n", &[("FAKE_GH_ME", "my-app[bot]")]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("updated comment 161"), "{out}");
    let c = comments(dir);
    assert_eq!(c[1].2, format!("{MARKER}\nold\n"));
    assert_eq!(c[2].2, format!("{MARKER}\nnew\n"));

    let (code, out) = comment(dir, "newer\n", &[("FAKE_GH_NO_VIEWER", "1")]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("cannot ask GitHub who the token is (HTTP 401: Bad credentials"),
        "{out}"
    );
    assert!(out.contains("updated comment 160"), "{out}");
    assert_eq!(comments(dir)[1].2, format!("{MARKER}\nnewer\n"));
}

/// GitHub refuses a comment over 65,536 characters. One exactly at the
/// limit (marker line included) is posted whole; a longer one is cut at a
/// line, an open `<details>` closed, and a note points to the run's job
/// summary.
#[test]
fn a_report_over_the_limit_is_cut_with_a_pointer_to_the_summary() {
    const LIMIT: usize = 65_536;
    let tmp = setup();
    let dir = tmp.path();
    let fit = "x".repeat(LIMIT - MARKER.len() - 2) + "\n";
    assert_eq!(MARKER.len() + 1 + fit.len(), LIMIT);
    let (code, out) = comment(dir, &fit, &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(comments(dir)[1].2, format!("{MARKER}\n{fit}"));

    // 5,000 rows of a table inside <details>, with two-byte characters.
    let mut report =
        String::from("## FAIL\n\n<details><summary>flips</summary>\n\n| query | é |\n|---|---|\n");
    for i in 0..5000 {
        report += &format!("| q-{i:05} | ééé lost at rank {i} |\n");
    }
    report += "\n</details>\n";
    assert!(report.len() > 2 * LIMIT);
    let (code, out) = comment(dir, &report, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("::notice"), "{out}");
    let body = comments(dir)[1].2.clone();
    assert!(body.len() <= LIMIT, "{} bytes", body.len());
    let rest = body.strip_prefix(&format!("{MARKER}\n")).unwrap();
    let (kept, tail) = rest.split_at(rest.find("\n</details>\n").unwrap());
    assert!(report.starts_with(kept), "the kept part is the report's start");
    assert!(
        kept.ends_with(" |"),
        "cut at a line: {:?}",
        &kept[kept.len() - 40..]
    );
    assert!(kept.len() > LIMIT - 2000, "kept {} bytes", kept.len());
    assert!(
        tail.contains("**Report truncated**")
            && tail.contains(
                "The full report is in the job summary of this run (https://github.com/o/r/actions/runs/42)"
            )
            && tail.contains(&format!("the report has {} bytes", report.len())),
        "{tail}"
    );
}

#[test]
fn without_gh_the_message_says_so() {
    let tmp = setup();
    let dir = tmp.path();
    let empty = dir.join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, out) = comment_with(dir, "## FAIL\n", &[], Some(&empty));
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("::warning title=rgate::cannot comment on the pull request: the gh CLI is not on PATH"),
        "{out}"
    );
    assert!(!out.contains("fork"), "{out}");
}

/// args.sh's words for `args`, or its exit code and stderr.
fn split(args: &str) -> Result<Vec<String>, (i32, String)> {
    let o = Command::new(which("bash"))
        .arg(action_dir().join("args.sh"))
        .env("INPUT_ARGS", args)
        .output()
        .unwrap();
    if !o.status.success() {
        return Err((
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        ));
    }
    Ok(words(&o.stdout))
}

pub(crate) fn words(nul_separated: &[u8]) -> Vec<String> {
    nul_separated
        .split(|b| *b == 0)
        .map(|w| String::from_utf8(w.to_vec()).unwrap())
        .collect::<Vec<_>>()
        .split_last()
        .map(|(last, init)| {
            assert!(last.is_empty(), "every word ends with NUL");
            init.to_vec()
        })
        .unwrap_or_default()
}

/// bash's own words for `args` as one command line, newlines included
/// (an array assignment treats them as blanks), without globbing.
fn bash_words(args: &str) -> Vec<String> {
    let o = Command::new(which("bash"))
        .args([
            "-c",
            "set -f; eval \"a=( $ARGS )\"; [ ${#a[@]} = 0 ] || printf '%s\\0' \"${a[@]}\"",
        ])
        .env("ARGS", args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    words(&o.stdout)
}

#[test]
fn args_split_as_bash_splits_them() {
    let cases = [
        "--baseline-ref origin/main --report-dir rgate-report",
        "--baseline-ref origin/main\n--require-baseline\n--report-dir rgate-report\n",
        "  --note 'two words'   --run \"bm25=runs/with space.jsonl\"\n\t--require-baseline",
        "--note \"say \\\"hi\\\" \\\\ \\x\" --note a\\ b --note ''",
        "# a comment line\n--require-baseline # why: strict\n--note a#b",
        "--note 'multi\nline' --note \"x\\\ny\" --note c\\\nd",
        "--metrics recall@10,ndcg@10 *.jsonl runs/?.trec",
        "--note 'é ü ∑ 日本'",
        "",
        "   \n  ",
    ];
    for args in cases {
        assert_eq!(split(args).unwrap(), bash_words(args), "{args:?}");
    }
    // A hand-written check of the first multi-line case, in case bash and
    // the splitter agree on something wrong.
    assert_eq!(
        split("--baseline-ref origin/main\n--require-baseline # strict\n--note 'a b'").unwrap(),
        [
            "--baseline-ref",
            "origin/main",
            "--require-baseline",
            "--note",
            "a b"
        ]
    );
}

#[test]
fn args_a_shell_would_expand_are_refused() {
    for (args, says) in [
        ("--note $HOME", "`$` would be expanded by a shell"),
        (
            "--note \"$(id)\"",
            "`$` inside double quotes would be expanded by a shell",
        ),
        ("--note `id`", "``` would be expanded by a shell"),
        ("--note a;b", "`;` is a shell operator"),
        ("--run x>y", "`>` is a shell operator"),
        ("--note 'open", "unterminated ' quote"),
        ("--note \"open", "unterminated \" quote"),
    ] {
        let (code, err) = split(args).unwrap_err();
        assert_eq!(code, 2, "{args:?}");
        assert!(err.starts_with("::error title=rgate::args: "), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert_eq!(
        split("--note '$HOME `id` a;b'").unwrap(),
        ["--note", "$HOME `id` a;b"]
    );
    // No tilde expansion either (bash would make it $HOME/x).
    assert_eq!(split("--run a=~/x").unwrap(), ["--run", "a=~/x"]);
}

/// The action's gate step itself, taken from action.yml and run as the
/// runner runs a `shell: bash` step, with a fake `rgate` that records its
/// arguments: a multi-line `args: |` reaches rgate whole (a `read -ra`
/// kept only its first line).
#[test]
fn the_gate_step_passes_every_line_of_args() {
    let action: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(action_dir().join("action.yml")).unwrap()).unwrap();
    let step = action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "gate")
        .unwrap();
    let script = step["run"].as_str().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    write_exec(
        &dir.join("bin/rgate"),
        "#!/usr/bin/env bash\nprintf '%s\\0' \"$@\" > \"$FAKE_RGATE_ARGS\"\nexit 1\n",
    );
    std::fs::write(dir.join("step.sh"), script).unwrap();
    let path = std::env::join_paths(std::iter::once(dir.join("bin")).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let run = |args: &str| {
        let _ = std::fs::remove_file(dir.join("argv"));
        std::fs::write(dir.join("output"), "").unwrap();
        let o = Command::new(which("bash"))
            .args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(dir.join("step.sh"))
            .current_dir(dir)
            .env("PATH", &path)
            .env("GITHUB_ACTION_PATH", action_dir())
            .env("GITHUB_OUTPUT", dir.join("output"))
            .env("FAKE_RGATE_ARGS", dir.join("argv"))
            .env("INPUT_CONFIG", "config/rgate.yaml")
            .env("INPUT_ARGS", args)
            .output()
            .unwrap();
        (o, std::fs::read(dir.join("argv")).ok().map(|a| words(&a)))
    };
    let (o, argv) = run("--baseline-ref origin/main\n--require-baseline\n--note 'two words'\n");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        argv.unwrap(),
        [
            "gate",
            "--config",
            "config/rgate.yaml",
            "--baseline-ref",
            "origin/main",
            "--require-baseline",
            "--note",
            "two words"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("output")).unwrap(),
        "exit-code=1\n"
    );

    let (o, argv) = run("--note $SECRET");
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("::error title=rgate::args: `$`"));
    assert_eq!(argv, None, "rgate does not run");
}
