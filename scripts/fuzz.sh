#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for FUZZ_SECONDS each (default 20: five targets, under 2 min),
# starting from the seeds in fuzz/seeds/<target>; fails if any target crashes, panics, times out
# (one input over 10 s) or goes over 2 GiB. A crashing input is saved in fuzz/artifacts/<target>/;
# replay it with `cargo +nightly fuzz run <target> <file>`.
#
# Build: release with debug assertions (overflow checks on), no sanitizer: the code under test forbids
# `unsafe`, and an AddressSanitizer build of std took too long for CI. Needs the nightly toolchain and
# cargo-fuzz (.ci/run installs both). Builds into FUZZ_TARGET_DIR (default fuzz/target).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../fuzz"

seconds=${FUZZ_SECONDS:-20}
export CARGO_TARGET_DIR=${FUZZ_TARGET_DIR:-$PWD/target}
# 16 codegen units, not cargo-fuzz's default of 1: one unit made the release build of kruise-api and
# k8s-openapi take most of the time; the fuzzers run somewhat slower per input.
flags=(--release --debug-assertions --sanitizer none --codegen-units 16)

cargo +nightly fuzz build "${flags[@]}"

failed=()
for target in $(cargo +nightly fuzz list); do
  corpus="$CARGO_TARGET_DIR/corpus/$target"
  mkdir -p "$corpus"
  echo "==> fuzz $target for ${seconds}s"
  if ! cargo +nightly fuzz run "${flags[@]}" "$target" "$corpus" "seeds/$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1; then
    failed+=("$target")
  fi
done

if ((${#failed[@]})); then
  echo "fuzzing found crashes in: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
  exit 1
fi
echo "fuzzing: no crash"
