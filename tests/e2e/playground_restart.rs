//! `kubectl kruise rollout restart` of a CloneSet on the real runtime (docs/env-from-metadata.md): the
//! CriPlayground (containerd, the playground in CRI mode, one agent per node), the real kubectl and
//! our plugin on PATH. The plugin sets the template annotation `kubectl.kubernetes.io/restartedAt`;
//! on pods the agent serves, every container restarts in place — same pod uids, new containerIDs, the
//! old containers stopped in containerd — and the CloneSet counts the pods updated. (Without an agent
//! the pods are recreated: `kubectl-kruise/tests/integration/plugin_rollout.rs`.) Skips without
//! containerd and root unless `KRUISE_REQUIRE_CRI` is set; the plugin must be built beside `kruise`.

use crate::common;
use crate::playground_crr_kubectl::kruise;
use crate::playground_envmeta::{event, run, status_of};
use common::agents::{CriPlayground, eventually, get};

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

const META: &str = "apps.kruise.io/runtime-containers-meta";
const RESTARTED_AT: &str = "kubectl.kubernetes.io/restartedAt";
const CONTAINERS: [&str; 2] = ["app", "sidecar"];

fn cloneset(image: &str) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": 2},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"terminationGracePeriodSeconds": 2, "containers": [
                    {"name": "app", "image": image}, {"name": "sidecar", "image": image}]}}}})
}

/// Pod uid → (container → containerID), once the CloneSet's two pods run with every container ready
/// and `check` holds for each.
fn pods(
    k: &Path,
    what: &str,
    seconds: u64,
    check: impl Fn(&Value) -> bool,
) -> BTreeMap<String, BTreeMap<String, String>> {
    eventually(what, seconds, || {
        let list = get(k, &["pods", "-l", "app=web"])?;
        let items = list["items"].as_array()?;
        let ok = items.len() == 2
            && items.iter().all(|p| {
                p["metadata"]["deletionTimestamp"].is_null()
                    && CONTAINERS.iter().all(|c| status_of(p, c)["ready"] == true)
                    && check(p)
            });
        ok.then(|| {
            items
                .iter()
                .map(|p| {
                    let ids = CONTAINERS
                        .iter()
                        .map(|c| {
                            let id = status_of(p, c)["containerID"].as_str().unwrap_or_default();
                            ((*c).to_owned(), id.to_owned())
                        })
                        .collect();
                    (p["metadata"]["uid"].as_str().unwrap_or_default().to_owned(), ids)
                })
                .collect()
        })
    })
}

fn in_place_ready(p: &Value) -> bool {
    p["status"]["conditions"].as_array().is_some_and(|c| {
        c.iter()
            .any(|c| c["type"] == "InPlaceUpdateReady" && c["status"] == "True")
    })
}

#[test]
fn rollout_restart_restarts_every_container_in_place_where_the_agent_serves_the_pods() {
    let Some(playground) = CriPlayground::start() else {
        return;
    };
    let (k, rt, runtime) = (playground.kubeconfig(), &playground.rt, &playground.runtime);
    run(
        k,
        &["apply", "-f", "-"],
        Some(&cloneset(&playground.image).to_string()),
    );
    let before = pods(k, "two pods, reported by the agent", 120, |p| {
        p["metadata"]["annotations"].get(META).is_some()
    });
    let revision = eventually("the CloneSet to settle", 60, || {
        let s = get(k, &["cloneset", "web"])?["status"].clone();
        (s["updatedReadyReplicas"] == 2).then(|| s["updateRevision"].clone())
    });

    let (ok, out, err) = kruise(k, &["rollout", "restart", "cloneset/web"]);
    assert!(ok, "{err}");
    assert_eq!(out, "cloneset.apps.kruise.io/web restarted\n");
    let cs = get(k, &["cloneset", "web"]).unwrap();
    let at = cs["spec"]["template"]["metadata"]["annotations"][RESTARTED_AT].clone();
    assert!(at.is_string(), "{cs}");
    assert!(
        cs["spec"]["template"]["spec"]["containers"][0]
            .get("env")
            .is_none(),
        "no env: {cs}"
    );

    let after = pods(k, "every container to restart in place", 180, |p| {
        let uid = p["metadata"]["uid"].as_str().unwrap_or_default();
        let Some(old) = before.get(uid) else { return false };
        p["metadata"]["annotations"][RESTARTED_AT] == at
            && in_place_ready(p)
            && CONTAINERS
                .iter()
                .all(|c| status_of(p, c)["containerID"].as_str() != Some(old[*c].as_str()))
    });
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>(),
        "the same pods"
    );
    for (uid, ids) in &after {
        for c in CONTAINERS {
            let old = before[uid][c].trim_start_matches("containerd://").to_owned();
            let status = rt.block_on(runtime.container_status(&old)).unwrap();
            assert_ne!(
                status.state(),
                kruise_cri::v1::ContainerState::ContainerRunning,
                "the old {c} of {uid} ({old}) was stopped; now {}",
                ids[c]
            );
        }
    }
    let list = get(k, &["pods", "-l", "app=web"]).unwrap();
    for p in list["items"].as_array().unwrap() {
        for c in CONTAINERS {
            assert_eq!(
                status_of(p, c)["restartCount"],
                1,
                "{c} of {}",
                p["metadata"]["name"]
            );
        }
        let report: Value =
            serde_json::from_str(p["metadata"]["annotations"][META].as_str().unwrap()).unwrap();
        for entry in report["containers"].as_array().unwrap() {
            assert_eq!(entry["restartedAt"], at, "{report}");
        }
    }
    eventually("the CloneSet to count both pods updated", 60, || {
        let s = get(k, &["cloneset", "web"])?["status"].clone();
        (s["updateRevision"] != revision
            && s["updatedReplicas"] == 2
            && s["updatedReadyReplicas"] == 2
            && s["replicas"] == 2)
            .then_some(())
    });
    let name = list["items"][0]["metadata"]["name"].as_str().unwrap().to_owned();
    let note = eventually("event Killing on a pod", 30, || event(k, "Killing", &name));
    assert!(note.contains("by container meta restarter"), "{note}");
}
