#!/bin/bash
# Device check 3: the CUDA backend's second version (float4 attention, 128-tile GEMM) against the torch engine, same call.
set -u
cd "$(dirname "$0")"
V=./vomc
T=../transformer/backend/cuda
export PYTHONUNBUFFERED=1
exec > >(tee $OUT/cuda2.log) 2>&1
DEADLINE=${DEADLINE:-300}
left() { echo $((DEADLINE - SECONDS)); }
step() { echo; echo "=== [$SECONDS s] $*"; }
date; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv -lms 250 > $OUT/gpumem.csv &
step "tests on the GPU"
(cd $T && timeout 150 ../../../.dev/cuda.test -test.run 'TestConformance|TestGemm|TestAttention|TestTrainingMatchesCPU|TestDeterministic|TestPTXCurrent' -test.v -test.count=1 2>&1 | grep -v '^=== RUN')
step "speed: CUDA backend"
timeout 60 $V bench train --backend cuda --configs C1,C2 --steps 20 --warmup 3
timeout 60 $V bench train --backend cuda --configs paper --steps 5 --warmup 2
step "speed: torch engine, same call"
timeout 60 $V bench train --engine torch --device cuda --configs C1,C2 --steps 20 --warmup 5 --plain=false
timeout 60 $V bench train --engine torch --device cuda --configs paper --plain=false --steps 10 --warmup 3
step "ops at C2 and paper shapes"
(cd $T && timeout 60 ../../../.dev/cuda.test -test.run XXX -test.bench Ops -test.benchtime 5x)
step "torch.compile at the paper configuration"
[ $(left) -gt 100 ] && timeout $(( $(left) - 30 )) $V bench train --engine torch --device cuda --compile --configs paper --plain=false --steps 10 --warmup 5
step "CPU engine on 16 cores vs PyTorch CPU (same threads)"
for th in 1 4 16; do
  [ $(left) -gt 25 ] || break
  timeout 20 $V bench train --threads $th --configs C1 --steps 4 --warmup 1 | tail -1
  [ $(left) -gt 25 ] || break
  OMP_NUM_THREADS=$th timeout 25 $V bench train --engine torch --device cpu --torch-threads $th --configs C1 --steps 3 --warmup 1 | tail -3
done
kill %1 2>/dev/null
step done
