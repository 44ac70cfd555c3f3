#!/usr/bin/env bash
# A container registry on 127.0.0.1 for tests (the node agent's image pre-pull), under a work directory
# of its own.
#
#   scripts/registry.sh start DIR PORT          installs docker-registry + skopeo if missing (Debian, as
#                                               root), serves 127.0.0.1:PORT from DIR, waits until it answers
#   scripts/registry.sh push DIR PORT NAME:TAG  pushes a small one-layer image (a text file naming NAME:TAG,
#                                               so every tag has its own digest) as 127.0.0.1:PORT/NAME:TAG
#   scripts/registry.sh stop DIR                stops what `start DIR` started
#
# containerd pulls from 127.0.0.1 over plain HTTP without configuration.
set -euo pipefail
ACTION=${1:?usage: registry.sh start|push|stop DIR ...}
DIR=$(mkdir -p "${2:?usage: registry.sh start|push|stop DIR ...}" && cd "$2" && pwd)

case $ACTION in
start)
  PORT=${3:?usage: registry.sh start DIR PORT}
  if ! command -v docker-registry >/dev/null 2>&1 || ! command -v skopeo >/dev/null 2>&1; then
    [[ $(id -u) -eq 0 ]] || { echo "docker-registry/skopeo missing; run as root to install them" >&2; exit 1; }
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq docker-registry skopeo >/dev/null ||
      { apt-get update -qq && apt-get install -y -qq docker-registry skopeo >/dev/null; }
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
  python3 - "$LAYOUT" "$REF" <<'PY'
import gzip, hashlib, io, json, sys, tarfile
from pathlib import Path
layout, ref = Path(sys.argv[1]), sys.argv[2]
blobs = layout / "blobs" / "sha256"
blobs.mkdir(parents=True, exist_ok=True)
def blob(data):
    digest = hashlib.sha256(data).hexdigest()
    (blobs / digest).write_bytes(data)
    return "sha256:" + digest
raw = io.BytesIO()
with tarfile.open(fileobj=raw, mode="w") as tar:
    text = f"{ref}\n".encode()
    info = tarfile.TarInfo("image.txt")
    info.size = len(text)
    tar.addfile(info, io.BytesIO(text))
layer = gzip.compress(raw.getvalue(), mtime=0)
config = json.dumps({"architecture": "amd64", "os": "linux",
    "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(raw.getvalue()).hexdigest()]},
    "config": {"Cmd": ["/image.txt"]}}).encode()
manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": blob(config), "size": len(config)},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": blob(layer), "size": len(layer)}]}).encode()
tag = ref.rsplit(":", 1)[1]
(layout / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
(layout / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [{
    "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": blob(manifest), "size": len(manifest),
    "annotations": {"org.opencontainers.image.ref.name": tag}}]}))
PY
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
