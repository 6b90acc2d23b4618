#!/bin/bash
# build_head.sh — builds vomc from the committed code (HEAD, not the
# working tree's edits) into the file BIN, and prints the revision.
#
#   scripts/build_head.sh BIN
#
# Used by ladder.sh and bench_jobs.sh, so that a long run or a measurement
# names the revision its binary was built from.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:?usage: scripts/build_head.sh BIN}
case "$BIN" in /*) ;; *) BIN=$PWD/$BIN ;; esac
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
git archive HEAD | tar -x -C "$src"
mkdir -p "$(dirname "$BIN")"
(cd "$src" && go build -o "$BIN" ./cmd/vomc)
git rev-parse --short HEAD
