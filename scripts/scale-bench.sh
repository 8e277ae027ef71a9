#!/usr/bin/env bash
# How a run's cost grows with its length (README "Performance"): each protocol's main workload
# at 1x, 4x and 16x its duration (or its workflow count, for workloads bounded by count), run
# with its history written and no trace or check. Prints events, wall and CPU seconds, events/s,
# peak memory (GNU time's max RSS) and the CPU time (user + sys) relative to 1x, which a shared
# machine's load disturbs less than wall time. Not a test: the figures depend on the machine.
# Needs GNU time (`/usr/bin/time`).
#   scripts/scale-bench.sh [SCALE...]                 (default: 1 4 16)
#   CAUSIM_SCALE_ONLY=hydrocache scripts/scale-bench.sh   (only workloads whose path matches)
#   CAUSIM_SCALE_PARAMS='{"disseminate": true}' ...        (merged into the protocol's params)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- 1 4 16
causim=target/release/causim
cargo build --release --quiet --bin causim # a no-op when up to date
out=out/scale-bench
mkdir -p "$out"
workloads=(
  scenarios/register/default.json
  scenarios/eventual/direct-micro.json
  scenarios/causalmesh/micro-benchmark.json
  scenarios/causalmesh/tcc-micro-benchmark.json
  scenarios/faastcc/faastcc-chain-zipf10.json
  scenarios/hydrocache/opt-chain-zipf10.json
  scenarios/hydrocache/con-chain-zipf10.json
  scenarios/boki/mixed-workload.json
  scenarios/mucache/chain-app.json
  scenarios/concord/zipf-workload.json
  scenarios/concord/faast-zipf-workload.json
)
printf '%-44s %5s %10s %8s %8s %10s %8s %8s\n' workload scale events wall_s cpu_s Mevents/s peak_MB cpu_vs_1x
for w in "${workloads[@]}"; do
  [[ $w == *"${CAUSIM_SCALE_ONLY:-}"* ]] || continue
  base=""
  for scale in "$@"; do
    name=$(basename "$(dirname "$w")")-$(basename "$w" .json)-x$scale
    python3 - "$w" "$scale" "$out/$name.json" "$name" "${CAUSIM_SCALE_PARAMS:-}" <<'PY'
import json, sys
src, scale, path, name, params = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
s = json.load(open(src))
if params:
    s["protocol"].setdefault("params", {}).update(json.loads(params))
g = s["workload"]["generator"]
if "duration_ns" in g:
    g["duration_ns"] *= scale
elif "workflows_max" in g:
    g["workflows_max"] *= scale
else:
    sys.exit(f"{src}: neither duration_ns nor workflows_max to scale")
s["name"] = name
s.pop("expect", None)  # a longer run is not the scenario its expectations describe
s["checks"] = {}  # the simulation alone: no invariants, no history check
json.dump(s, open(path, "w"), indent=2)
PY
    measure=$( { /usr/bin/time -f 'TIME %e %U %S %M' "$causim" run "$out/$name.json" --no-trace --out "$out/$name" >"$out/$name.txt"; } 2>&1 | grep '^TIME' | tail -1)
    read -r _ wall user sys rss <<<"$measure"
    events=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['events'])" "$out/$name/summary.json")
    [ -n "$base" ] || base=$(python3 -c "import sys; print(float(sys.argv[1]) + float(sys.argv[2]))" "$user" "$sys")
    python3 - "$w" "$scale" "$events" "$wall" "$user" "$sys" "$rss" "$base" <<'PY'
import sys
w, scale, events, wall, user, sys_, rss, base = sys.argv[1:]
events, wall, cpu, rss, base = int(events), float(wall), float(user) + float(sys_), int(rss), float(base)
print(f"{w.removeprefix('scenarios/'):<44} {scale:>5} {events:>10} {wall:>8.2f} {cpu:>8.2f} {events / max(wall, 1e-3) / 1e6:>10.2f} {rss / 1024:>8.0f} {cpu / max(base, 1e-3):>7.1f}x")
PY
  done
done
