#!/usr/bin/env bash
# The viewer's benchmark (docs/viewer.md): pages for CausalMesh runs of about 2 500, 10 000
# and 40 000 one-operation transactions (scales 1, 4, 16 of benches/view/causalmesh.json). For each: the time, rate and peak memory of `causim view`
# (reading the run, checking its history, writing the page), the page's size, and how long
# headless Chromium takes from navigation start to the first drawn diagram (the page's own
# `data-first-draw-ms`, median of three loads). Not a test: the figures depend on the machine.
# Needs Chromium (Debian's `chromium`, or CAUSIM_CHROMIUM) and GNU time (`time`).
#   scripts/view-bench.sh [SCALE...]        (default: 1 4 16)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- 1 4 16
causim=target/release/causim
cargo build --release --quiet --bin causim # a no-op when up to date
chromium=${CAUSIM_CHROMIUM:-chromium}
out=out/view-bench
mkdir -p "$out"
printf '%-5s %12s %10s %10s %8s %8s %10s %8s %s\n' scale transactions operations violations page_MB view_s ktxn_per_s view_MB first_draw_ms
for scale in "$@"; do
  scenario="$out/causalmesh-x$scale.json"
  python3 - "$scale" "$scenario" <<'PY'
import json, sys
scale, path = float(sys.argv[1]), sys.argv[2]
s = json.load(open("benches/view/causalmesh.json"))
s["workload"]["generator"]["duration_ns"] = int(s["workload"]["generator"]["duration_ns"] * scale)
s["name"] = f"causalmesh-view-bench-x{sys.argv[1]}"
json.dump(s, open(path, "w"), indent=2)
PY
  dir="$out/x$scale"
  "$causim" run "$scenario" --out "$dir" >/dev/null || true # anomalies are expected
  measure=$( { /usr/bin/time -f '%e %M' "$causim" view "$dir" >/dev/null; } 2>&1 | tail -1)
  page="$(cd "$dir" && pwd)/view.html"
  draws=()
  for _ in 1 2 3; do
    profile=$(mktemp -d)
    ms=$("$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
      --disable-component-update --disable-sync --user-data-dir="$profile" --window-size=1500,900 --dump-dom "file://$page" 2>/dev/null \
      | grep -o 'data-first-draw-ms="[0-9]*"' | grep -o '[0-9]*')
    rm -rf "$profile"
    draws+=("$ms")
  done
  median=$(printf '%s\n' "${draws[@]}" | sort -n | sed -n 2p)
  read -r txns ops < <(python3 -c "
import json, sys
lines = [json.loads(l) for l in open('$dir/history.jsonl') if l.strip()]
recs = [l for l in lines if 'format' not in l]
print(len(recs), sum(len(r['ops']) for r in recs))")
  violations=$(python3 -c "import json; c=json.load(open('$dir/summary.json'))['check']; print(c['violations'] if c else '-')")
  size=$(python3 -c "import os; print(f'{os.path.getsize(\"$page\")/1e6:.1f}')")
  read -r secs kb <<<"$measure"
  rate=$(python3 -c "print(f'{$txns / max($secs, 0.01) / 1e3:.0f}')")
  printf '%-5s %12s %10s %10s %8s %8s %10s %8s %s\n' "$scale" "$txns" "$ops" "$violations" "$size" "$secs" "$rate" "$((kb / 1024))" "$median (${draws[*]})"
done
