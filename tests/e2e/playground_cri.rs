//! The playground's kubelet on a real runtime (`--runtime containerd`): pods become sandboxes and
//! containers in a containerd of the test's own, with images from a registry on 127.0.0.1. What the
//! pods report is checked against what the runtime says (through kruise-cri). Skips without containerd
//! and root unless `KRUISE_REQUIRE_CRI` is set (CI sets it).

use crate::common;
use crate::common::containerd;
use crate::common::registry;

use std::time::Duration;

use common::kubectl::{kubectl, ok, serve};
use common::playground_cloneset::{clone_set, container, name, restarts, start_on};
use containerd::Containerd;
use k8s_openapi::api::core::v1::Pod;
use kruise_cri::v1::{ContainerState, ContainerStatus};
use kruise_cri::{Runtime, kubelet};
use kruise_playground::kubelet::cri::CriOptions;
use kruise_rs::playground::Options;
use kube::api::{Api, PostParams};
use registry::Registry;
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(10);

async fn connect(containerd: &Containerd) -> Runtime {
    Runtime::connect(&containerd.socket(), TIMEOUT).await.unwrap()
}

/// The pod's containers in the runtime (newest first) and their statuses.
async fn runs(runtime: &Runtime, uid: &str, container: &str) -> Vec<ContainerStatus> {
    let mut listed = runtime
        .list_containers(
            &[(kubelet::POD_UID, uid), (kubelet::CONTAINER_NAME, container)],
            None,
        )
        .await
        .unwrap();
    listed.sort_by_key(|c| std::cmp::Reverse(c.created_at));
    let mut out = vec![];
    for c in listed {
        // The kubelet removes runs older than the one before the newest, possibly between the list
        // and this call.
        match runtime.container_status(&c.id).await {
            Ok(status) => out.push(status),
            Err(e) if e.is_not_found() => {}
            Err(e) => panic!("ContainerStatus {}: {e}", c.id),
        }
    }
    out
}

