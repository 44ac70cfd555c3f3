//! The real `kubectl` against the built-in controllers: `rollout status`, `cordon`, `drain`,
//! `wait` and `delete --cascade`. Expected output is kubectl's own wording: `rollout status` from
//! `kubectl/pkg/polymorphichelpers/rollout_status.go`, `cordon`/`drain` from
//! `kubectl/pkg/cmd/drain` and `kubectl/pkg/drain`, `wait` from `kubectl/pkg/cmd/wait`, `delete`
//! from `kubectl/pkg/cmd/delete` (all in k8s.io/kubectl). These tests fail (not skip) without
//! kubectl on PATH.

use crate::common;

use common::Kubectl;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};

async fn start() -> kruise_playground::Playground {
    common::start_nodes(3).await
}

const WORKLOADS: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: 'nginx:1.27'}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: 'postgres:16'}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: 'fluentd:1'}]}
";

fn last_line(s: &str) -> &str {
    s.trim_end().lines().last().unwrap_or_default()
}

#[tokio::test]
async fn rollout_status_of_deployment_statefulset_daemonset() {
    let pg = start().await;
    let kubectl = Kubectl::new(&pg);
    kubectl.apply(WORKLOADS).await;
    let status = |what: &'static str| {
        let kubectl = &kubectl;
        async move { kubectl.ok(&["rollout", "status", what, "--timeout=60s"]).await }
    };
    // DeploymentStatusViewer: "deployment %q successfully rolled out".
    let out = status("deployment/web").await;
    assert_eq!(last_line(&out), "deployment \"web\" successfully rolled out");
    // StatefulSetStatusViewer: the API server defaults `rollingUpdate.partition: 0`, so a complete
    // rollout reports the partitioned form, as on a real cluster.
    let out = status("statefulset/db").await;
    assert_eq!(
        last_line(&out),
        "partitioned roll out complete: 2 new pods have been updated..."
    );
    // DaemonSetStatusViewer: "daemon set %q successfully rolled out".
    let out = status("daemonset/agent").await;
    assert_eq!(last_line(&out), "daemon set \"agent\" successfully rolled out");

    // A new image: every viewer waits for the rollout, then reports it done.
    kubectl
        .ok(&["set", "image", "statefulset/db", "db=postgres:17"])
        .await;
    kubectl
        .ok(&["set", "image", "daemonset/agent", "agent=fluentd:2"])
        .await;
    let out = status("statefulset/db").await;
    assert_eq!(
        last_line(&out),
        "partitioned roll out complete: 2 new pods have been updated..."
    );
    let out = status("daemonset/agent").await;
    assert_eq!(last_line(&out), "daemon set \"agent\" successfully rolled out");
    let images = kubectl
        .ok(&[
            "get",
            "pods",
            "-l",
            "app in (db, agent)",
            "-o",
            "jsonpath={.items[*].spec.containers[0].image}",
        ])
        .await;
    let mut images: Vec<&str> = images.split_whitespace().collect();
    images.sort();
    assert_eq!(
        images,
        [
            "fluentd:2",
            "fluentd:2",
            "fluentd:2",
            "postgres:17",
            "postgres:17"
        ]
    );
}

#[tokio::test]
async fn cordon_and_drain_with_a_daemonset() {
    let pg = start().await;
    let kubectl = Kubectl::new(&pg);
    kubectl.apply(WORKLOADS).await;
    kubectl
        .ok(&["rollout", "status", "deployment/web", "--timeout=60s"])
        .await;
    kubectl
        .ok(&["rollout", "status", "daemonset/agent", "--timeout=60s"])
        .await;
    let node = "playground-node-1";
    // `kubectl cordon`: "node/<name> cordoned" (drain's RunCordonOrUncordon).
    assert_eq!(
        kubectl.ok(&["cordon", node]).await,
        format!("node/{node} cordoned\n")
    );
    // The node lifecycle controller's taint follows (`doNoScheduleTaintingPass`).
    let jsonpath = "jsonpath={.spec.unschedulable} {.spec.taints[*].key}";
    let taints = common::eventually("the unschedulable taint", || async {
        let now = kubectl.ok(&["get", "node", node, "-o", jsonpath]).await;
        now.contains("node.kubernetes.io/unschedulable").then_some(now)
    })
    .await;
    assert_eq!(taints, "true node.kubernetes.io/unschedulable");
    assert_eq!(
        kubectl.ok(&["uncordon", node]).await,
        format!("node/{node} uncordoned\n")
    );

    // Without --ignore-daemonsets, drain refuses (drain's daemonSetFilter).
    let refused = kubectl.run(&["drain", node, "--timeout=30s"]).await;
    assert!(!refused.success);
    assert!(
        refused
            .stderr
            .contains("cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"),
        "{}",
        refused.stderr
    );
    let out = kubectl
        .run(&["drain", node, "--ignore-daemonsets", "--timeout=60s"])
        .await;
    assert!(out.success, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(&format!("node/{node} drained")),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr
            .contains("ignoring DaemonSet-managed Pods: default/agent-"),
        "{}",
        out.stderr
    );
    // Only the daemon pod is left on the node; the Deployment's pods run elsewhere.
    let pods: Api<Pod> = Api::default_namespaced(pg.client().await.unwrap());
    let on_node = ListParams::default().fields(&format!("spec.nodeName={node}"));
    let left: Vec<String> = pods
        .list(&on_node)
        .await
        .unwrap()
        .items
        .iter()
        .map(|p| p.metadata.labels.as_ref().unwrap()["app"].clone())
        .collect();
    assert_eq!(left, ["agent"]);
    kubectl
        .ok(&["rollout", "status", "deployment/web", "--timeout=60s"])
        .await;
}

