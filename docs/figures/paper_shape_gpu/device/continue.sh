#!/usr/bin/env bash
# Device script: carry one paper-shape run on towards the paper's budget on a lent GPU (issue 31 item 4,
# issue 45 item 3), across sessions. The run lives in $CKPT (default .dev/ckpt/$NAME; a committed run:
# CKPT=docs/figures/paper_shape_gpu/ckpt/$NAME): if it holds a checkpoint the run resumes (same
# settings), else it starts with $FLAGS. It trains until the deadline (SIGINT: a checkpoint is written),
# then evaluates where the run stands — the checkpoint's current parameters (tf:path=CKPT/checkpoint.safetensors;
# with the paper's constant learning rate a point on the paper's own training curve) and, once the run has
# ended, its model (the best validation parameters) — against Bayes, CTW and Markov(1..5) on the 1024 test
# windows of README.md, into $CKPT/evals/step-S/ (S the checkpoint's step) or $CKPT/evals/final/. It returns
# the run in $OUT ($NAME-checkpoint.safetensors alone, everything else in $NAME-run.tgz; this call's
# training log also as $NAME-train.log). After each call, here: curve.py adds the evaluations to the
# growing table and figure (excess over Bayes against training tokens).
#
# The paper's protocol (issue 45 item 2: the appendix's AdamW defaults at a constant rate, no warm-up, no
# clipping, window-summed loss, batch 512, at most 100 epochs, early stopping after 15; the order of runs:
# TF(8,8), then TF(8,8)-sin, then TF(8,8,8,8)):
#   PAPER="--batch 512 --epochs 100 --patience 15 --lr 1e-3 --lr-schedule constant --warmup 0 --clip 0 --sum-loss --seed 7"
#   NAME=tf88-paper     FLAGS="--layers 2 --heads 8 -E 128 $PAPER"
#   NAME=tf88sin-paper  FLAGS="--layers 2 --heads 8 -E 128 --pos sinusoidal $PAPER"
#   NAME=tf8888-paper   FLAGS="--layers 4 --heads 8 -E 128 $PAPER"
#
# Here, before the call. The tree that travels (tracked files + .dev) must stay under 64 MiB: the
# tracked tree is ≈ 45.5 MiB (2026-12-07, after the ×8 rung, with the four earlier paper-shape models
# retired to git history), so the binary is built without the shipped demo models (-tags nodemo) and goes
# xz-compressed (6.8 MiB on 2026-12-07; 8.9 with them) and the run directory carries only what resuming
# needs. First call ≈ 52.5 MiB; a later call carries its committed checkpoint too (TF(8,8) ≈ 9.5 MiB:
# ≈ 62 MiB, the committed evaluations small: each call's results.json loses its long arrays and its CSV,
# so ≈ 0.1 MiB a call; a 4-layer checkpoint, 15.1 MiB: over — retire more to git history first). TestTravellingTree keeps
# the tracked tree within 47.5 MiB outside ckpt/ and 57 MiB in all. The steps (the last checks the sum):
#   grep -qx /.dev/ .git/info/exclude || echo /.dev/ >> .git/info/exclude
#   rm -rf .dev && mkdir -p .dev/ckpt/NAME && CGO_ENABLED=0 go build -tags nodemo -trimpath -ldflags="-s -w" -o .dev/vomc ./cmd/vomc && xz -9e .dev/vomc
#   cp docs/figures/paper_shape_gpu/device/continue.sh .dev/
#   to resume a committed run, nothing to copy: pass CKPT=docs/figures/paper_shape_gpu/ckpt/NAME (tracked, it travels
#   with the tree; a TF(8,8) checkpoint is ≈ 9.5 MiB, a 4-layer one 15.1 MiB: check the total)
#   check: echo $(( ($(git ls-files -z | xargs -0 stat -c %s | paste -sd+ | bc) + $(du -sb .dev | cut -f1)) >> 20 )) MiB
# Device call (carry [".dev"], timeout_s 540): the first call starts the run, later ones resume it
# (at most 100 epochs of 112 steps: ≈ 11200 steps, ≈ 12.5 minutes of an H100's training per 1500 steps
# measured on 2026-11-27 with the cosine preset, so many calls in separate lent sessions):
#   NAME=tf88-paper FLAGS="…as above…" DEADLINE=500 .dev/continue.sh                                  (first call)
#   NAME=tf88-paper CKPT=docs/figures/paper_shape_gpu/ckpt/tf88-paper DEADLINE=500 .dev/continue.sh  (later calls)
# Afterwards, here: put the returned run in docs/figures/paper_shape_gpu/ckpt/NAME (tar xzf NAME-run.tgz -C
# docs/figures/paper_shape_gpu/ckpt, and NAME-checkpoint.safetensors renamed to NAME/checkpoint.safetensors),
# run `python3 docs/figures/paper_shape_gpu/device/curve.py docs/figures/paper_shape_gpu/ckpt/NAME` (the
# table curve.md/curve.csv and the figure curve.svg beside the run) and commit it all at once: only
# committed work survives into a new checkout (a workstation's /work/paper_shape_gpu_ckpt was lost so
# between the sessions of 2026-11-28). Resuming takes no --device (a resumed run keeps its settings; auto
# is CUDA there).
# Rehearse here on the CPU first (rehearsed 2026-12-07 19:35 and again 21:45 at 8e30498, tree + .dev 51 MiB, with the nodemo binary and the commands below, two
# calls: start with DEADLINE=160, resume with DEADLINE=130 — the training gets DEADLINE − 100 s):
#   DEVICE=cpu K=200 NK=512 N=128 TESTK=50 VOMC_PYTHON=/usr/bin/python3 \
#   FLAGS="--layers 2 --heads 2 -E 16 --batch 8 --epochs 100 --patience 15 --lr 1e-3 --lr-schedule constant --warmup 0 --clip 0 --sum-loss --seed 7" \
#   NAME=r DEADLINE=160 OUT=/tmp/o bash .dev/continue.sh
set -u
T0=$(date +%s)
OUT=${OUT:-$(mktemp -d)}; mkdir -p "$OUT"
NAME=${NAME:?NAME: the run (its directory .dev/ckpt/NAME unless CKPT names another; keep basename CKPT = NAME)}; FLAGS=${FLAGS:-}
DEV=${DEVICE:-cuda}; DEADLINE=${DEADLINE:-500}
K=${K:-20000}; NK=${NK:-5120}; N=${N:-1536}; TESTK=${TESTK:-1024}
V=.dev/vomc
unpack() { # .dev/vomc.xz (smaller) or .dev/vomc.gz; xz(1) or, without it, Python's lzma
	if [ -f .dev/vomc.xz ]; then
		if command -v xz >/dev/null; then xz -dc .dev/vomc.xz; else python3 -c 'import lzma,sys; sys.stdout.buffer.write(lzma.open(".dev/vomc.xz").read())'; fi
	else gunzip -c .dev/vomc.gz; fi
}
if [ -f .dev/vomc.xz ] || [ -f .dev/vomc.gz ]; then # unpacked outside the tree (nothing left to travel), each call
	V=$(mktemp -d)/vomc
	{ unpack > "$V.part" && chmod +x "$V.part" && mv "$V.part" "$V"; } || { echo "cannot unpack .dev/vomc.xz or .dev/vomc.gz"; exit 2; }
