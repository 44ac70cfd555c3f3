//! The simulated data plane: nodes, scheduler, kubelet and the Deployment/ReplicaSet controllers,
//! checked against what a real cluster reports.

use crate::common;

use std::time::Duration;

use k8s_openapi::api::{
    apps::v1::{Deployment, ReplicaSet},
    core::v1::{ConfigMap, Node, Pod},
};
use kruise_playground::PlaygroundOptions;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

async fn start() -> kruise_playground::Playground {
    common::start_with(PlaygroundOptions {
        nodes: 2,
        kubelet_delay: Duration::from_millis(200),
        ..PlaygroundOptions::default()
    })
    .await
}

async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..100 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

fn condition(p: &Pod, kind: &str) -> Option<String> {
    p.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
        .map(|c| c.status.clone())
}

#[tokio::test]
async fn nodes_are_ready_and_pods_scheduled_by_selector_and_taints() {
    let pg = start().await;
    let client = pg.client().await.unwrap();
    let nodes: Api<Node> = Api::all(client.clone());
    eventually("two nodes", || async {
        nodes.list(&ListParams::default()).await.unwrap().items.len() == 2
    })
    .await;
    let node = nodes.get("playground-node-1").await.unwrap();
    let ready = node.status.unwrap().conditions.unwrap();
    assert!(ready.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
    nodes
        .patch(
            "playground-node-2",
            &PatchParams::default(),
            &Patch::Merge(json!({
            "spec": {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]}})),
        )
        .await
        .unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let create = |name: &str, spec: serde_json::Value| {
        let mut spec = spec;
        spec["containers"] = json!([{"name": "c", "image": "nginx:1.27"}]);
        serde_json::from_value::<Pod>(json!({"metadata": {"name": name}, "spec": spec})).unwrap()
    };
    let to_two = json!({"nodeSelector": {"kubernetes.io/hostname": "playground-node-2"}});
    pods.create(&PostParams::default(), &create("untolerated", to_two.clone()))
        .await
        .unwrap();
    let mut tolerated = to_two;
    tolerated["tolerations"] =
        json!([{"key": "dedicated", "operator": "Equal", "value": "x", "effect": "NoSchedule"}]);
    pods.create(&PostParams::default(), &create("tolerated", tolerated))
        .await
        .unwrap();
    let affinity = json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "NotIn",
                                                     "values": ["playground-node-1"]}]}]}}}});
    pods.create(&PostParams::default(), &create("nowhere", affinity))
        .await
        .unwrap();
    eventually("tolerated to run on node 2", || async {
        let p = pods.get("tolerated").await.unwrap();
        p.spec.unwrap().node_name.as_deref() == Some("playground-node-2")
            && p.status.unwrap().phase.as_deref() == Some("Running")
    })
    .await;
    for name in ["untolerated", "nowhere"] {
        let p = pods.get(name).await.unwrap();
        assert_eq!(p.spec.unwrap().node_name, None, "{name} stays pending");
        assert_eq!(p.status.unwrap().phase.as_deref(), Some("Pending"));
    }
    pg.shutdown().await;
}

#[tokio::test]
async fn kubelet_reports_containers_gates_restarts_and_config_errors() {
    let pg = start().await;
    let client = pg.client().await.unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "p"},
        "spec": {"readinessGates": [{"conditionType": "example.com/gate"}],
                 "containers": [{"name": "main", "image": "nginx:1.27"},
                                {"name": "waits", "image": "busybox:1.36", "env": [{"name": "X",
                                  "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "go"}}}]}]},
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    eventually("main to run, waits to be blocked", || async {
        let p = pods.get("p").await.unwrap();
        let statuses = p
            .status
            .clone()
            .unwrap_or_default()
            .container_statuses
            .unwrap_or_default();
        statuses.iter().any(|c| c.name == "main" && c.ready)
            && statuses.iter().any(|c| {
                c.name == "waits"
                    && c.state
                        .as_ref()
                        .and_then(|s| s.waiting.as_ref())
                        .and_then(|w| w.reason.as_deref())
                        == Some("CreateContainerConfigError")
            })
    })
    .await;
    let p = pods.get("p").await.unwrap();
    let status = p.status.clone().unwrap();
    assert_eq!(status.phase.as_deref(), Some("Running"));
    assert_eq!(condition(&p, "PodScheduled").as_deref(), Some("True"));
    assert_eq!(condition(&p, "Initialized").as_deref(), Some("True"));
    assert_eq!(condition(&p, "ContainersReady").as_deref(), Some("False"));
    let main = status
        .container_statuses
        .unwrap()
        .into_iter()
        .find(|c| c.name == "main")
        .unwrap();
    assert!(main.image_id.starts_with("nginx@sha256:") && main.image_id.len() == "nginx@sha256:".len() + 64);
    assert_eq!(main.started, Some(true));
    // The key appears: the container starts; the gate still holds Ready.
    let cm: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "cfg"}, "data": {"go": "1"}})).unwrap();
    Api::<ConfigMap>::default_namespaced(client.clone())
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();
    eventually("containers ready", || async {
        condition(&pods.get("p").await.unwrap(), "ContainersReady").as_deref() == Some("True")
    })
    .await;
    assert_eq!(
        condition(&pods.get("p").await.unwrap(), "Ready").as_deref(),
        Some("False")
    );
    pods.patch_status(
        "p",
        &PatchParams::default(),
        &Patch::Strategic(json!({"status": {"conditions": [
        {"type": "example.com/gate", "status": "True"}]}})),
    )
    .await
    .unwrap();
    eventually("Ready once the gate is True", || async {
        condition(&pods.get("p").await.unwrap(), "Ready").as_deref() == Some("True")
    })
    .await;
    // In-place image change: the container restarts with the new image.
    pods.patch(
        "p",
        &PatchParams::default(),
        &Patch::Strategic(json!({"spec": {"containers": [
        {"name": "main", "image": "nginx:1.28"}]}})),
    )
    .await
    .unwrap();
    eventually("main restarted with nginx:1.28", || async {
        let p = pods.get("p").await.unwrap();
        let main = p
            .status
            .unwrap()
            .container_statuses
            .unwrap()
            .into_iter()
            .find(|c| c.name == "main")
            .unwrap();
        main.image == "nginx:1.28"
            && main.restart_count == 1
            && main.ready
            && main.image_id.starts_with("nginx@sha256:")
            && main.last_state.and_then(|s| s.terminated).is_some()
    })
    .await;
    pg.shutdown().await;
}

