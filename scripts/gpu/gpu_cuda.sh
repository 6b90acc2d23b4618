#!/bin/bash
# Device check 2 (CHECKLIST item 2): the native CUDA backend.
set -u
cd "$(dirname "$0")"
V=./vomc
T=../transformer/backend/cuda
export PYTHONUNBUFFERED=1
exec > >(tee $OUT/cuda.log) 2>&1
DEADLINE=${DEADLINE:-300}
left() { echo $((DEADLINE - SECONDS)); }
step() { echo; echo "=== [$SECONDS s] $*"; }
date; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv -lms 250 > $OUT/gpumem.csv &
step "conformance suite, CPU-vs-CUDA training (50 steps), determinism"
(cd $T && timeout 150 ../../../.dev/cuda.test -test.run 'TestConformance|TestTrainingMatchesCPU|TestDeterministic|TestPTXCurrent' -test.v -test.count=1 2>&1 | grep -v '^=== RUN')
step "end to end: vomc train --backend cuda, the Go reference's flags"
timeout 60 $V train --backend cuda --data small-train --out cuda-go --layers 2 --heads 4 -E 64 --batch 32 --max-steps 100 --log-every 1 --warmup 20
timeout 60 $V eval --data small-test --methods ctw,tf:path=cuda-go:name=cuda-go,tf:path=go-ref:name=go-ref --out eval-cuda
timeout 60 $V eval --backend cuda --data small-test --methods ctw,tf:path=cuda-go:name=cuda-go-evaluated-on-gpu --out eval-cuda-gpu
step "speed: CUDA backend"
timeout 60 $V bench train --backend cuda --configs C1,C2 --steps 20 --warmup 3
[ $(left) -gt 120 ] && timeout 90 $V bench train --backend cuda --configs paper --steps 5 --warmup 2
step "speed: torch engine in the same call"
timeout 60 $V bench train --engine torch --device cuda --configs C1,C2 --steps 20 --warmup 5 --plain=false
timeout 60 $V bench train --engine torch --device cuda --configs paper --plain=false --steps 10 --warmup 3
step "ops at C2 and paper shapes"
[ $(left) -gt 40 ] && (cd $T && timeout $(( $(left) - 15 )) ../../../.dev/cuda.test -test.run XXX -test.bench Ops -test.benchtime 5x)
kill %1 2>/dev/null
step done
tar czf $OUT/results.tgz cuda-go/train.jsonl eval-cuda/summary.txt eval-cuda-gpu/summary.txt 2>/dev/null
