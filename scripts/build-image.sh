#!/usr/bin/env bash
# Builds the kruise-rs image without a container daemon: static (musl) `kruise` and `kruise-daemon`
# binaries, then an OCI image layout and its tarball (scripts/oci_image.py). Prints the image digest, which
# depends only on the binaries and the commit (timestamps come from the commit; build paths are remapped in
# the binaries).
#
# Usage: scripts/build-image.sh [TAG]      (default: the version in Cargo.toml, e.g. 0.1.0)
# Output: target/image/layout/ (an OCI image layout) and target/image/kruise-TAG.oci.tar, which
#   ctr -n k8s.io images import target/image/kruise-TAG.oci.tar     (containerd; named IMAGE:TAG)
#   skopeo copy oci-archive:target/image/kruise-TAG.oci.tar docker://REGISTRY/kruise:TAG
# Needs: rustup target x86_64-unknown-linux-musl (added if missing), musl-gcc (Debian: musl-tools;
# installed if missing and running as root), python3.
# Environment: IMAGE (default ghcr.io/kruise-rs/kruise), CARGO_TARGET_DIR (default target/).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
TARGET=x86_64-unknown-linux-musl
IMAGE=${IMAGE:-ghcr.io/kruise-rs/kruise}
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
TAG=${1:-$VERSION}
OUT=$REPO/target/image

say() { printf '==> %s\n' "$*"; }

if ! rustup target list --installed | grep -qx "$TARGET"; then
  say "rustup target add $TARGET"
  rustup target add "$TARGET"
fi
if ! command -v musl-gcc >/dev/null 2>&1; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    say "apt-get install musl-tools (musl-gcc builds the C parts: ring, mimalloc)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq musl-tools >/dev/null ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq musl-tools >/dev/null; }
  else
    echo "musl-gcc not found: install musl-tools" >&2
    exit 1
  fi
fi

say "cargo build --release --target $TARGET (static, stripped)"
# Static: musl links its libc in. No build path, cargo home or target dir in the binary (code generated
# into OUT_DIR, like the CRI bindings, is named by its path in the target dir), and the C compiler's
# __DATE__/__TIME__ (mimalloc prints them) are the commit's time: the same commit gives the same binary
# wherever it is built (a build in another directory differed in exactly these two).
TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
mkdir -p "$TARGET_DIR"
TARGET_DIR=$(cd "$TARGET_DIR" && pwd)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
export RUSTFLAGS="-C target-feature=+crt-static --remap-path-prefix=$REPO=/kruise-rs --remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=/cargo --remap-path-prefix=$TARGET_DIR=/target"
export CC_x86_64_unknown_linux_musl=musl-gcc
cargo build --release --locked --target "$TARGET" -p kruise-rs --bin kruise
# The node agent with its own profile (Cargo.toml `[profile.agent]`: size-optimised, LTO; fewer code pages
# resident on every node), built into target/$TARGET/agent/.
say "cargo build --profile agent --target $TARGET (kruise-daemon)"
cargo build --profile agent --locked --target "$TARGET" -p kruise-rs --bin kruise-daemon
BIN=${CARGO_TARGET_DIR:-$REPO/target}/$TARGET/release/kruise
DAEMON_BIN=${CARGO_TARGET_DIR:-$REPO/target}/$TARGET/agent/kruise-daemon
for b in "$BIN" "$DAEMON_BIN"; do
  # A dynamically linked executable names its loader (PT_INTERP); a static one has none.
  if readelf --program-headers "$b" | grep -q 'program interpreter'; then
    echo "$b is dynamically linked" >&2
    exit 1
  fi
  say "$b: $(du -h "$b" | cut -f1)"
done

say "OCI image $IMAGE:$TAG"
rm -rf "$OUT/layout"
CREATED=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)
python3 scripts/oci_image.py --binary "$BIN" --daemon-binary "$DAEMON_BIN" --layout "$OUT/layout" --tarball "$OUT/kruise-$TAG.oci.tar" \
  --name "$IMAGE" --tag "$TAG" --created "$CREATED" --revision "$REVISION"
