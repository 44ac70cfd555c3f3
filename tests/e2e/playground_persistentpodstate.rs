//! PersistentPodState end to end in the playground, driven with the real kubectl: the controller
//! records where a StatefulSet's pods run, and a deleted pod recreated by the StatefulSet controller
//! gets the recorded zone as a node selector from the pod webhook and lands back in its zone, although
//! the scheduler alone would send it elsewhere. Annotated Advanced StatefulSets get a generated
//! PersistentPodState, deleted again when the annotation goes.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::kubectl::{kubectl, ok, serve, wait_for};
use serde_json::Value;

const ZONE: &str = "topology.kubernetes.io/zone";

fn json(k: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&ok(k, &all)).unwrap()
}

fn try_json(k: &Path, args: &[&str]) -> Option<Value> {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    let (done, out, _) = kubectl(k, &all, None);
    done.then(|| serde_json::from_str(&out).ok()).flatten()
}

fn apply(k: &Path, yaml: &str) {
    let (applied, _, err) = kubectl(k, &["apply", "-f", "-"], Some(yaml));
    assert!(applied, "{err}");
}

/// Node name → zone.
fn zones(k: &Path) -> BTreeMap<String, String> {
    json(k, &["get", "nodes"])["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let name = n["metadata"]["name"].as_str().unwrap_or("").to_string();
            (
                name,
                n["metadata"]["labels"][ZONE].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// The running, not deleting pod `name`: (uid, node).
fn running(k: &Path, name: &str) -> Option<(String, String)> {
    let pod = try_json(k, &["get", "pod", name])?;
    (pod["status"]["phase"] == "Running" && pod["metadata"]["deletionTimestamp"].is_null()).then(|| {
        (
            pod["metadata"]["uid"].as_str().unwrap_or("").to_string(),
            pod["spec"]["nodeName"].as_str().unwrap_or("").to_string(),
        )
    })
}

const WEB: &str = r#"
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  replicas: 3
  podManagementPolicy: Parallel
  serviceName: web
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: nginx:1
---
apiVersion: apps.kruise.io/v1beta1
kind: PersistentPodState
metadata:
  name: web
spec:
  targetRef: {apiVersion: apps/v1, kind: StatefulSet, name: web}
  requiredPersistentTopology:
    keys: [topology.kubernetes.io/zone]
  preferredPersistentTopology:
  - weight: 100
    preference:
      keys: [kubernetes.io/hostname]
"#;

/// A bare pod pinned to `node`, to make that node the busiest.
fn filler(name: &str, node: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  nodeName: {node}\n  containers:\n  - {{name: main, image: busybox:1}}\n"
    )
}

#[test]
fn a_recreated_statefulset_pod_lands_back_in_its_zone() {
    let pg = serve(&[]);
    let k = pg.kubeconfig.as_path();
    apply(k, WEB);
    let zones = zones(k);
    wait_for("three running pods", || {
        ["web-0", "web-1", "web-2"]
            .iter()
            .all(|p| running(k, p).is_some())
    });
    wait_for("a recorded state for every pod", || {
        let states = &json(k, &["get", "pps", "web"])["status"]["podStates"];
        ["web-0", "web-1", "web-2"]
            .iter()
            .all(|p| states[p]["nodeTopologyLabels"][ZONE].is_string())
    });
    let (old_uid, old_node) = running(k, "web-0").unwrap();
    let state = &json(k, &["get", "pps", "web"])["status"]["podStates"]["web-0"];
    assert_eq!(state["nodeName"], old_node.as_str());
    assert_eq!(state["nodeTopologyLabels"][ZONE], zones[&old_node].as_str());
    assert_eq!(
        state["nodeTopologyLabels"]["kubernetes.io/hostname"],
        old_node.as_str()
    );

    // Two pods pinned to web-0's node make it the busiest: the scheduler alone would now place a new
    // pod on another node, which is in another zone (one node per zone).
    apply(
        k,
        &format!(
            "{}---\n{}",
            filler("filler-1", &old_node),
            filler("filler-2", &old_node)
        ),
    );
    wait_for("the fillers run", || {
        running(k, "filler-1").is_some() && running(k, "filler-2").is_some()
    });

    ok(k, &["delete", "pod", "web-0", "--wait=false"]);
    wait_for("web-0 recreated and running", || {
        running(k, "web-0").is_some_and(|(uid, _)| uid != old_uid)
    });
    let pod = json(k, &["get", "pod", "web-0"]);
    assert_eq!(
        pod["metadata"]["annotations"]["kruise.io/injected-persistent-pod-state"],
        "web"
    );
    assert_eq!(pod["spec"]["nodeSelector"][ZONE], zones[&old_node].as_str());
    let preferred =
        &pod["spec"]["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"];
    assert_eq!(preferred[0]["weight"], 100);
    assert_eq!(
        preferred[0]["preference"]["matchExpressions"][0]["values"][0],
        old_node.as_str()
    );
    let (_, new_node) = running(k, "web-0").unwrap();
    assert_eq!(
        zones[&new_node], zones[&old_node],
        "web-0 moved from {old_node} to {new_node}"
    );

    // Scaled down to one pod: the states of web-1 and web-2 go once their pods are gone.
    ok(k, &["scale", "statefulset", "web", "--replicas=1"]);
    wait_for("only web-0's state is left", || {
        let states = json(k, &["get", "pps", "web"])["status"]["podStates"].clone();
        states.as_object().is_some_and(|s| s.keys().eq(["web-0"]))
    });
    // A second PersistentPodState for the same StatefulSet is refused.
    let (created, _, err) = kubectl(
        k,
        &["apply", "-f", "-"],
        Some(&WEB.replace("name: web\nspec:\n  targetRef", "name: web-2\nspec:\n  targetRef")),
    );
    assert!(
        !created && err.contains("targetRef is in conflict with other PersistentPodState web"),
        "{err}"
    );
}

const ADVANCED: &str = r#"
apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata:
  name: db
  annotations:
    kruise.io/auto-generate-persistent-pod-state: "true"
    kruise.io/required-persistent-topology: topology.kubernetes.io/zone
    kruise.io/preferred-persistent-topology: kubernetes.io/hostname
spec:
  replicas: 2
  podManagementPolicy: Parallel
  serviceName: db
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: main
        image: nginx:1
"#;

#[test]
fn an_annotated_advanced_statefulset_gets_a_generated_pps_until_the_annotation_goes() {
    let pg = serve(&[]);
    let k = pg.kubeconfig.as_path();
    apply(k, ADVANCED);
    wait_for("a generated PersistentPodState", || {
        try_json(k, &["get", "pps", "db"]).is_some()
    });
    let pps = json(k, &["get", "pps", "db"]);
    let set = json(k, &["get", "statefulsets.apps.kruise.io", "db"]);
    assert_eq!(
        pps["metadata"]["ownerReferences"][0]["uid"],
        set["metadata"]["uid"]
    );
    assert_eq!(pps["metadata"]["ownerReferences"][0]["controller"], true);
    assert_eq!(pps["spec"]["targetRef"]["apiVersion"], "apps.kruise.io/v1beta1");
    assert_eq!(pps["spec"]["requiredPersistentTopology"]["keys"][0], ZONE);
    assert_eq!(pps["spec"]["preferredPersistentTopology"][0]["weight"], 100);
    // Served in v1alpha1 too, with the old key name.
    let alpha = json(k, &["get", "persistentpodstates.v1alpha1.apps.kruise.io", "db"]);
    assert_eq!(
        alpha["spec"]["requiredPersistentTopology"]["nodeTopologyKeys"][0],
        ZONE
    );
    wait_for("both pods recorded", || {
        let states = &json(k, &["get", "pps", "db"])["status"]["podStates"];
        states["db-0"]["nodeName"].is_string() && states["db-1"]["nodeName"].is_string()
    });
    ok(
        k,
        &[
            "annotate",
            "statefulsets.apps.kruise.io",
            "db",
            "kruise.io/auto-generate-persistent-pod-state-",
        ],
    );
    wait_for("the generated PersistentPodState is deleted", || {
        try_json(k, &["get", "pps", "db"]).is_none()
    });
}
