#!/usr/bin/env bash
# The test command of kruise-rs (README, CI): formatting, lints, every test of the workspace, the
# single-crypto-provider check and the install manifests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Each step prints the seconds spent so far, so a slow CI run shows where the time went.
step() { printf '\n==> [%ss] %s\n' "$SECONDS" "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "exactly one crypto provider (ring): aws-lc-rs must not be in the dependency tree"
if cargo tree --workspace --locked -e normal,build,dev -i aws-lc-rs >/dev/null 2>&1; then
  cargo tree --workspace -e normal,build,dev -i aws-lc-rs
  echo "error: aws-lc-rs is in the dependency tree" >&2
  exit 1
fi

step "tests"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --locked --no-fail-fast
  cargo test --workspace --locked --doc
else
  cargo test --workspace --locked --no-fail-fast
fi

step "install manifests"
scripts/validate-manifests.sh
step "done"
