#!/usr/bin/env bash
# Issue 19's trained settings that the CPU cannot afford, on a lent GPU machine: DisentangledTMR with the
# k-same (k = 3), naive and re-timed naive residuals at β 0.2, 0.3 and 0.5, three trainings each, on UI-PRMD
# and the synthetic set (54 settings; about 22 minutes of one CPU core each). Each setting is trained,
# released, audited and published by scripts/residual_trainings.sh with DEVICE=cuda; JOBS queues run side by
# side on the one GPU, the settings dealt round the queues in order of interest (the k-same residual first,
# then β = 0.2 first, seed 0 first), so a budget that runs out leaves the most informative ones done.
#
#   bash scripts/gpu_residual_trainings.sh OUT [BUDGET_S]
#
# Needs runs/{uiprmd,synthetic}.h5 beside the checkout (carry them: 50 MB). Every queue stops at the budget
# (a setting cut short is lost with the machine; the finished ones are not). OUT gets audits.tar.gz (the
# published results/audit/D_dtmr_* folders of every finished setting: unpack it in the checkout),
# logs.tar.gz and summary.txt. Beside the first trainings, for each data set, a naive release is audited into
# a scratch folder so that the raw-trained attackers every audit of the set shares are trained once.
# A dry run on the CPU: DEVICE=cpu DATASETS=synthetic SETTINGS="ksame3:0.2:0" JOBS=1 EPOCHS=1,1,1
# QUADRUPLETS=16 AUDIT_EPOCHS=1 bash scripts/gpu_residual_trainings.sh build/gpu_dry 600
set -u
OUT=${1:?usage: gpu_residual_trainings.sh OUT [BUDGET_S]}
BUDGET=${2:-540}
START=$(date +%s)
export PYTHON=${PYTHON:-python3} DEVICE=${DEVICE:-cuda}
DATASETS=${DATASETS:-uiprmd synthetic}
SETTINGS=${SETTINGS:-$(for r in ksame3 naive retimed-naive; do for b in 0.2 0.3 0.5; do for s in 0 1 2; do
  echo "$r:$b:$s"; done; done; done)}
JOBS=${JOBS:-12}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1
mkdir -p "$OUT" runs/audit
WORK=$(mktemp -d)
LOGS=$WORK/logs
mkdir -p "$LOGS"
left() { local s=$(( BUDGET - 30 - ($(date +%s) - START) )); [ "$s" -lt 1 ] && s=1; echo "$s"; }  # 30 s to pack

echo "start $(date -u +%FT%TZ), budget ${BUDGET}s, device $DEVICE, $JOBS queues" | tee "$LOGS/summary.txt"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null
  "$PYTHON" -c 'import torch, sys; print(sys.version.split()[0], "torch", torch.__version__)'
} >>"$LOGS/summary.txt" 2>&1

for D in $DATASETS; do  # the shared raw-trained attackers, once per data set
  ( "$PYTHON" -m dtmr anonymize "runs/$D.h5" --method naive -o "$WORK/${D}_naive.h5" &&
    timeout "$(left)" "$PYTHON" -m dtmr audit "$WORK/${D}_naive.h5" --key "$WORK/${D}_naive.key.json" \
      --raw "runs/$D.h5" --device "$DEVICE" --attackers tcn,bone-lengths --out "$WORK/${D}_naive.audit" \
      --cache runs/audit/.audit-cache ${AUDIT_EPOCHS:+--epochs "$AUDIT_EPOCHS"}
    echo "$D: raw-trained attackers ready, rc $? after $(( $(date +%s) - START )) s" >>"$LOGS/summary.txt"
  ) >"$LOGS/${D}_cache.log" 2>&1 &   # beside the trainings, which take minutes before their first audit
done

queue=0
declare -A work
for setting in $SETTINGS; do  # dealt round the queues: queue q takes settings q, q + JOBS, ... of each set
  for D in $DATASETS; do
    work[$queue]="${work[$queue]:-} $D=$setting"
    queue=$(( (queue + 1) % JOBS ))
  done
done
for q in "${!work[@]}"; do
  (
    for item in ${work[$q]}; do
      D=${item%%=*}
      started=$(date +%s)
      timeout "$(left)" bash scripts/residual_trainings.sh "$D" "${item#*=}" >>"$LOGS/queue$q.log" 2>&1
      echo "$D ${item#*=}: rc $? in $(( $(date +%s) - started )) s" >>"$LOGS/summary.txt"
      [ "$(left)" -gt 60 ] || break
    done
  ) &
done
wait

echo "end after $(( $(date +%s) - START )) s" >>"$LOGS/summary.txt"
cp "$LOGS/summary.txt" "$OUT/summary.txt"
published=$(cd results/audit && for D in $DATASETS; do ls -d "${D}"_dtmr_*_s[0-9] 2>/dev/null; done)
tar -czf "$OUT/audits.tar.gz" -C results/audit $published 2>>"$OUT/summary.txt"
tar -czf "$OUT/logs.tar.gz" -C "$WORK" logs 2>>"$OUT/summary.txt"
cat "$OUT/summary.txt"
