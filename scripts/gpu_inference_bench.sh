#!/usr/bin/env bash
# The GPU figures of issue 22 (docs/scale.md, "The GPU path"): one call on a lent GPU machine, under 8 minutes.
#
#   bash scripts/gpu_inference_bench.sh OUT
#
# Writes to OUT: gpu_inference.json and gpu_inference.txt (`dtmr bench gpu`: the paper preset's clips/s at
# batch 1 / 256 / auto, eager vs CUDA graph, fp32 vs bf16, the single-clip latency, the bf16 release's MPJPE
# against fp32, dtmr anonymize end to end on the GPU), pytest_cuda.log (the CUDA tests, which CI skips) and
# summary.txt (GPU, driver, versions, each step's exit status and time). On the device tool:
#
#   run(command="bash scripts/gpu_inference_bench.sh $OUT", timeout_s=540)
set -u
OUT=${1:?usage: gpu_inference_bench.sh OUT}
PY=${PYTHON:-python3}
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

step pytest_cuda 150 "$PY" -m pytest -q -p no:cacheprovider tests/models/test_inference.py >"$OUT/pytest_cuda.log" 2>&1
step bench_gpu 330 "$PY" -m dtmr bench gpu --json >"$OUT/gpu_inference.json" 2>"$OUT/gpu_inference.err"
[ -s "$OUT/gpu_inference.json" ] && "$PY" -c 'import json, sys; from dtmr.bench.gpu import print_summary
print_summary(json.load(open(sys.argv[1])))' "$OUT/gpu_inference.json" >"$OUT/gpu_inference.txt" 2>&1
echo "end after $(( $(date +%s) - START )) s" >>"$OUT/summary.txt"
cat "$OUT/summary.txt" "$OUT/gpu_inference.txt"; tail -3 "$OUT/pytest_cuda.log"; tail -5 "$OUT/gpu_inference.err"
