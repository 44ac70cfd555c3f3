#!/usr/bin/env python3
"""A fake kube-apiserver that answers only API *discovery*, so that
`kubectl apply --dry-run=client` can run without a cluster.

kubectl needs a server even in client dry-run: it maps every manifest's
apiVersion/kind to a REST resource through discovery (`/api`, `/apis`,
`/api/v1`, `/apis/<group>/<version>`) and then GETs each object to decide
between "created" and "configured". This server answers discovery with the
legacy (non-aggregated) documents and answers every object GET with 404 (a
`Status` body), so kubectl treats every object as new and prints
`<kind>/<name> created (dry run)`.

It does NOT validate anything: object schemas are checked by the
`kubernetes-validate` step of scripts/validate-manifests.sh. What this step
proves is that kubectl can parse every manifest, map each kind to a served
resource (a kind missing below, or an apiVersion the cluster would not serve,
fails with "no matches for kind"), and build the create requests.

Any request that is not a GET (a real write would mean dry-run is broken) or
a GET of a path it does not know is logged with a `NOTE` prefix; the
validation script fails when it sees a write.

Usage: fake_discovery.py [--port 0] [--port-file FILE] [--git-version v1.32.4]
The chosen port is printed on stdout (and written to --port-file) once the
server listens on 127.0.0.1. Stdlib only (Python 3.8+; CI uses 3.11).
"""

import argparse
import json
import os
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# group -> version -> [(plural, singular, namespaced, kind, short names, subresources)]
ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
RESOURCES = {
    "": {
        "v1": [
            ("namespaces", "namespace", False, "Namespace", ["ns"], ["status", "finalize"]),
            ("serviceaccounts", "serviceaccount", True, "ServiceAccount", ["sa"], ["token"]),
            ("services", "service", True, "Service", ["svc"], ["status", "proxy"]),
            ("secrets", "secret", True, "Secret", [], []),
            ("configmaps", "configmap", True, "ConfigMap", ["cm"], []),
            ("resourcequotas", "resourcequota", True, "ResourceQuota", ["quota"], ["status"]),
            ("limitranges", "limitrange", True, "LimitRange", ["limits"], []),
            ("pods", "pod", True, "Pod", ["po"], ["status", "eviction", "log", "binding"]),
            ("persistentvolumeclaims", "persistentvolumeclaim", True, "PersistentVolumeClaim", ["pvc"], ["status"]),
            ("events", "event", True, "Event", ["ev"], []),
        ],
    },
    "apps": {
        "v1": [
            ("deployments", "deployment", True, "Deployment", ["deploy"], ["status", "scale"]),
            ("replicasets", "replicaset", True, "ReplicaSet", ["rs"], ["status", "scale"]),
            ("statefulsets", "statefulset", True, "StatefulSet", ["sts"], ["status", "scale"]),
            ("daemonsets", "daemonset", True, "DaemonSet", ["ds"], ["status"]),
            ("controllerrevisions", "controllerrevision", True, "ControllerRevision", [], []),
        ],
    },
    "policy": {
        "v1": [
            ("poddisruptionbudgets", "poddisruptionbudget", True, "PodDisruptionBudget", ["pdb"], ["status"]),
        ],
    },
    "rbac.authorization.k8s.io": {
        "v1": [
            ("roles", "role", True, "Role", [], []),
            ("rolebindings", "rolebinding", True, "RoleBinding", [], []),
            ("clusterroles", "clusterrole", False, "ClusterRole", [], []),
            ("clusterrolebindings", "clusterrolebinding", False, "ClusterRoleBinding", [], []),
        ],
    },
    "admissionregistration.k8s.io": {
        "v1": [
            ("mutatingwebhookconfigurations", "mutatingwebhookconfiguration", False,
             "MutatingWebhookConfiguration", [], []),
            ("validatingwebhookconfigurations", "validatingwebhookconfiguration", False,
             "ValidatingWebhookConfiguration", [], []),
        ],
    },
    "apiextensions.k8s.io": {
        "v1": [
            ("customresourcedefinitions", "customresourcedefinition", False,
             "CustomResourceDefinition", ["crd", "crds"], ["status"]),
        ],
    },
    "coordination.k8s.io": {
        "v1": [("leases", "lease", True, "Lease", [], [])],
    },
    "scheduling.k8s.io": {
        "v1": [("priorityclasses", "priorityclass", False, "PriorityClass", ["pc"], [])],
    },
    "networking.k8s.io": {
        "v1": [("networkpolicies", "networkpolicy", True, "NetworkPolicy", ["netpol"], [])],
    },
    "events.k8s.io": {
        "v1": [("events", "event", True, "Event", ["ev"], [])],
    },
    "batch": {
        "v1": [("jobs", "job", True, "Job", [], ["status"])],
    },
}


