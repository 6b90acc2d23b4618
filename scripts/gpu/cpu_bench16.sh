#!/usr/bin/env bash
# Device script: the CPU engine against the torch engine on the lent machine's CPU cores (issue 34 item 4:
# ≥ 1.5× PyTorch 2.11 at every thread count), all in one call, with a deadline. For each thread count of
# THREADS, `vomc bench train --json` (C1, C2) with the Go engine and with the torch engine (fp32, SDPA;
# OMP/MKL threads = T), alternating Go, torch, Go, torch, … REPS times (REPS_LOW at ≤ 2 threads, where
# the ratio is closest to the target and one run each proved too noisy: PyTorch's 1-thread speed moved
# 1.75× between two days); every report in $OUT/json/, and $OUT/cpu16.txt ends with a table of the
# median tokens/s of each engine, the ratio of the medians and the range of the paired ratios
# (bench_summary.py). Then, if time is left, the per-op profile at 1 thread, the attention ops fused vs
# GEMM (`BenchmarkAttention`, -cpu 1) and the GEMMs of C1 at 1 thread (`BenchmarkGemm`), from test
# binaries built here.
#
# Here, before the call (the tree that travels must stay under 64 MiB):
#   grep -qx /.dev/ .git/info/exclude || echo /.dev/ >> .git/info/exclude
#   mkdir -p .dev && cp scripts/gpu/cpu_bench16.sh scripts/gpu/bench_summary.py .dev/
#   CGO_ENABLED=0 go build -tags nodemo -trimpath -ldflags="-s -w" -o .dev/vomc ./cmd/vomc
#   CGO_ENABLED=0 go test -c -o .dev/cpu.test ./transformer/backend/cpu
#   CGO_ENABLED=0 go test -c -o .dev/kernels.test ./transformer/kernels
#   xz -9e .dev/vomc .dev/cpu.test .dev/kernels.test   (unpacked there: the tracked tree is ≈ 45.5 MiB, 2026-12-07; check the sum)
#   echo $(( ($(git ls-files -z | xargs -0 stat -c %s | paste -sd+ | bc) + $(du -sb .dev | cut -f1)) >> 20 )) MiB
# Device call (carry [".dev"], timeout_s 300): DEADLINE=280 .dev/cpu_bench16.sh
# Rehearse here: THREADS="1 2" REPS_LOW=2 DEADLINE=150 OUT=/tmp/cb VOMC_PYTHON=/usr/bin/python3 bash .dev/cpu_bench16.sh
set -u
T0=$(date +%s)
OUT=${OUT:-$(mktemp -d)}; mkdir -p "$OUT/json"
DEADLINE=${DEADLINE:-280}; THREADS=${THREADS:-1 2 4 8 16}; REPS_LOW=${REPS_LOW:-3}; REPS=${REPS:-1}
PY=${VOMC_PYTHON:-python3}
B="$OUT/cpu16.txt"
# The binaries travel xz-compressed; each is unpacked outside the tree (nothing left to travel), with
# xz(1) or, without it, Python's lzma; an uncompressed .dev/NAME is used as it is.
U=$(mktemp -d)
for z in .dev/*.xz; do
	[ -f "$z" ] || continue
	u="$U/$(basename "${z%.xz}")"
	{ if command -v xz >/dev/null; then xz -dc "$z"; else $PY -c 'import lzma,sys; sys.stdout.buffer.write(lzma.open(sys.argv[1]).read())' "$z"; fi > "$u.part" &&
		chmod +x "$u.part" && mv "$u.part" "$u"; } || { echo "cannot unpack $z" >&2; exit 2; }
done
bin() { if [ -x "$U/$1" ]; then echo "$U/$1"; else echo ".dev/$1"; fi; }
V=$(bin vomc); CPUT=$(bin cpu.test); KT=$(bin kernels.test)
[ -x "$V" ] || { echo "no .dev/vomc or .dev/vomc.xz" >&2; exit 2; }
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
{ echo "# cpu_bench16.sh $(date -u)"; nproc; lscpu | grep -iE 'model name|flags' | cut -c1-300
  $PY -c "import torch;print('torch',torch.__version__)" 2>&1; } > "$B"
run() { # run ENGINE T R: one report, $OUT/json/t$T-$ENGINE-r$R.json
  local e=$1 t=$2 r=$3 f="$OUT/json/t$2-$1-r$3.json"
  echo "## threads=$t $e rep $r (left $(left)s)" >> "$B"
  if [ "$e" = go ]; then
    timeout $(( $(left) - 5 )) $V bench train --threads "$t" --configs C1,C2 --steps 4 --warmup 1 --json > "$f" 2>> "$B"
  else
    OMP_NUM_THREADS=$t MKL_NUM_THREADS=$t timeout $(( $(left) - 5 )) $V bench train --engine torch --device cpu \
      --torch-threads "$t" --configs C1,C2 --steps 3 --warmup 1 --plain=false --json > "$f" 2>> "$B"
  fi || { echo "failed or cut off: $f" >> "$B"; rm -f "$f"; }
}
for t in $THREADS; do
  n=$REPS; [ "$t" -le 2 ] && n=$REPS_LOW
  for r in $(seq 1 "$n"); do
    [ "$(left)" -lt 25 ] && { echo "stop before threads=$t go rep $r (left $(left)s): the rest of THREADS=$THREADS not run" >> "$B"; break 2; }
    run go "$t" "$r"
    [ "$(left)" -lt 20 ] && { echo "stop before threads=$t torch rep $r (left $(left)s): the rest of THREADS=$THREADS not run" >> "$B"; break 2; }
    run torch "$t" "$r"
  done
done
echo "## summary (left $(left)s)" >> "$B"
$PY "$(dirname "$0")/bench_summary.py" "$OUT/json" >> "$B" 2>&1
if [ "$(left)" -gt 30 ]; then
  echo "## profile threads=1 C1,C2" >> "$B"
  timeout $(( $(left) - 5 )) $V bench train --threads 1 --configs C1,C2 --steps 3 --warmup 1 --profile >> "$B" 2>&1
fi
if [ "$(left)" -gt 25 ] && [ -x "$CPUT" ]; then
  echo "## attention fused vs GEMM, 1 thread" >> "$B"
  timeout $(( $(left) - 5 )) "$CPUT" -test.run '^$' -test.bench Attention -test.cpu 1 -test.benchtime 10x >> "$B" 2>&1
fi
if [ "$(left)" -gt 25 ] && [ -x "$KT" ]; then
  echo "## GEMMs of C1, 1 thread" >> "$B"
  GOMAXPROCS=1 timeout $(( $(left) - 5 )) "$KT" -test.run '^$' -test.bench 'Gemm/C1/.*/avx' -test.benchtime 100ms >> "$B" 2>&1
fi
echo "end at $(( $(date +%s) - T0 ))s" >> "$B"
cat "$B"
