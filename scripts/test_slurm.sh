#!/bin/bash
# test_slurm.sh — runs `vomc reproduce --preset tiny` as a Slurm sweep on a
# single-node cluster started here (slurmctld + slurmd on localhost, 2 CPUs)
# and checks it against a local run:
#
#   1. a local `vomc reproduce --preset tiny --set seed=S`;
#   2. the same configuration through `--slurm`, submitted with submit.sh;
#      the merged results (results.json: every method's per-position losses,
#      CIs and excesses, from which the report's numbers come) must be
#      byte-identical to the local run's, and so must every stage's own
#      results.json, data sets and transformer weights;
#   3. a fresh sweep in which one running training task is cancelled
#      (scancel: SIGTERM, checkpoint saved) and the process of another
#      killed (kill -9: no clean-up, its lock left behind) mid-run; the dependent jobs are then
#      cancelled by Slurm; the whole sweep is resubmitted, the interrupted
#      models resume from their checkpoints, and the results must again
#      equal the local run's.
#
# Needs root and Debian/Ubuntu (apt-get install slurm-wlm munge). It changes
# /etc/slurm/slurm.conf and starts munged, slurmctld and slurmd, which it
# stops at the end. Not run by CI.
#
# Usage: scripts/test_slurm.sh [WORKDIR]   (default /tmp/vomc-slurm-test)
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(realpath -m "${1:-/tmp/vomc-slurm-test}")
SEED=${SEED:-5}
TIMEOUT=${TIMEOUT:-1800}

say() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "run as root (it installs and starts Slurm)"

# --- Slurm and munge -------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
	say "installing slurm-wlm and munge"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi

STARTED=()
cleanup() {
	for p in "${STARTED[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

if [ ! -s /etc/munge/munge.key ]; then
	dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
fi
chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
mkdir -p /run/munge /var/log/munge /var/lib/munge && chown munge:munge /run/munge /var/log/munge /var/lib/munge
if ! munge -n >/dev/null 2>&1; then
	say "starting munged"
	runuser -u munge -- /usr/sbin/munged
	sleep 1
	STARTED+=("$(cat /run/munge/munged.pid)")
fi
munge -n | unmunge >/dev/null || fail "munge does not work"

HOST=$(hostname -s)
mkdir -p /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
cat >/etc/slurm/slurm.conf <<EOF
# written by vomc scripts/test_slurm.sh: a single-node test cluster
ClusterName=vomctest
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
KillWait=20
MinJobAge=3600
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
if ! scontrol ping 2>/dev/null | grep -q UP; then
	say "starting slurmctld and slurmd"
	slurmctld -c -i
	slurmd -c
	sleep 2
	STARTED+=("$(cat /run/slurmd.pid)" "$(cat /run/slurmctld.pid)")
fi
for _ in $(seq 30); do
	sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)' && break
	sleep 1
done
sinfo -h -o '%N %T %c' | grep -qE 'idle|mixed|allocated' || { sinfo; fail "the node is not up (see /var/log/slurm/)"; }
say "cluster up: $(sinfo -h -o '%N %T, %c CPUs')"

# --- vomc --------------------------------------------------------------------
rm -rf "$WORK" && mkdir -p "$WORK"
go build -o "$WORK/vomc" ./cmd/vomc
V="$WORK/vomc"
CFG=(--preset tiny --set "seed=$SEED")

say "local run"
start=$SECONDS
"$V" reproduce "${CFG[@]}" --out "$WORK/local" >"$WORK/local.log" 2>&1 || { tail -20 "$WORK/local.log"; fail "local run"; }
say "local run done in $((SECONDS - start)) s"

# waitq JOBIDS...: waits until none of the jobs is pending or running.
waitq() {
	local t0=$SECONDS
	while [ -n "$(squeue -h -j "$(IFS=,; echo "$*")" 2>/dev/null)" ]; do
		[ $((SECONDS - t0)) -lt "$TIMEOUT" ] || fail "jobs $* still queued after $TIMEOUT s"
		sleep 2
	done
}
# stagedir OUT NAME: the directory of stage NAME (NAME-<16 hex digits>).
stagedir() {
	local n
	n=$(ls "$1/stages" | grep -E "^$2-[0-9a-f]{16}\$" | head -1) || true
	[ -n "$n" ] && echo "$1/stages/$n"
}
jobids() { awk '{print $2}' "$1/jobs.txt"; }
jobof() { awk -v k="$2" '$1 == k {print $2}' "$1/jobs.txt"; }

