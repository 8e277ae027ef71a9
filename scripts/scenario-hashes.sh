#!/usr/bin/env bash
# The history and trace hash of every scenario (sweep plans aside) at seed 1, with the run's exit
# status: one line per scenario. Two builds that must behave alike (a refactor) give identical
# output; compare with diff.
#   usage: scripts/scenario-hashes.sh [CAUSIM_BINARY] > hashes.txt
set -u
bin=${1:-target/release/causim}
for f in $(git ls-files 'scenarios/*.json' | grep -v '^scenarios/sweeps/'); do
  d=$(mktemp -d)
  "$bin" run "$f" --seed 1 --out "$d/run" > /dev/null 2>&1
  rc=$?
  h=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['summary']; print(s['history_hash'], s.get('trace_hash'))" "$d/run/summary.json" 2>/dev/null || echo "none none")
  echo "$f $rc $h"
  rm -rf "$d"
done
