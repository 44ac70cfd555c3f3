//! `kubectl kruise explain` and `inject` against the playground, through the real kubectl: the answers
//! come from kruise-rs's webhook code run on the cluster's objects.

use crate::common;

use common::{start, wait_for};

const SIDECARSETS: &str = "apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: log-agent}
spec:
  selector: {matchLabels: {app: web}}
  containers: [{name: log-agent, image: fluent-bit:3.1}]
---
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: metrics}
spec:
  selector: {matchLabels: {app: db}}
  containers: [{name: metrics, image: exporter:1}]
---
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: paused}
spec:
  selector: {matchLabels: {app: web}}
  injectionStrategy: {paused: true}
  containers: [{name: paused, image: busybox}]
";

const BUDGETS: &str = "apiVersion: policy.kruise.io/v1alpha1
kind: PodUnavailableBudget
metadata: {name: room}
spec:
  selector: {matchLabels: {app: web}}
  maxUnavailable: 1
---
apiVersion: policy.kruise.io/v1alpha1
kind: PodUnavailableBudget
metadata: {name: spent}
spec:
  selector: {matchLabels: {app: api}}
  maxUnavailable: 0
";

const POD: &str = "apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  containers: [{name: web, image: nginx:1.27}]
";

#[test]
fn explain_a_live_pod_and_a_manifest_then_inject() {
    let c = start();
    c.apply(SIDECARSETS);
    c.apply(POD);
    c.ok(&["create", "deployment", "api", "--image=nginx:1.27"]);
    assert_eq!(
        c.jsonpath("pod/web", "{.spec.containers[*].name}"),
        "log-agent web",
        "the webhook injected the matching SidecarSet"
    );
    c.apply(BUDGETS);
    wait_for("the budgets' status", || {
        c.jsonpath("pub/room", "{.status.unavailableAllowed}") == "1"
            && c.jsonpath("pub/spent", "{.status.totalReplicas}") == "1"
            && c.jsonpath("pub/spent", "{.status.unavailableAllowed}") == "0"
    });

    let out = c.ok(&["kruise", "explain", "pod/web"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Pod default/web");
    assert_eq!(lines[1], "SidecarSets:");
    assert_eq!(lines[2], "  log-agent: applies: injects log-agent");
    assert_eq!(
        lines[3],
        r#"  metrics: does not apply: spec.selector {"matchLabels":{"app":"db"}} does not select the pod's labels {"app":"web"}"#
    );
    assert_eq!(
        lines[4],
        "  paused: does not apply: injection is paused (spec.injectionStrategy.paused)"
    );
    assert_eq!(lines[5], "PodUnavailableBudgets:");
    assert_eq!(
        lines[6],
        "  room: applies: covers the pod; an eviction now would be allowed (status.unavailableAllowed 1)"
    );
    assert_eq!(
        lines[7],
        r#"  spent: does not apply: spec.selector {"matchLabels":{"app":"api"}} does not select the pod's labels {"app":"web"}"#
    );
    assert_eq!(lines[8..10], ["WorkloadSpreads:", "  (none)"]);
    // The explanation changed nothing: the budget is not spent by the dry-run eviction.
    assert_eq!(c.jsonpath("pub/room", "{.status.unavailableAllowed}"), "1");

    // A budget with nothing left.
    let api = c.ok(&[
        "get",
        "pods",
        "-l",
        "app=api",
        "-o",
        "jsonpath={.items[0].metadata.name}",
    ]);
    let out = c.ok(&["kruise", "explain", "pod", &api]);
    let spent = out
        .lines()
        .find(|l| l.starts_with("  spent: "))
        .unwrap_or_default();
    assert!(
        spent.starts_with("  spent: applies: covers the pod; an eviction now would be refused (429): "),
        "{out}"
    );

    // A manifest, not created: the same answers for a db pod.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("db.yaml");
    std::fs::write(
        &file,
        POD.replace("app: web", "app: db")
            .replace("name: web,", "name: db,"),
    )
    .unwrap();
    let out = c.ok(&["kruise", "explain", "-f", file.to_str().unwrap()]);
    assert!(out.contains("  metrics: applies: injects metrics\n"), "{out}");
    assert!(
        out.contains("  log-agent: does not apply: spec.selector"),
        "{out}"
    );
    assert!(
        c.run(&["get", "pod", "db"], None).code != 0,
        "explain -f creates nothing"
    );

    // inject: the manifest as admission would leave it.
    let injected = c.ok(&["kruise", "inject", "-f", file.to_str().unwrap()]);
    assert!(injected.contains("name: metrics"), "{injected}");
    assert!(
        injected.contains("kruise.io/sidecarset-injected-list: metrics"),
        "{injected}"
    );

    let usage = c.run(&["kruise", "explain", "cloneset/web"], None);
    assert_eq!(
        (usage.code, usage.stderr.as_str()),
        (1, "error: explain takes one pod: pod/NAME or -f pod.yaml\n")
    );
}
