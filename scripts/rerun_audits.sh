#!/usr/bin/env bash
# Published audits run again with their own recorded command, so that they gain what the audit measures
# since they were made (the action recognizer retrained on the release; with MODEL, the partners' exposure):
# every cell already in the audit's folder is reused (its figures come out the same), only the new ones are
# computed. Then published again.
#
#     scripts/rerun_audits.sh NAME[=MODEL] ...
#
# NAME: a published audit, results/audit/NAME (its release and key under runs/audit, as its command
# says; the command is read from the audit's folder when it is there, else from the published copy, and a
# folder that is gone is made again: every adaptive cell trained again, the raw-trained ones from the cache;
# its figures then move by the spread of trainings, and by more if the release file was written again since).
# MODEL: the k-same file that made the release, for `--partners` (its SHA-256 is checked against the key).
# A NAME that already has the retrained form (and the partners, with MODEL) is only published again.
set -euo pipefail

PY=${PYTHON:-.venv/bin/python}
export OMP_NUM_THREADS=1

for item in "$@"; do
  name=${item%%=*}
  model=
  [ "$item" != "$name" ] && model=${item#*=}
  published=results/audit/$name
  # the recorded command (without "dtmr") and the folder it writes
  read -r out command < <("$PY" - "$published/audit.json" <<'PY'
import json, shlex, sys
from dtmr.audit.audit_json import default_out
words = shlex.split(json.load(open(sys.argv[1]))["command"])[1:]
out = words[words.index("--out") + 1] if "--out" in words else str(default_out(words[1]))
print(out, shlex.join(words))
PY
)
  source=$out/audit.json
  [ -f "$source" ] || source=$published/audit.json
  if "$PY" -c "import json, sys; from dtmr.audit.audit_json import utility_entry; a = json.load(open('$source')); \
sys.exit(not (utility_entry(a, 'retrained') and ('partners' in a or not '$model')))"
  then
    [ -f "$out/audit.json" ] || { echo "$name: up to date"; continue; }
  else
    partners=()
    [ -n "$model" ] && [[ " $command " != *" --partners "* ]] && partners=(--partners "$model")
    eval "\"\$PY\" -m dtmr $command \"\${partners[@]}\""
  fi
  "$PY" -m dtmr publish-audit "$out" -o "$published"
done
