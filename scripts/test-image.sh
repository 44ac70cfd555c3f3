#!/usr/bin/env bash
# Runs the kruise-rs image on a real containerd, as a cluster would: imports the tarball of
# scripts/build-image.sh, starts `kruise serve` from it (read-only root, a tmpfs /tmp as the Deployment's
# emptyDir, the image's own user), and checks that the health endpoints answer, that the process runs as
# 65534, and that a webhook answers an AdmissionReview over HTTPS; and that the node agent's
# `kruise-daemon` runs from it. Exits non-zero on any failure.
#
# Usage: scripts/test-image.sh [TARBALL]   (default: builds it with scripts/build-image.sh)
# Needs root (containerd), curl, python3.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TARBALL=${1:-}
if [[ -z $TARBALL ]]; then
  "$REPO/scripts/build-image.sh"
  TARBALL=$(ls -t "$REPO"/target/image/kruise-*.oci.tar | head -1)
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/kruise-image-test.XXXXXX")
CTR=(ctr --address "$W/containerd/containerd.sock" --namespace kruise-image-test)
NAME=kruise-image-test
METRICS_PORT=18480
WEBHOOK_PORT=18476
cleanup() {
  "${CTR[@]}" task kill --signal SIGKILL "$NAME" >/dev/null 2>&1 || true
  sleep 0.2
  "${CTR[@]}" task delete "$NAME" >/dev/null 2>&1 || true
  "${CTR[@]}" container delete "$NAME" >/dev/null 2>&1 || true
  "$REPO/scripts/containerd.sh" stop "$W/containerd"
  rm -rf "$W"
}
trap cleanup EXIT
say() { printf '==> %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; [[ -f $W/serve.log ]] && tail -20 "$W/serve.log" >&2; exit 1; }

say "containerd"
"$REPO/scripts/containerd.sh" start "$W/containerd"

say "import $(basename "$TARBALL")"
IMAGE=$("${CTR[@]}" images import "$TARBALL" | sed -n 's/^unpacking \(.*\) (sha256:.*$/\1/p')
[[ -n $IMAGE ]] || fail "the import named no image"
"${CTR[@]}" images ls | sed 's/^/    /'

# The cluster state `kruise serve` reads instead of an API server.
mkdir -p "$W/objects"
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n' >"$W/objects/namespace.yaml"

say "run $IMAGE"
"${CTR[@]}" run -d --net-host --read-only --log-uri "file://$W/serve.log" \
  --mount "type=tmpfs,src=tmpfs,dst=/tmp,options=rw:nosuid:nodev:mode=1777" \
  --mount "type=bind,src=$W/objects,dst=/objects,options=rbind:ro" \
  "$IMAGE" "$NAME" /usr/local/bin/kruise serve --objects /objects \
  --metrics-addr "127.0.0.1:$METRICS_PORT" --port "$WEBHOOK_PORT"
for _ in $(seq 100); do
  [[ $(curl -fsS "http://127.0.0.1:$METRICS_PORT/readyz" 2>/dev/null) == ok ]] && break
  sleep 0.1
done
[[ $(curl -fsS "http://127.0.0.1:$METRICS_PORT/healthz") == ok ]] || fail "/healthz did not answer ok"
[[ $(curl -fsS "http://127.0.0.1:$METRICS_PORT/readyz") == ok ]] || fail "/readyz did not answer ok"
echo "    /healthz and /readyz: ok"

PID=$("${CTR[@]}" task ls | awk -v n="$NAME" '$1 == n { print $2 }')
UIDS=$(awk '/^Uid:/ { print $2 }' "/proc/$PID/status")
[[ $UIDS == 65534 ]] || fail "the server runs as uid $UIDS, not 65534"
echo "    runs as uid 65534"

REVIEW='{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"image-test","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"default","operation":"CREATE","userInfo":{"username":"image-test"},"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}'
ANSWER=$(curl -fsS -k -H 'Content-Type: application/json' --data "$REVIEW" "https://127.0.0.1:$WEBHOOK_PORT/mutate-pod") ||
  fail "/mutate-pod did not answer"
python3 -c 'import json, sys; r = json.loads(sys.argv[1])["response"]; assert r["uid"] == "image-test" and r["allowed"], r' "$ANSWER" ||
  fail "/mutate-pod answered $ANSWER"
echo "    /mutate-pod over HTTPS: allowed"
# The DaemonSet's command (manifests/daemon.yaml): the agent-only binary runs from the image.
AGENT_VERSION=$("${CTR[@]}" run --rm --net-host --read-only "$IMAGE" "$NAME-daemon" /usr/local/bin/kruise-daemon --version) ||
  fail "/usr/local/bin/kruise-daemon did not run"
[[ $AGENT_VERSION == "kruise-daemon "* ]] || fail "kruise-daemon --version printed $AGENT_VERSION"
echo "    $AGENT_VERSION (the node agent's command)"
say "OK: $IMAGE serves from containerd"
