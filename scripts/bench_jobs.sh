#!/bin/bash
# bench_jobs.sh — the wall time of `vomc reproduce --jobs 2` against
# `--jobs 1` on one preset (issue 34, item 1), with one binary, one run
# after the other, and a check that both wrote the same files.
#
#   scripts/bench_jobs.sh [DIR [reproduce flags…]]
#
# DIR (default /tmp/bench-jobs) receives the binary (built from HEAD), the
# two runs (DIR/jobs1, DIR/jobs2) and times.txt. Extra flags go to both runs
# (default: --preset small). The machine must be otherwise idle: the script
# refuses to start while the budget ladder (scripts/ladder.sh) runs, and
# prints the load average before each run. Each run uses its own fresh
# output directory, so nothing is cached; the code key is fixed so that
# both runs have the same stage hashes.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-/tmp/bench-jobs}
shift || true
ARGS=("$@")
[ ${#ARGS[@]} -gt 0 ] || ARGS=(--preset small)
if pgrep -f "reproduce --preset ladder" >/dev/null; then
	echo "bench_jobs: the budget ladder is running; stop it first (scripts/ladder.sh stop)" >&2
	exit 1
fi
for leg in jobs1 jobs2; do
	if [ -e "$DIR/$leg" ]; then
		echo "bench_jobs: $DIR/$leg exists; remove it or name another DIR" >&2
		exit 1
	fi
done
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
rev=$(scripts/build_head.sh "$DIR/vomc")
{
	echo "bench_jobs: vomc built from $rev; flags: ${ARGS[*]}; $(nproc) cores"
	for J in 1 2; do
		echo "load average before --jobs $J: $(cut -d' ' -f1-3 /proc/loadavg)"
		t0=$(date +%s.%N)
		"$DIR/vomc" reproduce "${ARGS[@]}" --jobs "$J" --code-key bench-jobs --out "$DIR/jobs$J" >"$DIR/jobs$J.log" 2>&1 ||
			{ echo "bench_jobs: --jobs $J failed; see $DIR/jobs$J.log" >&2; exit 1; }
		t1=$(date +%s.%N)
		echo "--jobs $J: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
	done
} | tee "$DIR/times.txt"
# Same files, and the same bytes but for what records time: JSON compared
# without the values of the keys that hold wall times (and the hashes that
# cover them; the text of every other value, numbers included, is kept as
# it is), safetensors by their tensor bytes; the reports are left out
# (they print the stage times).
norm() {
	perl -0777 -pe 's/"(Seconds|seconds|finished|elapsed_s|tokens_per_s|elapsed_ns|output_hash)"\s*:\s*("[^"]*"|[-+0-9.eE]+)/"$1":_/g; s/"dep_outputs"\s*:\s*\{[^}]*\}/"dep_outputs":_/g' "$1"
}
hdr() { echo $((8 + $(od -An -t u8 -N8 "$1"))); }
same() {
	case "$1" in
	*.json | *.jsonl) cmp -s <(norm "$DIR/jobs1/$1") <(norm "$DIR/jobs2/$1") ;;
	*.safetensors) cmp -s -i "$(hdr "$DIR/jobs1/$1"):$(hdr "$DIR/jobs2/$1")" "$DIR/jobs1/$1" "$DIR/jobs2/$1" ;;
	*) cmp -s "$DIR/jobs1/$1" "$DIR/jobs2/$1" ;;
	esac
}
n=0
differ=()
while IFS= read -r f; do
	case "$f" in ./report.* | ./stages/report-*/report.* | *.lock) continue ;; esac
	n=$((n + 1))
	same "$f" || differ+=("$f")
done < <(cd "$DIR/jobs1" && find . -type f | sort)
missing=$(diff <(cd "$DIR/jobs1" && find . -type f | sort) <(cd "$DIR/jobs2" && find . -type f | sort) || true)
{
	echo "files compared: $n (reports left out); differing beyond wall times: ${#differ[@]}"
	[ ${#differ[@]} -eq 0 ] || printf '  %s\n' "${differ[@]}"
	if [ -n "$missing" ]; then
		echo "files in one run only:"
		echo "$missing"
	fi
} | tee -a "$DIR/times.txt"
[ "$n" -gt 0 ] && [ ${#differ[@]} -eq 0 ] && [ -z "$missing" ]
