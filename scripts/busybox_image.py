#!/usr/bin/env python3
"""Writes a small runnable image as an OCI image layout, offline: Debian's busybox-static as /bin/busybox
with a few applet links, /etc/passwd and /etc/group for root, and /image.txt holding MARKER (so images
built with different markers have different digests). The default command sleeps until SIGTERM, so the
same image serves as a pod sandbox ("pause") image and stops at once.

    busybox_image.py LAYOUT TAG MARKER [NAME]

LAYOUT/{oci-layout,index.json,blobs/sha256/*}; the manifest is tagged TAG (`org.opencontainers.image.ref.name`)
and, with NAME, named NAME for `ctr images import`. Timestamps are zero, so the same inputs give the same
digest.
"""

import gzip
import hashlib
import io
import json
import sys
import tarfile
from pathlib import Path

BUSYBOX = Path("/bin/busybox")
# Sleeps until SIGTERM, then exits 0 (a plain `sleep` as PID 1 would ignore SIGTERM and wait for SIGKILL).
COMMAND = "trap 'exit 0' TERM; sleep 2147483647 & wait"
APPLETS = ["sh", "sleep", "echo", "cat", "env", "true", "false", "ls", "kill", "id", "touch", "rm", "mkdir"]


def digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def layer(marker):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        def add(path, mode, data=None, link=None):
            info = tarfile.TarInfo(path)
            info.mode, info.mtime = mode, 0
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            elif data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))

        for directory in ["bin", "dev", "etc", "proc", "root", "run", "sys", "tmp", "var"]:
            add(directory, 0o1777 if directory == "tmp" else 0o755)
        add("bin/busybox", 0o755, BUSYBOX.read_bytes())
        for applet in APPLETS:
            add(f"bin/{applet}", 0o777, link="busybox")
        add("etc/passwd", 0o644, b"root:x:0:0:root:/root:/bin/sh\n")
        add("etc/group", 0o644, b"root:x:0:\n")
        add("image.txt", 0o644, f"{marker}\n".encode())
    return raw.getvalue()


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    root, tag, marker = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    blobs = root / "blobs" / "sha256"
    blobs.mkdir(parents=True, exist_ok=True)

    def blob(media_type, data):
        d = digest(data)
        (blobs / d.split(":", 1)[1]).write_bytes(data)
        return {"mediaType": media_type, "digest": d, "size": len(data)}

    tar = layer(marker)
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as gz:
        gz.write(tar)
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Env": ["PATH=/bin"], "Cmd": ["/bin/sh", "-c", COMMAND]},
        "rootfs": {"type": "layers", "diff_ids": [digest(tar)]},
    }
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": blob("application/vnd.oci.image.config.v1+json", json.dumps(config).encode()),
        "layers": [blob("application/vnd.oci.image.layer.v1.tar+gzip", buffer.getvalue())],
    }
    annotations = {"org.opencontainers.image.ref.name": tag}
    if len(sys.argv) == 5:
        annotations["io.containerd.image.name"] = sys.argv[4]
    descriptor = blob(manifest["mediaType"], json.dumps(manifest).encode())
    descriptor["annotations"] = annotations
    (root / "oci-layout").write_text(json.dumps({"imageLayoutVersion": "1.0.0"}))
    (root / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [descriptor]}))


if __name__ == "__main__":
    main()
