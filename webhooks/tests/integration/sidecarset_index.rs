//! The SidecarSet index with many SidecarSets: a pod meets only the few that could select it, the result
//! equals the one of a view that rebuilds the index for every review, and the whole `/mutate-pod` decision
//! for a realistic pod stays cheap.

use crate::common;

use common::sidecarset::{Uncached, apply, normalise, request, step, view_of};
use kruise_webhooks::{Settings, pod_mutate, pod_mutate::sidecarset::SidecarSetIndex};
use serde_json::{Value, json};

/// 1,000 SidecarSets: most select other apps (by label, by `In`, by `Exists` on other keys, in other
/// namespaces); two select the pod.
fn many_sidecar_sets() -> Vec<Value> {
    let hash = json!({"kruise.io/sidecarset-hash": "h", "kruise.io/sidecarset-hash-without-image": "w"});
    let mut sets = Vec::new();
    for i in 0..998 {
        let selector = match i % 4 {
            0 => json!({"matchLabels": {"app": format!("app-{i}")}}),
            1 => {
                json!({"matchExpressions": [{"key": "app", "operator": "In", "values": [format!("a-{i}"), format!("b-{i}")]}]})
            }
            2 => json!({"matchExpressions": [{"key": format!("team-{i}"), "operator": "Exists"}]}),
            _ => json!({"matchLabels": {"app": "web"}}),
        };
        let mut spec = json!({"selector": selector, "containers": [{"name": format!("sidecar-{i}"), "image": "s:1",
                "podInjectPolicy": "BeforeAppContainer"}]});
        if i % 4 == 3 {
            // Same labels as the pod, other namespaces.
            spec["namespaceSelector"] =
                json!({"matchLabels": {"kubernetes.io/metadata.name": format!("ns-{i}")}});
        }
        sets.push(
            json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
            "metadata": {"name": format!("set-{i:04}"), "annotations": hash}, "spec": spec}),
        );
    }
    sets.push(json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": "mesh", "annotations": hash},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "namespace": "shop",
            "initContainers": [{"name": "mesh-init", "image": "mesh-init:1"}],
            "containers": [{"name": "envoy", "image": "envoy:1", "podInjectPolicy": "BeforeAppContainer", "shareVolumePolicy": {"type": "enabled"},
                            "transferEnv": [{"sourceContainerName": "web", "envNames": ["POD_IP", "REGION"]}]}]}}));
    sets.push(json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": "logs", "annotations": hash},
        "spec": {"selector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["frontend"]}]},
            "containers": [{"name": "log-agent", "image": "log:1", "podInjectPolicy": "AfterAppContainer",
                            "volumeMounts": [{"name": "logs", "mountPath": "/var/log/app"}]}],
            "volumes": [{"name": "logs", "emptyDir": {}}]}}));
    sets
}

/// A pod of about 6 KB, as a Deployment's ReplicaSet creates it.
fn realistic_pod() -> Value {
    let container = |name: &str| {
        json!({"name": name, "image": format!("registry.example.com/shop/{name}:2.14.3"), "imagePullPolicy": "IfNotPresent",
            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}, {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
            "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}},
                    {"name": "REGION", "value": "eu-west-1"}, {"name": "LOG_LEVEL", "value": "info"},
                    {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}],
            "resources": {"limits": {"cpu": "2", "memory": "2Gi"}, "requests": {"cpu": "500m", "memory": "1Gi"}},
            "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": true},
                             {"name": "kube-api-access-x7k2p", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 5, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
            "securityContext": {"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "runAsNonRoot": true, "capabilities": {"drop": ["ALL"]}},
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"})
    };
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"generateName": "web-7d9f8c6b5-", "namespace": "shop",
            "labels": {"app": "web", "tier": "frontend", "pod-template-hash": "7d9f8c6b5", "version": "2.14.3", "team": "checkout"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2025-06-01T10:00:00Z", "prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9f8c6b5", "uid": "4b8e2f7a-0c1d-4e5f-9a8b-7c6d5e4f3a2b", "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"containers": [container("web"), container("worker"), container("cache")],
            "volumes": [{"name": "config", "configMap": {"name": "web-config", "defaultMode": 420}},
                        {"name": "kube-api-access-x7k2p", "projected": {"defaultMode": 420, "sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "web", "serviceAccount": "web", "securityContext": {"fsGroup": 2000},
            "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}}]}},
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
            "schedulerName": "default-scheduler", "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority", "priority": 0},
        "status": {"phase": "Pending", "qosClass": "Burstable"}})
}

#[test]
fn a_pod_meets_only_the_sidecar_sets_that_select_it() {
    let view = view_of(&many_sidecar_sets());
    let pod = realistic_pod();
    let size = serde_json::to_vec(&pod).unwrap().len();
    assert!((5_000..8_000).contains(&size), "pod is {size} bytes");
    let output = step(&view, "shop", &pod).unwrap();
    assert!(output.warnings.is_empty(), "{:?}", output.warnings);
    let out = apply(&pod, &output.patch);
    let names: Vec<&str> = out["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["envoy", "web", "worker", "cache", "log-agent"]);
    assert_eq!(
        out["metadata"]["annotations"]["kruise.io/sidecarset-injected-list"],
        "logs,mesh"
    );
    let envoy = &out["spec"]["containers"][0];
    assert_eq!(envoy["env"][1]["name"], "POD_IP", "transferEnv from web");
    assert_eq!(
        envoy["volumeMounts"].as_array().unwrap().len(),
        2,
        "shared mounts of web (worker's are the same paths)"
    );

    // The trait's default (index rebuilt per review) decides the same.
    let uncached = Uncached(view_of(&many_sidecar_sets()));
    let mut a = apply(
        &pod,
        &pod_mutate::mutate(&request("shop", &pod), &view, &Settings::default()).patch,
    );
    let mut b = apply(
        &pod,
        &pod_mutate::mutate(&request("shop", &pod), &uncached, &Settings::default()).patch,
    );
    normalise(&mut a);
    normalise(&mut b);
    assert_eq!(a, b);

    // In another namespace only the cluster-scoped SidecarSet applies.
    let mut elsewhere = pod.clone();
    elsewhere["metadata"]["namespace"] = json!("ns-3");
    let out = apply(&elsewhere, &step(&view, "ns-3", &elsewhere).unwrap().patch);
    let names: Vec<&str> = out["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["sidecar-3", "web", "worker", "cache", "log-agent"]);
}

#[test]
fn index_builds_from_shared_sidecar_sets_and_skips_those_that_never_inject() {
    let view = view_of(&many_sidecar_sets());
    let sets = kruise_webhooks::ClusterView::sidecar_sets(&view);
    let index = SidecarSetIndex::build_in(sets, "kruise-rs");
    assert_eq!(index.len(), 1000);
    assert_eq!(index.revision_namespace(), "kruise-rs");
    let paused = view_of(&[
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet", "metadata": {"name": "p"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "injectionStrategy": {"paused": true}}}),
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet", "metadata": {"name": "e"}, "spec": {"selector": {}}}),
    ]);
    assert!(
        kruise_core::derived::get::<kruise_webhooks::pod_mutate::sidecarset::SidecarSetIndex>(&paused)
            .is_empty()
    );
}
