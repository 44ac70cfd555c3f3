#!/usr/bin/env bash
# Issue #19 items 4 and 5: SETS CloneSets × PODS pods on NODES simulated nodes, `kruise serve` in cluster
# mode in its own process (as cloneset_rss.sh). Not a CI test. Reports:
#   - load: time until every pod is ready, kruise serve's RSS, CloneSet pass p50/p99
#     (kruise_controller_pass_duration_seconds) and its decision alone (..._decision_duration_seconds), /mutate-pod and /validate-pod p99 idle vs under load
#     (server-side kruise_admission_review_duration_seconds, read from its buckets), API writes per pod
#     (the playground's GET /debug/request-counts);
#   - cold start: kruise serve restarted once every pod exists; VmRSS sampled every 100 ms until /readyz
#     answers, VmHWM at readiness, steady VmRSS 30 s later, and the list pages the playground cut.
#
#   cargo build --release -p kruise-rs --bin kruise && benches/fifty_k.sh [SETS] [PODS] [NODES]
#   (default 500 × 100 on 50 nodes; KRUISE=<binary> to use another build; PLAYGROUND_NICE=10 runs the
#   playground, our stand-in for kube-apiserver and the kubelets, below kruise serve's CPU priority, as
#   if it had machines of its own)
set -euo pipefail
SETS=${1:-500}
PODS=${2:-100}
NODES=${3:-50}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KRUISE=${KRUISE:-$ROOT/target/release/kruise}
WORK=$(mktemp -d)
API_PORT=${API_PORT:-16443}
WEBHOOK_PORT=${WEBHOOK_PORT:-19876}
METRICS_PORT=${METRICS_PORT:-19877}
PLAYGROUND_NICE=${PLAYGROUND_NICE:-0}
export KUBECONFIG=$WORK/kubeconfig
export KUBECACHEDIR=$WORK/kube-cache
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
log() { echo "[$(date -u +%T)] $*" >&2; }

nice -n "$PLAYGROUND_NICE" "$KRUISE" playground --listen 127.0.0.1:$API_PORT --kubeconfig "$KUBECONFIG" \
  --nodes "$NODES" --kubelet-delay-ms 200 --external-webhook 127.0.0.1:$WEBHOOK_PORT >"$WORK/playground.log" 2>&1 &
PLAYGROUND=$!
pids+=($PLAYGROUND)
until grep -q '^ready' "$WORK/playground.log"; do sleep 0.2; done

SERVE=
start_serve() {
  RUST_LOG=warn "$KRUISE" serve --port $WEBHOOK_PORT --bind-address 127.0.0.1 \
    --metrics-addr 127.0.0.1:$METRICS_PORT --cert-dir "$WORK/certs" >>"$WORK/serve.log" 2>&1 &
  SERVE=$!
  pids+=($SERVE)
}
status() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; }
metrics() { curl -sf "http://127.0.0.1:$METRICS_PORT/metrics"; }
counts() { kubectl get --raw /debug/request-counts; }
# quantile Q FAMILY LABEL=VALUE METRICS_FILE [BEFORE_FILE]: the bucket bound (ms) under which Q of the
# observations fall, and the estimate interpolated within that bucket (as Prometheus' histogram_quantile),
# counting only those since BEFORE_FILE's snapshot.
quantile() {
  python3 - "$@" <<'EOF'
import re, sys
q, family, label, now_file = float(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
def buckets(text):
    out = {}
    for line in text.splitlines():
        m = re.match(family + r'_bucket\{(.*)\} (\S+)$', line)
        if m and label.replace('=', '="') + '"' in m.group(1):
            le = re.search(r'le="([^"]+)"', m.group(1)).group(1)
            out[float(le)] = float(m.group(2))
    return out
now = buckets(open(now_file).read())
before = buckets(open(sys.argv[5]).read()) if len(sys.argv) > 5 else {}
cum = sorted((le, n - before.get(le, 0)) for le, n in now.items())
total = cum[-1][1] if cum else 0
if total == 0:
    print("n/a (0 observations)"); sys.exit()
prev_le, prev_n = 0.0, 0
for le, n in cum:
    if n >= q * total:
        # As Prometheus' histogram_quantile: linear within the bucket.
        est = prev_le + (le - prev_le) * (q * total - prev_n) / (n - prev_n) if le != float("inf") else prev_le
        print(f"≤ {le * 1000:g} ms, interpolated {est * 1000:.3f} ms (n={int(total)})"); sys.exit()
    prev_le, prev_n = le, n
EOF
}
# writes COUNTS_BEFORE COUNTS_AFTER: non-GET requests between two snapshots, by resource.
writes() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
def load(p):
    d = json.load(open(p))
    return {(r["verb"], r["resource"], r["subresource"] or ""): r["count"] for r in d["requests"]}
a, b = load(sys.argv[1]), load(sys.argv[2])
by = {}
for k, n in b.items():
    if k[0] != "GET":
        by[f"{k[0]} {k[1]}{'/' + k[2] if k[2] else ''}"] = n - a.get(k, 0)
print(sum(by.values()))
for k, n in sorted(by.items(), key=lambda kv: -kv[1]):
    if n:
        print(f"    {k}: {n}")
EOF
}
source "$ROOT/benches/clonesets.sh"

