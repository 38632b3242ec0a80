#!/usr/bin/env bash
# Issue 19's frontier for one data set: fit the motion anonymizers, write their releases, audit each one with
# the attacker suite and publish the audits beside the earlier ones (results/audit/D_NAME).
#
#     scripts/motion_frontier.sh nwucla|uiprmd|synthetic [NAME ...]
#
# NAME: which releases to make (default: every motion anonymizer; raw and naive, published already for
# N-UCLA and UI-PRMD, on request): raw naive retime retime-naive ksame2 ksame3 ksame5
# ksame8 ksame3t (k = 3 on the template's timing); ksameKm on request (k-Same's cluster means with clusters of
# K: `--partners cluster-mean --timing template`). k-same audits measure the partners' exposure too
# (`--partners`, docs/audit.md). One CPU thread; run two data sets side by side on two
# cores. Every step is skipped when its output exists, so a stopped run resumes. The audits use
# `--attackers tcn,bone-lengths` (the 3-epoch SGN was never the worst case, docs/notebook/experiments.md) and
# the audit's other defaults, like the published raw/naive/DMR/DisentangledTMR audits.
set -euo pipefail

D=${1:?data set: nwucla, uiprmd or synthetic}
shift
NAMES=${*:-retime retime-naive ksame2 ksame3 ksame5 ksame8 ksame3t}
PY=${PYTHON:-.venv/bin/python}
export OMP_NUM_THREADS=1
RUNS=runs
LIB=$RUNS/$D.h5
mkdir -p "$RUNS/audit" "$RUNS/motion"

if [ ! -f "$LIB" ]; then
  case $D in
    nwucla) "$PY" -m dtmr data import ../shared/data/nwucla.npz -o "$LIB" ;;
    uiprmd) "$PY" -m dtmr data import ../shared/data/uiprmd_kinect.npz -o "$LIB" ;;
    synthetic) "$PY" -m dtmr data synth -o "$LIB" --subjects 40 --actions 12 --repetitions 3 --seed 0 ;;
    *) echo "unknown data set $D" >&2; exit 1 ;;
  esac
fi

fit() {  # fit NAME ARGS...: the fitted anonymizer runs/motion/D_NAME.pt
  local name=$1; shift
  local out=$RUNS/motion/${D}_$name.pt
  [ -f "$out" ] || "$PY" -m dtmr fit-motion-model --data "$LIB" --split "$D" "$@" -o "$out" >&2
  echo "$out"
}

for name in $NAMES; do
  release=$RUNS/audit/${D}_$name.h5
  partners=()
  case $name in
    raw|naive) model= ;;
    retime|retime-naive) model=$(fit "$name" --method "$name") ;;
    ksame3t) model=$(fit "$name" --method ksame --k 3 --timing template) ;;
    ksame*m) k=${name#ksame}; model=$(fit "$name" --method ksame --k "${k%m}" --timing template \
                                        --partners cluster-mean) ;;
    ksame*) model=$(fit "$name" --method ksame --k "${name#ksame}") ;;
    *) echo "unknown release $name" >&2; exit 1 ;;
  esac
  case $name in ksame*) partners=(--partners "$model") ;; esac
  if [ ! -f "$release" ]; then
    if [ -z "$model" ]; then
      "$PY" -m dtmr anonymize "$LIB" --method "$name" -o "$release"
    else
      "$PY" -m dtmr anonymize "$LIB" --model "$model" --device cpu -o "$release"
    fi
  fi
  audit=$RUNS/audit/${D}_$name.audit
  [ -f "$audit/audit.json" ] || "$PY" -m dtmr audit "$release" --key "$RUNS/audit/${D}_$name.key.json" \
                                  --raw "$LIB" --device cpu --attackers tcn,bone-lengths --out "$audit" "${partners[@]}"
  "$PY" -m dtmr publish-audit "$audit" -o "results/audit/${D}_$name"
done
