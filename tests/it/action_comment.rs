//! The composite action's PR-comment script against a fake `gh` on PATH:
//! the first run creates the comment, the next edits it in place, and a
//! token without write permission degrades to a notice.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A stand-in for `gh api` keeping comments as files `<id>` in $FAKE_GH_DIR
/// (id 100 is someone else's comment), logging each call. It answers the
/// one --jq query the script makes: ids of comments whose body starts
/// with the marker.
const FAKE_GH: &str = r#"#!/usr/bin/env bash
set -euo pipefail
echo "$*" >> "$FAKE_GH_DIR/calls"
[ "$1" = api ] || exit 64
shift
if [ -n "${FAKE_GH_READONLY:-}" ] && [[ " $* " == *" --method "* ]]; then
  echo "HTTP 403: Resource not accessible by integration" >&2
  exit 1
fi
all="$*"
file=${all##*body=@}
case "$all" in
  "--paginate repos/o/r/issues/7/comments --jq .[] | select(.body | startswith(\"<!-- rgate-report -->\")) | .id")
    for f in "$FAKE_GH_DIR"/comments/*; do
      [ -e "$f" ] || continue
      if [ "$(head -n 1 "$f")" = "<!-- rgate-report -->" ]; then basename "$f"; fi
    done ;;
  "--method POST repos/o/r/issues/7/comments -F body=@"*)
    n=$(ls "$FAKE_GH_DIR/comments" | wc -l)
    cp "$file" "$FAKE_GH_DIR/comments/$((200 + n))"
    echo '{}' ;;
  "--method PATCH repos/o/r/issues/comments/"*" -F body=@"*)
    id=${all#*issues/comments/}; id=${id%% *}
    [ -e "$FAKE_GH_DIR/comments/$id" ] || exit 1
    cp "$file" "$FAKE_GH_DIR/comments/$id"
    echo '{}' ;;
  *) echo "fake gh: unexpected: $*" >&2; exit 64 ;;
esac
"#;

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".github/actions/rgate/comment.sh")
}

fn setup() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(tmp.path().join("comments")).unwrap();
    std::fs::write(bin.join("gh"), FAKE_GH).unwrap();
    std::fs::set_permissions(bin.join("gh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(tmp.path().join("comments/100"), "LGTM\n").unwrap();
    tmp
}

fn comment(dir: &Path, report: &str, readonly: bool) -> (i32, String) {
    std::fs::write(dir.join("report.md"), report).unwrap();
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = Command::new("bash");
    c.arg(script())
        .env("PATH", path)
        .env("FAKE_GH_DIR", dir)
        .env("REPORT", dir.join("report.md"))
        .env("PR_NUMBER", "7")
        .env("GITHUB_REPOSITORY", "o/r")
        .env("GH_TOKEN", "t");
    if readonly {
        c.env("FAKE_GH_READONLY", "1");
    }
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
    )
}

fn comments(dir: &Path) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir.join("comments"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read_to_string(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn creates_then_updates_one_comment() {
    let tmp = setup();
    let dir = tmp.path();
    let (code, out) = comment(dir, "## FAIL\n", false);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        comments(dir),
        vec![
            ("100".into(), "LGTM\n".into()),
            ("201".into(), "<!-- rgate-report -->\n## FAIL\n".into())
        ]
    );
    let (code, out) = comment(dir, "## PASS\n", false);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("updated comment 201"), "{out}");
    assert_eq!(
        comments(dir),
        vec![
            ("100".into(), "LGTM\n".into()),
            ("201".into(), "<!-- rgate-report -->\n## PASS\n".into())
        ]
    );
    let calls = std::fs::read_to_string(dir.join("calls")).unwrap();
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
fn a_fork_without_write_permission_gets_a_notice() {
    let tmp = setup();
    let dir = tmp.path();
    let (code, out) = comment(dir, "## FAIL\n", true);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("::notice title=rgate::cannot create the pull request comment"),
        "{out}"
    );
    assert_eq!(comments(dir), vec![("100".into(), "LGTM\n".into())]);
}
