#!/usr/bin/env bash
# A container registry on 127.0.0.1 for tests (the node agent's image pre-pull), under a work directory
# of its own.
#
#   scripts/registry.sh start DIR PORT          installs docker-registry + skopeo if missing (Debian, as
#                                               root), serves 127.0.0.1:PORT from DIR, waits until it answers
#   scripts/registry.sh push DIR PORT NAME:TAG  pushes a small runnable one-layer image (busybox, and
#                                               /image.txt naming NAME:TAG, so every tag has its own digest;
#                                               scripts/busybox_image.py) as 127.0.0.1:PORT/NAME:TAG
#   scripts/registry.sh stop DIR                stops what `start DIR` started
#
# containerd pulls from 127.0.0.1 over plain HTTP without configuration.
set -euo pipefail
ACTION=${1:?usage: registry.sh start|push|stop DIR ...}
DIR=$(mkdir -p "${2:?usage: registry.sh start|push|stop DIR ...}" && cd "$2" && pwd)

case $ACTION in
start)
  PORT=${3:?usage: registry.sh start DIR PORT}
  if ! command -v docker-registry >/dev/null 2>&1 || ! command -v skopeo >/dev/null 2>&1 || [[ ! -x /bin/busybox ]]; then
    [[ $(id -u) -eq 0 ]] || { echo "docker-registry/skopeo/busybox-static missing; run as root to install them" >&2; exit 1; }
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq docker-registry skopeo busybox-static >/dev/null ||
      { apt-get update -qq && apt-get install -y -qq docker-registry skopeo busybox-static >/dev/null; }
  fi
  mkdir -p "$DIR/data"
  cat >"$DIR/config.yml" <<YML
version: 0.1
storage:
  filesystem:
    rootdirectory: $DIR/data
http:
  addr: 127.0.0.1:$PORT
YML
  setsid docker-registry serve "$DIR/config.yml" >"$DIR/registry.log" 2>&1 &
  echo $! >"$DIR/registry.pid"
  for _ in $(seq 100); do
    python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=1)" \
      "http://127.0.0.1:$PORT/v2/" 2>/dev/null && exit 0
    sleep 0.1
  done
  tail -20 "$DIR/registry.log" >&2
  echo "the registry did not answer on 127.0.0.1:$PORT" >&2
  exit 1
  ;;
push)
  PORT=${3:?usage: registry.sh push DIR PORT NAME:TAG}
  REF=${4:?usage: registry.sh push DIR PORT NAME:TAG}
  LAYOUT=$DIR/layouts/${REF//[:\/]/_}
  python3 "$(dirname "$0")/busybox_image.py" "$LAYOUT" "${REF##*:}" "$REF"
  skopeo --insecure-policy copy -q --dest-tls-verify=false "oci:$LAYOUT:${REF##*:}" "docker://127.0.0.1:$PORT/$REF"
  ;;
stop)
  if [[ -f $DIR/registry.pid ]]; then
    kill "$(cat "$DIR/registry.pid")" 2>/dev/null || true
    rm -f "$DIR/registry.pid"
  fi
  ;;
*)
  echo "usage: registry.sh start|push|stop DIR ..." >&2
  exit 2
  ;;
esac
