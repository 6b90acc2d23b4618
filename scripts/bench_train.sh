#!/bin/sh
# Training speed of vomc's transformer against PyTorch on the CPU, and a
# check that both compute the same function.
#
# Installs Debian's python3-torch with OpenBLAS (pthread build) as the BLAS
# behind it, builds vomc, then runs scripts/pytorch_bench.py, which
#   - trains the identical models C1 (L=2, 4 heads, E=64, N=256, batch 32) and
#     C2 (L=4, 8 heads, E=128, N=512, batch 16) in PyTorch with THREADS
#     threads and prints tokens/s,
#   - runs `vomc bench train` on them in the same run and prints vomc/PyTorch,
#   - trains three small vomc models, loads their safetensors files in
#     PyTorch and compares the logits with `vomc bench logits` (≤ 1e-4).
#
# Usage: scripts/bench_train.sh [extra pytorch_bench.py flags, e.g. --steps 3]
# Environment: THREADS (default 2), PYTHON (default /usr/bin/python3, the
# interpreter Debian's python3-torch is installed for), KERNELS (optional:
# avx512, avx2, neon or portable) runs vomc with VOMC_KERNELS=$KERNELS and
# OpenBLAS with the matching core type (avx2: OPENBLAS_CORETYPE=Haswell,
# avx512: SkylakeX), so that both sides use the same instruction set in the
# same run: `KERNELS=avx2 sh scripts/bench_train.sh` is what a machine
# without AVX-512 gets. A set the CPU lacks (flags in /proc/cpuinfo, or
# the file VOMC_CPUINFO names) is refused before anything is installed or
# run (scripts/cpu_check.sh).
set -eu
cd "$(dirname "$0")/.."
. scripts/cpu_check.sh
if [ -n "${KERNELS:-}" ]; then
	check_kernels "$KERNELS" || exit 2
fi
THREADS=${THREADS:-2}
PYTHON=${PYTHON:-/usr/bin/python3}
ARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
OPENBLAS=/usr/lib/$ARCH/openblas-pthread/libblas.so.3

if ! "$PYTHON" -c 'import torch, numpy' 2>/dev/null || [ ! -e "$OPENBLAS" ]; then
	echo "installing python3-torch, python3-numpy and libopenblas0-pthread (apt-get) …" >&2
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	$SUDO apt-get update
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends \
		python3-torch python3-numpy libopenblas0-pthread
fi

# Debian's torch calls the generic libblas.so.3; point it at OpenBLAS
# (pthread): system-wide through the alternatives when we may, and for
# this run in any case through LD_PRELOAD. pytorch_bench.py prints the BLAS
# library it finds mapped after a matmul.
if [ "$(id -u)" -eq 0 ]; then
	update-alternatives --set "libblas.so.3-$ARCH" "$OPENBLAS" >/dev/null 2>&1 || true
fi
export LD_PRELOAD="$OPENBLAS${LD_PRELOAD:+:$LD_PRELOAD}"
export OPENBLAS_NUM_THREADS=$THREADS OMP_NUM_THREADS=$THREADS
# OpenMP threads that spin while waiting collapse when the cores are shared
# (measured here: C1 2-3k tokens/s with the default policy vs 15-18k with
# PASSIVE on a loaded 2-core VM); PASSIVE is PyTorch's best case.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
if [ -n "${KERNELS:-}" ]; then
	export VOMC_KERNELS="$KERNELS"
	case "$KERNELS" in
	avx2) export OPENBLAS_CORETYPE=Haswell ;;
	avx512) export OPENBLAS_CORETYPE=SkylakeX ;;
	esac
fi

BIN=$(mktemp -d)
trap 'rm -rf "$BIN"' EXIT
go build -o "$BIN/vomc" ./cmd/vomc
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (timings are only comparable on an idle machine)"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores; $(go version)"
echo "vomc kernel set: ${VOMC_KERNELS:-best available}; OpenBLAS core type: ${OPENBLAS_CORETYPE:-auto}"
"$PYTHON" scripts/pytorch_bench.py --vomc "$BIN/vomc" --threads "$THREADS" "$@"
