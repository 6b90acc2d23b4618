#!/usr/bin/env bash
# Compression benchmark: vomc's models next to xz -9e, zstd -19, bzip2 -9 and
# 7-Zip PPMd order 6 on the Calgary and Canterbury corpora, on one core.
#
#   scripts/bench_compress.sh [MODELS] [RUNS]
#
# MODELS is a comma-separated list (default mix,ppm,ctw); RUNS the number of
# timing runs per file (speeds are the best run; default 1). The external
# tools are installed with apt-get when missing and when we may (root or
# sudo); otherwise the table simply leaves them out. The corpora are read
# from ../shared/data/corpus (never modified).
set -euo pipefail
cd "$(dirname "$0")/.."
models=${1:-mix,ppm,ctw}
runs=${2:-1}
corpus=../shared/data/corpus

need=()
command -v xz >/dev/null || need+=(xz-utils)
command -v zstd >/dev/null || need+=(zstd)
command -v bzip2 >/dev/null || need+=(bzip2)
command -v 7z >/dev/null || command -v 7za >/dev/null || command -v 7zz >/dev/null || need+=(p7zip-full)
if ((${#need[@]})); then
	sudo=""
	if [ "$(id -u)" != 0 ]; then
		if command -v sudo >/dev/null; then sudo="sudo -n"; else sudo=none; fi
	fi
	if [ "$sudo" != none ]; then
		echo "installing ${need[*]}" >&2
		{ $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"; } >&2 ||
			echo "apt-get failed; going on without ${need[*]}" >&2
	else
		echo "cannot install ${need[*]} (not root, no sudo); going on without" >&2
	fi
fi

if [ ! -d "$corpus/calgary" ]; then
	echo "no corpus in $corpus" >&2
	exit 1
fi
bin=$(mktemp -d)/vomc
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/vomc
for c in calgary cantrbry; do
	echo "== $c"
	GOMAXPROCS=1 "$bin" bench compress --models "$models" --runs "$runs" "$corpus/$c"/*
done
