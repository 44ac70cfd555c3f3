#!/usr/bin/env python3
"""Memory one wide review costs `kruise serve` (issue #20: a pod under kube-apiserver's 3 MB limit must
not take more than 32 MiB extra).

Starts the binary on examples/cluster, reads VmRSS when ready, sends one ~2.9 MB `/mutate-pod` review
(dry run) of each shape below over HTTPS, and prints VmRSS and VmHWM after it, a fresh server per shape:
  containers  ~70,000 minimal containers (refused: over the width limit)
  env         one container with 95,000 env entries (refused)
  annotation  one 2.85 MB annotation (allowed: nothing in it is counted)

usage: benches/wide_rss.py [--binary target/release/kruise]
"""
import argparse
import http.client
import json
import os
import ssl
import subprocess
import tempfile
import time

from serve_rss import REPO, free_port, memory, wait_ready


def body_of(shape: str) -> bytes:
    with open(os.path.join(REPO, "benches/data/pod-create-review.json")) as f:
        review = json.load(f)
    pod = review["request"]["object"]
    if shape == "containers":
        pod["spec"]["containers"] = [{"name": f"c{i}", "image": "busybox"} for i in range(70_000)]
    elif shape == "env":
        pod["spec"]["containers"][0]["env"] = [{"name": f"E{i}", "value": "v"} for i in range(95_000)]
    else:
        pod["metadata"]["annotations"]["big"] = "x" * 2_850_000
    review["request"]["dryRun"] = True
    return json.dumps(review).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.path.join(REPO, "target/release/kruise"))
    args = parser.parse_args()
    for shape in ("containers", "env", "annotation"):
        body = body_of(shape)
        port, metrics = free_port(), free_port()
        with tempfile.TemporaryDirectory() as certs:
            server = subprocess.Popen(
                [args.binary, "serve", "--objects", os.path.join(REPO, "examples/cluster"),
                 "--bind-address", "127.0.0.1", "--port", str(port), "--cert-dir", certs,
                 "--metrics-addr", f"127.0.0.1:{metrics}"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                wait_ready(f"http://127.0.0.1:{metrics}/readyz", time.monotonic() + 60)
                ready = memory(server.pid)
                conn = http.client.HTTPSConnection("127.0.0.1", port, context=ssl._create_unverified_context())
                conn.request("POST", "/mutate-pod", body, {"Content-Type": "application/json"})
                response = conn.getresponse()
                response.read()
                after = memory(server.pid)
                print(f"{shape}: {len(body) / 1e6:.2f} MB review, HTTP {response.status}; VmRSS ready "
                      f"{ready['VmRSS']:.1f} MiB, after {after['VmRSS']:.1f}, VmHWM {after['VmHWM']:.1f} "
                      f"(+{after['VmHWM'] - ready['VmRSS']:.1f} MiB)")
            finally:
                server.terminate()
                server.wait(timeout=10)


if __name__ == "__main__":
    main()
