#!/usr/bin/env bash
# The N-UCLA, UI-PRMD and synthetic frontiers of docs/notebook/experiments.md ("Motion anonymizers") from every audit
# published under results/audit (a missing one is left out); the tables go to
# build/frontier_{nwucla,uiprmd,synthetic}.md. Audits with one label are trainings of one setting: one point,
# mean ± std.
set -euo pipefail
cd "$(dirname "$0")/.."
A=results/audit
mkdir -p build
add() { if [ -f "$A/$1/audit.json" ]; then dirs+=("$A/$1"); labels+=("$2"); fi; }
common() {  # common D DTMR_LABEL: the rows every data set has (raw, naive, the earlier models, re-timing, k-same)
  dirs=(); labels=()
  add "$1_raw" "raw"; add "$1_naive" "naive retarget"
  add "$1_dtmr" "$2"
  add "$1_dmr" "DMR (a tenth of its schedule)"
  add "$1_retime" "re-timing"; add "$1_retime-naive" "re-timing + naive"
  for k in 2 3 5 8; do add "$1_ksame$k" "k-same k=$k"; done
  add "$1_ksame3t" "k-same k=3 template timing"
  for k in 3 5 20; do add "$1_ksame${k}m" "k-same k=$k cluster means"; done
}
trained() {  # trained D: DisentangledTMR with a motion residual (scripts/residual_trainings.sh: the data set's own
  # recipe), three seeds a point
  local b r s
  for b in 0.2 0.3 0.5; do for s in 0 1 2; do
    add "$1_dtmr_ksame3_b${b}_s$s" "DisentangledTMR small β=$b k-same residual k=3"
  done; done
  for r in naive retimed-naive; do for b in 0.2 0.3 0.5; do for s in 0 1 2; do
    add "$1_dtmr_${r}_b${b}_s$s" "DisentangledTMR small β=$b ${r} residual (recipe of the k-same rows)"
  done; done; done
}
plot() {  # plot D TITLE
  local joined
  joined=$(IFS=,; echo "${labels[*]}")
  ${PYTHON:-.venv/bin/python} scripts/plot_frontier.py "${dirs[@]}" --labels "$joined" --title "$2" \
      --out "results/frontier_$1.png" > "build/frontier_$1.md"
}

common nwucla "DisentangledTMR small β=0.2 (naive residual; the earlier audit)"
add nwucla_ksame3_unnamed "k-same k=3 on the library with unnamed actions (nearest template)"
add nwucla_ksame3_unnamed_embedded "k-same k=3 on the library with unnamed actions (action embedding)"
trained nwucla
plot nwucla "N-UCLA: motion anonymizers against the naive retarget"

common uiprmd "DisentangledTMR small β=0.2 (naive residual; the earlier audit)"
add uiprmd_ksame3_cluster "k-same k=3 cluster partners"; add uiprmd_ksame5_cluster "k-same k=5 cluster partners"
trained uiprmd
add uiprmd_dtmr_ksame3_b0.2_s0_nwucla-recipe "DisentangledTMR small β=0.2 k-same residual k=3 (N-UCLA's recipe)"
plot uiprmd "UI-PRMD: motion anonymizers against the naive retarget"

common synthetic "DisentangledTMR small β=0.2 (bundled: naive residual; kinematic head)"
add synthetic_bundled_ksame "k-same k=3 template timing (bundled before; one repetition in the pool)"
add synthetic_bundled_means "k-same k=20 cluster means (bundled; one repetition in the pool)"
trained synthetic
add synthetic_dtmr_ksame3_b0.2_s0_nwucla-recipe "DisentangledTMR small β=0.2 k-same residual k=3 (N-UCLA's recipe)"
plot synthetic "Synthetic set: motion anonymizers against the naive retarget"
