#!/bin/bash
# ladder.sh — trains the budget ladder (docs/figures/ladder/README.md) in
# the background, resumably, across sessions.
#
#   scripts/ladder.sh run      build vomc, then train every ladder model in
#                              the order below (each resumes from its
#                              checkpoint; "constant": the constant-lr run,
#                              below); nice'd, so foreground work wins
#   scripts/ladder.sh status   each training stage's state and step
#   scripts/ladder.sh stop     SIGINT the run (checkpoint saved)
#   scripts/ladder.sh compare  once the constant-lr run is trained: its snapshots
#                              at the ×1 and ×2 budgets' steps and its model
#                              (×4) against the cosine rungs of both seeds, on
#                              the ladder's test windows, paired, into CMP_OUT;
#                              and that run's figures and report again with
#                              REPORT_REV's code (the plateau column)
#   scripts/ladder.sh finish   once every model is trained: the evaluation,
#                              profile and Fig. 5 stages with the binary of
#                              REV (the ladder's engine), then the figures and
#                              the report with the binary of REPORT_REV
#                              (default HEAD: the report code's post-hoc
#                              analyses beside the verdict; no engine runs
#                              in those two stages)
#
# The run lives in docs/figures/ladder/run (OUT): the training stages'
# directories (models, logs; the checkpoint while unfinished) are committed
# so that a later session, on a fresh clone, resumes them; the data,
# evaluation and profile stages are recomputed (byte for byte: same seed,
# same bytes; seconds each) and ignored by git. Stage hashes
# are computed with the fixed code key below (vomc reproduce --code-key), so
# that a rebuilt vomc reuses the committed stages. The key stands for the
# code of one commit, REV: every stage that runs a model is computed by a
# binary built from REV, not from HEAD, so that later changes to the engine
# (summation orders, kernels) cannot enter the ladder half-way; only the
# figures and the report (finish) use REPORT_REV's code. A new REV needs a new KEY (and a note
# in docs/figures/ladder/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-docs/figures/ladder/run}
KEY=${KEY:-ladder-v1}
REV=${REV:-bdf9e8d}
BIN=${BIN:-/tmp/vomc-ladder/vomc}
REPORT_REV=${REPORT_REV:-HEAD}
REPORT_BIN=${REPORT_BIN:-/tmp/vomc-ladder/vomc-report}
# The ×8 rung (issue 45; pre-registered in docs/figures/ladder/README.md,
# "The next rung"): x8.json adds TF(4,4)-x8 (two seeds) and TF(4,4)-sin-x8
# (seed 0) to the preset's models; every stage trained before keeps its
# hash (checked with --list-stages). CONFIG= (empty) gives the ladder as it
# was before the rung, e.g. for a finish without the ×8 models;
# CONFIG=docs/figures/ladder/x8-rung.json the ladder with TF(4,4)-x8 but
# not TF(4,4)-sin-x8 (same stage hashes), for the rung's verdict as soon
# as both TF(4,4)-x8 seeds are trained, before the sin model is.
CONFIG=${CONFIG-docs/figures/ladder/x8.json}
# The verdict's models first (docs/figures/ladder/README.md: criteria A–D),
# then the rest of the ladder, the shorter runs first (so that a session
# ends with as many finished models as it can).
ORDER="train-tf-h4-4-x4 train-tf-h4-4-x4-s1 train-tf-h4-4-4-x4 train-tf-h4-4-x2 train-tf-h4-4-x2-s1
train-tf-h4-4 train-tf-h4-4-s1 train-tf-h4-4-sin-x4 train-tf-h4-4-sin-x4-s1 train-tf-h4-4-sin-x2
train-tf-h4-4-sin-x2-s1 train-tf-h4-4-sin train-tf-h4-4-sin-s1 train-tf-h4-4-4 train-tf-h4-4-4-4
train-tf-h4-4-4-x2
train-tf-h4-4-x8 train-tf-h4-4-x8-s1 constant train-tf-h4-4-sin-x8"
# "constant" in ORDER: the plateau run of issue 45 item 4 — TF(4,4), learned positions, the ladder's
# data, the paper's constant lr 1e-3 without warm-up or clipping, for the ×4 rung's 24000 steps, with
# snapshots on a log grid that holds steps 6000, 12000 and 24000 (the ×1, ×2, ×4 budgets) and its
# dynamics stage. Its own run directory, config, code key, and a binary of its own commit (the ladder's
# REV has no constant schedule); the whole reproduce run (evaluations, dynamics, figures, report).
CONST_OUT=${CONST_OUT:-docs/figures/ladder/constant/run}
CONST_KEY=${CONST_KEY:-ladder-constant-v1}
CONST_REV=${CONST_REV:-def90b4}
CONST_BIN=${CONST_BIN:-/tmp/vomc-ladder/vomc-constant}
constant() {
	local rev
	rev=$(scripts/build_head.sh "$CONST_BIN" "$CONST_REV")
	echo "ladder: the constant-lr run with $CONST_BIN, built from $rev"
	# its data and its one training stage first, each alone on every core:
	# in a whole run on 2 cores the training started beside a short
	# evaluation and kept its one-core share to the end (1.5 h instead of
	# 1; CONST_REV's binary predates pipeline's rule that now gives such a
	# training every core); the outputs do not depend on the number of threads
	const_run "$CONST_BIN" --stage data-train
	const_run "$CONST_BIN" --stage train-tf-h4-4-x4
	# seed 1 (added 2026-12-07, 21:55, after seed 0's result, with its snapshots and dynamics: a replicate of
	# the schedule comparison, sharing initialisation and data order with the
	# cosine rungs' seed 1, as seed 0 does with their seed 0)
	const_run "$CONST_BIN" --stage train-tf-h4-4-x4-s1
	const_run "$CONST_BIN" "$@"
}
# const_run BIN ARGS… runs the constant-lr run's reproduce with the binary BIN.
const_run() {
	local bin=$1
	shift
	nice -n 19 "$bin" reproduce --preset ladder --out "$CONST_OUT" --code-key "$CONST_KEY" \
		--config docs/figures/ladder/constant.json --set model_seeds= "$@"
}
vomc() { nice -n 19 "$BIN" reproduce --preset ladder --out "$OUT" --code-key "$KEY" ${CONFIG:+--config "$CONFIG"} "$@"; }
# build compiles the ladder's commit REV (not HEAD, not the working tree).
build() {
	local rev
	rev=$(scripts/build_head.sh "$BIN" "$REV") # a failed build stops the script (set -e)
	echo "ladder: built $BIN from $rev"
}

