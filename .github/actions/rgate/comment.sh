#!/usr/bin/env bash
# Keeps one rgate comment on a pull request up to date: finds the comment
# that starts with the hidden marker and edits it in place, or creates it.
# Uses the gh CLI with the job token (GH_TOKEN). When the token may not
# write (a pull request from a fork), it says so with a notice and exits 0:
# the report is still in the job summary.
#
# Environment: REPORT (Markdown file), PR_NUMBER, GITHUB_REPOSITORY, GH_TOKEN.
set -euo pipefail

marker='<!-- rgate-report -->'
: "${REPORT:?REPORT must name the Markdown report}"
: "${PR_NUMBER:?PR_NUMBER must be the pull request number}"
: "${GITHUB_REPOSITORY:?GITHUB_REPOSITORY must be owner/name}"

degrade() {
  echo "::notice title=rgate::cannot $1 the pull request comment (a fork's token has no write permission); the report is in the job summary"
  exit 0
}

body=$(mktemp)
trap 'rm -f "$body"' EXIT
{
  echo "$marker"
  cat "$REPORT"
} > "$body"

if ! ids=$(gh api --paginate "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" \
  --jq ".[] | select(.body | startswith(\"$marker\")) | .id"); then
  degrade read
fi
id=$(head -n 1 <<<"$ids")

if [ -n "$id" ]; then
  gh api --method PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$id" -F "body=@$body" > /dev/null || degrade update
  echo "rgate: updated comment $id on #$PR_NUMBER"
else
  gh api --method POST "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" -F "body=@$body" > /dev/null || degrade create
  echo "rgate: commented on #$PR_NUMBER"
fi