start_serve
until kubectl get mutatingwebhookconfiguration kruise-mutating-webhook-configuration \
  -o jsonpath='{.webhooks[0].clientConfig.caBundle}' 2>/dev/null | grep -q .; do sleep 0.5; done
until curl -sf "http://127.0.0.1:$METRICS_PORT/readyz" >/dev/null; do sleep 0.2; done
sleep 2
IDLE_RSS=$(status $SERVE VmRSS)

# Idle webhook figures: 1,000 pods into a quiet cluster, one CloneSet of 100 at a time, so that p99 is
# the 10th slowest review rather than the 2nd.
kubectl create namespace idle >/dev/null
for i in $(seq 1 10); do
  cloneset_yaml idle "$i" "$i" 100 | kubectl apply -f - >/dev/null
  until [ "$(ready_pods idle)" -ge $((i * 100)) ]; do sleep 1; done
done
metrics >"$WORK/metrics.idle"
IDLE_MUTATE=$(quantile 0.99 kruise_admission_review_duration_seconds webhook=mutate-pod "$WORK/metrics.idle")
IDLE_VALIDATE=$(quantile 0.99 kruise_admission_review_duration_seconds webhook=validate-pod "$WORK/metrics.idle")
log "idle: mutate-pod p99 $IDLE_MUTATE, validate-pod p99 $IDLE_VALIDATE"

# Phase 1: the load.
counts >"$WORK/counts.before"
kubectl create namespace load >/dev/null
want=$((SETS * PODS))
start=$(date +%s)
for first in $(seq 1 50 "$SETS"); do
  last=$((first + 49 > SETS ? SETS : first + 49))
  cloneset_yaml load "$first" "$last" "$PODS" | kubectl apply -f - >/dev/null
done
PEAK_RSS=0
while true; do
  ready=$(ready_pods load)
  rss=$(status $SERVE VmRSS)
  [ "$rss" -gt "$PEAK_RSS" ] && PEAK_RSS=$rss
  log "$(($(date +%s) - start)) s: $ready / $want pods ready; kruise serve VmRSS $rss kB; load $(cut -d' ' -f1-3 /proc/loadavg)"
  [ "$ready" -ge "$want" ] && break
  sleep 10
