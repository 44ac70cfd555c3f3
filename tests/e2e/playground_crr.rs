//! ContainerRecreateRequest end to end on a real runtime: `kruise playground --runtime containerd`
//! (pods are real containers), one `kruise daemon` per simulated node on the same containerd, and the
//! real kubectl. A CRR for one of a pod's two containers completes; that container has a new id and
//! restartCount 1 (in the runtime and the pod status), the other keeps its id, the pod keeps its uid.
//! A CRR naming a container the pod lacks is refused by the webhook; two CRRs for the same pod both
//! complete, one after the other. Skips without containerd and root unless `KRUISE_REQUIRE_CRI` is set.

use crate::common;
use common::agents::{CriPlayground, eventually, get};

use std::path::Path;

use common::kubectl::kubectl;
use kruise_cri::v1::ContainerState;
use kruise_cri::{Runtime, kubelet};
use serde_json::{Value, json};

fn apply(k: &Path, object: &Value) -> Result<(), String> {
    let (success, _, err) = kubectl(k, &["apply", "-f", "-"], Some(&object.to_string()));
    if success { Ok(()) } else { Err(err) }
}

fn crr(name: &str, containers: &[&str]) -> Value {
    let containers: Vec<Value> = containers.iter().map(|c| json!({"name": c})).collect();
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ContainerRecreateRequest",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"podName": "web", "containers": containers,
            "strategy": {"minStartedSeconds": 1}, "activeDeadlineSeconds": 120}})
}

/// The request once Completed.
fn completed(k: &Path, name: &str) -> Value {
    eventually(&format!("{name} completes"), 90, || {
        let c = get(k, &["containerrecreaterequests", name])?;
        (c["status"]["phase"] == "Completed").then_some(c)
    })
}

fn status_of<'a>(pod: &'a Value, container: &str) -> &'a Value {
    pod["status"]["containerStatuses"]
        .as_array()
        .and_then(|s| s.iter().find(|c| c["name"] == container))
        .unwrap_or(&Value::Null)
}

/// The pod once both containers run and are ready.
fn running_pod(k: &Path) -> Value {
    eventually("the pod to run both containers", 60, || {
        let pod = get(k, &["pod", "web"])?;
        ["app", "sidecar"]
            .iter()
            .all(|c| status_of(&pod, c)["ready"] == true)
            .then_some(pod)
    })
}

/// The newest container of `name` in the pod, in the runtime: id, state, restart count annotation.
fn newest(
    rt: &tokio::runtime::Runtime,
    runtime: &Runtime,
    uid: &str,
    name: &str,
) -> (String, ContainerState, String) {
    rt.block_on(async {
        let mut listed = runtime
            .list_containers(&[(kubelet::POD_UID, uid), (kubelet::CONTAINER_NAME, name)], None)
            .await
            .unwrap();
        listed.sort_by_key(|c| std::cmp::Reverse(c.created_at));
        let c = &listed[0];
        (
            c.id.clone(),
            c.state(),
            c.annotations[kubelet::CONTAINER_RESTART_COUNT].clone(),
        )
    })
}

#[test]
fn a_crr_restarts_one_of_two_containers_in_place_and_a_second_one_follows() {
    let Some(playground) = CriPlayground::start() else {
        return;
    };
    let (k, rt, runtime) = (playground.kubeconfig(), &playground.rt, &playground.runtime);
    let image = &playground.image;
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"terminationGracePeriodSeconds": 2, "containers": [
            {"name": "app", "image": image}, {"name": "sidecar", "image": image}]}});
    apply(k, &pod).unwrap();
    let before = running_pod(k);
    let uid = before["metadata"]["uid"].as_str().unwrap().to_owned();
    let app_before = status_of(&before, "app")["containerID"]
        .as_str()
        .unwrap()
        .to_owned();
    let sidecar_before = status_of(&before, "sidecar")["containerID"]
        .as_str()
        .unwrap()
        .to_owned();

    // A container the pod lacks: the webhook refuses with its message.
    let refused = apply(k, &crr("typo", &["nope"])).unwrap_err();
    assert!(refused.contains("container nope not found in Pod"), "{refused}");

    apply(k, &crr("restart-app", &["app"])).unwrap();
    let stored = get(k, &["containerrecreaterequests", "restart-app"]).unwrap();
    assert_eq!(
        stored["metadata"]["labels"]["crr.apps.kruise.io/pod-uid"],
        uid.as_str()
    );
    assert_eq!(
        stored["spec"]["containers"][0]["statusContext"]["containerID"],
        app_before.as_str()
    );
    assert_eq!(stored["spec"]["strategy"]["failurePolicy"], "Fail");
    let done = completed(k, "restart-app");
    assert_eq!(done["status"]["message"], "", "{done}");
    assert_eq!(
        done["status"]["containerRecreateStates"],
        json!([{"name": "app", "phase": "Succeeded", "isKilled": true}])
    );

    let after = running_pod(k);
    assert_eq!(after["metadata"]["uid"], uid.as_str(), "the pod is the same");
    let app = status_of(&after, "app");
    assert_ne!(
        app["containerID"],
        app_before.as_str(),
        "app runs in a new container"
    );
    assert_eq!(app["restartCount"], 1);
    let sidecar = status_of(&after, "sidecar");
    assert_eq!(
        sidecar["containerID"],
        sidecar_before.as_str(),
        "the sidecar kept running"
    );
    assert_eq!(sidecar["restartCount"], 0);
    let (id, state, restarts) = newest(rt, runtime, &uid, "app");
    assert_eq!(
        (format!("containerd://{id}"), state, restarts.as_str()),
        (
            app["containerID"].as_str().unwrap().to_owned(),
            ContainerState::ContainerRunning,
            "1"
        )
    );
    let (id, state, _) = newest(rt, runtime, &uid, "sidecar");
    assert_eq!(
        (format!("containerd://{id}"), state),
        (sidecar_before.clone(), ContainerState::ContainerRunning)
    );
    // The manager drops the active label of a completed request.
    eventually("the active label to go", 30, || {
        let c = get(k, &["containerrecreaterequests", "restart-app"])?;
        c["metadata"]["labels"]
            .get("crr.apps.kruise.io/active")
            .is_none()
            .then_some(())
    });

    // Two requests for the same pod: both complete, one after the other.
    apply(k, &crr("again-sidecar", &["sidecar"])).unwrap();
    apply(k, &crr("again-app", &["app"])).unwrap();
    let first = completed(k, "again-sidecar");
    let second = completed(k, "again-app");
    for c in [&first, &second] {
        assert_eq!(
            c["status"]["containerRecreateStates"][0]["phase"], "Succeeded",
            "{c}"
        );
    }
    let last = running_pod(k);
    assert_eq!(last["metadata"]["uid"], uid.as_str());
    assert_eq!(status_of(&last, "app")["restartCount"], 2);
    assert_eq!(status_of(&last, "sidecar")["restartCount"], 1);
}
