#!/usr/bin/env bash
# The node-agent demo of the README on a real containerd: starts a containerd and a loopback registry
# under DIR (scripts/containerd.sh, scripts/registry.sh), pushes 127.0.0.1:5000/demo:v1 and demo:v2, then
# `kruise playground --runtime containerd` (3 nodes, kubeconfig ./playground.kubeconfig) and one
# `kruise daemon` per node, and waits until the playground is ready. Ctrl-C (or `stop`) stops it all.
#
#   scripts/node-agent-demo.sh [DIR]     (default /tmp/kruise-node-agent-demo; needs root for containerd)
#
# Needs the binaries built (`cargo build`: target/debug/kruise; `kubectl kruise` finds
# target/debug/kubectl-kruise when that directory is on PATH).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${1:-/tmp/kruise-node-agent-demo}
KRUISE=${KRUISE:-$REPO/target/debug/kruise}
PORT=5000
mkdir -p "$DIR"
SOCKET=$DIR/containerd/containerd.sock
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "$REPO/scripts/registry.sh" stop "$DIR/registry" >/dev/null 2>&1 || true
  "$REPO/scripts/containerd.sh" stop "$DIR/containerd" >/dev/null 2>&1 || true
}
trap cleanup EXIT INT TERM

"$REPO/scripts/containerd.sh" start "$DIR/containerd"
"$REPO/scripts/registry.sh" start "$DIR/registry" "$PORT"
for tag in demo:v1 demo:v2; do "$REPO/scripts/registry.sh" push "$DIR/registry" "$PORT" "$tag" >/dev/null; done

"$KRUISE" playground --runtime "containerd=unix://$SOCKET" --kubeconfig "$PWD/playground.kubeconfig" \
  >"$DIR/playground.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 120); do grep -q '^ready' "$DIR/playground.log" && break; sleep 0.5; done
grep -q '^ready' "$DIR/playground.log" || { tail -20 "$DIR/playground.log"; exit 1; }
for n in 1 2 3; do
  NODE_NAME=playground-node-$n KUBECONFIG=$PWD/playground.kubeconfig "$KRUISE" daemon \
    --socket-file "$SOCKET" --addr "127.0.0.1:1022$n" >"$DIR/agent-$n.log" 2>&1 &
  pids+=($!)
done
echo "ready: export KUBECONFIG=$PWD/playground.kubeconfig (agents on playground-node-1..3; logs in $DIR)"
wait
