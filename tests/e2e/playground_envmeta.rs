//! In-place update of env fed from pod metadata (docs/env-from-metadata.md), end to end on the real
//! runtime: `kruise playground --runtime containerd`, one `kruise daemon` per node, the real kubectl. A
//! CloneSet whose `app` container reads annotation `demo/env` into env: once the agent reports the pod,
//! changing the template annotation updates the pod in place — same uid, `app` restarted with the new
//! value (seen with `env` through CRI), `sidecar` untouched. Without an agent the same change recreates
//! the pod. The CRI test skips without containerd and root unless `KRUISE_REQUIRE_CRI` is set.

use crate::common;
use common::agents::{CriPlayground, eventually, get};

use std::path::Path;
use std::time::Duration;

use common::kubectl::{kubectl, serve};
use serde_json::{Value, json};

const META: &str = "apps.kruise.io/runtime-containers-meta";

fn cloneset(image: &str, value: &str) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "updateStrategy": {"type": "InPlaceIfPossible"},
            "template": {"metadata": {"labels": {"app": "web"}, "annotations": {"demo/env": value}},
                "spec": {"terminationGracePeriodSeconds": 2, "containers": [
                    {"name": "app", "image": image, "env": [{"name": "DEMO",
                        "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['demo/env']"}}}]},
                    {"name": "sidecar", "image": image}]}}}})
}

pub(crate) fn run(k: &Path, args: &[&str], input: Option<&str>) {
    let (ok, _, err) = kubectl(k, args, input);
    assert!(ok, "kubectl {args:?}: {err}");
}

pub(crate) fn status_of<'a>(pod: &'a Value, container: &str) -> &'a Value {
    pod["status"]["containerStatuses"]
        .as_array()
        .and_then(|s| s.iter().find(|c| c["name"] == container))
        .unwrap_or(&Value::Null)
}

/// The CloneSet's only pod once both containers are ready (and `check` holds).
fn the_pod(k: &Path, what: &str, seconds: u64, check: impl Fn(&Value) -> bool) -> Value {
    eventually(what, seconds, || {
        let list = get(k, &["pods", "-l", "app=web"])?;
        let items = list["items"].as_array()?;
        let [pod] = items.as_slice() else { return None };
        let ready = ["app", "sidecar"]
            .iter()
            .all(|c| status_of(pod, c)["ready"] == true);
        (ready && pod["metadata"]["deletionTimestamp"].is_null() && check(pod)).then(|| pod.clone())
    })
}

/// The note of an event with `reason` about object `name` (core or events.k8s.io events).
pub(crate) fn event(k: &Path, reason: &str, name: &str) -> Option<String> {
    let list = get(k, &["events", "-A"])?;
    list["items"].as_array()?.iter().find_map(|e| {
        let about = e["involvedObject"]["name"]
            .as_str()
            .or(e["regarding"]["name"].as_str());
        (e["reason"] == reason && about == Some(name)).then(|| {
            e["message"]
                .as_str()
                .or(e["note"].as_str())
                .unwrap_or_default()
                .to_owned()
        })
    })
}

fn set_annotation(k: &Path, value: &str) {
    let patch = json!({"spec": {"template": {"metadata": {"annotations": {"demo/env": value}}}}});
    run(
        k,
        &[
            "patch",
            "cloneset",
            "web",
            "--type",
            "merge",
            "-p",
            &patch.to_string(),
        ],
        None,
    );
}

#[test]
fn an_annotation_read_by_env_updates_in_place_with_the_agent() {
    let Some(playground) = CriPlayground::start() else {
        return;
    };
    let (k, rt, runtime) = (playground.kubeconfig(), &playground.rt, &playground.runtime);
    let image = &playground.image;
    run(k, &["apply", "-f", "-"], Some(&cloneset(image, "v1").to_string()));
    // The agent serves the pod once its report is there.
    let before = the_pod(k, "the pod to run, reported by the agent", 90, |p| {
        p["metadata"]["annotations"].get(META).is_some()
    });
    let uid = before["metadata"]["uid"].as_str().unwrap().to_owned();
    let name = before["metadata"]["name"].as_str().unwrap().to_owned();
    let app_before = status_of(&before, "app")["containerID"]
        .as_str()
        .unwrap()
        .to_owned();
    let sidecar_before = status_of(&before, "sidecar")["containerID"]
        .as_str()
        .unwrap()
        .to_owned();

    set_annotation(k, "v2");
    let after = the_pod(k, "app to restart with the new value", 120, |p| {
        status_of(p, "app")["containerID"] != app_before.as_str()
            && p["status"]["conditions"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["type"] == "InPlaceUpdateReady" && c["status"] == "True")
            })
    });
    assert_eq!(after["metadata"]["uid"], uid.as_str(), "the same pod");
    assert_eq!(after["metadata"]["name"], name.as_str());
    assert_eq!(after["metadata"]["annotations"]["demo/env"], "v2");
    assert_eq!(status_of(&after, "app")["restartCount"], 1);
    assert_eq!(
        status_of(&after, "sidecar")["containerID"],
        sidecar_before.as_str(),
        "sidecar kept running"
    );
    assert_eq!(status_of(&after, "sidecar")["restartCount"], 0);
    let app_id = status_of(&after, "app")["containerID"]
        .as_str()
        .unwrap()
        .to_owned();
    let bare = app_id.trim_start_matches("containerd://").to_owned();
    let env = rt
        .block_on(runtime.exec_sync(&bare, &["env"], Duration::from_secs(5)))
        .unwrap();
    let env = String::from_utf8_lossy(&env.stdout).into_owned();
    assert!(env.lines().any(|l| l == "DEMO=v2"), "{env}");
    let report: Value =
        serde_json::from_str(after["metadata"]["annotations"][META].as_str().unwrap()).unwrap();
    assert_eq!(
        report["containers"][0]["containerID"],
        app_id.as_str(),
        "{report}"
    );
    eventually("the CloneSet to count the pod updated", 60, || {
        let cs = get(k, &["cloneset", "web"])?;
        let s = &cs["status"];
        (s["updatedReplicas"] == 1 && s["updatedReadyReplicas"] == 1 && s["replicas"] == 1).then_some(())
    });
    let note = eventually("event Killing on the pod", 30, || event(k, "Killing", &name));
    assert!(note.contains("by container meta restarter"), "{note}");
}

#[test]
fn without_an_agent_an_annotation_read_by_env_recreates_the_pod() {
    let served = serve(&[]);
    let k = served.kubeconfig.as_path();
    run(
        k,
        &["apply", "-f", "-"],
        Some(&cloneset("nginx:1.27", "v1").to_string()),
    );
    let before = the_pod(k, "the pod to run", 60, |_| true);
    let uid = before["metadata"]["uid"].as_str().unwrap().to_owned();
    assert!(before["metadata"]["annotations"].get(META).is_none());
    set_annotation(k, "v2");
    let after = the_pod(k, "a new pod", 60, |p| p["metadata"]["uid"] != uid.as_str());
    assert_eq!(after["metadata"]["annotations"]["demo/env"], "v2");
    let note = eventually("event RecreateForEnvFromMetadata", 30, || {
        event(k, "RecreateForEnvFromMetadata", "web")
    });
    assert!(note.contains("[\"app\"]"), "{note}");
}
