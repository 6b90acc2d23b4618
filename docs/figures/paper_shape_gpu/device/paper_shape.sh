#!/usr/bin/env bash
# Device script: the paper's shape (D<=5 mixed depths, N=1536, E=128, 8 heads, batch 512)
# trained with vomc's torch engine at ~10% of the paper's token budget, evaluated against CTW.
# Env: STEPS2 STEPS4 K NK N TESTK DEVICE DEADLINE (seconds from start), V (the vomc binary), W (work dir).
# Prepare here: CGO_ENABLED=0 go build -o .dev/vomc ./cmd/vomc (with .dev/ in .git/info/exclude), copy this script
# to .dev/, rehearse it on the CPU with tiny settings (DEVICE=cpu STEPS2=6 STEPS4=4 K=200 NK=512 N=128 TESTK=50 E=16
# H=2 B=8 VOMC_PYTHON=/usr/bin/python3), then one device call: carry [".dev"], timeout_s 540, command
#   STEPS2=1500 STEPS4=900 DEADLINE=470 .dev/paper_shape.sh
# About 7 minutes of an H100 (2-layer ~60 ms, 4-layer ~110 ms per step of 512 x 1536 symbols). Everything it
# returns is under $OUT: results.tgz (evaluation, training logs), models.tar (the three models), logs.
set -u
T0=$(date +%s)
OUT=${OUT:-$(mktemp -d)}; mkdir -p "$OUT"
V=${V:-.dev/vomc}
W=${W:-$(mktemp -d)}; mkdir -p "$W"
DEV=${DEVICE:-cuda}
STEPS2=${STEPS2:-1200}; STEPS4=${STEPS4:-900}
K=${K:-20000}; NK=${NK:-5120}; N=${N:-1536}; TESTK=${TESTK:-1024}
E=${E:-128}; H=${H:-8}; B=${B:-512}
DEADLINE=${DEADLINE:-520}
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
log() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/run.log"; }

{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1; nproc; lscpu | grep -i 'model name';
  python3 -c "import torch;print('torch',torch.__version__,torch.cuda.is_available())" 2>&1; } > "$W/machine.txt"
cat "$W/machine.txt" | tee -a "$OUT/run.log"

log "data"
$V data -A 3 -D 1,2,3,4,5 -K $K --NK $NK -N $N --fresh=false --seed 101 --out $W/train 2>&1 | tail -2
$V data -A 3 -D 1,2,3,4,5 -K $TESTK -N $N --seed 202 --out $W/test 2>&1 | tail -1
$V data -A 3 -D 1,2,3,4,5 -K 300 --NK $NK -N $N --fresh=false --seed 303 --out $W/tune 2>&1 | tail -1
log "data done"

train() { # name steps layers [extra flags]
  local name=$1 steps=$2 layers=$3; shift 3
  local budget=$(( $(left) - 90 ))
  if [ $budget -lt 40 ]; then log "skip $name (left $(left))"; return; fi
  log "train $name steps=$steps budget=${budget}s"
  timeout -s INT $budget $V train --engine torch --device $DEV --data $W/train --out $W/$name \
    --layers $layers --heads $H -E $E --batch $B --max-steps $steps --warmup 100 --seed 7 \
    --checkpoint-every 300 --log-every 20 "$@" > $W/$name.log 2>&1
  log "train $name rc=$? $(tail -c 300 $W/$name.log | tr '\n' ' ')"
}
train tf88 $STEPS2 2
train tf8888 $STEPS4 4
train tf88sin $STEPS2 2 --pos sinusoidal

log "eval (left $(left))"
BAYES=bayes; $V eval -h 2>&1 | grep -qi bayes || BAYES=""
[ -n "$BAYES" ] || log "no bayes method in this build: CTW(D=5) is the only reference"
M="${BAYES:+$BAYES,}ctw,kn,markov:k=1,markov:k=2,markov:k=3,markov:k=4,markov:k=5,unigram"
for m in tf88 tf8888 tf88sin; do [ -f $W/$m/model.safetensors ] && M="$M,tf:path=$W/$m"; done
timeout -s INT $(( $(left) - 15 )) $V eval --data $W/test --train $W/tune --methods "$M" --out $W/eval --workers $(nproc) > $W/eval.log 2>&1
log "eval rc=$?"
cat $W/eval.log | tail -30
(cd $W && tar cf "$OUT/models.tar" */model.safetensors */config.json 2>/dev/null)
for m in tf88 tf8888 tf88sin; do [ -f $W/$m/checkpoint.safetensors ] && (cd $W && tar cf "$OUT/ckpt-$m.tar" $m/checkpoint.safetensors $m/train_config.json $m/config.json); done
(cd $W && tar czf "$OUT/results.tgz" machine.txt eval/results.json eval/summary.txt eval/*.png */config.json */train_config.json */train.jsonl *.log 2>/dev/null)
if [ $(left) -gt 45 ]; then
  log "eval on the CUDA backend (left $(left))"
  TM=""; for m in tf88 tf8888 tf88sin; do [ -f $W/$m/model.safetensors ] && TM="$TM,tf:path=$W/$m"; done
  timeout -s INT $(( $(left) - 10 )) $V eval --data $W/test --methods "${TM#,}" --backend cuda --out $W/evalcuda > $W/evalcuda.log 2>&1
  log "eval cuda rc=$?"; tail -8 $W/evalcuda.log
  (cd $W && tar czf "$OUT/results.tgz" machine.txt eval/results.json eval/summary.txt eval/*.png evalcuda/results.json evalcuda/summary.txt */config.json */train_config.json */train.jsonl *.log 2>/dev/null)
fi
ls -la "$OUT"
log "end"
