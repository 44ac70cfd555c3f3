#!/usr/bin/env python3
"""Runs the real `kruise serve` binary against a recording stand-in for kube-apiserver, then checks every
API request it made against the RBAC in the manifests, evaluated like the RBAC authorizer
(scripts/check_install.py). This catches a new API call in the code that rbac.yaml does not grant, without
a cluster.

The stand-in (plain HTTP on 127.0.0.1, random port) is just enough for the server to become ready:
collections list empty, watches stay open and send nothing, named objects come from the manifests
(webhook configurations, CRDs, ...) or from what the binary created, create/update/patch are stored,
everything else is 404. It validates nothing; it records `verb group resource namespace name`.

The binary must reach /readyz = 200 within --ready-timeout seconds, then it runs --linger more seconds
(past a leader-election renewal) and gets SIGTERM; it must exit by itself.

Usage: observe_api_requests.py --binary target/debug/kruise MANIFEST_FILE...
Needs PyYAML (the kubernetes-validate venv has it). Exit status 1 on any failure.
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_install  # noqa: E402
import fake_discovery  # noqa: E402

NAMESPACE = check_install.NAMESPACE

# plural -> Kind, for list responses, from the discovery table.
KINDS = {plural: kind for versions in fake_discovery.RESOURCES.values() for resources in versions.values()
         for plural, _, _, kind, _, _ in resources}


def parse(method, raw_path):
    """(verb, group, resource, namespace, name) of a request, like the apiserver's RequestInfo."""
    url = urlsplit(raw_path)
    query = parse_qs(url.query)
    parts = [p for p in url.path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 2:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    else:
        return None
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) > 1 else None
    if len(rest) > 2:
        resource += "/" + rest[2]
    if resource == "namespaces" and name:
        namespace = None  # a Namespace object is cluster-scoped
    watch = query.get("watch", ["false"])[0] in ("true", "1")
    verb = {
        "GET": "get" if name else ("watch" if watch else "list"),
        "POST": "create",
        "PUT": "update",
        "PATCH": "patch",
        "DELETE": "delete" if name else "deletecollection",
    }.get(method, method.lower())
    return verb, group, resource, namespace, name


class Recorder:
    def __init__(self, objects):
        self.lock = threading.Lock()
        self.requests = []
        self.store = {}
        self.rv = 100
        for o in objects:
            api_version = o["apiVersion"]
            group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
            resource = self.plural(o["kind"])
            self.store[(group, resource, o["metadata"].get("namespace"), o["metadata"]["name"])] = o

    @staticmethod
    def plural(kind):
        for plural, k in KINDS.items():
            if k == kind:
                return plural
        return kind.lower() + "s"


def make_handler(recorder, stop):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def send_json(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def status(self, code, reason):
            self.send_json(code, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                  "reason": reason, "code": code, "message": reason})

        def read_body(self):
            length = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(length)) if length else {}

        def handle_any(self):
            request = parse(self.command, self.path)
            if request is None:
                return self.status(404, "NotFound")
            with recorder.lock:
                recorder.requests.append(request)
            verb, group, resource, namespace, name = request
            key = (group, resource.split("/")[0], namespace, name)
            if verb == "watch":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                stop.wait(120)
                try:
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:
                    pass
                return
            if verb == "list":
                kind = KINDS.get(resource, "Unknown") + "List"
                api_version = f"{group}/v1" if group else "v1"
                return self.send_json(200, {"kind": kind, "apiVersion": api_version,
                                            "metadata": {"resourceVersion": "1"}, "items": []})
            with recorder.lock:
                if verb == "get":
                    if key in recorder.store:
                        return self.send_json(200, recorder.store[key])
                    return self.status(404, "NotFound")
                if verb in ("create", "update", "patch"):
                    body = self.read_body()
                    if verb == "create":
                        key = (group, resource, namespace, body.get("metadata", {}).get("name"))
                        if key in recorder.store:
                            return self.status(409, "AlreadyExists")
                    elif key not in recorder.store:
                        return self.status(404, "NotFound")
                    if verb == "patch":
                        body = recorder.store[key]  # patches are recorded, not applied
                    recorder.rv += 1
                    body.setdefault("metadata", {})["resourceVersion"] = str(recorder.rv)
                    recorder.store[key] = body
                    return self.send_json(201 if verb == "create" else 200, body)
                if verb == "delete":
                    recorder.store.pop(key, None)
                    return self.send_json(200, {"kind": "Status", "apiVersion": "v1", "status": "Success"})
            return self.status(405, "MethodNotAllowed")

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

    return Handler


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--ready-timeout", type=float, default=60)
    parser.add_argument("--linger", type=float, default=7, help="seconds to keep running once ready")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)

    objects = check_install.load(args.files)
    recorder = Recorder(objects)
    stop = threading.Event()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(recorder, stop))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    api_port = server.server_address[1]

    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = os.path.join(tmp, "kubeconfig")
        with open(kubeconfig, "w") as f:
            f.write(f"""apiVersion: v1
kind: Config
clusters: [{{name: fake, cluster: {{server: "http://127.0.0.1:{api_port}"}}}}]
users: [{{name: fake, user: {{token: not-a-real-token}}}}]
contexts: [{{name: fake, context: {{cluster: fake, user: fake, namespace: {NAMESPACE}}}}}]
current-context: fake
""")
        metrics_port, webhook_port = free_port(), free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_")}
        env.update(HOME=tmp, KUBECONFIG=kubeconfig, POD_NAMESPACE=NAMESPACE, POD_NAME="observe-0",
                   RUST_LOG=env.get("RUST_LOG", "info"), WEBHOOK_CERT_DIR=os.path.join(tmp, "certs"))
        log_path = os.path.join(tmp, "serve.log")
        with open(log_path, "w") as log:
            proc = subprocess.Popen(
                [binary, "serve", f"--metrics-addr=127.0.0.1:{metrics_port}", f"--port={webhook_port}",
                 "--bind-address=127.0.0.1"],
                env=env, cwd=tmp, stdout=log, stderr=subprocess.STDOUT)
            ready = False
            deadline = time.monotonic() + args.ready_timeout
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/readyz", timeout=2) as r:
                        if r.status == 200:
                            ready = True
                            break
                except OSError:
                    pass
                time.sleep(0.25)
            if ready:
                time.sleep(args.linger)
            else:
                failures.append(f"the server did not become ready within {args.ready_timeout:.0f}s")
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            try:
                code = proc.wait(timeout=20)
                if ready and code != 0:
                    failures.append(f"the server exited with status {code} after SIGTERM")
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                failures.append("the server did not stop within 20s of SIGTERM")
        stop.set()
        server.shutdown()
        if failures:
            with open(log_path) as f:
                sys.stderr.write("".join(f.readlines()[-30:]))

    rules = check_install.bound_rules(objects)
    seen = sorted(set(recorder.requests), key=lambda r: tuple("" if x is None else x for x in r))
    for verb, group, resource, namespace, name in seen:
        ok = check_install.allowed(rules, verb, group, resource, namespace, name)
        where = f" in {namespace}" if namespace else ""
        line = f"{'allowed' if ok else 'DENIED '} {verb} {resource}{'.' + group if group else ''}" \
               f"{'/' + name if name else ''}{where}"
        print(line)
        if not ok:
            failures.append(f"RBAC does not allow a request the server made: {line[8:]}")
    if not seen:
        failures.append("the server made no API request")
    for failure in failures:
        print(f"ERROR {failure}", file=sys.stderr)
    print(f"{len(seen)} distinct API requests observed, {sum(1 for f in failures if f.startswith('RBAC'))} denied")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
