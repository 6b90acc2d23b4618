#!/bin/sh
# test_arm64.sh [-full] [PKG...]
#
# Tests the arm64 build of the transformer engine on an x86-64 machine:
# cross-compiles the test binaries of transformer/kernels and transformer
# (or of the packages given, as ./transformer/... paths) with GOARCH=arm64,
# once as is (neon kernel set) and once with -tags purego (portable set
# only), and runs each under qemu-aarch64-static (user-mode emulation),
# installing qemu-user-static with apt-get when it is missing. The arm64
# build is run with VOMC_KERNELS=neon and with VOMC_KERNELS=portable; the
# purego build with VOMC_KERNELS=portable. Tests run with -short (qemu is
# slow) unless -full is given. Prints PASS or FAIL per run and a summary;
# exits non-zero when any run fails. CI does not run this script.
set -u
short=-test.short
if [ "${1:-}" = "-full" ]; then
	short=
	shift
fi
pkgs=${*:-./transformer/kernels ./transformer}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1

if ! command -v qemu-aarch64-static >/dev/null 2>&1; then
	SUDO=
	[ "$(id -u)" -ne 0 ] && SUDO=sudo
	$SUDO apt-get update
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y qemu-user-static
fi
if ! command -v qemu-aarch64-static >/dev/null 2>&1; then
	echo "test_arm64: qemu-aarch64-static is not available" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
summary=

# run NAME DIR BINARY KERNELS: runs the test binary in the package's
# directory with VOMC_KERNELS=KERNELS and records the result.
run() {
	log=$tmp/$1.log
	if (cd "$2" && VOMC_KERNELS=$4 qemu-aarch64-static "$3" $short -test.count=1 -test.v >"$log" 2>&1); then
		res=PASS
	else
		res=FAIL
		failed=1
		grep -E -- '^(--- FAIL|FAIL|panic|fatal)|_test.go:[0-9]+:' "$log" | head -40
	fi
	n=$(grep -c -- '^--- PASS' "$log")
	s=$(grep -c -- '^--- SKIP' "$log")
	line="$res  $1 (VOMC_KERNELS=$4): $n passed, $s skipped"
	echo "$line"
	summary="$summary
$line"
}

for tags in "" purego; do
	for pkg in $pkgs; do
		name=$(echo "${pkg#./}" | tr / _)${tags:+_$tags}
		bin=$tmp/$name.test
		if ! GOARCH=arm64 go test -c ${tags:+-tags $tags} -o "$bin" "$pkg"; then
			echo "FAIL  build of $pkg for arm64 ${tags:+(-tags $tags)}"
			summary="$summary
FAIL  build of $name"
			failed=1
			continue
		fi
		if [ ! -f "$bin" ]; then
			continue # no test files
		fi
		if [ -z "$tags" ]; then
			run "$name" "$pkg" "$bin" neon
		fi
		run "$name" "$pkg" "$bin" portable
	done
done

echo
echo "test_arm64 summary (qemu-aarch64-static${short:+, -short}):$summary"
if [ "$failed" -ne 0 ]; then
	echo "test_arm64: FAIL"
	exit 1
fi
echo "test_arm64: PASS"