fi
[ -x "$V" ] || { echo "no .dev/vomc, .dev/vomc.xz or .dev/vomc.gz"; exit 2; }
W=$(mktemp -d); R=${CKPT:-.dev/ckpt/$NAME}; mkdir -p "$(dirname "$R")"
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
log() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/run.log"; }

{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1; nproc
  python3 -c "import torch;print('torch',torch.__version__,torch.cuda.is_available())" 2>&1; } | tee -a "$OUT/run.log"
$V data -A 3 -D 1,2,3,4,5 -K $K --NK $NK -N $N --fresh=false --seed 101 --out $W/train | tee -a "$OUT/run.log"
$V data -A 3 -D 1,2,3,4,5 -K $TESTK -N $N --seed 202 --out $W/test | tee -a "$OUT/run.log"

budget=$(( $(left) - 100 )) # the evaluations need ≈ 1 minute on 16 cores at N=1536
if [ -f "$R/checkpoint.safetensors" ]; then
  log "resume $NAME (budget ${budget}s)"
  timeout -s INT $budget $V train --out "$R" --resume --data $W/train --engine torch --checkpoint-every 250 > "$OUT/$NAME-train.log" 2>&1
else
  log "start $NAME $FLAGS (budget ${budget}s)"
  timeout -s INT $budget $V train --engine torch --device $DEV --data $W/train --out "$R" --checkpoint-every 250 --log-every 20 $FLAGS > "$OUT/$NAME-train.log" 2>&1
