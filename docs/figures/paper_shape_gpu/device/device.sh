#!/usr/bin/env bash
# One device call: issue 31 item 4 (paper shape, torch engine) then issue 34 item 4 (CPU engine vs torch on 16 cores).
set -u
T0=$(date +%s); END=${END:-515}
export OUT=${OUT:-$(mktemp -d)}; export W=${W:-$(mktemp -d)}
DEADLINE=${PSDEADLINE:-445} bash .dev/paper_shape.sh
left() { echo $(( END - ($(date +%s) - T0) )); }
B="$OUT/bench16.txt"
{ echo "# bench train, Go engine vs torch engine (CPU, fp32), same call; $(date -u)"; nproc; lscpu | grep -i 'model name'; } > "$B"
for t in 1 2 4 8 16; do
  [ $(left) -lt 25 ] && { echo "stop before threads=$t (left $(left))" >> "$B"; break; }
  echo "## threads=$t go" >> "$B"
  timeout $(( $(left) - 5 )) .dev/vomc bench train --threads $t --configs C1,C2 --steps 4 --warmup 1 >> "$B" 2>&1
  [ $(left) -lt 20 ] && { echo "stop before torch threads=$t (left $(left))" >> "$B"; break; }
  echo "## threads=$t torch" >> "$B"
  OMP_NUM_THREADS=$t MKL_NUM_THREADS=$t timeout $(( $(left) - 5 )) .dev/vomc bench train --engine torch --device cpu --torch-threads $t --configs C1,C2 --steps 3 --warmup 1 --plain=false >> "$B" 2>&1
done
if [ $(left) -gt 30 ]; then echo "## profile threads=16 C1" >> "$B"; timeout $(( $(left) - 5 )) .dev/vomc bench train --threads 16 --configs C1 --steps 3 --warmup 1 --profile >> "$B" 2>&1; fi
echo "end at $(( $(date +%s) - T0 ))s" >> "$B"
cat "$B"; ls -la "$OUT"
