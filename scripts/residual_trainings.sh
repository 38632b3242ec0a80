#!/usr/bin/env bash
# Issue 19's trained settings: DisentangledTMR with a motion residual, trained, released, audited and
# published, one setting after another (one CPU thread: run at most two of these side by side).
#
#     scripts/residual_trainings.sh D RESIDUAL:BETA:SEED ...
#
# D: nwucla, uiprmd or synthetic (the library runs/D.h5, made by scripts/motion_frontier.sh).
# RESIDUAL: naive, retimed-naive or ksame3 (the k-same residual with k = 3). Each setting is the data set's
# own best recipe of the `small` preset (docs/notebook/experiments.md), only the residual and β changed, 1,024
# quadruplets, batch 8:
# - nwucla: epochs 4,4,3, output identity adversary at lr 1e-3 with warmed output critics and weight 1;
# - uiprmd: epochs 4,4,3, no output action CE (N-UCLA's output adversary breaks UI-PRMD's releases: "UI-PRMD:
#   evaluators trained again, N-UCLA's setting");
# - synthetic: the bundled models' recipe (Makefile `models`): epochs 4,6,4, the kinematic output head,
#   joint-angle and limb-overlap losses.
# The model goes to runs/D/dtmr_RESIDUAL_bBETA_sSEED, its release and audit to runs/audit/D_dtmr_..., the
# published audit to results/audit/D_dtmr_... Every step is skipped when its output exists (a training
# when its events say it is done), so a stopped run resumes (a training stopped half way with `dtmr train
# --resume`). Stage 1 reads neither β nor the residual: the trainings of one seed share it through
# runs/D/stage1-cache (`dtmr train --stage1-cache`; the same models, about 5 minutes sooner each but the
# first of a seed). The environment may change the device (DEVICE=cuda: scripts/gpu_residual_trainings.sh) and,
# for a quick dry run only, the schedule (EPOCHS, QUADRUPLETS) and the audit's attacker epochs (AUDIT_EPOCHS).
set -euo pipefail

D=${1:?data set: nwucla, uiprmd or synthetic}
shift
PY=${PYTHON:-.venv/bin/python}
DEVICE=${DEVICE:-cpu}
case $D in
  nwucla) recipe=(--output-adversary-lr 1e-3 --warm-output-critics --loss-weight output_identity_adversary=1)
          epochs=4,4,3 ;;
  uiprmd) recipe=(--loss-weight output_action_ce=0); epochs=4,4,3 ;;
  synthetic) recipe=(--model-option output_head=kinematic --loss-weight joint_angle=10 --loss-weight limb_overlap=1000)
             epochs=4,6,4 ;;
  *) echo "unknown data set $D (nwucla, uiprmd, synthetic)" >&2; exit 1 ;;
esac
EPOCHS=${EPOCHS:-$epochs}
QUADRUPLETS=${QUADRUPLETS:-1024}
audit_epochs=()
[ -n "${AUDIT_EPOCHS:-}" ] && audit_epochs=(--epochs "$AUDIT_EPOCHS")
export OMP_NUM_THREADS=1
LIB=runs/$D.h5
[ -f "$LIB" ] || { echo "no library $LIB: run scripts/motion_frontier.sh $D raw first" >&2; exit 1; }
mkdir -p runs/audit "runs/$D"

for setting in "$@"; do
  IFS=: read -r residual beta seed <<< "$setting"
  case $residual in
    naive|retimed-naive) options=(--model-option "residual=$residual") ;;
    ksame*) options=(--model-option residual=ksame --model-option "residual_k=${residual#ksame}") ;;
    *) echo "unknown residual $residual (naive, retimed-naive, ksameK)" >&2; exit 1 ;;
  esac
  name=dtmr_${residual}_b${beta}_s$seed
  run=runs/$D/$name
  if ! grep -qs '"kind":"done"' "$run/events.jsonl"; then  # model.pt is written at every checkpoint
    resume=()
    [ -f "$run/train_state.pt" ] && resume=(--resume)
    "$PY" -m dtmr train --data "$LIB" --split "$D" --preset small --beta "$beta" --epochs "$EPOCHS" \
        --quadruplets "$QUADRUPLETS" --batch 8 "${options[@]}" "${recipe[@]}" --seed "$seed" --device "$DEVICE" \
        --stage1-cache "runs/$D/stage1-cache" --out "$run" "${resume[@]}"
  fi
  release=runs/audit/${D}_$name.h5
  [ -f "$release" ] || "$PY" -m dtmr anonymize "$LIB" --model "$run/model.pt" --device "$DEVICE" -o "$release"
  partners=()
  case $residual in ksame*) partners=(--partners "$run/model.pt") ;; esac
  audit=runs/audit/${D}_$name.audit
  [ -f "$audit/audit.json" ] || "$PY" -m dtmr audit "$release" --key "runs/audit/${D}_$name.key.json" \
                                  --raw "$LIB" --device "$DEVICE" --attackers tcn,bone-lengths --out "$audit" \
                                  "${audit_epochs[@]}" "${partners[@]}"
  "$PY" -m dtmr publish-audit "$audit" -o "results/audit/${D}_$name"
done