fi
rc=$?; [ -d "$R" ] && cat "$OUT/$NAME-train.log" >> "$R/device.log"
log "train rc=$rc $(tail -c 400 "$OUT/$NAME-train.log" | tr '\n' ' ')"

# evaluate MODEL into $R/evals/DIR (DIR "step-S": S from the checkpoint's label, …@NAME-stepS)
evaluate() {
  local model=$1 dir=$2
  [ $(left) -gt 25 ] || { log "no time left to evaluate $model"; return 1; }
  timeout -s INT $(( $(left) - 12 )) $V eval --data $W/test --methods "bayes,ctw,markov:k=1,markov:k=2,markov:k=3,markov:k=4,markov:k=5,tf:path=$model" \
    --out $W/eval --workers $(nproc) --force > $W/eval.log 2>&1
  local erc=$?
  log "eval $model rc=$erc"; grep -v '^windows' $W/eval.log | tail -12 | tee -a "$OUT/run.log"
  [ $erc -eq 0 ] || return 1
  if [ "$dir" = step ]; then
    dir=step-$(grep -o -- '-step[0-9]*' $W/eval/summary.txt | head -1 | tr -dc 0-9)
  fi
  mkdir -p "$R/evals" && rm -rf "$R/evals/$dir" && cp -r $W/eval "$R/evals/$dir" &&
    rm -f "$R/evals/$dir"/loss.png "$R/evals/$dir"/loss.svg "$R/evals/$dir"/results.csv && slim "$R/evals/$dir/results.json" &&
    log "evaluation in $R/evals/$dir"
}
# slim FILE: results.json without its long arrays (per position, per window: ≈ 5 MB a call at N=1536,
# which the committed run would carry to every later call); what curve.py reads (each method's name
# and excesses) and summary.txt stay
slim() {
  python3 -c 'import json,sys
def s(o):
    if isinstance(o, dict): return {k: s(v) for k, v in o.items() if not (isinstance(v, list) and len(v) > 64)}
    if isinstance(o, list): return [s(v) for v in o]
    return o
p = sys.argv[1]; r = s(json.load(open(p))); json.dump(r, open(p, "w"), indent=1)' "$1"
}
[ -f "$R/checkpoint.safetensors" ] && evaluate "$R/checkpoint.safetensors" step
[ -f "$R/model.safetensors" ] && [ ! -d "$R/evals/final" ] && evaluate "$R" final
[ -f "$R/checkpoint.safetensors" ] && cp "$R/checkpoint.safetensors" "$OUT/$NAME-checkpoint.safetensors"
[ -d "$R" ] && tar czf "$OUT/$NAME-run.tgz" --exclude=checkpoint.safetensors -C "$(dirname "$R")" "$(basename "$R")"
ls -la "$OUT"; log "end"
