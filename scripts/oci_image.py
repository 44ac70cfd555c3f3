#!/usr/bin/env python3
"""Assembles the kruise-rs container image as an OCI image layout, without a container daemon.

One layer: the static `kruise` binary at /usr/local/bin/kruise (and, with --daemon-binary, the node
agent's `kruise-daemon` beside it), image/rootfs/etc/{passwd,group} naming
the unprivileged user 65534 (nobody) the image runs as, and a world-writable /tmp. No shell, no libc, no
package manager. Every timestamp is `--created` and every owner is root, entries are sorted and gzip
carries no name or time, so the same binary gives the same digest.

Writes LAYOUT/{oci-layout,index.json,blobs/sha256/*} and, with --tarball, the layout as one tar file
(what `ctr images import` and `skopeo copy oci-archive:` read). Prints the manifest digest.
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import tarfile
import time
from pathlib import Path

USER = "65534:65534"
BINARY_PATH = "usr/local/bin/kruise"
DAEMON_BINARY_PATH = "usr/local/bin/kruise-daemon"
# The files of the image besides the binary; image/Dockerfile copies the same directory.
ROOTFS = Path(__file__).resolve().parent.parent / "image" / "rootfs"


def tar_bytes(entries, mtime):
    """A tar archive (bytes) of (path, mode, data-or-None-for-a-directory), in the order given."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path, mode, data in entries:
            info = tarfile.TarInfo(path)
            info.mode = mode
            info.mtime = mtime
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def gzip_bytes(data):
    """gzip without a file name or time in its header."""
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as gz:
        gz.write(data)
    return buffer.getvalue()


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


class Layout:
    """An OCI image layout directory being written."""

    def __init__(self, root):
        self.root = Path(root)
        (self.root / "blobs" / "sha256").mkdir(parents=True, exist_ok=True)

    def blob(self, media_type, data):
        """Stores a blob; returns its descriptor."""
        digest = sha256(data)
        (self.root / "blobs" / "sha256" / digest.split(":", 1)[1]).write_bytes(data)
        return {"mediaType": media_type, "digest": digest, "size": len(data)}

    def finish(self, manifest, annotations):
        (self.root / "oci-layout").write_bytes(canonical({"imageLayoutVersion": "1.0.0"}))
        index = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [dict(manifest, annotations=annotations)],
        }
        (self.root / "index.json").write_bytes(canonical(index))

    def tarball(self, path, mtime):
        files = ["oci-layout", "index.json"]
        blobs = sorted((self.root / "blobs" / "sha256").iterdir())
        entries = [("blobs", 0o755, None), ("blobs/sha256", 0o755, None)]
        entries += [(f, 0o644, (self.root / f).read_bytes()) for f in files]
        entries += [(f"blobs/sha256/{b.name}", 0o644, b.read_bytes()) for b in blobs]
        Path(path).write_bytes(tar_bytes(entries, mtime))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True, help="the static kruise binary")
    parser.add_argument("--daemon-binary", help="the static kruise-daemon binary (the node agent alone)")
    parser.add_argument("--layout", required=True, help="directory to write the OCI layout to")
    parser.add_argument("--tarball", help="also write the layout as this tar file")
    parser.add_argument("--name", default="ghcr.io/kruise-rs/kruise")
    parser.add_argument("--tag", required=True)
    parser.add_argument("--created", type=int, default=0, help="seconds since the epoch (the commit's time)")
    parser.add_argument("--revision", default="unknown", help="the source revision (git commit)")
    args = parser.parse_args()

    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(args.created))
    binary = Path(args.binary).read_bytes()
    layer_tar = tar_bytes(
        [
            ("etc", 0o755, None),
            ("etc/group", 0o644, (ROOTFS / "etc" / "group").read_bytes()),
            ("etc/passwd", 0o644, (ROOTFS / "etc" / "passwd").read_bytes()),
            ("tmp", 0o1777, None),
            ("usr", 0o755, None),
            ("usr/local", 0o755, None),
            ("usr/local/bin", 0o755, None),
            (BINARY_PATH, 0o755, binary),
        ]
        + ([(DAEMON_BINARY_PATH, 0o755, Path(args.daemon_binary).read_bytes())] if args.daemon_binary else []),
        args.created,
    )
    labels = {
        "org.opencontainers.image.title": "kruise-rs",
        "org.opencontainers.image.description": "OpenKruise's webhooks and controllers, in Rust",
        "org.opencontainers.image.version": args.tag,
        "org.opencontainers.image.revision": args.revision,
        "org.opencontainers.image.created": created,
        "org.opencontainers.image.licenses": "Apache-2.0",
    }
    layout = Layout(args.layout)
    layer = layout.blob("application/vnd.oci.image.layer.v1.tar+gzip", gzip_bytes(layer_tar))
    config = {
        "architecture": "amd64",
        "os": "linux",
        "created": created,
        "config": {
            "User": USER,
            "Entrypoint": ["/" + BINARY_PATH],
            "Cmd": ["serve"],
            "Env": ["PATH=/usr/local/bin", "WEBHOOK_CERT_DIR=/tmp/kruise-webhook-certs"],
            "WorkingDir": "/tmp",
            "Labels": labels,
        },
        "rootfs": {"type": "layers", "diff_ids": [sha256(layer_tar)]},
        "history": [{"created": created, "created_by": "scripts/oci_image.py"}],
    }
    config_descriptor = layout.blob("application/vnd.oci.image.config.v1+json", canonical(config))
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": config_descriptor,
        "layers": [layer],
        "annotations": {k: v for k, v in labels.items() if k.endswith(("created", "revision", "version"))},
    }
    manifest_descriptor = layout.blob("application/vnd.oci.image.manifest.v1+json", canonical(manifest))
    layout.finish(
        manifest_descriptor,
        {
            "org.opencontainers.image.ref.name": args.tag,
            "io.containerd.image.name": f"{args.name}:{args.tag}",
        },
    )
    if args.tarball:
        layout.tarball(args.tarball, args.created)
    print(f"image:  {args.name}:{args.tag}")
    print(f"layer:  {layer['digest']} ({layer['size']} bytes compressed)")
    print(f"digest: {manifest_descriptor['digest']}")
    if args.tarball:
        print(f"tarball: {os.path.relpath(args.tarball)}")


if __name__ == "__main__":
    main()
