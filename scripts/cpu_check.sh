# cpu_check.sh — sourced by bench_train.sh (POSIX sh): which CPU features a
# kernel set needs, checked against the CPU before anything else runs, so
# that a set the CPU lacks is refused with a message instead of OpenBLAS
# dying with "Illegal instruction" (its core types are forced to match the
# set: avx512 → SkylakeX, avx2 → Haswell).

# kernels_need SET: the /proc/cpuinfo flags that SET needs on this side
# and on OpenBLAS's: avx512 — vomc's kernels need avx512f, OpenBLAS's
# SkylakeX kernels are built for Skylake-SP (AVX-512 F, CD, BW, DQ, VL);
# avx2 — AVX2 and FMA (vomc's avx2 set, OpenBLAS Haswell); neon — the
# arm64 "asimd" feature. Other names (portable, unknown ones) need nothing
# here; vomc itself refuses an unknown name.
kernels_need() {
	case "$1" in
	avx512) echo "avx512f avx512cd avx512bw avx512dq avx512vl" ;;
	avx2) echo "avx2 fma" ;;
	neon) echo "asimd" ;;
	esac
}

# kernels_missing SET [CPUINFO]: prints the flags SET needs (kernels_need)
# that the first "flags" (x86) or "Features" (arm64) line of CPUINFO
# (default: $VOMC_CPUINFO, else /proc/cpuinfo) lacks, separated by spaces;
# prints nothing when the CPU has them all.
kernels_missing() {
	have=" $(grep -m1 -E '^(flags|Features)[[:space:]]*:' "${2:-${VOMC_CPUINFO:-/proc/cpuinfo}}" 2>/dev/null | cut -d: -f2-) "
	missing=""
	for f in $(kernels_need "$1"); do
		case "$have" in
		*" $f "*) ;;
		*) missing="$missing${missing:+ }$f" ;;
		esac
	done
	echo "$missing"
}

# check_kernels SET: returns 0 when the CPU has what SET needs (or its
# description cannot be read: nothing to check against); otherwise says
# what is missing on stderr and returns 2.
check_kernels() {
	info=${VOMC_CPUINFO:-/proc/cpuinfo}
	if [ ! -r "$info" ]; then
		echo "bench_train.sh: cannot read $info; not checking that the CPU can run KERNELS=$1" >&2
		return 0
	fi
	missing=$(kernels_missing "$1" "$info")
	[ -z "$missing" ] && return 0
	echo "bench_train.sh: KERNELS=$1 needs CPU features this machine lacks ($info has no $missing);" >&2
	case "$1" in
	avx512)
		alt=portable
		[ -n "$(kernels_missing avx2 "$info")" ] || alt=avx2
		echo "  OpenBLAS's SkylakeX kernels would die with \"Illegal instruction\". Use KERNELS=$alt or leave KERNELS unset." >&2
		;;
	avx2) echo "  OpenBLAS's Haswell kernels would die with \"Illegal instruction\". Use KERNELS=portable or leave KERNELS unset." >&2 ;;
	*) echo "  Leave KERNELS unset to use the best set this CPU has." >&2 ;;
	esac
	return 2
}
