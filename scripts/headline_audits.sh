#!/bin/bash
# The audits behind docs/RESULTS.md's which-method table (issue 40's suite): for each data set given, its raw,
# naive-retarget and k-same releases made by `dtmr anonymize` with its defaults, each audited with the full
# suite, and a copy fit to publish written to results/audit/suite/DATA_RELEASE (`dtmr audit --publish`).
# Then `python scripts/which_method.py --write` regenerates the tables from those copies.
#
#   scripts/headline_audits.sh [nwucla] [uiprmd] [synthetic]      (RUNS=runs/headline, WORKERS=2)
#
# Costs on two CPU cores (docs/audit.md, "Cost"): synthetic about 7 minutes an audit, N-UCLA and UI-PRMD
# 10-25 minutes an audit (the raw release's first, which trains the raw-trained and raw-known attackers).
set -euo pipefail
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
DTMR=${DTMR:-.venv/bin/dtmr}
RUNS=${RUNS:-runs/headline}
WORKERS=${WORKERS:-2}
SHARED=${SHARED:-../shared/data}
PUBLISH=results/audit/suite
mkdir -p "$RUNS" "$PUBLISH"

library() {  # DATA -> the raw library
  local data=$1 lib="$RUNS/$1.h5"
  if [ ! -f "$lib" ]; then
    case $data in
      nwucla) $DTMR data import "$SHARED/nwucla.npz" -o "$lib" ;;
      uiprmd) $DTMR data import "$SHARED/uiprmd_kinect.npz" -o "$lib" ;;
      synthetic) $DTMR data synth -o "$lib" --subjects 40 --actions 12 --repetitions 3 --seed 0 ;;
    esac
  fi
}

release() {  # DATA NAME ARGS... -> RUNS/DATA_NAME.h5 and its key
  local data=$1 name=$2; shift 2
  [ -f "$RUNS/${data}_$name.h5" ] || $DTMR anonymize "$RUNS/$data.h5" "$@" --device cpu -o "$RUNS/${data}_$name.h5"
}

audit() {  # DATA NAME AUDIT-ARGS...
  local data=$1 name=$2; shift 2
  $DTMR audit "$RUNS/${data}_$name.h5" --key "$RUNS/${data}_$name.key.json" --raw "$RUNS/$data.h5" \
    --split "$data" --device cpu --workers "$WORKERS" --publish "$PUBLISH/${data}_$name" "$@"
}

for data in "$@"; do
  library "$data"
  release "$data" raw --method raw
  release "$data" naive --method naive
  case $data in
    nwucla|synthetic)
      [ -f "$RUNS/ksame_k3_$data.pt" ] || $DTMR fit-motion-model --data "$RUNS/$data.h5" --split "$data" \
        --method ksame --k 3 -o "$RUNS/ksame_k3_$data.pt"
      release "$data" ksame3 --model "$RUNS/ksame_k3_$data.pt" ;;
  esac
  case $data in
    uiprmd|synthetic)
      [ -f "$RUNS/ksame_k5_means_$data.pt" ] || $DTMR fit-motion-model --data "$RUNS/$data.h5" --split "$data" \
        --method ksame --k 5 --timing template --partners cluster-mean -o "$RUNS/ksame_k5_means_$data.pt"
      release "$data" ksame5m --model "$RUNS/ksame_k5_means_$data.pt" ;;
  esac
  if [ "$data" = synthetic ]; then  # half of its 40 people in each cluster: what the bundled model does
    [ -f "$RUNS/ksame_k20_means_$data.pt" ] || $DTMR fit-motion-model --data "$RUNS/$data.h5" --split "$data" \
      --method ksame --k 20 --timing template --partners cluster-mean -o "$RUNS/ksame_k20_means_$data.pt"
    release "$data" ksame20m --model "$RUNS/ksame_k20_means_$data.pt"
  fi
  case $data in
    nwucla) args=(--reference 59.9 --epochs sgn=3,tcn=80,stgcn=40); releases="raw naive ksame3" ;;
    uiprmd) args=(--reference 99.8 --attackers sgn,tcn,bone-lengths,first-root,placement,length,dropouts,clip-stats)
            releases="raw naive ksame5m" ;;
    synthetic) args=(--attackers sgn,tcn,bone-lengths,first-root,placement,length,dropouts,clip-stats)
               releases="raw naive ksame3 ksame5m ksame20m" ;;
  esac
  for name in $releases; do audit "$data" "$name" "${args[@]}"; done
done
