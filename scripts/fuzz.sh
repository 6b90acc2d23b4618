#!/bin/sh
# fuzz.sh DURATION — runs every Go fuzz target of the repository (found
# with `go test -list 'Fuzz.*' ./...`) for DURATION each (e.g. 30s, 5m),
# one at a time on one worker, and prints a table of targets and results.
# New crashers are written by Go under the package's testdata/fuzz/ and
# make the seed run of `go test` fail until fixed. Exit status: 1 if any
# target failed.
set -u
dur=${1:?usage: scripts/fuzz.sh DURATION (e.g. 5m)}
cd "$(dirname "$0")/.." || exit 2
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
fail=0
results=""
for pkg in $(go list ./...); do
	for target in $(go test -list 'Fuzz.*' "$pkg" 2>/dev/null | grep '^Fuzz'); do
		f="$log/$(echo "$pkg.$target" | tr '/' '_')"
		printf '%s %s … ' "$pkg" "$target"
		if go test -run '^$' -fuzz "^$target\$" -fuzztime "$dur" -parallel 1 "$pkg" >"$f" 2>&1; then
			execs=$(grep -o 'execs: [0-9]*' "$f" | tail -n 1)
			echo "ok ($execs)"
			results="$results
ok    $pkg $target $execs"
		else
			fail=1
			echo "FAILED"
			tail -n 30 "$f"
			results="$results
FAIL  $pkg $target"
		fi
	done
done
echo
echo "fuzzing, $dur per target:$results"
exit $fail
