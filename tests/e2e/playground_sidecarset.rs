//! SidecarSet end to end in the playground, driven with the real kubectl: the pods of a CloneSet or a
//! Deployment get the sidecar at creation; a new sidecar image reaches them in place (same pods, the
//! sidecar restarted once, the app container never, at most two pod writes each), never more than
//! maxUnavailable not ready at once (checked on every state a pod watch sees), and the partition holds
//! until it is lifted; a hot upgrade flips the working twin. kubectl must be on PATH: without it this
//! test fails.

use crate::common;

use std::{collections::BTreeMap, time::Duration};

use common::playground_sidecarset::{
    Env, NS, SET, clone_set, image_of, kubectl, ready, restarts, sidecar_set, uid,
};
use k8s_openapi::api::apps::v1::{ControllerRevision, Deployment};
use kube::{Api, api::ListParams};
use serde_json::{Value, json};

#[tokio::test]
async fn a_new_sidecar_image_reaches_running_pods_in_place_within_max_unavailable_and_partition() {
    let env = Env::start().await;
    let k = env.kubeconfig.clone();
    env.apply(&sidecar_set(
        "web",
        "agent:1.0",
        json!({"maxUnavailable": 1, "partition": 1}),
    ))
    .await;
    env.apply(&clone_set(4)).await;
    env.settled(4, "agent:1.0").await;
    let before = env.pods_by_uid().await;
    let requests = env.requests();

    let watch = env.watch_not_ready();
    env.set_agent("agent:2.0", json!({})).await;
    env.wait("3 pods updated, 1 kept by the partition", 60, async || {
        env.counts().await == (4, 3, 4, 3)
    })
    .await;
    // Let any stray fourth update show before checking.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pods = env.pods().await;
    let on = |image: &str| pods.iter().filter(|p| image_of(p, "agent") == image).count();
    assert_eq!((on("agent:2.0"), on("agent:1.0")), (3, 1), "the partition holds");
    for pod in &pods {
        let old = before
            .get(&uid(pod))
            .expect("the same pods: updated in place, not recreated");
        let bumped = i64::from(image_of(pod, "agent") == "agent:2.0");
        assert_eq!(restarts(pod, "agent"), restarts(old, "agent") + bumped);
        assert_eq!(
            restarts(pod, "main"),
            restarts(old, "main"),
            "the app container never restarts"
        );
        assert_eq!(image_of(pod, "main"), "nginx:1.0");
    }

    env.patch(
        "sidecarset",
        SET,
        json!({"spec": {"updateStrategy": {"partition": 0}}}),
    )
    .await;
    env.wait("all 4 pods updated", 60, async || {
        env.counts().await == (4, 4, 4, 4)
    })
    .await;
    let pods = env.pods().await;
    assert!(pods.iter().all(|p| image_of(p, "agent") == "agent:2.0"));
    assert_eq!(pods.len(), 4);
    assert!(pods.iter().all(|p| before.contains_key(&uid(p))));
    assert!(
        watch.most() <= 1,
        "never more than maxUnavailable (1) pods not ready; saw {}",
        watch.most()
    );
    // Writes per upgraded pod: one pod patch (image and annotations) by the controller; the pods/status
    // writes are the controller's `SidecarSetUpgradable` condition and the kubelet's restarts.
    let (pod_writes, status_writes) = env.pod_writes_since(&requests);
    println!("4 pods upgraded in place: {pod_writes} pod writes, {status_writes} pods/status writes");
    assert!(
        pod_writes <= 2 * 4,
        "at most 2 pod writes per upgraded pod beyond status writes; saw {pod_writes} for 4 pods"
    );
    assert_eq!(env.progressing().await, ("True".into(), "Complete".into()));
    // One ControllerRevision per sidecar spec, in kruise-rs's namespace; the pods record the latest.
    let revisions: Api<ControllerRevision> = Api::all(env.pg.client.clone());
    let revisions = revisions
        .list(&ListParams::default().labels("kruise.io/sidecarset-name=log-agent"))
        .await
        .unwrap()
        .items;
    assert_eq!(revisions.len(), 2);
    let latest = env.status().await["latestRevision"].as_str().unwrap().to_string();
    let newest = revisions.iter().max_by_key(|r| r.revision).unwrap();
    assert_eq!(newest.metadata.name.as_deref(), Some(latest.as_str()));
    for pod in env.pods().await {
        let records: Value = serde_json::from_str(
            pod["metadata"]["annotations"]["kruise.io/sidecarset-hash"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(records["log-agent"]["controllerRevision"], latest.as_str());
    }
    let table = kubectl(&k, &["get", "sidecarset", SET], None).await;
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(&row[..4], ["log-agent", "4", "4", "4"], "{table}");
}

#[tokio::test]
async fn the_pods_of_a_deployment_are_injected_and_upgraded_in_place() {
    let mut env = Env::start().await;
    env.app = "api".into();
    env.apply(&sidecar_set("api", "agent:1.0", json!({"maxUnavailable": 1})))
        .await;
    env.apply(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "api", "namespace": NS},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "api"}},
            "template": {"metadata": {"labels": {"app": "api"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.0"}]}}}}))
        .await;
    env.settled(3, "agent:1.0").await;
    let before = env.pods_by_uid().await;
    let watch = env.watch_not_ready();
    env.set_agent("agent:2.0", json!({})).await;
    env.settled(3, "agent:2.0").await;
    for pod in env.pods().await {
        let old = before.get(&uid(&pod)).expect("the same pods");
        assert_eq!(restarts(&pod, "agent"), restarts(old, "agent") + 1);
        assert_eq!(restarts(&pod, "main"), restarts(old, "main"));
        assert!(ready(&pod));
    }
    assert!(watch.most() <= 1, "saw {} pods not ready at once", watch.most());
    // The Deployment never noticed: the same ReplicaSet, all replicas available.
    let deployment = Api::<Deployment>::namespaced(env.pg.client.clone(), NS)
        .get("api")
        .await
        .unwrap();
    let status = deployment.status.unwrap_or_default();
    assert_eq!((status.replicas, status.available_replicas), (Some(3), Some(3)));
    assert_eq!(env.progressing().await, ("True".into(), "Complete".into()));
}

fn working_twin(pod: &Value) -> String {
    let raw = pod["metadata"]["annotations"]["kruise.io/sidecarset-working-hotupgrade-container"]
        .as_str()
        .unwrap_or("{}");
    let map: BTreeMap<String, String> = serde_json::from_str(raw).unwrap_or_default();
    map.get("agent").cloned().unwrap_or_default()
}

/// Every pod: `working` is the working twin on `image`, the other twin on the empty image, all ready.
fn hot_state(pods: &[Value], working: &str, image: &str) -> bool {
    let idle = if working == "agent-1" {
        "agent-2"
    } else {
        "agent-1"
    };
    pods.iter().all(|p| {
        ready(p)
            && working_twin(p) == working
            && image_of(p, working) == image
            && image_of(p, idle) == "agent-empty:1"
    })
}

#[tokio::test]
async fn a_hot_upgrade_flips_the_working_twin_twice_without_restarting_the_app() {
    let env = Env::start().await;
    let hot = |image: &str| {
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
            "metadata": {"name": SET},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                "containers": [{"name": "agent", "image": image,
                    "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "agent-empty:1"}}],
                "updateStrategy": {"maxUnavailable": 1}}})
    };
    env.apply(&hot("agent:1.0")).await;
    env.apply(&clone_set(2)).await;
    env.wait("2 ready pods, agent-1 working", 60, async || {
        let pods = env.pods().await;
        pods.len() == 2 && hot_state(&pods, "agent-1", "agent:1.0")
    })
    .await;
    let before: BTreeMap<String, i64> = env
        .pods()
        .await
        .iter()
        .map(|p| (uid(p), restarts(p, "main")))
        .collect();
    let watch = env.watch_not_ready();
    for (image, working) in [("agent:2.0", "agent-2"), ("agent:3.0", "agent-1")] {
        env.apply(&hot(image)).await;
        env.wait(
            &format!("{working} working on {image}, the other twin empty"),
            60,
            async || hot_state(&env.pods().await, working, image),
        )
        .await;
        env.wait("the status counts the pods", 30, async || {
            env.counts().await == (2, 2, 2, 2)
        })
        .await;
    }
    for p in &env.pods().await {
        assert_eq!(
            before.get(&uid(p)),
            Some(&restarts(p, "main")),
            "same pods, the app never restarted"
        );
    }
    assert!(watch.most() <= 1, "never more than maxUnavailable not ready");
}