/// The main container's status of pod `name`.
async fn main_status(pods: &Api<Pod>, name: &str) -> k8s_openapi::api::core::v1::ContainerStatus {
    let p = pods.get(name).await.unwrap();
    p.status
        .and_then(|s| s.container_statuses)
        .unwrap_or_default()
        .into_iter()
        .find(|c| c.name == "main")
        .unwrap_or_default()
}

#[tokio::test]
async fn an_image_on_an_invalid_registry_is_never_pulled_until_changed_to_a_real_one() {
    let pg = start().await;
    let client = pg.client().await.unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "p"},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]}}))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    eventually("main ready", || async { main_status(&pods, "p").await.ready }).await;
    let image =
        |image: &str| Patch::Strategic(json!({"spec": {"containers": [{"name": "main", "image": image}]}}));
    pods.patch("p", &PatchParams::default(), &image("registry.invalid/nginx:9"))
        .await
        .unwrap();
    eventually("main waiting in ImagePullBackOff", || async {
        let main = main_status(&pods, "p").await;
        let waiting = main.state.and_then(|s| s.waiting).unwrap_or_default();
        !main.ready
            && waiting.reason.as_deref() == Some("ImagePullBackOff")
            && waiting.message.as_deref() == Some("Back-off pulling image \"registry.invalid/nginx:9\"")
            && main.last_state.and_then(|s| s.terminated).is_some()
    })
    .await;
    // Well past the start delay it is still not pulled.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let p = pods.get("p").await.unwrap();
    assert_eq!(condition(&p, "Ready").as_deref(), Some("False"));
    assert_eq!(p.status.unwrap().phase.as_deref(), Some("Running"));
    pods.patch("p", &PatchParams::default(), &image("nginx:1.28"))
        .await
        .unwrap();
    eventually("main ready on nginx:1.28", || async {
        let main = main_status(&pods, "p").await;
        main.ready && main.image == "nginx:1.28" && main.image_id.starts_with("nginx@sha256:")
    })
    .await;
    pg.shutdown().await;
}

#[tokio::test]
async fn deployments_make_replica_sets_make_ready_pods() {
    let pg = start().await;
    let client = pg.client().await.unwrap();
    let deploy: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}},
    }))
    .unwrap();
    let deploys: Api<Deployment> = Api::default_namespaced(client.clone());
    deploys.create(&PostParams::default(), &deploy).await.unwrap();
    eventually("2 available", || async {
        deploys
            .get("web")
            .await
            .unwrap()
            .status
            .unwrap_or_default()
            .available_replicas
            == Some(2)
    })
    .await;
    let sets = Api::<ReplicaSet>::default_namespaced(client.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert_eq!(sets.len(), 1);
    let hash = sets[0].metadata.labels.clone().unwrap()["pod-template-hash"].clone();
    assert_eq!(
        sets[0].metadata.name.as_deref(),
        Some(format!("web-{hash}").as_str())
    );
    let pods = Api::<Pod>::default_namespaced(client.clone())
        .list(&ListParams::default().labels(&format!("pod-template-hash={hash}")))
        .await
        .unwrap()
        .items;
    assert_eq!(pods.len(), 2);
    for p in &pods {
        assert!(
            p.metadata
                .name
                .as_ref()
                .unwrap()
                .starts_with(&format!("web-{hash}-"))
        );
        assert_eq!(condition(p, "Ready").as_deref(), Some("True"));
    }
    // A new template: a new ReplicaSet takes the replicas, the old one goes to zero.
    deploys
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"template": {"spec": {
            "containers": [{"name": "web", "image": "nginx:1.28"}]}}}})),
        )
        .await
        .unwrap();
    eventually("the rollout", || async {
        let sets = Api::<ReplicaSet>::default_namespaced(client.clone())
            .list(&ListParams::default())
            .await
            .unwrap()
            .items;
        let d = deploys.get("web").await.unwrap().status.unwrap_or_default();
        sets.len() == 2
            && sets.iter().any(|s| s.spec.replicas == Some(0))
            && d.updated_replicas == Some(2)
            && d.available_replicas == Some(2)
    })
    .await;
    pg.shutdown().await;
}