# summary OUT: for every stage (by name, without its input hash), the
# SHA-256 of its evaluation results (results.json: per-position losses, CIs,
# excesses) when it has one, else its output hash (data sets: the symbols;
# transformers: the weights); the construction's largest deviation from CTW.
# Skipped: the report (it records wall times) and the synthetic models
# (their files record wall times; their evaluation, fig8-synth, is compared).
summary() {
	local d n name
	for d in "$1"/stages/*/; do
		n=$(basename "$d")
		name=${n%-*}
		case $name in report | synth-*) continue ;; esac
		if [ -f "$d/results.json" ]; then
			printf '%s results.json %s\n' "$name" "$(sha256sum <"$d/results.json" | cut -c1-64)"
		else
			printf '%s outputs %s\n' "$name" "$(grep -o '"output_hash": *"[0-9a-f]*"' "$d/done.json" | grep -o '[0-9a-f]\{64\}')"
		fi
		if [ -f "$d/construct.json" ]; then
			printf '%s %s\n' "$name" "$(grep -o '"MaxProbDiff": *[^,]*' "$d/construct.json")"
		fi
	done | sort
}
compare() {
	local out=$1
	[ -f "$out/results.json" ] || fail "$out/results.json missing"
	[ -f "$out/report.html" ] || fail "$out/report.html missing"
	cmp "$WORK/local/results.json" "$out/results.json" || fail "results.json differs between the local run and $out"
	diff <(summary "$WORK/local") <(summary "$out") || fail "stage results differ between the local run and $out"
	echo "results.json identical to the local run's ($(wc -c <"$out/results.json") bytes, sha256 $(sha256sum <"$out/results.json" | cut -c1-16)…)"
	echo "$(summary "$out" | wc -l) per-stage results/output hashes identical to the local run's"
	if ls "$out"/stages/*.lock "$out"/stages/*.partial >/dev/null 2>&1; then fail "locks or partial stages left in $out/stages"; fi
}

# --- 1. the sweep --------------------------------------------------------------
say "sweep 1: submission"
"$V" reproduce "${CFG[@]}" --out "$WORK/cluster" --slurm "$WORK/sub" --slurm-opt cpus-per-task=1 --slurm-opt time=30
start=$SECONDS
"$WORK/sub/submit.sh"
waitq $(jobids "$WORK/sub")
say "sweep 1 finished in $((SECONDS - start)) s"
"$V" reproduce "${CFG[@]}" --out "$WORK/cluster" --list-stages | tail -3
say "comparison 1 (sweep vs local)"
compare "$WORK/cluster"

# --- 2. cancel and kill training tasks, resubmit ----------------------------
say "sweep 2: submission"
"$V" reproduce "${CFG[@]}" --out "$WORK/cluster2" --slurm "$WORK/sub2" --slurm-opt cpus-per-task=1
"$WORK/sub2/submit.sh"
TRAIN=$(jobof "$WORK/sub2" train)
# running_stage [EXCEPT]: prints "task stage" of a running training task
# (not EXCEPT) that has written its first checkpoint.
running_stage() {
	local t s
	for t in $(squeue -h -j "$TRAIN" -t R -o %K 2>/dev/null); do
		s=$(sed -n "$((t + 1))p" "$WORK/sub2/stages-train.txt")
		[ "$s" != "${1:-}" ] || continue
		case $s in synth-*) continue ;; esac
		if [ -f "$(stagedir "$WORK/cluster2" "$s")/checkpoint.safetensors" ] && [ -f "$(stagedir "$WORK/cluster2" "$s").lock" ]; then
			echo "$t $s"
			return 0
		fi
	done
	return 1
}
# Cancel a running training task that is still running 2 s later.
t0=$SECONDS
while :; do
	[ $((SECONDS - t0)) -lt 600 ] || fail "no training task to cancel"
	if read -r T1 S1 < <(running_stage); then
		sleep "${CANCEL_AFTER:-2}"
		if [ -f "$(stagedir "$WORK/cluster2" "$S1").lock" ]; then
			scancel "${TRAIN}_$T1"
			break
		fi
	fi
	sleep 0.5
done
say "cancelled ${TRAIN}_$T1 ($S1; scancel: SIGTERM, it saves its checkpoint)"
# Kill the process of another running training task (one that is still
# running a second later, so that it has trained for a while).
t0=$SECONDS
while :; do
	[ $((SECONDS - t0)) -lt 600 ] || fail "no second training task to kill"
	if read -r T2 S2 < <(running_stage "$S1"); then
		sleep 1
		D2=$(stagedir "$WORK/cluster2" "$S2")
		PID2=$(grep -o '"pid": *[0-9]*' "$D2.lock" 2>/dev/null | grep -o '[0-9]*$') || true
		if [ -n "$PID2" ] && [ ! -f "$D2/done.json" ] && kill -9 "$PID2" 2>/dev/null; then
			break
		fi
	fi
	sleep 0.5
done
say "killed (kill -9) process $PID2 of ${TRAIN}_$T2 ($S2; like an OOM kill or a lost node: no clean-up, its lock stays behind)"
waitq $(jobids "$WORK/sub2")
[ ! -f "$WORK/cluster2/results.json" ] || fail "the sweep completed despite the cancellations"
for s in "$S1" "$S2"; do
	d=$(stagedir "$WORK/cluster2" "$s")
	[ ! -f "$d/done.json" ] || fail "$s was completed despite its cancellation"
	[ -f "$d/checkpoint.safetensors" ] || fail "$s has no checkpoint"
	if [ -f "$d.lock" ]; then echo "$s: lock left behind: $(cat "$d.lock")"; else echo "$s: no lock left"; fi
done
[ -f "$D2.lock" ] || fail "the killed task left no lock (the test of the takeover needs one)"
"$V" reproduce "${CFG[@]}" --out "$WORK/cluster2" --list-stages | grep -E "$S1 |$S2 " || true
say "resubmitting the whole sweep"
start=$SECONDS
"$WORK/sub2/submit.sh"
waitq $(jobids "$WORK/sub2")
say "resubmitted sweep finished in $((SECONDS - start)) s"
grep -h "\] $S1: resuming from checkpoint at step [1-9]" "$WORK"/sub2/logs/vomc-train-*.out ||
	fail "$S1 (cancelled) did not resume from its checkpoint"
grep -h "\] $S2: resuming from checkpoint at step" "$WORK"/sub2/logs/vomc-train-*.out ||
	fail "$S2 (killed) did not resume from its checkpoint"
grep -h "done (cached" "$WORK"/sub2/logs/vomc-data-*.out | tail -2
say "comparison 2 (cancelled, killed and resubmitted sweep vs local)"
compare "$WORK/cluster2"
say "PASS"
