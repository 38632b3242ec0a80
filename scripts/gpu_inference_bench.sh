#!/usr/bin/env bash
# The GPU figures of issues 22 and 44 (docs/scale.md, "The GPU path"): one call on a lent GPU machine, under 5
# minutes (CUDA tests at most 120 s, the bench at most 150 s: `dtmr bench gpu --quick` is bounded at about a
# minute of figures plus set-up).
#
#   bash scripts/gpu_inference_bench.sh OUT
#
# Writes to OUT: gpu_inference.json (`dtmr bench gpu --quick --json`: the paper preset's clips/s at batch 256 and
# auto for the CUDA graph in fp32 and bf16, the single-clip latency, the bf16 release's MPJPE against fp32,
# dtmr anonymize end to end on the GPU), gpu_inference.txt (its text form; when the bench stopped before its
# JSON, the figures it had printed), gpu_inference.err (the figures as they came, and any error),
# pytest_cuda.log (the CUDA tests, which CI skips) and summary.txt (GPU, driver, versions, each step's exit
# status and time). BENCH_OPTIONS replaces --quick (e.g. BENCH_OPTIONS="--budget 10" for the full run, about
# 6 minutes at most: give the step more time with BENCH_LIMIT_S). On the device tool:
#
#   run(command="bash scripts/gpu_inference_bench.sh $OUT", timeout_s=300)
set -u
OUT=${1:?usage: gpu_inference_bench.sh OUT}
PY=${PYTHON:-python3}
BENCH_OPTIONS=${BENCH_OPTIONS:---quick}
BENCH_LIMIT_S=${BENCH_LIMIT_S:-150}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
mkdir -p "$OUT"
START=$(date +%s)
step() {  # step NAME LIMIT_S COMMAND...: run with a time limit, log the exit status and seconds
  local name=$1 limit=$2 started=$(date +%s); shift 2
  timeout -s TERM "$limit" "$@"
  echo "$name: rc $? in $(( $(date +%s) - started )) s" >>"$OUT/summary.txt"
}

{ echo "start $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv,noheader
  "$PY" -c 'import sys, torch, numpy, h5py; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "numpy", numpy.__version__, "h5py", h5py.__version__)'
  nproc; cat /proc/loadavg
} >"$OUT/summary.txt" 2>&1

step pytest_cuda 120 "$PY" -m pytest -q -p no:cacheprovider -p no:xdist tests/models/serving/test_runner.py \
    tests/bench/test_bench_gpu.py >"$OUT/pytest_cuda.log" 2>&1
# shellcheck disable=SC2086  # BENCH_OPTIONS is a list of options
step bench_gpu "$BENCH_LIMIT_S" "$PY" -m dtmr bench gpu $BENCH_OPTIONS --json >"$OUT/gpu_inference.json" \
    2>"$OUT/gpu_inference.err"
if [ -s "$OUT/gpu_inference.json" ]; then
  "$PY" -c 'import json, sys; from dtmr.bench.gpu import print_summary
print_summary(json.load(open(sys.argv[1])))' "$OUT/gpu_inference.json" >"$OUT/gpu_inference.txt" 2>&1
else
  { echo "dtmr bench gpu stopped before its JSON; what it had printed:"; cat "$OUT/gpu_inference.err"; } \
    >"$OUT/gpu_inference.txt"
fi
echo "end after $(( $(date +%s) - START )) s" >>"$OUT/summary.txt"
cat "$OUT/summary.txt" "$OUT/gpu_inference.txt"; tail -3 "$OUT/pytest_cuda.log"; tail -5 "$OUT/gpu_inference.err"
