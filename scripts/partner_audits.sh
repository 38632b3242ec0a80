#!/usr/bin/env bash
# The partners' exposure of k-same releases (issue 19): each audit run again with `--partners MODEL`, its
# attacker cells reused from the folder (only the partners are computed: about a minute of one core), then
# published.
#
#     scripts/partner_audits.sh NAME=MODEL ...
#
# NAME: a release audited before, runs/audit/NAME.h5 with its folder runs/audit/NAME.audit (the audit's own
# recorded command is run again, so the raw library and the attackers are the same); MODEL: the file that
# made the release (its SHA-256 is checked against the key). The published copy goes to
# docs/results/audit/NAME, as scripts/motion_frontier.sh publishes.
set -euo pipefail

PY=${PYTHON:-.venv/bin/python}
export OMP_NUM_THREADS=1

for pair in "$@"; do
  name=${pair%%=*}
  model=${pair#*=}
  audit=runs/audit/$name.audit
  [ -f "$audit/audit.json" ] || { echo "no audit $audit: audit the release first" >&2; exit 1; }
  if ! "$PY" -c "import json, sys; sys.exit('partners' not in json.load(open('$audit/audit.json')))"; then
    command=$("$PY" -c "import json, shlex; c = shlex.split(json.load(open('$audit/audit.json'))['command']); \
print(shlex.join(c[1:]))")
    eval "\"\$PY\" -m dtmr $command --partners \"\$model\""
  fi
  "$PY" scripts/publish_audit.py "$audit" "docs/results/audit/$name"
done
