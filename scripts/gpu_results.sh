#!/usr/bin/env bash
# The GPU run behind docs/notebook/experiments.md's N-UCLA and UI-PRMD tables: one call on a lent GPU machine.
#
#   bash scripts/gpu_results.sh OUT [BUDGET_S]
#
# For each data set, side by side on one GPU: DisentangledTMR (`paper` preset, beta 0.2), DMR and PMR are
# trained, and the full evaluation protocol (5 seeds, retrained models 30 epochs) runs in parts that start
# as soon as their models exist: raw+noise, naive, the CPU-trained `small` model, DMR+PMR, the paper model.
# The parts are joined into results/<set>/ (scripts/merge_evaluations.py). Everything stops by
# BUDGET_S seconds (a training stopped early keeps its last epoch's model.pt, which records the epoch); OUT
# gets results.tar.gz (the tables, every log, the training events) and summary.txt.
#
# Needs, beside the checkout: runs/<set>.h5 (`dtmr data import`), runs/<set>/recognizers/{action,subject}.pt
# and runs/<set>/dtmr_b0.2/model.pt (the commands in docs/notebook/experiments.md). Settings can be changed through the
# environment (a dry run on the CPU: DEVICE=cpu DATASETS=synthetic PAPER_EPOCHS=1,1,1 ...).
set -u
OUT=${1:?usage: gpu_results.sh OUT [BUDGET_S]}
BUDGET=${2:-540}
START=$(date +%s)
PY=${PYTHON:-python3}
DEVICE=${DEVICE:-cuda}
DATASETS=${DATASETS:-nwucla uiprmd}
DATA_DIR=${DATA_DIR:-runs}
SEEDS=${SEEDS:-5}
RETRAIN_EPOCHS=${RETRAIN_EPOCHS:-30}
PAPER_EPOCHS=${PAPER_EPOCHS:-10,8,10}       # half the paper's 20/15/20: the lease is 15 minutes
PAPER_QUADS=${PAPER_QUADS:-1024}
PAPER_BATCH=${PAPER_BATCH:-32}
DMR_EPOCHS=${DMR_EPOCHS:-1,2,10,10}          # a tenth of the public schedules, as `dtmr evaluate` uses
PMR_EPOCHS=${PMR_EPOCHS:-1,2,2,5,10,10}
TRAIN_SHARE=${TRAIN_SHARE:-60}              # percent of the budget the trainings may use
RESULTS_DIR=${RESULTS_DIR:-results}

export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
mkdir -p "$OUT"
WORK=$(mktemp -d)
LOGS=$WORK/logs
mkdir -p "$LOGS"

at_least_1() { if [ "$1" -lt 1 ]; then echo 1; else echo "$1"; fi; }   # `timeout 0` would mean no limit
left() { at_least_1 $(( BUDGET - 20 - ($(date +%s) - START) )); }   # 20 s kept for merging and packing
train_limit() { at_least_1 $(( BUDGET * TRAIN_SHARE / 100 - ($(date +%s) - START) )); }
dtmr_for() { local limit=$1; shift; timeout -s TERM "$limit" "$PY" -m dtmr "$@"; }

echo "start $(date -u +%FT%TZ), budget ${BUDGET}s, device $DEVICE" | tee "$LOGS/summary.txt"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null
  "$PY" -c 'import torch, numpy, sys; print(sys.version.split()[0], "torch", torch.__version__, "numpy", numpy.__version__)'
} >>"$LOGS/summary.txt" 2>&1

if [ "$DEVICE" = cuda ]; then   # the CUDA tests first: a stage that leaves a tensor on the CPU shows here
  ( timeout 240 "$PY" -m pytest -q -p no:cacheprovider -k cuda tests/train/test_trainers.py \
      tests/eval/test_protocol.py >"$LOGS/pytest_cuda.log" 2>&1; echo "pytest rc $?" >>"$LOGS/pytest_cuda.log" ) &
fi

