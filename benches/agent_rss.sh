#!/usr/bin/env bash
# The node agent's idle memory on a node running PODS real pods: a containerd and a loopback registry
# under a work directory (scripts/containerd.sh, scripts/registry.sh), `kruise playground --runtime
# containerd --nodes 1` on it, a CloneSet of PODS busybox pods (one container each, all on the one
# node; the agent reports containers only for pods of kruise workloads), the pushed image listed in the
# node's NodeImage, then `kruise daemon` for that node. Once the agent has settled — the NodeImage
# status written and every pod's `apps.kruise.io/runtime-containers-meta` reported — it idles IDLE
# seconds and we read its VmRSS, VmHWM, RssAnon, RssFile and thread count from /proc.
#
#   cargo build --release -p kruise-rs --bin kruise && benches/agent_rss.sh [PODS] [IDLE]
#                                                    (default 100 pods, 60 s; needs root for containerd)
# KRUISE overrides the binary (default target/release/kruise); AGENT_COMMAND the agent's command (default
# `$KRUISE daemon`). The agent as the image ships it, built with its own profile:
#   cargo build --profile agent -p kruise-rs --bin kruise-daemon
#   AGENT_COMMAND=target/agent/kruise-daemon benches/agent_rss.sh
# AGENT_ARGS adds flags to the agent, AGENT_ENV variables to its environment
# (AGENT_ENV=TOKIO_WORKER_THREADS=16: a build without a fixed worker count then runs as on a 16-core node).
set -euo pipefail
PODS=${1:-100}
IDLE=${2:-60}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KRUISE=${KRUISE:-$ROOT/target/release/kruise}
WORK=$(mktemp -d /tmp/agent-rss.XXXXXX)
API_PORT=${API_PORT:-17443}
REGISTRY_PORT=${REGISTRY_PORT:-15000}
NODE=playground-node-1
SOCKET=$WORK/containerd/containerd.sock
export KUBECONFIG=$WORK/kubeconfig
# kubectl caches discovery per host:port; a fresh cache sees this playground's versions.
export KUBECACHEDIR=$WORK/kube-cache
pids=()
cleanup() {
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  "$ROOT/scripts/registry.sh" stop "$WORK/registry" >/dev/null 2>&1 || true
  "$ROOT/scripts/containerd.sh" stop "$WORK/containerd" >/dev/null 2>&1 || true
  # The pods' shims and mounts outlive containerd: stop this containerd's shims, then unmount.
  for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $SOCKET" || true); do kill "$p" 2>/dev/null || true; done
  sleep 1
  awk -v w="$WORK/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r |
    while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

"$ROOT/scripts/containerd.sh" start "$WORK/containerd" >/dev/null
"$ROOT/scripts/registry.sh" start "$WORK/registry" "$REGISTRY_PORT" >/dev/null
IMAGE=127.0.0.1:$REGISTRY_PORT/bench:v1
"$ROOT/scripts/registry.sh" push "$WORK/registry" "$REGISTRY_PORT" bench:v1 >/dev/null

"$KRUISE" playground --runtime "containerd=unix://$SOCKET" --nodes 1 --listen 127.0.0.1:$API_PORT \
  --kubeconfig "$KUBECONFIG" >"$WORK/playground.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 240); do grep -q '^ready' "$WORK/playground.log" && break; sleep 0.5; done
grep -q '^ready' "$WORK/playground.log" || { tail -20 "$WORK/playground.log"; exit 1; }

start=$(date +%s)
kubectl apply -f - >/dev/null <<YAML
apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata: {name: idle, namespace: default}
spec:
  replicas: $PODS
  selector: {matchLabels: {app: idle}}
  template:
    metadata: {labels: {app: idle}}
    spec:
      terminationGracePeriodSeconds: 2
      containers: [{name: main, image: "$IMAGE"}]
YAML
until [ "$(kubectl get pods -l app=idle -o jsonpath='{range .items[*]}{.status.containerStatuses[0].ready}{"\n"}{end}' |
  grep -c true)" -ge "$PODS" ]; do sleep 2; done
echo "$PODS pods running on $NODE after $(($(date +%s) - start)) s"

# The pods' image, listed in the node's NodeImage: the agent finds it present and reports it.
until kubectl get nodeimage $NODE >/dev/null 2>&1; do sleep 1; done
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
kubectl patch nodeimage $NODE --type merge -p "{\"spec\":{\"images\":{\"${IMAGE%:*}\":{\"tags\":[{\"tag\":\"v1\",
  \"createdAt\":\"$now\",\"pullPolicy\":{\"ttlSecondsAfterFinished\":3600}}]}}}}" >/dev/null

# shellcheck disable=SC2086
env RUST_LOG="${RUST_LOG:-warn}" NODE_NAME=$NODE ${AGENT_ENV:-} ${AGENT_COMMAND:-"$KRUISE" daemon} \
  --socket-file "$SOCKET" --addr 127.0.0.1:0 ${AGENT_ARGS:-} >"$WORK/agent.log" 2>&1 &
AGENT=$!
pids+=($AGENT)
field() { awk -v f="$1:" '$1 == f {print $2}' /proc/$AGENT/status; }
start=$(date +%s)
# Settled: the NodeImage status is written and every pod carries its runtime-containers-meta report.
until kubectl get nodeimage $NODE -o jsonpath='{.status.succeeded}' 2>/dev/null | grep -q 1; do sleep 1; done
until [ "$(kubectl get pods -l app=idle \
  -o jsonpath='{range .items[*]}{.metadata.annotations.apps\.kruise\.io/runtime-containers-meta}{"\n"}{end}' |
  grep -c containerID)" -ge "$PODS" ]; do sleep 1; done
echo "agent settled after $(($(date +%s) - start)) s: VmRSS $(field VmRSS) kB, VmHWM $(field VmHWM) kB"
sleep "$IDLE"
echo "agent after $IDLE s idle with $PODS pods: VmRSS $(field VmRSS) kB, VmHWM $(field VmHWM) kB," \
  "RssAnon $(field RssAnon) kB, RssFile $(field RssFile) kB, threads $(field Threads)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
