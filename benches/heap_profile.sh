#!/usr/bin/env bash
# Where `kruise serve`'s heap goes with SETS CloneSets × PODS pods (issue #19): the playground with NODES
# nodes in one process, `kruise serve` in cluster mode under heaptrack in another. Once every pod is ready
# (+30 s), serve is killed with SIGKILL, so what heaptrack reports as leaked is what was held then;
# benches/heap_profile_summary.py groups it. Not a CI test. Needs heaptrack and a build whose allocator
# heaptrack sees:
#
#   cargo build --profile bench -p kruise-rs --bin kruise --features system-allocator
#   KRUISE=target/release/kruise benches/heap_profile.sh [SETS] [PODS] [NODES]   (default 200 × 100 on 50)
set -euo pipefail
SETS=${1:-200}
PODS=${2:-100}
NODES=${3:-50}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KRUISE=${KRUISE:?a build with --features system-allocator}
WORK=$(mktemp -d)
API_PORT=${API_PORT:-36443}
WEBHOOK_PORT=${WEBHOOK_PORT:-39876}
METRICS_PORT=${METRICS_PORT:-39877}
export KUBECONFIG=$WORK/kubeconfig
export KUBECACHEDIR=$WORK/kube-cache
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
source "$ROOT/benches/clonesets.sh"
log() { echo "[$(date -u +%T)] $*" >&2; }

"$KRUISE" playground --listen 127.0.0.1:$API_PORT --kubeconfig "$KUBECONFIG" --nodes "$NODES" \
  --kubelet-delay-ms 200 --external-webhook 127.0.0.1:$WEBHOOK_PORT >"$WORK/playground.log" 2>&1 &
pids+=($!)
until grep -q '^ready' "$WORK/playground.log"; do sleep 0.2; done
RUST_LOG=warn heaptrack -o "$WORK/heap" "$KRUISE" serve --port $WEBHOOK_PORT --bind-address 127.0.0.1 \
  --metrics-addr 127.0.0.1:$METRICS_PORT --cert-dir "$WORK/certs" >"$WORK/serve.log" 2>&1 &
HEAPTRACK=$!
pids+=($HEAPTRACK)
until curl -sf "http://127.0.0.1:$METRICS_PORT/readyz" >/dev/null; do sleep 0.5; done
SERVE=$(pgrep -f "^$KRUISE serve --port $WEBHOOK_PORT" | head -1)

kubectl create namespace load >/dev/null
cloneset_yaml load 1 "$SETS" "$PODS" | kubectl apply -f - >/dev/null
want=$((SETS * PODS))
until [ "$(ready_pods load)" -ge "$want" ]; do sleep 10; done
log "$want pods ready"
sleep 30
echo "==== heap_profile: $want pods, kruise serve under heaptrack ($(date -u +%F)) ===="
grep -E 'VmRSS|RssAnon|RssFile' "/proc/$SERVE/status"
kill -9 "$SERVE"
wait "$HEAPTRACK" 2>/dev/null || true
heaptrack_print -f "$WORK"/heap*.zst -F "$WORK/leaks.folded" --flamegraph-cost-type leaked >/dev/null 2>&1
python3 "$ROOT/benches/heap_profile_summary.py" "$WORK/leaks.folded"