evaluate_part() {  # evaluate_part SET NAME WAIT_FILES... -- ARGS...: wait for the files, then one part
  local set=$1 name=$2; shift 2
  local waits=()
  while [ "$1" != -- ]; do waits+=("$1"); shift; done
  shift
  for f in "${waits[@]}"; do
    while [ ! -e "$f" ] && [ "$(left)" -gt 30 ]; do sleep 2; done
  done
  local models=() arg
  for arg in "$@"; do  # drop --model paths whose training left no model
    if [ ${#models[@]} -gt 0 ] && [ "${models[-1]}" = --model ] && [ ! -f "$arg" ]; then unset 'models[-1]'; continue; fi
    models+=("$arg")
  done
  local started=$(date +%s)
  dtmr_for "$(left)" evaluate --data "$DATA_DIR/$set.h5" --split "$set" --seeds "$SEEDS" \
    --recognizers "$DATA_DIR/$set/recognizers" --retrain-epochs "$RETRAIN_EPOCHS" --device "$DEVICE" \
    --out "$WORK/parts/$set/$name" "${models[@]}" >"$LOGS/${set}_eval_$name.log" 2>&1
  echo "$set eval $name: rc $? in $(( $(date +%s) - started )) s" >>"$LOGS/summary.txt"
}

train_model() {  # train_model SET NAME ARGS...: one training, stopped at the training share of the budget
  local set=$1 name=$2; shift 2
  local started=$(date +%s)
  TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 dtmr_for "$(train_limit)" train --data "$DATA_DIR/$set.h5" --split "$set" \
    --device "$DEVICE" --out "$DATA_DIR/$set/$name" "$@" >"$LOGS/${set}_train_$name.log" 2>&1
  echo "$set train $name: rc $? in $(( $(date +%s) - started )) s" >>"$LOGS/summary.txt"
  touch "$WORK/$set.$name.done"
}

for set in $DATASETS; do
  train_model "$set" dtmr_paper_b0.2 --preset paper --beta 0.2 --epochs "$PAPER_EPOCHS" \
    --quadruplets "$PAPER_QUADS" --batch "$PAPER_BATCH" &
  train_model "$set" dmr --method dmr --epochs "$DMR_EPOCHS" &
  train_model "$set" pmr --method pmr --epochs "$PMR_EPOCHS" &
  evaluate_part "$set" 1_raw_noise -- --baselines raw,noise &
  evaluate_part "$set" 2_naive -- --baselines naive &
  evaluate_part "$set" 3_dtmr_small -- --baselines '' --model "$DATA_DIR/$set/dtmr_b0.2/model.pt" &
  evaluate_part "$set" 4_dmr_pmr "$WORK/$set.dmr.done" "$WORK/$set.pmr.done" -- --baselines '' \
    --model "$DATA_DIR/$set/dmr/model.pt" --model "$DATA_DIR/$set/pmr/model.pt" &
  evaluate_part "$set" 5_dtmr_paper "$WORK/$set.dtmr_paper_b0.2.done" -- --baselines '' \
    --model "$DATA_DIR/$set/dtmr_paper_b0.2/model.pt" &
done
wait

for set in $DATASETS; do
  "$PY" scripts/merge_evaluations.py "$RESULTS_DIR/$set" "$WORK"/parts/"$set"/* >>"$LOGS/summary.txt" 2>&1
  for name in dtmr_paper_b0.2 dmr pmr; do
    [ -f "$DATA_DIR/$set/$name/events.jsonl" ] && gzip -c "$DATA_DIR/$set/$name/events.jsonl" >"$LOGS/${set}_${name}_events.jsonl.gz"
  done
done
echo "end after $(( $(date +%s) - START )) s" >>"$LOGS/summary.txt"
cp "$LOGS/summary.txt" "$OUT/summary.txt"
tar -czf "$OUT/results.tar.gz" -C "$WORK" logs parts $(for set in $DATASETS; do echo "-C $PWD $RESULTS_DIR/$set"; done) 2>>"$OUT/summary.txt"
cat "$OUT/summary.txt"