def group_version(group, version):
    return f"{group}/{version}" if group else version


def resource_list(group, version):
    resources = []
    for plural, singular, namespaced, kind, short, subresources in RESOURCES[group][version]:
        entry = {
            "name": plural,
            "singularName": singular,
            "namespaced": namespaced,
            "kind": kind,
            "verbs": ALL_VERBS,
        }
        if short:
            entry["shortNames"] = short
        resources.append(entry)
        for sub in subresources:
            resources.append({
                "name": f"{plural}/{sub}",
                "singularName": "",
                "namespaced": namespaced,
                "kind": kind,
                "verbs": ["get", "patch", "update"],
            })
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version(group, version),
        "resources": resources,
    }


def group_list():
    groups = []
    for group, versions in RESOURCES.items():
        if not group:
            continue
        listed = [{"groupVersion": group_version(group, v), "version": v} for v in versions]
        groups.append({"name": group, "versions": listed, "preferredVersion": listed[0]})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def not_found(path):
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f"{path} not found (fake discovery server: no objects are stored)",
        "reason": "NotFound",
        "details": {},
        "code": 404,
    }


GROUP_VERSION_PATH = re.compile(r"^/apis/([^/]+)/([^/]+)$")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-kube-apiserver/0"
    git_version = "v1.32.4"

    def log_message(self, fmt, *args):  # quiet by default; see --verbose
        if self.server.verbose:
            sys.stderr.write("fake_discovery: " + (fmt % args) + "\n")

    def note(self, what):
        sys.stderr.write(f"NOTE fake_discovery: {what}\n")
        sys.stderr.flush()

    def send_json(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def answer(self):
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        if path == "/version":
            major, minor = self.git_version.lstrip("v").split(".")[:2]
            return 200, {
                "major": major,
                "minor": minor,
                "gitVersion": self.git_version,
                "gitCommit": "0000000000000000000000000000000000000000",
                "gitTreeState": "clean",
                "buildDate": "2025-01-01T00:00:00Z",
                "goVersion": "go1.23.0",
                "compiler": "gc",
                "platform": "linux/amd64",
            }
        if path == "/api":
            return 200, {
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": f"127.0.0.1:{self.server.server_port}"}
                ],
            }
        if path == "/apis":
            return 200, group_list()
        if path == "/api/v1":
            return 200, resource_list("", "v1")
        match = GROUP_VERSION_PATH.match(path)
        if match:
            group, version = match.groups()
            if group in RESOURCES and version in RESOURCES[group]:
                return 200, resource_list(group, version)
            self.note(f"GET of unknown group/version {path}")
            return 404, not_found(path)
        if path.startswith("/api/") or path.startswith("/apis/"):
            # An individual object (or a list): nothing is stored.
            return 404, not_found(path)
        # /openapi/v2, /openapi/v3, ...: not served.
        self.note(f"GET of unserved path {path}")
        return 404, not_found(path)

    def do_GET(self):
        if self.path.split("?", 1)[0].rstrip("/") == "/openapi/v2":
            # A Swagger 2.0 document without definitions, in gnostic's protobuf encoding (field 1,
            # swagger = "2.0"), as client-go asks for it: kubectl's client-side validation finds no
            # schema and skips (step 2 validates), so no --validate=false is needed.
            data = b"\x0a\x032.0"
            self.send_response(200)
            self.send_header("Content-Type", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        code, body = self.answer()
        self.send_json(code, body)

    def do_HEAD(self):
        self.do_GET()

    def refuse_write(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.note(f"WRITE {self.command} {self.path} (client dry-run must not write)")
        self.send_json(405, {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "fake discovery server does not accept writes", "reason": "MethodNotAllowed",
            "code": 405,
        })

    do_POST = do_PUT = do_PATCH = do_DELETE = refuse_write


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--port-file", help="also write the chosen port to this file")
    parser.add_argument("--git-version", default="v1.32.4", help="gitVersion answered on /version")
    parser.add_argument("--verbose", action="store_true", help="log every request on stderr")
    args = parser.parse_args()

    Handler.git_version = args.git_version
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.verbose = args.verbose
    port = server.server_address[1]
    print(port, flush=True)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, args.port_file)  # atomic: readers never see a partial file
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
