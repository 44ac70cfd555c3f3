#!/usr/bin/env python3
"""RSS of `kruise serve --objects DIR` when ready and after N `/mutate-pod` reviews.

Starts the release binary on free local ports, waits for /readyz, reads VmRSS and VmHWM from
/proc/<pid>/status, sends N copies of the perf review (benches/data/pod-create-review.json) over one
HTTPS keep-alive connection, reads them after the first and after the last, and stops the server.
RssAnon is the heap, RssFile the pages of the binary it touched.

usage: benches/serve_rss.py [--objects target/bench-state] [--reviews 2000] [--binary target/release/kruise]
       [--runs 3]  (medians of 3 runs)
"""
import argparse
import http.client
import os
import socket
import ssl
import statistics
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
    """VmRSS, VmHWM, RssAnon (heap) and RssFile (the binary's pages) in MiB."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
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


def measure(args: argparse.Namespace, body: bytes) -> tuple[dict[str, float], ...]:
    """One run: memory when ready, after the first review, and after all of them."""
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
            first = ready
            for i in range(args.reviews):
                conn.request("POST", "/mutate-pod", body, {"Content-Type": "application/json"})
                response = conn.getresponse()
                answer = response.read()
                if response.status != 200 or b'"allowed":true' not in answer:
                    raise SystemExit(f"unexpected answer {response.status}: {answer[:300]!r}")
                if i == 0:
                    first = memory(server.pid)
            conn.close()
            after = memory(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=10)
    return ready, first, after


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", default=os.path.join(REPO, "target/bench-state"))
    parser.add_argument("--reviews", type=int, default=2000)
    parser.add_argument("--binary", default=os.path.join(REPO, "target/release/kruise"))
    parser.add_argument("--runs", type=int, default=1, help="runs; figures are the runs' medians")
    args = parser.parse_args()
    with open(os.path.join(REPO, "benches/data/pod-create-review.json"), "rb") as f:
        body = f.read()
    runs = [measure(args, body) for _ in range(args.runs)]
    names = ("ready", "after 1 review", f"after {args.reviews} reviews")
    for index, name in enumerate(names):
        m = {key: statistics.median(run[index][key] for run in runs) for key in runs[0][index]}
        print(f"{name}: VmRSS {m['VmRSS']:.1f} MiB (VmHWM {m['VmHWM']:.1f}; "
              f"RssAnon {m['RssAnon']:.1f}, RssFile {m['RssFile']:.1f})")
    if args.runs > 1:
        print("VmRSS of each run (ready / after 1 / after all): " + ", ".join(
            " / ".join(f"{run[i]['VmRSS']:.1f}" for i in range(3)) for run in runs))


if __name__ == "__main__":
    main()
