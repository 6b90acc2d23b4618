#!/bin/sh
# check_report.sh REPORT.html [SCREENSHOT.png]
#
# Renders a report written by 'vomc reproduce' in headless Chromium and
# saves a screenshot (default: next to the report, report.png), installing
# chromium with apt-get first when it is not on PATH. Exits non-zero when
# the page does not render (no screenshot or an empty one).
set -eu
report=${1:?usage: check_report.sh REPORT.html [SCREENSHOT.png]}
shot=${2:-${report%.html}.png}
case $report in /*) ;; *) report=$(pwd)/$report ;; esac
case $shot in /*) ;; *) shot=$(pwd)/$shot ;; esac
if ! command -v chromium >/dev/null 2>&1; then
	SUDO=
	[ "$(id -u)" -ne 0 ] && SUDO=sudo
	$SUDO apt-get update
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
rm -f "$shot"
chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
	--disable-component-update --disable-sync --no-first-run \
	--user-data-dir="$profile" --screenshot="$shot" --window-size=1400,4000 \
	"file://$report" 2>/dev/null || true
if [ ! -s "$shot" ]; then
	echo "check_report: chromium wrote no screenshot of $report" >&2
	exit 1
fi
echo "check_report: rendered $report -> $shot ($(wc -c <"$shot") bytes)"