const JOB: &str = "apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: pi, image: busybox, command: [sh, -c, 'sleep 0.3 && exit 0']}]
";

#[tokio::test]
async fn wait_for_a_job_to_complete() {
    let pg = start().await;
    let kubectl = Kubectl::new(&pg);
    kubectl.apply(JOB).await;
    // `kubectl wait`: "<kind>.<group>/<name> condition met".
    let out = kubectl
        .ok(&["wait", "--for=condition=complete", "job/pi", "--timeout=60s"])
        .await;
    assert_eq!(out, "job.batch/pi condition met\n");
    // printJob's columns: NAME STATUS COMPLETIONS DURATION AGE.
    let table = kubectl.ok(&["get", "job", "pi", "--no-headers"]).await;
    let cells: Vec<&str> = table.split_whitespace().collect();
    assert_eq!(cells[..3], ["pi", "Complete", "2/2"], "{table}");
    let failing = JOB
        .replace("name: pi}", "name: boom}")
        .replace("sleep 0.3 && exit 0", "exit 1")
        .replace("completions: 2", "backoffLimit: 0");
    kubectl.apply(&failing).await;
    let out = kubectl
        .ok(&["wait", "--for=condition=failed", "job/boom", "--timeout=60s"])
        .await;
    assert_eq!(out, "job.batch/boom condition met\n");
}

#[tokio::test]
async fn delete_cascade_foreground_and_orphan() {
    let pg = start().await;
    let kubectl = Kubectl::new(&pg);
    let client = pg.client().await.unwrap();
    let sets: Api<ReplicaSet> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client);
    let two = WORKLOADS.split("---").next().unwrap().to_string();
    kubectl.apply(&two).await;
    kubectl.apply(&two.replace("web", "api")).await;
    kubectl
        .ok(&["rollout", "status", "deployment/web", "--timeout=60s"])
        .await;
    kubectl
        .ok(&["rollout", "status", "deployment/api", "--timeout=60s"])
        .await;

    // Foreground: kubectl waits until the Deployment is gone, which the garbage collector allows
    // only once its ReplicaSet (and the ReplicaSet's pods) are gone.
    let out = kubectl
        .ok(&[
            "delete",
            "deployment",
            "web",
            "--cascade=foreground",
            "--timeout=60s",
        ])
        .await;
    assert_eq!(out, "deployment.apps \"web\" deleted\n");
    let web = ListParams::default().labels("app=web");
    assert!(sets.list(&web).await.unwrap().items.is_empty());
    assert!(pods.list(&web).await.unwrap().items.is_empty());

    // Orphan: the ReplicaSet stays, without its owner reference, and keeps its pods.
    let out = kubectl
        .ok(&["delete", "deployment", "api", "--cascade=orphan"])
        .await;
    assert_eq!(out, "deployment.apps \"api\" deleted\n");
    let api = ListParams::default().labels("app=api");
    let orphans = sets.list(&api).await.unwrap().items;
    assert_eq!(orphans.len(), 1);
    assert!(
        orphans[0]
            .metadata
            .owner_references
            .as_ref()
            .is_none_or(Vec::is_empty)
    );
    assert_eq!(pods.list(&api).await.unwrap().items.len(), 3);
}
