#!/usr/bin/env bash
# Keeps one rgate comment on a pull request up to date: finds the comment
# this token's identity wrote that starts with the hidden marker, and edits
# it in place, or creates it. Uses the gh CLI with the job token (GH_TOKEN).
#
# Whose comment: a marker alone can be copied into anyone's comment, and
# editing someone else's comment fails (403), so the author must be the
# token's own identity. `gh api user` (REST GET /user) is refused for
# installation tokens, GITHUB_TOKEN among them ("Resource not accessible by
# integration"); the GraphQL `viewer` answers for personal and installation
# tokens alike, with the login the REST comment list shows as the author
# (an app's is `SLUG[bot]`, GITHUB_TOKEN's `github-actions[bot]`; see e.g.
# github.com/joshjohanning/bulk-github-repo-settings-sync-action/pull/194
# and github.com/fullsend-ai/fullsend/pull/1953).
#
# When: COMMENT "always" (or "true") writes the comment on every run;
# "on-failure" writes it only when the gate failed (VERDICT "fail"), and on
# a later run that passes updates a comment written earlier, so that a
# fixed pull request does not keep showing the failure, but never starts
# one (issue 29: peers' users ask for a comment only when something is
# flagged).
#
# The body is cut to GitHub's limit on a comment (65,536 characters; counted
# here in bytes, never fewer than characters) at a line, with a pointer to
# the job summary of the run, which carries the whole report.
#
# When the comment cannot be written (a fork's pull request gets a read-only
# token) it says why, with gh's own message, as a notice and exits 0: the
# report is in the job summary, and the gate's verdict is the next step's.
#
# Environment: REPORT (Markdown file), PR_NUMBER, GITHUB_REPOSITORY,
# GH_TOKEN; COMMENT (default "always") and VERDICT; ARTIFACT and
# ARTIFACT_URL, the uploaded full report, linked at the end of the body;
# GITHUB_SERVER_URL and GITHUB_RUN_ID for the run's address;
# RGATE_COMMENT_LIMIT (bytes) for tests only.
set -euo pipefail

marker='<!-- rgate-report -->'
: "${REPORT:?REPORT must name the Markdown report}"
: "${PR_NUMBER:?PR_NUMBER must be the pull request number}"
: "${GITHUB_REPOSITORY:?GITHUB_REPOSITORY must be owner/name}"
limit="${RGATE_COMMENT_LIMIT:-65536}"
mode="${COMMENT:-always}"
verdict="${VERDICT:-}"
case "$mode" in
  always | true) mode=always ;;
  on-failure) ;;
  *)
    echo "::warning title=rgate::comment: \`${mode//[^A-Za-z0-9_.-]/?}\` is not one of always, on-failure or never; no comment written"
    exit 0
    ;;
esac

