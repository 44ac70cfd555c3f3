//! The flows, each on its own playground process.

use std::path::Path;

use crate::common::kubectl::{ok, serve_nodes, wait_for};
use crate::playground_daemonset::budget::Watch;

fn example(name: &str) -> String {
    format!("{}/examples/playground/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn node(i: usize) -> String {
    format!("playground-node-{i}")
}

/// `kubectl get pods -l <selector>` fields, space separated, sorted by node.
fn pods(k: &Path, selector: &str, path: &str) -> Vec<String> {
    ok(
        k,
        &[
            "get",
            "pods",
            "-l",
            selector,
            "--sort-by",
            ".spec.nodeName",
            "-o",
            &format!("jsonpath={{{path}}}"),
        ],
    )
    .split_whitespace()
    .map(str::to_string)
    .collect()
}

#[test]
fn pods_go_to_eligible_nodes_roll_in_place_within_the_budget_follow_new_nodes_and_wait_for_pre_delete() {
    let pg = serve_nodes(5, &["--kubelet-delay-ms", "100"]);
    let k = pg.kubeconfig.as_path();
    ok(k, &["taint", "node", &node(2), "dedicated=infra:NoSchedule"]);
    ok(k, &["label", "node", &node(4), "ads=off"]);
    ok(k, &["apply", "-f", &example("daemonset.yaml")]);
    let field = |path: &str| ok(k, &["get", "ads", "agent", "-o", &format!("jsonpath={{{path}}}")]);
    wait_for("3 ready pods", || field(".status.numberReady") == "3");
    let eligible = [node(1), node(3), node(5)];
    assert_eq!(pods(k, "app=agent", ".items[*].spec.nodeName"), eligible);
    assert_eq!(field(".status.desiredNumberScheduled"), "3");
    let table = ok(k, &["get", "ads", "agent"]);
    assert!(
        table.contains("UP-TO-DATE"),
        "OpenKruise's printer columns: {table}"
    );

    // Image update in place, partition 1 and maxUnavailable 1: the two highest nodes, one at a time.
    let uids = pods(k, "app=agent", ".items[*].metadata.uid");
    let names: Vec<&str> = eligible.iter().map(String::as_str).collect();
    let watch = Watch::start(k, "default", "app=agent", &names);
    let image = r#"{"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"nginx:1.28"}]}}}}"#;
    ok(k, &["patch", "ads", "agent", "--type", "merge", "-p", image]);
    wait_for("2 pods updated past the partition", || {
        field(".status.updatedNumberScheduled") == "2" && field(".status.numberReady") == "3"
    });
    assert_eq!(
        pods(k, "app=agent", ".items[*].spec.containers[0].image"),
        ["nginx:1.27", "nginx:1.28", "nginx:1.28"],
        "the lowest-named node is kept by the partition"
    );
    assert_eq!(
        pods(k, "app=agent", ".items[*].metadata.uid"),
        uids,
        "in place: the same pods"
    );
    let seen = watch.seen();
    assert!(
        seen.unavailable <= 1,
        "never more than maxUnavailable nodes without a ready pod: {seen:?}"
    );
    assert_eq!(seen.per_node, 1, "no surge: {seen:?}");
    drop(watch);

    // A node added later gets a pod (at the current revision).
    let new_node = serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node(6),
        "labels": {"kubernetes.io/hostname": node(6)}}});
    let (created, _, err) =
        crate::common::kubectl::kubectl(k, &["create", "-f", "-"], Some(&new_node.to_string()));
    assert!(created, "kubectl create node: {err}");
    wait_for("a pod on the new node", || {
        field(".status.desiredNumberScheduled") == "4" && field(".status.currentNumberScheduled") == "4"
    });
    let on_new = || {
        ok(
            k,
            &[
                "get",
                "pods",
                "-l",
                "app=agent",
                "-o",
                &format!(
                    "jsonpath={{.items[?(@.spec.nodeName==\"{}\")].metadata.name}}",
                    node(6)
                ),
            ],
        )
    };
    wait_for("the new node's pod is scheduled", || !on_new().is_empty());
    let pod = on_new();

    // preDelete: a hooked pod is held in PreparingDelete until the label goes.
    let hook = r#"{"spec":{"lifecycle":{"preDelete":{"labelsHandler":{"hold":"true"}}}}}"#;
    ok(k, &["patch", "ads", "agent", "--type", "merge", "-p", hook]);
    ok(k, &["label", "pod", &pod, "hold=true"]);
    ok(k, &["label", "node", &node(6), "ads=off"]);
    let state = || {
        ok(
            k,
            &[
                "get",
                "pod",
                &pod,
                "-o",
                "jsonpath={.metadata.labels.lifecycle\\.apps\\.kruise\\.io/state}",
            ],
        )
    };
    wait_for("the pod is held in PreparingDelete", || {
        state() == "PreparingDelete"
    });
    assert_eq!(
        ok(
            k,
            &["get", "pod", &pod, "-o", "jsonpath={.metadata.deletionTimestamp}"]
        ),
        "",
        "a hooked pod is not deleted"
    );
    ok(k, &["label", "pod", &pod, "hold-"]);
    wait_for("the unhooked pod is deleted", || on_new().is_empty());
}

#[test]
fn a_v1alpha1_surging_daemonset_rolls_with_one_extra_pod_per_node() {
    let pg = serve_nodes(3, &["--kubelet-delay-ms", "100"]);
    let k = pg.kubeconfig.as_path();
    ok(k, &["apply", "-f", &example("daemonset-v1alpha1.yaml")]);
    let field = |path: &str| {
        ok(
            k,
            &[
                "get",
                "daemonsets.v1alpha1.apps.kruise.io",
                "surge",
                "-o",
                &format!("jsonpath={{{path}}}"),
            ],
        )
    };
    wait_for("3 ready pods", || field(".status.numberReady") == "3");
    let beta = ok(
        k,
        &[
            "get",
            "daemonsets.v1beta1.apps.kruise.io",
            "surge",
            "-o",
            "jsonpath={.spec.updateStrategy.rollingUpdate.rollingUpdateType}/{.spec.updateStrategy.rollingUpdate.maxSurge}",
        ],
    );
    assert_eq!(beta, "Standard/1", "Surging is stored as Standard with surge");
    let nodes: Vec<String> = (1..=3).map(node).collect();
    let names: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let watch = Watch::start(k, "default", "app=surge", &names);
    let image = r#"{"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"nginx:1.28"}]}}}}"#;
    ok(
        k,
        &[
            "patch",
            "daemonsets.v1alpha1.apps.kruise.io",
            "surge",
            "--type",
            "merge",
            "-p",
            image,
        ],
    );
    wait_for("every pod updated", || {
        field(".status.updatedNumberScheduled") == "3"
            && field(".status.numberReady") == "3"
            && pods(k, "app=surge", ".items[*].metadata.name").len() == 3
    });
    assert_eq!(
        field(".status.daemonSetHash"),
        ok(
            k,
            &[
                "get",
                "daemonsets.v1beta1.apps.kruise.io",
                "surge",
                "-o",
                "jsonpath={.status.updateRevision}"
            ]
        )
    );
    let seen = watch.seen();
    assert_eq!(seen.per_node, 2, "a new pod beside the old one: {seen:?}");
    assert_eq!(seen.unavailable, 0, "maxUnavailable 0: {seen:?}");
}
