#!/usr/bin/env bash
# Installs rgate for the composite action into $RGATE_HOME/bin and puts it
# on PATH: the prebuilt binary of the GitHub release when one fits the
# runner (checked against its .sha256), else `cargo install --locked`
# (from this action's own source when no version was asked for).
#
# Environment: RGATE_HOME, RGATE_VERSION (optional, e.g. 0.1.0),
# ACTION_REPO (owner/name the action came from), GH_TOKEN, RUNNER_OS,
# RUNNER_ARCH, GITHUB_ACTION_PATH, GITHUB_PATH.
set -euo pipefail

bin="$RGATE_HOME/bin"
mkdir -p "$bin"
echo "$bin" >> "$GITHUB_PATH"
src="$GITHUB_ACTION_PATH/../../.."
version="${RGATE_VERSION:-}"
if [ -z "$version" ] && [ -f "$src/Cargo.toml" ]; then
  version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$src/Cargo.toml" | head -n 1)
fi

if [ -x "$bin/rgate" ] && [ "$("$bin/rgate" --version)" = "rgate $version" ]; then
  echo "rgate $version: cached"
  exit 0
fi

case "$RUNNER_OS/$RUNNER_ARCH" in
  Linux/X64) target=x86_64-unknown-linux-musl ;;
  Linux/ARM64) target=aarch64-unknown-linux-musl ;;
  macOS/X64) target=x86_64-apple-darwin ;;
  macOS/ARM64) target=aarch64-apple-darwin ;;
  *) target= ;;
esac

if [ -n "$target" ] && [ -n "$version" ] && [ -n "${ACTION_REPO:-}" ]; then
  tmp=$(mktemp -d)
  asset="rgate-$target.tar.gz"
  if gh release download "v$version" --repo "$ACTION_REPO" --dir "$tmp" \
    --pattern "$asset" --pattern "$asset.sha256" 2> "$tmp/err"; then
    if (cd "$tmp" && { sha256sum -c "$asset.sha256" 2> /dev/null || shasum -a 256 -c "$asset.sha256"; }); then
      tar -xzf "$tmp/$asset" -C "$bin" rgate
      echo "rgate $version: prebuilt $asset"
      exit 0
    fi
    echo "::warning title=rgate::$asset does not match its checksum; building from source instead"
  else
    echo "no prebuilt rgate $version for $target ($(tr '\n' ' ' < "$tmp/err")); building from source"
  fi
fi

if [ -z "${RGATE_VERSION:-}" ] && [ -f "$src/Cargo.toml" ]; then
  cargo install --locked --root "$RGATE_HOME" --path "$src"
else
  cargo install --locked --root "$RGATE_HOME" rgate --version "$version"
fi