# Workflow-command data: %, CR and LF escaped, so a message stays one
# annotation and cannot start a command of its own.
escape_data() {
  local s="$1"
  s=${s//'%'/'%25'}
  s=${s//$'\r'/'%0D'}
  s=${s//$'\n'/'%0A'}
  printf '%s' "$s"
}

if ! command -v gh > /dev/null 2>&1; then
  echo "::warning title=rgate::cannot comment on the pull request: the gh CLI is not on PATH (GitHub-hosted runners have it; on a self-hosted runner install it from https://cli.github.com, or set comment: \"false\"); the report is in the job summary"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Says why the comment was not written, gh's message included, and ends the
# step without failing it.
degrade() {
  local why
  why=$(tr -s '\n' ' ' < "$work/err" | cut -c 1-400)
  echo "::notice title=rgate::$(escape_data "cannot $1 the pull request comment: ${why:-gh failed} (on a pull request from a fork the token is read-only); the report is in the job summary")"
  exit 0
}

run_url=""
if [ -n "${GITHUB_RUN_ID:-}" ]; then
  run_url="${GITHUB_SERVER_URL:-https://github.com}/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID"
fi

# The full report's artifact, linked at the end of the body.
footer=""
artifact_where=""
if [ -n "${ARTIFACT_URL:-}" ]; then
  footer=$(printf '\n---\nFull report (report.html to open in a browser): the artifact [%s](%s) of this run.\n' "${ARTIFACT:-rgate-report}" "$ARTIFACT_URL")
  artifact_where=" and in the artifact ${ARTIFACT:-rgate-report} ($ARTIFACT_URL)"
fi

# The body: the marker, then the report, cut to the limit when it is over.
report_bytes=$(wc -c < "$REPORT")
footer_bytes=0
if [ -n "$footer" ]; then footer_bytes=$(($(printf '%s\n' "$footer" | wc -c))); fi
size=$((report_bytes + ${#marker} + 1 + footer_bytes))
if [ "$size" -le "$limit" ]; then
  {
    echo "$marker"
    cat "$REPORT"
    if [ -n "$footer" ]; then printf '%s\n' "$footer"; fi
  } > "$work/body"
else
  # The gate puts the whole report in the job summary, or, past the
  # summary's own limit (1 MiB), the name of its file (src/github.rs).
  where="the job summary of this run"
  if [ -n "$run_url" ]; then where="the job summary of this run ($run_url)"; fi
  note=$(printf '\n\n---\n**Report truncated**: this comment holds its first part (GitHub allows %s characters in a comment; the report has %s bytes). The full report is in %s, or, when too long for a summary, the summary says where%s.\n' "$limit" "$report_bytes" "$where" "$artifact_where")
  # Room for the marker, the note, and closing tags of open <details>.
  room=$((limit - ${#marker} - 1 - $(printf '%s' "$note" | wc -c) - 200))
  if [ "$room" -lt 0 ]; then room=0; fi
  # Cut at the last whole line within the room: never inside a character.
  head -c "$room" "$REPORT" > "$work/cut"
  if [ -n "$(tail -c 1 "$work/cut")" ]; then
    kept=$(($(wc -c < "$work/cut") - $(tail -n 1 "$work/cut" | wc -c)))
    if [ "$kept" -lt 0 ]; then kept=0; fi
    head -c "$kept" "$work/cut" > "$work/cut2"
    mv "$work/cut2" "$work/cut"
  fi
  opened=$(grep -c '<details>' "$work/cut" || true)
  closed=$(grep -c '</details>' "$work/cut" || true)
  fences=$(grep -c '^```' "$work/cut" || true)
  {
    echo "$marker"
    cat "$work/cut"
    if [ $((fences % 2)) = 1 ]; then echo '```'; fi
    k=$((opened - closed))
    while [ "$k" -gt 0 ]; do
      echo '</details>'
      k=$((k - 1))
    done
    printf '%s\n' "$note"
  } > "$work/body"
fi

# The token's identity (see the top of this file); GITHUB_TOKEN's when the
# query fails, the default token being the one the action is given.
if me=$(gh api graphql -f 'query={viewer{login}}' --jq .data.viewer.login 2> "$work/err") && [ -n "$me" ]; then
  :
else
  me='github-actions[bot]'
  echo "rgate: cannot ask GitHub who the token is ($(tr -s '\n' ' ' < "$work/err" | cut -c 1-200)); looking for comments by $me"
fi
# A login is letters, digits and hyphens, with `[bot]` for an app: anything
# else is not put into the query below.
if ! [[ "$me" =~ ^[A-Za-z0-9-]+(\[bot\])?$ ]]; then
  echo "::notice title=rgate::$(escape_data "cannot comment on the pull request: GitHub named the token's identity \`$me\`, not a login; the report is in the job summary")"
  exit 0
fi
query=".[] | select((.body | startswith(\"$marker\")) and .user.login == \"$me\") | .id"
if ! ids=$(gh api --paginate "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" --jq "$query" 2> "$work/err"); then
  degrade read
fi
id=$(head -n 1 <<< "$ids")

if [ "$mode" = on-failure ] && [ "$verdict" != fail ] && [ -z "$id" ]; then
  echo "rgate: the gate did not fail and no earlier rgate comment is on #$PR_NUMBER; none written (comment: on-failure)"
  exit 0
fi

if [ -n "$id" ]; then
  gh api --method PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$id" -F "body=@$work/body" > /dev/null 2> "$work/err" || degrade update
  echo "rgate: updated comment $id on #$PR_NUMBER"
else
  gh api --method POST "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" -F "body=@$work/body" > /dev/null 2> "$work/err" || degrade create
  echo "rgate: commented on #$PR_NUMBER"
fi
