#!/bin/bash
# Device check 4: attention with 2 rows per thread and the row terms from the forward's output.
set -u
cd "$(dirname "$0")"
V=./vomc
T=../transformer/backend/cuda
exec > >(tee $OUT/cuda3.log) 2>&1
step() { echo; echo "=== [$SECONDS s] $*"; }
date; nvidia-smi --query-gpu=name --format=csv,noheader
step "tests on the GPU"
(cd $T && timeout 90 ../../../.dev/cuda.test -test.run 'TestConformance|TestGemm|TestAttention|TestTrainingMatchesCPU|TestDeterministic|TestPTXCurrent' -test.v -test.count=1 2>&1 | grep -v '^=== RUN')
step "speed: CUDA backend"
timeout 40 $V bench train --backend cuda --configs C1,C2 --steps 20 --warmup 3
timeout 40 $V bench train --backend cuda --configs paper --steps 5 --warmup 2
step "speed: torch engine, same call"
timeout 50 $V bench train --engine torch --device cuda --configs C1,C2 --steps 20 --warmup 5 --plain=false
timeout 50 $V bench train --engine torch --device cuda --configs paper --plain=false --steps 10 --warmup 3
step "attention ops"
(cd $T && timeout 40 ../../../.dev/cuda.test -test.run XXX -test.bench 'Ops/.*/attention' -test.benchtime 5x)
step done
