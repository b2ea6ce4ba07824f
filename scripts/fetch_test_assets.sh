#!/usr/bin/env bash
# Fetch the browser test's own assets with `npm pack` into _test_assets/ (gitignored; NOT part of
# the book: nothing under it is served or loaded by a page; the test injects it into the page
# it checks, with Playwright's add_script_tag(path=...)).
#   _test_assets/axe-core/axe.min.js   the axe-core accessibility checker (MPL-2.0)
# The version is pinned; a stamp makes a second run a no-op.
set -euo pipefail
cd "$(dirname "$0")/.."

AXE=axe-core@4.14.1
DEST=_test_assets
STAMP=$DEST/.stamp

if [[ -f $STAMP && "$(cat "$STAMP")" == "$AXE" && -s $DEST/axe-core/axe.min.js ]]; then
    exit 0
fi
command -v npm >/dev/null || { echo "fetch_test_assets: npm is required" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$AXE" >/dev/null)
rm -rf "$DEST"; mkdir -p "$DEST/axe-core"
tar -xzf "$tmp"/axe-core-*.tgz -C "$DEST/axe-core" --strip-components=1 \
    package/axe.min.js package/LICENSE
[[ -s $DEST/axe-core/axe.min.js ]] || { echo "fetch_test_assets: missing axe.min.js" >&2; exit 1; }
echo "$AXE" > "$STAMP"
echo "fetch_test_assets: $AXE -> $DEST/"
