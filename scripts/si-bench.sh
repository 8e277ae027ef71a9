#!/usr/bin/env bash
# The si checker on BokiStore's own histories at 1×, 4× and 16× (6 250, 25 000 and 100 000
# transactions of the counter test: 32 counters, 3 per transaction, 48 instances): simulate
# each once (history only), then time `causim check --level si` on it and read its peak memory.
# The generated-history rows are in `cargo bench -p causim-checkers -- si`.
# Usage: scripts/si-bench.sh [out-dir]   (needs a release build: cargo build --release)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/si-bench}
mkdir -p "$out"
bin=target/release/causim
printf '| transactions | operations | wall s | CPU s | transactions/s (CPU) | peak MB |\n|---:|---:|---:|---:|---:|---:|\n'
for n in 6250 25000 100000; do
  scenario="$out/counter-$n.json"
  python3 - "$n" > "$scenario" <<'PY'
import json, sys
s = json.load(open("scenarios/boki/s11-counter-test.json"))
s["name"] = f"si-bench-{sys.argv[1]}"
s["workload"]["generator"]["workflows_max"] = int(sys.argv[1])
s["checks"] = {"invariants": False}
s["expect"] = None
s["limits"]["time_ns_max"] = 1000000000000
print(json.dumps(s))
PY
  [ -s "$out/run-$n/history.jsonl" ] || "$bin" run "$scenario" --no-trace --out "$out/run-$n" > /dev/null
  ops=$(grep -o '"f":"[rw]"' "$out/run-$n/history.jsonl" | wc -l)
  /usr/bin/time -f '%e %U %S %M' -o "$out/time-$n" "$bin" check --level si "$out/run-$n/history.jsonl" > "$out/check-$n.txt"
  read -r wall user sys kb < "$out/time-$n"
  awk -v n="$n" -v o="$ops" -v w="$wall" -v u="$user" -v s="$sys" -v k="$kb" \
    'BEGIN { c = u + s; printf "| %d | %d | %.2f | %.2f | %.0f | %.0f |\n", n, o, w, c, n / (c > 0 ? c : 0.01), k / 1024 }'
done