done
READY_SECONDS=$(($(date +%s) - start))
metrics >"$WORK/metrics.load"
counts >"$WORK/counts.after"
LOAD_MUTATE=$(quantile 0.99 kruise_admission_review_duration_seconds webhook=mutate-pod "$WORK/metrics.load" "$WORK/metrics.idle")
LOAD_VALIDATE=$(quantile 0.99 kruise_admission_review_duration_seconds webhook=validate-pod "$WORK/metrics.load" "$WORK/metrics.idle")
PASS_P50=$(quantile 0.5 kruise_controller_pass_duration_seconds controller=cloneset "$WORK/metrics.load" "$WORK/metrics.idle")
PASS_P99=$(quantile 0.99 kruise_controller_pass_duration_seconds controller=cloneset "$WORK/metrics.load" "$WORK/metrics.idle")
DECIDE_P50=$(quantile 0.5 kruise_controller_decision_duration_seconds controller=cloneset "$WORK/metrics.load" "$WORK/metrics.idle")
DECIDE_P99=$(quantile 0.99 kruise_controller_decision_duration_seconds controller=cloneset "$WORK/metrics.load" "$WORK/metrics.idle")
WRITES=$(writes "$WORK/counts.before" "$WORK/counts.after")
sleep 30
STEADY_RSS=$(status $SERVE VmRSS)
STEADY_ANON=$(status $SERVE RssAnon)
STEADY_FILE=$(status $SERVE RssFile)
LOAD_HWM=$(status $SERVE VmHWM)
PLAYGROUND_RSS=$(status $PLAYGROUND VmRSS)

# Phase 2: cold start over the pods that now exist.
kill $SERVE
wait $SERVE 2>/dev/null || true
CUT_BEFORE=$(counts | python3 -c 'import json,sys; print(json.load(sys.stdin)["cutLists"])')
cold=$(date +%s.%N)
start_serve
COLD_PEAK=0
until curl -sf "http://127.0.0.1:$METRICS_PORT/readyz" >/dev/null 2>&1; do
  rss=$(status $SERVE VmRSS 2>/dev/null || echo 0)
  [ "${rss:-0}" -gt "$COLD_PEAK" ] && COLD_PEAK=$rss
  sleep 0.1
done
COLD_SECONDS=$(echo "$(date +%s.%N) - $cold" | bc)
COLD_HWM=$(status $SERVE VmHWM)
CUT_AFTER=$(counts | python3 -c 'import json,sys; print(json.load(sys.stdin)["cutLists"])')
sleep 30
COLD_STEADY=$(status $SERVE VmRSS)

cat <<EOF
==== fifty_k: $SETS CloneSets × $PODS pods = $want pods on $NODES nodes ($(date -u +%F), load average $(cut -d' ' -f1-3 /proc/loadavg)) ====
all pods ready after                 ${READY_SECONDS} s
kruise serve VmRSS idle (empty)      ${IDLE_RSS} kB
kruise serve VmRSS peak sampled      ${PEAK_RSS} kB (VmHWM ${LOAD_HWM} kB)
kruise serve VmRSS steady (+30 s)    ${STEADY_RSS} kB   (target ≤ 262144 kB; RssAnon ${STEADY_ANON} + RssFile ${STEADY_FILE} kB)
playground VmRSS                     ${PLAYGROUND_RSS} kB
CloneSet pass p50                    ${PASS_P50}
CloneSet pass p99                    ${PASS_P99}   (target ≤ 5 ms)
CloneSet decision p50 / p99          ${DECIDE_P50} / ${DECIDE_P99}   (the pass until its plan, no writes)
/mutate-pod p99 idle / under load    ${IDLE_MUTATE} / ${LOAD_MUTATE}   (target ≤ 1.5× idle)
/validate-pod p99 idle / under load  ${IDLE_VALIDATE} / ${LOAD_VALIDATE}
API writes during the load           $(echo "$WRITES" | head -1) ($(echo "$WRITES" | head -1 | awk -v n=$want '{printf "%.2f", $1 / n}') per pod)
$(echo "$WRITES" | tail -n +2)
cold start: /readyz after            ${COLD_SECONDS} s
cold start: VmRSS peak sampled       ${COLD_PEAK} kB, VmHWM at readiness ${COLD_HWM} kB
cold start: steady VmRSS (+30 s)     ${COLD_STEADY} kB; HWM / steady = $(echo "scale=2; $COLD_HWM / $COLD_STEADY" | bc)   (target ≤ 1.25)
cold start: list pages cut by limit  $((CUT_AFTER - CUT_BEFORE))
EOF