# drop_checkpoints removes the checkpoint (AdamW state, 2–3 MB) of every
# finished training stage: only model.safetensors is a stage output
# (done.json), and the tree that travels to a lent GPU machine must stay
# under 64 MiB. Unfinished stages keep theirs (they resume from it).
drop_checkpoints() {
	for d in "$OUT"/stages/train-*/ "$CONST_OUT"/stages/train-*/; do
		[ -f "$d/done.json" ] && rm -f "$d/checkpoint.safetensors"
	done
	return 0
}

# main is the whole command, called on the script's last line with exit on
# the same line: bash reads a script as it runs it, so an edit of this file
# while a long `run` is going would otherwise be read by it afterwards.
main() {
case "${1:-}" in
run)
	build
	echo "$$" >"$OUT.pid" 2>/dev/null || { mkdir -p "$OUT"; echo "$$" >"$OUT.pid"; }
	trap 'rm -f "$OUT.pid"' EXIT
	vomc --stage data-train
	for s in $ORDER; do
		if [ "$s" = constant ]; then
			constant
		else
			vomc --stage "$s"
		fi
		drop_checkpoints
	done
	echo "ladder: every training stage done; next: scripts/ladder.sh finish"
	;;
status)
	[ -x "$BIN" ] || build
	# the training data (git-ignored, seconds to make): without it a trained stage lists as waiting
	vomc --stage data-train >/dev/null
	vomc --list-stages | grep -E 'train|#'
	for d in "$OUT"/stages/train-tf-* "$CONST_OUT"/stages/train-tf-*; do
		[ -f "$d/train.jsonl" ] || continue
		printf '%s: %s\n' "$(basename "$d")" "$(tail -n 1 "$d/train.jsonl" | cut -c1-120)"
	done
	;;
stop)
	# One interrupt to each vomc this script started; not to the stage
	# processes of a run with --jobs (children of a vomc reproduce), which
	# their vomc interrupts itself: a second interrupt would end them
	# before their checkpoint. (The runs themselves pass --config too.)
	for p in $(pgrep -f "reproduce --preset ladder"); do
		pp=$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null) || continue
		tr '\0' ' ' <"/proc/$pp/cmdline" 2>/dev/null | grep -q -- 'reproduce --preset ladder' || kill -INT "$p" 2>/dev/null || true
	done
	;;
