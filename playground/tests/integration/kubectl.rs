//! The real `kubectl` against a playground, through the written kubeconfig. These tests fail (not
//! skip) when kubectl is not on PATH.

use crate::common;

use common::Kubectl;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::Api;

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports: [{containerPort: 80}]
";

#[tokio::test]
async fn apply_twice_label_set_image_scale() {
    let pg = common::start().await;
    let kubectl = Kubectl::new(&pg);
    assert_eq!(kubectl.apply(DEPLOYMENT).await, "deployment.apps/web created\n");
    assert_eq!(kubectl.apply(DEPLOYMENT).await, "deployment.apps/web unchanged\n");
    assert_eq!(
        kubectl
            .apply(&DEPLOYMENT.replace("replicas: 2", "replicas: 4"))
            .await,
        "deployment.apps/web configured\n"
    );
    assert_eq!(
        kubectl.ok(&["label", "deployment", "web", "tier=front"]).await,
        "deployment.apps/web labeled\n"
    );
    assert_eq!(
        kubectl.ok(&["annotate", "deployment", "web", "note=x"]).await,
        "deployment.apps/web annotated\n"
    );
    assert_eq!(
        kubectl
            .ok(&["set", "image", "deployment/web", "nginx=nginx:1.26"])
            .await,
        "deployment.apps/web image updated\n"
    );
    assert_eq!(
        kubectl.ok(&["scale", "deployment", "web", "--replicas=3"]).await,
        "deployment.apps/web scaled\n"
    );

    let deployments: Api<Deployment> = Api::default_namespaced(pg.client().await.unwrap());
    let d = deployments.get("web").await.unwrap();
    let labels = d.metadata.labels.clone().unwrap();
    assert_eq!(
        (labels["app"].as_str(), labels["tier"].as_str()),
        ("web", "front")
    );
    assert_eq!(d.metadata.annotations.as_ref().unwrap()["note"], "x");
    let spec = d.spec;
    assert_eq!(spec.replicas, Some(3));
    assert_eq!(
        spec.template.spec.unwrap().containers[0].image.as_deref(),
        Some("nginx:1.26")
    );
    assert_eq!(
        d.metadata.generation,
        Some(4),
        "created, replicas 4, image, replicas 3"
    );

    let table = kubectl.ok(&["get", "deployments"]).await;
    let rows: Vec<Vec<&str>> = table.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows[0], ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]);
    assert_eq!(rows[1][..4], ["web", "0/3", "0", "0"]);

    let jsonpath = kubectl
        .ok(&[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ])
        .await;
    assert_eq!(jsonpath, "nginx:1.26");
    pg.shutdown().await;
}

#[tokio::test]
async fn get_pods_table_and_errors() {
    let pg = common::start().await;
    let kubectl = Kubectl::new(&pg);
    assert_eq!(kubectl.ok(&["get", "pods"]).await, "");
    assert_eq!(
        kubectl.ok(&["run", "p1", "--image=busybox"]).await,
        "pod/p1 created\n"
    );
    let table = kubectl.ok(&["get", "pods"]).await;
    let lines: Vec<Vec<&str>> = table.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(lines[0], ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]);
    assert_eq!(lines[1][..4], ["p1", "0/1", "Pending", "0"]);
    let wide = kubectl.ok(&["get", "pods", "-o", "wide"]).await;
    assert!(
        wide.starts_with("NAME") && wide.contains("NODE") && wide.contains("<none>"),
        "{wide}"
    );

    let missing = kubectl.run(&["get", "configmap", "nope"]).await;
    assert!(!missing.success);
    assert_eq!(
        missing.stderr.trim(),
        "Error from server (NotFound): configmaps \"nope\" not found"
    );
    let exists = kubectl.run(&["run", "p1", "--image=busybox"]).await;
    assert_eq!(
        exists.stderr.trim(),
        "Error from server (AlreadyExists): pods \"p1\" already exists"
    );

    assert_eq!(kubectl.ok(&["delete", "pod", "p1"]).await, "pod \"p1\" deleted\n");
    let ns = kubectl.ok(&["get", "namespaces", "-o", "name"]).await;
    assert_eq!(
        ns,
        "namespace/default\nnamespace/kube-node-lease\nnamespace/kube-public\nnamespace/kube-system\n"
    );
    pg.shutdown().await;
}

#[tokio::test]
async fn namespace_delete_waits_for_content() {
    let pg = common::start().await;
    let kubectl = Kubectl::new(&pg);
    kubectl
        .apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n")
        .await;
    kubectl
        .apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: team}\ndata: {a: b}\n")
        .await;
    assert_eq!(
        kubectl.ok(&["delete", "namespace", "team"]).await,
        "namespace \"team\" deleted\n"
    );
    let after = kubectl.run(&["get", "configmaps", "-n", "team"]).await;
    assert_eq!(after.stderr.trim(), "No resources found in team namespace.");
    assert!(!kubectl.ok(&["get", "namespaces"]).await.contains("team"));
    pg.shutdown().await;
}

