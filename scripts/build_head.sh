#!/bin/bash
# build_head.sh — builds vomc from the committed code (HEAD, not the
# working tree's edits, or the revision REV) into the file BIN, and prints
# the revision.
#
#   scripts/build_head.sh BIN [REV]
#
# Used by ladder.sh and bench_jobs.sh, so that a long run or a measurement
# names the revision its binary was built from.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:?usage: scripts/build_head.sh BIN [REV]}
REV=${2:-HEAD}
git rev-parse --verify -q "$REV^{commit}" >/dev/null || { echo "build_head.sh: no commit $REV in this clone" >&2; exit 1; }
case "$BIN" in /*) ;; *) BIN=$PWD/$BIN ;; esac
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
git archive "$REV" | tar -x -C "$src"
mkdir -p "$(dirname "$BIN")"
(cd "$src" && go build -trimpath -o "$BIN" ./cmd/vomc) # -trimpath: the same commit, the same bytes, whatever the temporary directory
git rev-parse --short "$REV"
