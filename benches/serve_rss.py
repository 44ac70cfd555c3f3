#!/usr/bin/env python3
"""RSS of `kruise serve --objects DIR` when ready and after N `/mutate-pod` reviews.

Starts the release binary on free local ports, waits for /readyz, reads VmRSS and VmHWM from
/proc/<pid>/status, sends N copies of the perf review (benches/data/pod-create-review.json) over one
HTTPS keep-alive connection, reads them again, and stops the server.

usage: benches/serve_rss.py [--objects target/bench-state] [--reviews 2000] [--binary target/release/kruise]
"""
import argparse
import http.client
import os
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def memory(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM in MiB."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024
    return out


def wait_ready(url: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"not ready: {url}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", default=os.path.join(REPO, "target/bench-state"))
    parser.add_argument("--reviews", type=int, default=2000)
    parser.add_argument("--binary", default=os.path.join(REPO, "target/release/kruise"))
    args = parser.parse_args()
    with open(os.path.join(REPO, "benches/data/pod-create-review.json"), "rb") as f:
        body = f.read()
    port, metrics = free_port(), free_port()
    with tempfile.TemporaryDirectory() as certs:
        server = subprocess.Popen(
            [args.binary, "serve", "--objects", args.objects, "--bind-address", "127.0.0.1",
             "--port", str(port), "--cert-dir", certs, "--metrics-addr", f"127.0.0.1:{metrics}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_ready(f"http://127.0.0.1:{metrics}/readyz", time.monotonic() + 60)
            ready = memory(server.pid)
            context = ssl._create_unverified_context()
            conn = http.client.HTTPSConnection("127.0.0.1", port, context=context)
            for _ in range(args.reviews):
                conn.request("POST", "/mutate-pod", body, {"Content-Type": "application/json"})
                response = conn.getresponse()
                answer = response.read()
                if response.status != 200 or b'"allowed":true' not in answer:
                    raise SystemExit(f"unexpected answer {response.status}: {answer[:300]!r}")
            conn.close()
            after = memory(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(f"ready: VmRSS {ready['VmRSS']:.1f} MiB (VmHWM {ready['VmHWM']:.1f})")
    print(f"after {args.reviews} reviews: VmRSS {after['VmRSS']:.1f} MiB (VmHWM {after['VmHWM']:.1f})")


if __name__ == "__main__":
    main()