/// Polls `done` every 100 ms for up to `seconds`.
async fn wait(what: &str, seconds: u64, mut done: impl AsyncFnMut() -> Option<String>) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    loop {
        match done().await {
            None => return,
            Some(why) if tokio::time::Instant::now() > deadline => {
                panic!("timed out waiting for {what}: {why}")
            }
            Some(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

fn ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

fn kubectl_pod(kubeconfig: &std::path::Path, name: &str) -> Option<Value> {
    let (found, out, _) = kubectl(kubeconfig, &["get", "pod", name, "-o", "json"], None);
    found.then(|| serde_json::from_str(&out).unwrap())
}

#[tokio::test]
async fn a_pod_applied_with_kubectl_runs_in_containerd_reports_it_and_goes_with_its_sandbox() {
    let (Some(containerd), Some(registry)) = (Containerd::start(), Registry::start()) else {
        return;
    };
    let runtime = connect(&containerd).await;
    let image = registry.push("demo:v1");
    let socket = format!("unix://{}", containerd.socket().display());
    let served = serve(&["--runtime", &format!("containerd={socket}")]);
    let kc = served.kubeconfig.clone();
    let manifest = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "labels": {"app": "web"}, "annotations": {"greeting": "hello"}},
        "spec": {"terminationGracePeriodSeconds": 5, "containers": [{"name": "app", "image": image,
            "env": [{"name": "GREETING", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['greeting']"}}}]}]}});
    let (applied, _, err) = kubectl(&kc, &["apply", "-f", "-"], Some(&manifest.to_string()));
    assert!(applied, "{err}");
    let mut pod = Value::Null;
    wait("the pod to be Ready", 60, async || {
        pod = kubectl_pod(&kc, "web")?;
        (!ready(&pod)).then(|| pod["status"].to_string())
    })
    .await;
    let uid = pod["metadata"]["uid"].as_str().unwrap().to_owned();
    assert_eq!(pod["status"]["phase"], "Running");
    assert_eq!(pod["status"]["podIP"], "127.0.0.1", "host-network sandboxes");

    let sandboxes = runtime
        .list_pod_sandboxes(&[(kubelet::POD_UID, &uid)])
        .await
        .unwrap();
    assert_eq!(sandboxes.len(), 1, "{sandboxes:?}");
    let sandbox = &sandboxes[0];
    assert_eq!(sandbox.labels[kubelet::POD_NAME], "web");
    assert_eq!(sandbox.labels[kubelet::POD_NAMESPACE], "default");
    assert_eq!(sandbox.labels["app"], "web", "the pod's labels");
    let app = runs(&runtime, &uid, "app").await;
    assert_eq!(app.len(), 1);
    let run = &app[0];
    assert_eq!(run.state(), ContainerState::ContainerRunning);
    assert_eq!(run.labels[kubelet::POD_NAME], "web");
    assert_eq!(run.labels[kubelet::POD_UID], uid);
    assert_eq!(
        run.annotations[kubelet::CONTAINER_HASH],
        kubelet::container_hash_hex("app", &image)
    );
    assert_eq!(run.annotations[kubelet::CONTAINER_RESTART_COUNT], "0");
    assert_eq!(run.annotations[kubelet::POD_TERMINATION_GRACE_PERIOD], "5");
    let status = &pod["status"]["containerStatuses"][0];
    assert_eq!(status["containerID"], format!("containerd://{}", run.id));
    assert_eq!(status["imageID"], run.image_ref.as_str());
    assert!(!run.image_ref.is_empty());
    assert_eq!(status["image"], image.as_str());
    assert_eq!(
        (status["ready"].clone(), status["restartCount"].clone()),
        (json!(true), json!(0))
    );
    let env = runtime
        .exec_sync(
            &run.id,
            &["/bin/sh", "-c", "echo $GREETING; cat /image.txt"],
            TIMEOUT,
        )
        .await
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&env.stdout), "hello\ndemo:v1\n");

    // kubectl waits until the kubelet stopped the container and removed the pod.
    ok(&kc, &["delete", "pod", "web", "--timeout=30s"]);
    assert!(kubectl_pod(&kc, "web").is_none());
    assert!(
        runtime
            .list_pod_sandboxes(&[(kubelet::POD_UID, &uid)])
            .await
            .unwrap()
            .is_empty()
    );
    assert!(runs(&runtime, &uid, "app").await.is_empty());

    // A playground that dies leaves its sandboxes; the next one on this runtime removes them.
    let (applied, _, err) = kubectl(&kc, &["apply", "-f", "-"], Some(&manifest.to_string()));
    assert!(applied, "{err}");
    let mut uid = String::new();
    wait("the second pod to run", 60, async || {
        let pod = kubectl_pod(&kc, "web")?;
        uid = pod["metadata"]["uid"].as_str()?.to_owned();
        (!ready(&pod)).then(|| pod["status"].to_string())
    })
    .await;
    drop(served);
    let left = runtime
        .list_pod_sandboxes(&[(kubelet::POD_UID, &uid)])
        .await
        .unwrap();
    assert_eq!(left.len(), 1, "killed without cleaning up");
    let next = kruise_playground::Playground::start(kruise_playground::PlaygroundOptions {
        nodes: 1,
        runtime: Some(CriOptions::new(&socket)),
        ..Default::default()
    })
    .await
    .unwrap();
    assert!(
        runtime
            .list_pod_sandboxes(&[(kubelet::POD_UID, &uid)])
            .await
            .unwrap()
            .is_empty()
    );
    next.shutdown().await;
}

#[tokio::test]
async fn containers_restart_per_policy_and_runtime_errors_are_waiting_reasons() {
    let (Some(containerd), Some(registry)) = (Containerd::start(), Registry::start()) else {
        return;
    };
    let runtime = connect(&containerd).await;
    let image = registry.push("demo:v1");
    let pg = kruise_rs::playground::start(Options {
        nodes: 1,
        runtime: Some(CriOptions {
            back_off: Duration::from_millis(200),
            ..CriOptions::new(&containerd.socket().display().to_string())
        }),
        ..Options::default()
    })
    .await
    .unwrap();
    let pods: Api<Pod> = Api::namespaced(pg.client.clone(), "default");
    let create = async |name: &str, spec: Value| {
        let pod: Pod = serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).unwrap();
        pods.create(&PostParams::default(), &pod).await.unwrap();
    };
    create(
        "crash",
        json!({"containers": [{"name": "app", "image": image, "command": ["/bin/sh", "-c", "exit 1"]}]}),
    )
    .await;
    create("once", json!({"restartPolicy": "Never", "containers": [{"name": "app", "image": image, "command": ["/bin/true"]}]})).await;
    let missing = registry.reference("demo:v9");
    create(
        "missing",
        json!({"containers": [{"name": "app", "image": missing}]}),
    )
    .await;
    let get = async |name: &str| serde_json::to_value(pods.get(name).await.unwrap()).unwrap();

    wait("restartCount 2", 60, async || {
        let pod = get("crash").await;
        let s = &pod["status"]["containerStatuses"][0];
        (s["restartCount"].as_i64() < Some(2)).then(|| s.to_string())
    })
    .await;
    let pod = get("crash").await;
    let uid = pod["metadata"]["uid"].as_str().unwrap();
    let s = &pod["status"]["containerStatuses"][0];
    assert_eq!(s["lastState"]["terminated"]["exitCode"], 1, "{s}");
    assert_eq!(s["lastState"]["terminated"]["reason"], "Error", "{s}");
    assert_eq!(pod["status"]["phase"], "Running");
    let app = runs(&runtime, uid, "app").await;
    assert!(
        app.len() <= 2,
        "the newest run and the one before are kept: {}",
        app.len()
    );
    let newest: u32 = app[0].annotations[kubelet::CONTAINER_RESTART_COUNT]
        .parse()
        .unwrap();
    assert!(newest >= 2);
    assert_eq!(app[0].metadata.as_ref().unwrap().attempt, newest);

    wait("the Never pod to succeed", 30, async || {
        let pod = get("once").await;
        (pod["status"]["phase"] != "Succeeded").then(|| pod["status"].to_string())
    })
    .await;
    let s = get("once").await["status"]["containerStatuses"][0].clone();
    assert_eq!(
        (
            s["state"]["terminated"]["reason"].clone(),
            s["restartCount"].clone()
        ),
        (json!("Completed"), json!(0))
    );

    wait("a pull error", 30, async || {
        let pod = get("missing").await;
        let w = &pod["status"]["containerStatuses"][0]["state"]["waiting"];
        (!matches!(w["reason"].as_str(), Some("ErrImagePull" | "ImagePullBackOff"))).then(|| w.to_string())
    })
    .await;
    let pod = get("missing").await;
    let w = &pod["status"]["containerStatuses"][0]["state"]["waiting"];
    assert!(w["message"].as_str().unwrap().contains("not found"), "{w}");
    assert_eq!(pod["status"]["phase"], "Pending");
    // Pushing the tag lets the next retry run it.
    registry.push("demo:v9");
    wait("the pushed image to run", 60, async || {
        let pod = get("missing").await;
        (!ready(&pod)).then(|| pod["status"].to_string())
    })
    .await;

    pg.shutdown().await;
    let sandboxes = runtime.list_pod_sandboxes(&[]).await.unwrap();
    assert!(
        sandboxes.is_empty(),
        "the playground removes what it created: {sandboxes:?}"
    );
}

#[tokio::test]
async fn a_cloneset_in_place_image_update_recreates_the_real_container_in_the_same_pod() {
    let (Some(containerd), Some(registry)) = (Containerd::start(), Registry::start()) else {
        return;
    };
    let runtime = connect(&containerd).await;
    let (v1, v2) = (registry.push("demo:v1"), registry.push("demo:v2"));
    let cs = clone_set(
        2,
        json!([container("main", &v1)]),
        json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1}),
    );
    let env = start_on(
        Options {
            runtime: Some(CriOptions::new(&containerd.socket().display().to_string())),
            ..Options::default()
        },
        cs,
    )
    .await;
    env.wait("2 ready pods", 60, async || env.settled(2).await).await;
    let before = env.identities().await;
    let mut ids = std::collections::BTreeMap::new();
    for pod in env.pods().await {
        let s = &pod["status"]["containerStatuses"][0];
        let uid = pod["metadata"]["uid"].as_str().unwrap();
        let run = &runs(&runtime, uid, "main").await[0];
        assert_eq!(s["containerID"], format!("containerd://{}", run.id));
        ids.insert(name(&pod), (run.id.clone(), run.image_ref.clone()));
    }

    env.edit(json!({"template": {"spec": {"containers": [container("main", &v2)]}}}))
        .await;
    env.wait("all pods on v2", 90, async || env.rolled_out(2, &v2).await)
        .await;
    assert_eq!(env.identities().await, before, "in place: same names and uids");
    for pod in env.pods().await {
        let uid = pod["metadata"]["uid"].as_str().unwrap();
        let (old_id, old_image) = &ids[&name(&pod)];
        assert_eq!(restarts(&pod, "main"), 1);
        let app = runs(&runtime, uid, "main").await;
        let new = &app[0];
        assert_ne!(&new.id, old_id, "a new container");
        assert_ne!(&new.image_ref, old_image, "of the new image");
        assert_eq!(new.state(), ContainerState::ContainerRunning);
        assert_eq!(new.annotations[kubelet::CONTAINER_RESTART_COUNT], "1");
        assert_eq!(
            new.annotations[kubelet::CONTAINER_HASH],
            kubelet::container_hash_hex("main", &v2)
        );
        let s = &pod["status"]["containerStatuses"][0];
        assert_eq!(s["containerID"], format!("containerd://{}", new.id));
        assert_eq!(s["imageID"], new.image_ref.as_str());
        assert_eq!(
            s["lastState"]["terminated"]["containerID"],
            format!("containerd://{old_id}")
        );
        let out = runtime
            .exec_sync(&new.id, &["/bin/cat", "/image.txt"], TIMEOUT)
            .await
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "demo:v2\n");
        // The old run stopped on SIGTERM (exit 0), within the grace period.
        let old = app
            .iter()
            .find(|c| &c.id == old_id)
            .expect("the run before is kept");
        assert_eq!((old.state(), old.exit_code), (ContainerState::ContainerExited, 0));
    }
    drop(env);
    let sandboxes = runtime.list_pod_sandboxes(&[]).await.unwrap();
    assert!(
        sandboxes.is_empty(),
        "a dropped playground removes what it created: {sandboxes:?}"
    );
}
