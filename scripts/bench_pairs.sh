#!/bin/sh
# A/B of two vomc binaries on `vomc bench train`, in interleaved pairs:
# for each thread count, PAIRS rounds of (A, B) — or (B, A) on odd rounds,
# so that neither binary always runs second — each one call of
#
#   vomc bench train --configs CONFIGS --threads T --steps STEPS --json
#
# One JSON line per binary, config and round goes to OUT (tokens/s and the
# last training loss), then a summary: per config and thread count, the
# median tokens/s of each binary and the median over the rounds of B/A
# (the ratio within a round, taken one after the other, is what survives a
# machine whose speed drifts), with its range.
#
# Usage: scripts/bench_pairs.sh A-BINARY B-BINARY OUT.jsonl
# Environment: PAIRS (default 8), THREADS (default "1 2"), CONFIGS
# (default C1,C2), STEPS (default 6), PYTHON (default python3).
set -eu
if [ $# -ne 3 ]; then
	echo "usage: $0 A-BINARY B-BINARY OUT.jsonl" >&2
	exit 2
fi
A=$1 B=$2 OUT=$3
PAIRS=${PAIRS:-8} THREADS=${THREADS:-"1 2"} CONFIGS=${CONFIGS:-C1,C2} STEPS=${STEPS:-6}
PYTHON=${PYTHON:-python3}
for bin in "$A" "$B"; do
	[ -x "$bin" ] || { echo "$0: $bin is not an executable" >&2; exit 2; }
done
if [ -e "$OUT" ]; then
	echo "$0: $OUT exists; not overwriting it" >&2
	exit 2
fi
: >"$OUT"
run() { # bin label threads round
	"$1" bench train --configs "$CONFIGS" --threads "$3" --steps "$STEPS" --json |
		"$PYTHON" -c '
import json, sys
label, th, rnd = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for r in json.load(sys.stdin):
    print(json.dumps({"bin": label, "threads": th, "round": rnd, "cfg": r["name"],
                      "tokens_per_s": r["tokens_per_s"], "loss": r.get("loss")}))
' "$2" "$3" "$4" >>"$OUT"
}
for t in $THREADS; do
	i=0
	while [ "$i" -lt "$PAIRS" ]; do
		if [ $((i % 2)) -eq 0 ]; then
			run "$A" A "$t" "$i"
			run "$B" B "$t" "$i"
		else
			run "$B" B "$t" "$i"
			run "$A" A "$t" "$i"
		fi
		i=$((i + 1))
	done
done
"$PYTHON" - "$OUT" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
keys = sorted({(r["cfg"], r["threads"]) for r in rows})
print("config threads  A tokens/s  B tokens/s  B/A (median of rounds)  range")
for cfg, th in keys:
    sel = [r for r in rows if r["cfg"] == cfg and r["threads"] == th]
    a = {r["round"]: r["tokens_per_s"] for r in sel if r["bin"] == "A"}
    b = {r["round"]: r["tokens_per_s"] for r in sel if r["bin"] == "B"}
    ratios = [b[k] / a[k] for k in a if k in b]
    print(f"{cfg:6} {th:7}  {statistics.median(a.values()):10.0f}  {statistics.median(b.values()):10.0f}"
          f"  {statistics.median(ratios):22.3f}  {min(ratios):.3f}–{max(ratios):.3f}")
EOF
