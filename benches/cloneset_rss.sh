#!/usr/bin/env bash
# The CloneSet controller's memory with many CloneSets: `kruise playground --external-webhook` runs the
# simulated cluster alone, `kruise serve` runs in its own process against it (as in a cluster: caches,
# leader election, webhooks, controllers), and we create SETS CloneSets of PODS pods each, wait until
# every one reports all its pods ready, and read kruise serve's VmRSS and VmHWM.
#
#   cargo build --release && benches/cloneset_rss.sh [SETS] [PODS]      (default 100 × 100)
set -euo pipefail
SETS=${1:-100}
PODS=${2:-100}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KRUISE=${KRUISE:-$ROOT/target/release/kruise}
WORK=$(mktemp -d)
API_PORT=${API_PORT:-16443}
WEBHOOK_PORT=${WEBHOOK_PORT:-19876}
export KUBECONFIG=$WORK/kubeconfig
# kubectl caches discovery per host:port for hours; a fresh cache sees this playground's versions.
export KUBECACHEDIR=$WORK/kube-cache
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
source "$ROOT/benches/clonesets.sh"

"$KRUISE" playground --listen 127.0.0.1:$API_PORT --kubeconfig "$KUBECONFIG" --nodes 50 \
  --kubelet-delay-ms 200 --external-webhook 127.0.0.1:$WEBHOOK_PORT >"$WORK/playground.log" 2>&1 &
pids+=($!)
until grep -q '^ready' "$WORK/playground.log"; do sleep 0.2; done
RUST_LOG=warn "$KRUISE" serve --port $WEBHOOK_PORT --bind-address 127.0.0.1 --metrics-addr 127.0.0.1:0 \
  --cert-dir "$WORK/certs" >"$WORK/serve.log" 2>&1 &
SERVE=$!
pids+=($SERVE)
rss() { awk -v f="$1:" '$1 == f {print $2}' /proc/$SERVE/status; }
until kubectl get mutatingwebhookconfiguration kruise-mutating-webhook-configuration \
  -o jsonpath='{.webhooks[0].clientConfig.caBundle}' 2>/dev/null | grep -q .; do sleep 0.5; done
sleep 2
echo "kruise serve, idle in an empty cluster: VmRSS $(rss VmRSS) kB (RssAnon $(rss RssAnon) kB, RssFile $(rss RssFile) kB)"

kubectl create namespace load >/dev/null
start=$(date +%s)
cloneset_yaml load 1 "$SETS" "$PODS" | kubectl apply -f - >/dev/null
want=$((SETS * PODS))
while true; do
  ready=$(ready_pods load)
  echo "$(($(date +%s) - start)) s: $ready / $want pods ready; kruise serve VmRSS $(rss VmRSS) kB"
  [ "$ready" -ge "$want" ] && break
  sleep 10
done
sleep 5
echo "kruise serve with $SETS CloneSets × $PODS pods ready: VmRSS $(rss VmRSS) kB, VmHWM $(rss VmHWM) kB" \
  "(RssAnon $(rss RssAnon) kB, RssFile $(rss RssFile) kB)"
if [ -n "${AFTER_EVENTS_EXPIRE:-}" ]; then
  # kube-runtime's Recorder keeps recorded events for 6 minutes and drops expired ones when it next
  # records: wait, record one (a scale-up), and measure again.
  sleep 380
  kubectl scale -n load cloneset app-1 --replicas=$((PODS + 1)) >/dev/null
  sleep 20
  echo "7 minutes later, after one more event: VmRSS $(rss VmRSS) kB"
fi