#[tokio::test]
async fn kruise_crds_then_get_sidecarsets() {
    let pg = common::start().await;
    let kubectl = Kubectl::new(&pg);
    let out = kubectl.apply(&kruise_api::crds_yaml()).await;
    assert!(
        out.contains("customresourcedefinition.apiextensions.k8s.io/sidecarsets.apps.kruise.io created"),
        "{out}"
    );
    let empty = kubectl.run(&["get", "sidecarsets"]).await;
    assert!(empty.success, "{empty:?}");
    assert_eq!(empty.stderr.trim(), "No resources found");
    // The storage version (v1beta1): without kruise-rs running, another version could not be
    // converted (a 500, as kube-apiserver answers when the conversion webhook is down).
    let sidecarset = "apiVersion: apps.kruise.io/v1beta1
kind: SidecarSet
metadata: {name: logging}
spec:
  selector: {matchLabels: {app: web}}
  containers: [{name: agent, image: fluent-bit:3}]
";
    assert_eq!(
        kubectl.apply(sidecarset).await,
        "sidecarset.apps.kruise.io/logging created\n"
    );
    assert_eq!(
        kubectl.apply(sidecarset).await,
        "sidecarset.apps.kruise.io/logging unchanged\n"
    );
    let table = kubectl.ok(&["get", "sidecarsets"]).await;
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header.first(), Some(&"NAME"));
    assert_eq!(header.last(), Some(&"AGE"));
    assert!(table.lines().nth(1).unwrap().starts_with("logging "), "{table}");
    assert_eq!(
        kubectl
            .ok(&["label", "sidecarset", "logging", "team=infra"])
            .await,
        "sidecarset.apps.kruise.io/logging labeled\n"
    );
    pg.shutdown().await;
}

#[tokio::test]
async fn get_watch_prints_events() {
    let pg = common::start().await;
    let kubectl = Kubectl::new(&pg);
    kubectl
        .apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\n")
        .await;
    let (watch, output) = kubectl.spawn(&["get", "configmaps", "-w", "--output-watch-events"]);
    let printed = |n: usize| {
        let output = output.clone();
        move || {
            let lines = output.lock().unwrap().lines().count();
            std::future::ready((lines >= n).then_some(()))
        }
    };
    common::eventually("kubectl to print the initial list", printed(2)).await;
    kubectl
        .apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: second}\n")
        .await;
    kubectl.ok(&["label", "configmap", "second", "x=y"]).await;
    kubectl.ok(&["delete", "configmap", "first"]).await;
    common::eventually("kubectl to print the changes", printed(5)).await;
    drop(watch);
    let out = output.lock().unwrap().clone();
    let lines: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().take(3).collect())
        .collect();
    assert_eq!(
        lines,
        [
            ["EVENT", "NAME", "DATA"],
            ["ADDED", "first", "0"],
            ["ADDED", "second", "0"],
            ["MODIFIED", "second", "0"],
            ["DELETED", "first", "0"],
        ]
        .map(|l| l.to_vec())
        .to_vec(),
        "{out}"
    );
    pg.shutdown().await;
}

#[tokio::test]
async fn server_side_apply_diff_and_selector_delete() {
    let pg = common::start().await;
    let kubectl = Kubectl::new(&pg);
    let apply_ss = |yaml: String| {
        let kubectl = &kubectl;
        async move {
            kubectl
                .run_stdin(&["apply", "--server-side", "-f", "-"], &yaml)
                .await
        }
    };
    let first = apply_ss(DEPLOYMENT.to_string()).await;
    assert_eq!(
        first.stdout, "deployment.apps/web serverside-applied\n",
        "{first:?}"
    );
    let again = apply_ss(DEPLOYMENT.to_string()).await;
    assert_eq!(
        again.stdout, "deployment.apps/web serverside-applied\n",
        "{again:?}"
    );

    let diff = kubectl
        .run_stdin(
            &["diff", "-f", "-"],
            &DEPLOYMENT.replace("replicas: 2", "replicas: 5"),
        )
        .await;
    assert!(!diff.success, "kubectl diff exits 1 when there are differences");
    assert!(
        diff.stdout.contains("-  replicas: 2") && diff.stdout.contains("+  replicas: 5"),
        "{diff:?}"
    );
    let unchanged = kubectl
        .ok(&["get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"])
        .await;
    assert_eq!(unchanged, "2", "diff is a dry run");

    assert!(kubectl.ok(&["get", "all"]).await.contains("deployment.apps/web"));
    for n in ["a", "b"] {
        kubectl
            .apply(&format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {n}, labels: {{group: x}}}}\n"
            ))
            .await;
    }
    let deleted = kubectl.ok(&["delete", "configmaps", "-l", "group=x"]).await;
    assert_eq!(deleted, "configmap \"a\" deleted\nconfigmap \"b\" deleted\n");
    pg.shutdown().await;
}
