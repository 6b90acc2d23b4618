#!/bin/bash
# Device check 1 (docs/gpu/CHECKLIST item 1): the PyTorch engine on CUDA.
set -u
cd "$(dirname "$0")"
V=./vomc
export PYTHONUNBUFFERED=1
exec > >(tee $OUT/torch.log) 2>&1
DEADLINE=${DEADLINE:-330}
left() { echo $((DEADLINE - SECONDS)); }
step() { echo; echo "=== [$SECONDS s] $*"; }
date; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; nproc
python3 -c 'import torch,sys;print(sys.version.split()[0], torch.__version__, torch.cuda.is_available(), torch.cuda.get_device_name(0))'
nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv -lms 250 > $OUT/gpumem.csv &
step "correctness: torch engine on cuda, float32 (amp off), 100 steps, same flags as the Go reference"
timeout 90 $V train --engine torch --device cuda --amp off --data small-train --out cuda-fp32 --layers 2 --heads 4 -E 64 --batch 32 --max-steps 100 --log-every 1 --warmup 20
step "correctness: torch engine on cuda, default features (bf16 autocast, sdpa, fused AdamW), 400 steps"
timeout 90 $V train --engine torch --device cuda --data small-train --out cuda-bf16 --layers 2 --heads 4 -E 64 --batch 32 --max-steps 400 --log-every 10 --warmup 20
step "the CUDA-trained models evaluated by vomc's Go engine"
timeout 60 $V eval --data small-test --methods ctw,tf:path=cuda-fp32:name=cuda-fp32,tf:path=cuda-bf16:name=cuda-bf16,tf:path=go-ref:name=go-ref --out eval-small
step "speed: engine vs plain eager float32, C1, C2, paper shape at batch 32"
timeout 150 $V bench train --engine torch --device cuda --configs C1,C2,L=4:H=8:E=128:N=1536:B=32 --steps 20 --warmup 5
step "speed: the paper configuration (batch 512), engine only (plain eager float32 keeps 4 layers x B*NH*T^2 scores)"
timeout 120 $V bench train --engine torch --device cuda --configs paper --plain=false --steps 10 --warmup 3
step "speed: torch.compile"
[ $(left) -gt 100 ] && timeout $(( $(left) - 60 )) $V bench train --engine torch --device cuda --compile --configs C2,paper --plain=false --steps 10 --warmup 5
step "paper-scale model: data (2000 trees, depths 1..5, N_K 5120, N 1536) and training at batch 512"
timeout 60 $V data -D 1,2,3,4,5 -K 2000 -NK 5120 -N 1536 --fresh=false --workers 16 --out paper-train --seed 7
[ $(left) -gt 40 ] && timeout $(( $(left) - 20 )) $V train --engine torch --device cuda --data paper-train --out paper-run --layers 4 --heads 8 -E 128 --batch 512 --max-steps 200 --log-every 5 --warmup 20 --checkpoint-every 50
kill %1 2>/dev/null
step "done"
tar czf $OUT/results.tgz cuda-fp32/train.jsonl cuda-bf16/train.jsonl eval-small/summary.txt eval-small/results.json paper-run/train.jsonl paper-run/config.json 2>/dev/null
ls -la $OUT
