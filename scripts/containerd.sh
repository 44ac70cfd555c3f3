#!/usr/bin/env bash
# A real containerd for tests (the image test now, the node agent's tests later), under a work directory
# of its own: nothing in /var/lib/containerd or /etc is touched.
#
#   scripts/containerd.sh start DIR    installs containerd + runc if missing (Debian, as root), writes
#                                      DIR/config.toml, starts containerd, waits until it answers,
#                                      imports the sandbox image (below); its socket is DIR/containerd.sock
#   scripts/containerd.sh stop DIR     stops what `start DIR` started (and waits until it is gone)
#
# Settings these machines need (measured): restrict_oom_score_adj in the CRI section (the VM lacks
# CAP_SYS_RESOURCE, so runc cannot lower oom_score_adj); root, state, socket and registry config under
# DIR. containerd 1.6 still creates /run/containerd/s/ for shim sockets. The pod sandbox image is a busybox
# image built offline (scripts/busybox_image.py) and imported, since registry.k8s.io/pause cannot be pulled
# here; its default command sleeps forever.
set -euo pipefail
ACTION=${1:?usage: containerd.sh start|stop DIR}
DIR=$(mkdir -p "${2:?usage: containerd.sh start|stop DIR}" && cd "$2" && pwd)
# The pod sandbox image (what kubelet's pause image is elsewhere).
SANDBOX_IMAGE=localhost/kruise-playground/sandbox:busybox

case $ACTION in
start)
  if ! command -v containerd >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1 || [[ ! -x /bin/busybox ]]; then
    [[ $(id -u) -eq 0 ]] || { echo "containerd/runc/busybox-static missing; run as root to install them" >&2; exit 1; }
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq containerd runc busybox-static >/dev/null ||
      { apt-get update -qq && apt-get install -y -qq containerd runc busybox-static >/dev/null; }
  fi
  mkdir -p "$DIR"/{root,state,certs.d}
  containerd config default | python3 -c '
import sys
d = sys.argv[1]
text = sys.stdin.read()
for old, new in {
    "root = \"/var/lib/containerd\"": f"root = \"{d}/root\"",
    "state = \"/run/containerd\"": f"state = \"{d}/state\"",
    "address = \"/run/containerd/containerd.sock\"": f"address = \"{d}/containerd.sock\"",
    "restrict_oom_score_adj = false": "restrict_oom_score_adj = true",
    "config_path = \"\"": f"config_path = \"{d}/certs.d\"",
    "sandbox_image = \"registry.k8s.io/pause:3.6\"": f"sandbox_image = \"{sys.argv[2]}\"",
}.items():
    if old not in text:
        sys.exit(f"containerd config default has no {old!r}")
    text = text.replace(old, new)
print(text)' "$DIR" "$SANDBOX_IMAGE" >"$DIR/config.toml"
  setsid containerd --config "$DIR/config.toml" >"$DIR/containerd.log" 2>&1 &
  echo $! >"$DIR/containerd.pid"
  for _ in $(seq 100); do
    ctr --address "$DIR/containerd.sock" version >/dev/null 2>&1 && break
    sleep 0.1
  done
  if ! ctr --address "$DIR/containerd.sock" version >/dev/null 2>&1; then
    tail -20 "$DIR/containerd.log" >&2
    echo "containerd did not answer on $DIR/containerd.sock" >&2
    exit 1
  fi
  if [[ ! -f $DIR/sandbox.tar ]]; then
    python3 "$(dirname "$0")/busybox_image.py" "$DIR/sandbox" busybox sandbox "$SANDBOX_IMAGE"
    tar -C "$DIR/sandbox" -cf "$DIR/sandbox.tar" oci-layout index.json blobs
  fi
  ctr --address "$DIR/containerd.sock" -n k8s.io images import "$DIR/sandbox.tar" >/dev/null
  ;;
stop)
  if [[ -f $DIR/containerd.pid ]]; then
    PID=$(cat "$DIR/containerd.pid")
    kill "$PID" 2>/dev/null || true
    # Gone before returning, so `start DIR` may follow at once (a restart).
    for _ in $(seq 50); do
      kill -0 "$PID" 2>/dev/null || break
      sleep 0.1
    done
    rm -f "$DIR/containerd.pid"
  fi
  ;;
*)
  echo "usage: containerd.sh start|stop DIR" >&2
  exit 2
  ;;
esac
