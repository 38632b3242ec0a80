#!/usr/bin/env bash
# The N-UCLA and UI-PRMD frontiers of docs/RESULTS.md ("Motion anonymizers") from every audit published under
# docs/results/audit (a missing one is left out); the tables go to build/frontier_{nwucla,uiprmd}.md. Audits
# with one label are trainings of one setting: one point, mean ± std.
set -euo pipefail
cd "$(dirname "$0")/.."
A=docs/results/audit
mkdir -p build
dirs=(); labels=()
add() { if [ -f "$A/$1/audit.json" ]; then dirs+=("$A/$1"); labels+=("$2"); fi; }
add nwucla_raw "raw"; add nwucla_naive "naive retarget"
add nwucla_dtmr "DisentangledTMR small β=0.2 (naive residual; the earlier audit)"
add nwucla_dmr "DMR (a tenth of its schedule)"
add nwucla_retime "re-timing"; add nwucla_retime-naive "re-timing + naive"
for k in 2 3 5 8; do add nwucla_ksame$k "k-same k=$k"; done
add nwucla_ksame3t "k-same k=3 template timing"
add nwucla_ksame3_unnamed "k-same k=3 on the library with unnamed actions (nearest template)"
add nwucla_ksame3_unnamed_embedded "k-same k=3 on the library with unnamed actions (action embedding)"
for b in 0.2 0.3 0.5; do for s in 0 1 2; do
  add nwucla_dtmr_ksame3_b${b}_s$s "DisentangledTMR small β=$b k-same residual k=3"
done; done
for r in naive retimed-naive; do for b in 0.2 0.3 0.5; do for s in 0 1 2; do
  add nwucla_dtmr_${r}_b${b}_s$s "DisentangledTMR small β=$b ${r} residual (recipe of the k-same rows)"
done; done; done
IFS=,; L="${labels[*]}"; unset IFS
${PYTHON:-.venv/bin/python} scripts/plot_frontier.py "${dirs[@]}" --labels "$L" \
    --title "N-UCLA: motion anonymizers against the naive retarget" --out docs/results/frontier_nwucla.png > build/frontier_nwucla.md
dirs=(); labels=()
add uiprmd_raw "raw"; add uiprmd_naive "naive retarget"
add uiprmd_dtmr "DisentangledTMR small β=0.2 (naive residual; the earlier audit)"
add uiprmd_dmr "DMR (a tenth of its schedule)"
add uiprmd_retime "re-timing"; add uiprmd_retime-naive "re-timing + naive"
for k in 2 3 5 8; do add uiprmd_ksame$k "k-same k=$k"; done
add uiprmd_ksame3t "k-same k=3 template timing"
add uiprmd_ksame3_cluster "k-same k=3 cluster partners"; add uiprmd_ksame5_cluster "k-same k=5 cluster partners"
IFS=,; L="${labels[*]}"; unset IFS
${PYTHON:-.venv/bin/python} scripts/plot_frontier.py "${dirs[@]}" --labels "$L" \
    --title "UI-PRMD: motion anonymizers against the naive retarget" --out docs/results/frontier_uiprmd.png > build/frontier_uiprmd.md
