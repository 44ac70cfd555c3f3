//! ContainerRecreateRequest end to end on a real runtime: `kruise playground --runtime containerd`
//! (pods are real containers), one `kruise daemon` per simulated node on the same containerd, and the
//! real kubectl. A CRR for one of a pod's two containers completes; that container has a new id and
//! restartCount 1 (in the runtime and the pod status), the other keeps its id, the pod keeps its uid.
//! A CRR naming a container the pod lacks is refused by the webhook; two CRRs for the same pod both
//! complete, one after the other. Two CRRs on disjoint containers run together while a third on a
//! shared container waits Pending with its reason, then completes; the agent records `Killing` events.
//! A failing preStop hook (exec, httpGet) is a `FailedPreStopHook` event; the containers are recreated anyway.
//! Skips without containerd and root unless `KRUISE_REQUIRE_CRI` is set.

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

    // Two requests for the same pod (disjoint containers): both complete.
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

/// A request with its own `minStartedSeconds` (how long it stays Recreating after the restart).
fn crr_slow(name: &str, containers: &[&str], min_started: u32) -> Value {
    let mut c = crr(name, containers);
    c["spec"]["strategy"]["minStartedSeconds"] = json!(min_started);
    c
}

/// The core event `reason` on pod `pod` whose message mentions `text`.
fn event(k: &Path, reason: &str, pod: &str, text: &str) -> Option<Value> {
    let list = get(k, &["events", "-n", "default"])?;
    list["items"].as_array()?.iter().find_map(|e| {
        (e["reason"] == reason
            && e["involvedObject"]["name"] == pod
            && e["message"].as_str().is_some_and(|m| m.contains(text)))
        .then(|| e.clone())
    })
}

#[test]
fn crrs_on_disjoint_containers_run_together_and_one_on_a_shared_container_waits() {
    let Some(playground) = CriPlayground::start() else {
        return;
    };
    let k = playground.kubeconfig();
    let image = &playground.image;
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"terminationGracePeriodSeconds": 2, "containers": [
            {"name": "app", "image": image}, {"name": "sidecar", "image": image}]}});
    apply(k, &pod).unwrap();
    let before = running_pod(k);
    let node = before["spec"]["nodeName"].as_str().unwrap().to_owned();

    // `slow-app` stays Recreating 20 s after its restart; `sidecar` runs beside it (OpenKruise would
    // keep it Pending until `slow-app` completes); `app-again` shares `app` and waits. It forces its
    // own restart: without `forceRecreate`, the restart `slow-app` makes after its creation would count.
    apply(k, &crr_slow("slow-app", &["app"], 20)).unwrap();
    apply(k, &crr("sidecar", &["sidecar"])).unwrap();
    let mut again = crr("app-again", &["app"]);
    again["spec"]["strategy"]["forceRecreate"] = json!(true);
    apply(k, &again).unwrap();
    let waiting = eventually("app-again to wait Pending with its reason", 30, || {
        let c = get(k, &["containerrecreaterequests", "app-again"])?;
        (c["status"]["phase"] == "Pending").then_some(c)
    });
    assert_eq!(
        waiting["status"]["message"],
        "waiting for ContainerRecreateRequest slow-app, which also recreates container app"
    );
    let sidecar = completed(k, "sidecar");
    assert_eq!(
        sidecar["status"]["containerRecreateStates"][0]["phase"],
        "Succeeded"
    );
    let slow = get(k, &["containerrecreaterequests", "slow-app"]).unwrap();
    assert_eq!(
        slow["status"]["phase"], "Recreating",
        "the sidecar's request completed while the app's was still at work: {slow}"
    );
    let again = get(k, &["containerrecreaterequests", "app-again"]).unwrap();
    assert_eq!(again["status"]["phase"], "Pending", "{again}");

    // Then the app's two requests complete, one after the other.
    let slow = completed(k, "slow-app");
    let again = completed(k, "app-again");
    for c in [&slow, &again] {
        assert_eq!(
            c["status"]["containerRecreateStates"][0]["phase"], "Succeeded",
            "{c}"
        );
        assert_eq!(c["status"]["message"], "", "{c}");
    }
    let last = running_pod(k);
    assert_eq!(last["metadata"]["uid"], before["metadata"]["uid"]);
    assert_eq!(status_of(&last, "app")["restartCount"], 2);
    assert_eq!(status_of(&last, "sidecar")["restartCount"], 1);

    // The agent's events: Killing on the container, from its node.
    let killing = eventually("event Killing for the sidecar", 30, || {
        event(
            k,
            "Killing",
            "web",
            "Stopping container sidecar by ContainerRecreateRequest sidecar",
        )
    });
    assert_eq!(killing["type"], "Normal");
    assert_eq!(
        killing["source"],
        json!({"component": "kruise-daemon-crr", "host": node})
    );
    assert_eq!(killing["involvedObject"]["fieldPath"], "spec.containers{sidecar}");
    for name in ["slow-app", "app-again"] {
        let text = format!("Stopping container app by ContainerRecreateRequest {name}");
        eventually(&format!("event Killing by {name}"), 30, || {
            event(k, "Killing", "web", &text)
        });
    }
}

