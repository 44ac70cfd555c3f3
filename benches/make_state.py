#!/usr/bin/env python3
"""Writes the cluster state of kruise-rs's benchmarks as YAML files, for `kruise serve --objects DIR`
and the criterion benches: the perf review's Deployment/ReplicaSet in namespace shop, a WorkloadSpread
and a PUB that select its pods, N SidecarSets of which exactly 2 select the perf review's pod, and P
running pods.

The WorkloadSpread's first subset takes half of the Deployment (`--spread half`: pods past that go to
the unlimited second subset, which books nothing) or every pod (`--spread book-all`: a `maxReplicas`
no workload reaches, so every admitted pod is booked in `creatingPods`).

usage: benches/make_state.py OUT_DIR [--sidecarsets 1000] [--pods 0] [--spread half|book-all]
"""
import argparse
import json
import os

POD_APP = "checkout-api"


def sidecar_set(i, total):
    """The last two select the perf pod; the others select other apps, in every selector shape."""
    hashes = {"kruise.io/sidecarset-hash": f"hash-{i}", "kruise.io/sidecarset-hash-without-image": f"w-{i}"}
    name = f"sidecarset-{i:04d}"
    if i == total - 2:
        return {"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
                "metadata": {"name": "log-shipping", "annotations": hashes},
                "spec": {"selector": {"matchLabels": {"app.kubernetes.io/name": POD_APP}},
                         "containers": [{"name": "fluent-bit", "image": "fluent/fluent-bit:3.1",
                                         "podInjectPolicy": "AfterAppContainer",
                                         "shareVolumePolicy": {"type": "enabled"},
                                         "volumeMounts": [{"name": "varlog", "mountPath": "/var/log"}]}],
                         "volumes": [{"name": "varlog", "emptyDir": {}}]}}
    if i == total - 1:
        return {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
                "metadata": {"name": "mesh", "annotations": hashes},
                "spec": {"selector": {"matchExpressions": [
                             {"key": "team", "operator": "In", "values": ["payments", "search"]}]},
                         "namespace": "shop",
                         "initContainers": [{"name": "mesh-init", "image": "mesh/init:1.22"}],
                         "containers": [{"name": "envoy", "image": "envoyproxy/envoy:v1.31.0",
                                         "podInjectPolicy": "BeforeAppContainer",
                                         "transferEnv": [{"sourceContainerName": POD_APP,
                                                          "envNames": ["LOG_LEVEL"]}]}]}}
    shape = i % 4
    if shape == 0:
        selector = {"matchLabels": {"app.kubernetes.io/name": f"svc-{i}"}}
    elif shape == 1:
        selector = {"matchExpressions": [{"key": "app.kubernetes.io/name", "operator": "In",
                                          "values": [f"svc-{i}", f"job-{i}"]}]}
    elif shape == 2:
        selector = {"matchExpressions": [{"key": f"feature-{i}", "operator": "Exists"}]}
    else:
        selector = {"matchLabels": {"team": f"team-{i}"}}
    return {"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
            "metadata": {"name": name, "annotations": hashes},
            "spec": {"selector": selector,
                     "containers": [{"name": f"agent-{i}", "image": f"registry.example.com/agent:{i}"}]}}


def workloads(spread):
    deployment_uid = "9d0c5a4e-0000-4000-8000-000000000001"
    selector = {"matchLabels": {"app.kubernetes.io/name": POD_APP}}
    return [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": "shop", "labels": {"kubernetes.io/metadata.name": "shop"}}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": POD_APP, "namespace": "shop", "uid": deployment_uid},
         "spec": {"replicas": 6, "selector": selector,
                  "template": {"metadata": {"labels": {"app.kubernetes.io/name": POD_APP}},
                               "spec": {"containers": [{"name": POD_APP, "image": "shop/checkout:2.14.1"}]}}}},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet",
         "metadata": {"name": f"{POD_APP}-7d9f8c6b5d", "namespace": "shop",
                      "uid": "4b7f0d6e-8a51-4c8e-9b0a-2f6f1c3d7e91",
                      "labels": {"pod-template-hash": "7d9f8c6b5d"},
                      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": POD_APP,
                                           "uid": deployment_uid, "controller": True}]},
         "spec": {"replicas": 6, "selector": selector}},
        {"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
         "metadata": {"name": "checkout-zones", "namespace": "shop", "resourceVersion": "1201"},
         "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": POD_APP},
                  "subsets": [
                      {"name": "zone-a", "maxReplicas": "50%" if spread == "half" else 10_000_000,
                       "requiredNodeSelector": {"matchExpressions": [
                           {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eu-west-1a"]}]},
                       "tolerations": [{"key": "zone", "operator": "Equal", "value": "a", "effect": "NoSchedule"}],
                       "patch": {"metadata": {"labels": {"topology.kruise.io/zone": "a"}}}},
                      {"name": "zone-b",
                       "requiredNodeSelector": {"matchExpressions": [
                           {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eu-west-1b"]}]}}]}},
        {"apiVersion": "policy.kruise.io/v1beta1", "kind": "PodUnavailableBudget",
         "metadata": {"name": "checkout-pub", "namespace": "shop", "resourceVersion": "88"},
         "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": POD_APP},
                  "maxUnavailable": "25%"}},
    ]


def pod(i):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"filler-{i:05d}", "namespace": f"tenant-{i % 100:02d}",
                         "labels": {"app.kubernetes.io/name": f"svc-{i % 250}", "team": f"team-{i % 40}"},
                         "uid": f"00000000-0000-4000-8000-{i:012d}"},
            "spec": {"containers": [{"name": "app", "image": f"registry.example.com/svc-{i % 250}:1.0",
                                     "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}],
                     "nodeName": f"node-{i % 500}"},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--sidecarsets", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=0)
    parser.add_argument("--spread", choices=["half", "book-all"], default="half")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    def write(name, items):
        # A `kind: List` in JSON is valid YAML and fast to write and to read.
        with open(os.path.join(args.out, name), "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)

    write("workloads.json", workloads(args.spread))
    write("sidecarsets.json", [sidecar_set(i, args.sidecarsets) for i in range(args.sidecarsets)])
    if args.pods:
        write("pods.json", [pod(i) for i in range(args.pods)])


if __name__ == "__main__":
    main()
