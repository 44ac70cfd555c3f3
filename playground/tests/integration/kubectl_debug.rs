//! The `pods/ephemeralcontainers` subresource through the real `kubectl debug` (which patches the
//! subresource with a strategic merge patch) and raw requests: discovery, the add-only rule, the
//! ephemeral container rules, and the kubelet's `ephemeralContainerStatuses`. These tests fail (not
//! skip) without kubectl on PATH.

use crate::common;

use common::{Kubectl, eventually, raw};
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use serde_json::{Value, json};

const POD: &str = "apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec: {containers: [{name: app, image: 'nginx:1.27'}]}
";

async fn ephemeral_status(pods: &Api<Pod>, name: &str) -> Option<Value> {
    let pod = pods.get("web").await.ok()?;
    let statuses = pod.status?.ephemeral_container_statuses?;
    let s = statuses.into_iter().find(|s| s.name == name)?;
    Some(serde_json::to_value(s).expect("json"))
}

#[tokio::test]
async fn kubectl_debug_adds_a_container_the_kubelet_runs() {
    let pg = common::start_nodes(1).await;
    let kubectl = Kubectl::new(&pg);
    let client = pg.client().await.expect("client");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    kubectl.apply(POD).await;

    // Discovery lists the subresource as kube-apiserver does.
    let out = kubectl.ok(&["get", "--raw", "/api/v1"]).await;
    let list: Value = serde_json::from_str(&out).expect("json");
    let entry = list["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["name"] == "pods/ephemeralcontainers")
        .cloned()
        .expect("pods/ephemeralcontainers in discovery");
    assert_eq!(entry["kind"], "Pod");
    assert_eq!(entry["verbs"], json!(["get", "patch", "update"]));

    let out = kubectl
        .ok(&[
            "debug",
            "web",
            "--image=busybox:1.36",
            "--container=probe",
            "--target=app",
            "--",
            "sh",
            "-c",
            "sleep 0.2; exit 4",
        ])
        .await;
    assert!(out.is_empty() || !out.contains("error"), "{out}");
    let pod = pods.get("web").await.expect("pod");
    let added = &pod
        .spec
        .as_ref()
        .expect("spec")
        .ephemeral_containers
        .as_ref()
        .expect("added")[0];
    assert_eq!(added.name, "probe");
    assert_eq!(added.target_container_name.as_deref(), Some("app"));
    // The API server's defaults.
    assert_eq!(added.image_pull_policy.as_deref(), Some("IfNotPresent"));
    assert_eq!(added.termination_message_policy.as_deref(), Some("File"));

    // The kubelet runs it, then reports how the command ended; ephemeral containers are never ready.
    let ended = eventually("the debug container ends", || async {
        ephemeral_status(&pods, "probe")
            .await
            .filter(|s| s["state"]["terminated"].is_object())
    })
    .await;
    assert_eq!(ended["state"]["terminated"]["exitCode"], 4);
    assert_eq!(ended["ready"], false);
    let pod = pods.get("web").await.expect("pod");
    assert_eq!(pod.status.and_then(|s| s.phase).as_deref(), Some("Running"));

    // A second debug container with a generated name, running until the pod goes.
    kubectl.ok(&["debug", "web", "--image=busybox:1.36"]).await;
    eventually("a second debug container runs", || async {
        let pod = pods.get("web").await.ok()?;
        let statuses = pod.status?.ephemeral_container_statuses?;
        (statuses.len() == 2
            && statuses
                .iter()
                .any(|s| s.state.as_ref().is_some_and(|st| st.running.is_some())))
        .then_some(())
    })
    .await;
}

#[tokio::test]
async fn entries_are_added_never_removed_or_changed() {
    let pg = common::start_nodes(0).await;
    let kubectl = Kubectl::new(&pg);
    let client = pg.client().await.expect("client");
    kubectl.apply(POD).await;
    let path = "/api/v1/namespaces/default/pods/web/ephemeralcontainers";
    let merge = "application/strategic-merge-patch+json";
    let add = json!({"spec": {"ephemeralContainers": [{"name": "dbg", "image": "busybox"}]}});
    let (code, pod) = raw(&client, "PATCH", path, merge, &add.to_string()).await;
    assert_eq!(code, 200, "{pod}");
    assert_eq!(pod["spec"]["ephemeralContainers"][0]["imagePullPolicy"], "Always");

    // GET of the subresource answers the pod.
    let (code, got) = raw(&client, "GET", path, "", "").await;
    assert_eq!((code, got["kind"].as_str()), (200, Some("Pod")));

    // Changing an entry (JSON patch) or dropping it (PUT without it) is forbidden.
    let change = json!([{"op": "replace", "path": "/spec/ephemeralContainers/0/image", "value": "alpine"}]);
    let (code, status) = raw(
        &client,
        "PATCH",
        path,
        "application/json-patch+json",
        &change.to_string(),
    )
    .await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["message"],
        "Pod \"web\" is invalid: spec.ephemeralContainers[0]: Forbidden: existing ephemeral containers \"dbg\" may not be changed"
    );
    let mut dropped = got.clone();
    dropped["spec"]["ephemeralContainers"] = json!([]);
    let (code, status) = raw(&client, "PUT", path, "application/json", &dropped.to_string()).await;
    assert_eq!(code, 422, "{status}");
    assert!(
        status["message"]
            .as_str()
            .unwrap_or_default()
            .contains("may not be removed"),
        "{status}"
    );

    // The rules of a new entry: unique names, no ports.
    let bad = json!({"spec": {"ephemeralContainers": [
        {"name": "app", "image": "busybox"},
        {"name": "p", "image": "busybox", "ports": [{"containerPort": 80}]}]}});
    let (code, status) = raw(&client, "PATCH", path, merge, &bad.to_string()).await;
    assert_eq!(code, 422, "{status}");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("spec.ephemeralContainers[1].name: Duplicate value: \"app\""),
        "{message}"
    );
    assert!(
        message.contains(
            "spec.ephemeralContainers[2].ports: Forbidden: cannot be set for an Ephemeral Container"
        ),
        "{message}"
    );

    // The pod itself cannot change the list; other pod writes keep it.
    let out = kubectl
        .run(&[
            "patch",
            "pod",
            "web",
            "--type=json",
            "-p",
            r#"[{"op":"remove","path":"/spec/ephemeralContainers"}]"#,
        ])
        .await;
    assert!(
        !out.success && out.stderr.contains("spec.ephemeralContainers: Forbidden"),
        "{}",
        out.stderr
    );
    kubectl.ok(&["label", "pod", "web", "debugged=yes"]).await;
    let out = kubectl
        .ok(&[
            "get",
            "pod",
            "web",
            "-o",
            "jsonpath={.spec.ephemeralContainers[*].name}",
        ])
        .await;
    assert_eq!(out, "dbg");
}
