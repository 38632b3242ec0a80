#!/usr/bin/env bash
# Usage: packaging/run_self_test.sh EXECUTABLE OUT.png [PATH]
#
# Runs `EXECUTABLE --self-test OUT.png [PATH]` (app/self_test.py) on a private Xvfb server, since the
# frozen Studio needs an X display with OpenGL and xvfb-run is not always installed. Xvfb picks a free
# display number itself (-displayfd) and is stopped on exit. The exit status is the self-test's (0 = OK);
# 124 means it did not finish within DTMR_SELF_TEST_TIMEOUT seconds (default 600).
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 EXECUTABLE OUT.png [PATH]" >&2
    exit 2
fi
exe=$1
out=$2
shift 2
command -v Xvfb >/dev/null || { echo "run_self_test.sh: Xvfb is not installed (apt-get install xvfb)" >&2; exit 2; }

scratch=$(mktemp -d)
xvfb_pid=""
cleanup() {
    if [ -n "$xvfb_pid" ]; then kill "$xvfb_pid" 2>/dev/null || true; wait "$xvfb_pid" 2>/dev/null || true; fi
    rm -rf "$scratch"
}
trap cleanup EXIT

Xvfb -displayfd 3 -screen 0 1920x1080x24 -nolisten tcp 3>"$scratch/display" 2>"$scratch/xvfb.log" &
xvfb_pid=$!
for _ in $(seq 100); do
    [ -s "$scratch/display" ] && break
    if ! kill -0 "$xvfb_pid" 2>/dev/null; then
        cat "$scratch/xvfb.log" >&2
        echo "run_self_test.sh: Xvfb failed" >&2
        exit 2
    fi
    sleep 0.1
done
[ -s "$scratch/display" ] || { echo "run_self_test.sh: Xvfb did not start within 10 s" >&2; exit 2; }

export DISPLAY=":$(tr -d '[:space:]' < "$scratch/display")"
export XDG_RUNTIME_DIR="$scratch"
echo "run_self_test.sh: $exe --self-test $out $* on Xvfb $DISPLAY"
status=0
timeout "${DTMR_SELF_TEST_TIMEOUT:-600}" "$exe" --self-test "$out" "$@" || status=$?
exit "$status"