/// A preStop hook that fails does not stop the request (spec §C.4, as OpenKruise): the agent records
/// Warning `FailedPreStopHook` with kubelet's wording, stops the container anyway, and the request
/// completes with the container recreated. One exec hook that exits 1, one httpGet hook to a closed port.
#[test]
fn a_failing_pre_stop_hook_is_an_event_and_the_container_is_recreated_anyway() {
    let Some(playground) = CriPlayground::start() else {
        return;
    };
    let k = playground.kubeconfig();
    let image = &playground.image;
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"terminationGracePeriodSeconds": 2, "containers": [
            {"name": "app", "image": image, "lifecycle": {"preStop": {"exec": {
                "command": ["sh", "-c", "echo draining; exit 1"]}}}},
            {"name": "sidecar", "image": image, "lifecycle": {"preStop": {"httpGet": {
                "host": "127.0.0.1", "port": closed, "path": "/quit"}}}}]}});
    apply(k, &pod).unwrap();
    let before = running_pod(k);
    let uid = before["metadata"]["uid"].as_str().unwrap().to_owned();
    let node = before["spec"]["nodeName"].as_str().unwrap().to_owned();

    apply(k, &crr("hooks", &["app", "sidecar"])).unwrap();
    let stored = get(k, &["containerrecreaterequests", "hooks"]).unwrap();
    assert_eq!(
        stored["spec"]["containers"][0]["preStop"],
        json!({"exec": {"command": ["sh", "-c", "echo draining; exit 1"]}}),
        "the webhook copied the pod's hook"
    );
    let done = completed(k, "hooks");
    assert_eq!(done["status"]["message"], "", "{done}");
    assert_eq!(
        done["status"]["containerRecreateStates"],
        json!([{"name": "app", "phase": "Succeeded", "isKilled": true},
            {"name": "sidecar", "phase": "Succeeded", "isKilled": true}])
    );
    let after = running_pod(k);
    assert_eq!(after["metadata"]["uid"], uid.as_str(), "the pod is the same");
    for c in ["app", "sidecar"] {
        assert_ne!(
            status_of(&after, c)["containerID"],
            status_of(&before, c)["containerID"],
            "{c} was stopped despite its hook"
        );
        assert_eq!(status_of(&after, c)["restartCount"], 1, "{c}");
    }

    let pod_name = format!("web_default({uid})");
    let exec = format!(
        "Exec lifecycle hook ([sh -c echo draining; exit 1]) for Container \"app\" in Pod \"{pod_name}\" \
         failed - error: command 'sh -c echo draining; exit 1' exited with 1: , message: \"draining\\n\""
    );
    let failed = eventually("event FailedPreStopHook for app", 30, || {
        event(k, "FailedPreStopHook", "web", &exec)
    });
    assert_eq!(failed["message"], exec.as_str());
    assert_eq!(failed["type"], "Warning");
    assert_eq!(
        failed["source"],
        json!({"component": "kruise-daemon-crr", "host": node})
    );
    assert_eq!(failed["involvedObject"]["fieldPath"], "spec.containers{app}");
    let http = format!(
        "HTTP lifecycle hook (/quit) for Container \"sidecar\" in Pod \"{pod_name}\" failed - error: \
         httpGet http://127.0.0.1:{closed}/quit: "
    );
    let failed = eventually("event FailedPreStopHook for the sidecar", 30, || {
        event(k, "FailedPreStopHook", "web", &http)
    });
    assert_eq!(failed["type"], "Warning");
    assert_eq!(failed["involvedObject"]["fieldPath"], "spec.containers{sidecar}");
    // Each stop was still announced.
    for c in ["app", "sidecar"] {
        let text = format!("Stopping container {c} by ContainerRecreateRequest hooks");
        eventually(&format!("event Killing for {c}"), 30, || {
            event(k, "Killing", "web", &text)
        });
    }
}