compare)
	# issue 45 item 4: which schedule learns more from a fixed budget. One
	# evaluation (the binary of CONST_REV, which trained the constant-lr
	# model; every model in one call, so that the pairs share the windows
	# and the code) of the constant-lr run (seeds 0 and 1) at steps 6000, 12000 and 24000
	# (the ×1, ×2, ×4 budgets' token counts) and of the cosine rungs trained
	# for those budgets, each seed, with the exact Bayes predictor, CTW and
	# Markov(4) (the ladder's criterion (A)).
	CMP_OUT=${CMP_OUT:-docs/figures/ladder/constant/compare}
	# stage ROOT NAME: the done stage NAME's directory under ROOT (NAME
	# exactly: train-tf-h4-4-x2 is not train-tf-h4-4-x2-s1), or a named error
	stage() {
		local d
		d=$(ls -d "$1"/stages/*/ 2>/dev/null | grep -E "/$2-[0-9a-f]{16}/\$" | head -n 1) || true
		[ -n "$d" ] && [ -f "$d/done.json" ] || { echo "ladder: stage $2 is not done in $1 (scripts/ladder.sh status)" >&2; exit 1; }
		echo "${d%/}"
	}
	# the rest of the constant-lr run first, with its build (its training is
	# done: on a fresh clone this recomputes its git-ignored evaluation stages)
	constant
	methods="bayes,ctw:D=5,markov:k=4:alpha=0.5"
	pairs=""
	for b in 1 2 4; do
		step=$((6000 * b))
		suffix="-x$b"
		[ "$b" = 1 ] && suffix=""
		for seed in 0 1; do # the cosine rungs of this budget
			tag=""
			[ "$seed" = 1 ] && tag="-s1"
			methods+=",tf:path=$(stage "$OUT" "train-tf-h4-4$suffix$tag"):name=cosine ×$b seed $seed"
		done
		for cs in 0 1; do # the constant-lr run's seeds (seed 1 added 2026-12-07)
			ctag=""
			[ "$cs" = 1 ] && ctag="-s1"
			cst=$(stage "$CONST_OUT" "train-tf-h4-4-x4$ctag")
			path="$cst/snapshots/step-$(printf %09d $step).safetensors"
			[ "$b" = 4 ] && path="$cst"
			[ -e "$path" ] || { echo "ladder: no $path" >&2; exit 1; }
			name="constant ×$b (step $step) seed $cs"
			methods+=",tf:path=$path:name=$name"
			pairs+="${pairs:+;}$name,Markov(k=4,α=0.5)" # the ladder's criterion (A)
			for seed in 0 1; do
				pairs+=";$name,cosine ×$b seed $seed"
			done
		done
		pairs+=";constant ×$b (step $step) seed 1,constant ×$b (step $step) seed 0" # the seeds' spread
	done
	[ -x "$BIN" ] || build
	vomc --stage data-test >/dev/null # git-ignored: a fresh clone has none
	data=$(stage "$OUT" data-test)/data
	if [ -e "$CMP_OUT" ]; then # never overwritten: remove it to compare again
		echo "ladder: $CMP_OUT exists, kept"
	else
		echo "ladder: comparing with $CONST_BIN"
		nice -n 19 "$CONST_BIN" eval --data "$data" --methods "$methods" --pairs "$pairs" --out "$CMP_OUT" \
			--title "Constant lr 1e-3 (two seeds) against the cosine rungs, at the ×1, ×2, ×4 budgets"
	fi
	# the constant-lr run's figures and report with REPORT_REV's code (no
	# model runs in these two stages), as finish does for the ladder
	rev=$(scripts/build_head.sh "$REPORT_BIN" "$REPORT_REV")
	echo "ladder: the constant-lr run's figures and report with $REPORT_BIN, built from $rev"
	const_run "$REPORT_BIN" --stage figures --rerun figures
	const_run "$REPORT_BIN" --stage report --rerun report
	;;
finish)
	build
	# The data first (ignored by git: a fresh clone has none), so that
	# --list-stages can tell a trained model (done) from one waiting on it.
	vomc --stage data-train
	vomc --stage data-test
	stages=$(vomc --list-stages | awk '$1 !~ /^#/ {print $2, $3, $4}')
	if awk '$2 == "train" && $3 != "done" {bad = 1} END {exit !bad}' <<<"$stages"; then
		echo "ladder: training stages not done yet (scripts/ladder.sh status; scripts/ladder.sh run):" >&2
		awk '$2 == "train" && $3 != "done" {print "  " $1}' <<<"$stages" >&2
		exit 1
	fi
	# Everything that runs a model, with the ladder's engine (REV); the
	# data is done above.
	for s in $(awk '$2 == "eval" {print $1}' <<<"$stages"); do
		vomc --stage "$s"
	done
	# The figures and the report (no model runs) with REPORT_REV's code:
	# only those two stages (--stage refuses a missing input rather than
	# computing it), recomputed even if an earlier finish left them done.
	rev=$(scripts/build_head.sh "$REPORT_BIN" "$REPORT_REV")
	echo "ladder: figures and report with $REPORT_BIN, built from $rev"
	BIN=$REPORT_BIN
	vomc --stage figures --rerun figures
	vomc --stage report --rerun report
	;;
*)
	sed -n 2,20p "$0"
	exit 2
	;;
esac
}
main "$@"; exit
