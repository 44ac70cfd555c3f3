//! kruise-rs end to end through real admission: the playground (simulated kube-apiserver calling
//! the stored webhook configurations over HTTPS) with kruise-rs installed as in a cluster.

use std::time::Duration;

use k8s_openapi::api::{apps::v1::Deployment, core::v1::Namespace, core::v1::Pod};
use kruise_rs::playground::{Handle, Options, start};
use kube::{
    Api, Client,
    api::{DeleteParams, DynamicObject, EvictParams, ListParams, Patch, PatchParams, PostParams},
    discovery::ApiResource,
};
use serde_json::json;

async fn playground() -> Handle {
    start(Options::default()).await.expect("playground starts")
}

async fn create_ns(client: &Client, name: &str, labels: serde_json::Value) {
    let ns: Namespace =
        serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
}

async fn create_yaml(
    client: &Client,
    ns: &str,
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
    body: serde_json::Value,
) {
    let ar = ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: format!("{group}/{version}"),
        kind: kind.into(),
        plural: plural.into(),
    };
    let obj: DynamicObject = serde_json::from_value(body).unwrap();
    let api: Api<DynamicObject> = if ns.is_empty() {
        Api::all_with(client.clone(), &ar)
    } else {
        Api::namespaced_with(client.clone(), ns, &ar)
    };
    api.create(&PostParams::default(), &obj).await.unwrap();
}

async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..200 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test]
async fn a_pod_in_a_labelled_namespace_gets_its_sidecar() {
    let pg = playground().await;
    let client = pg.client.clone();
    create_ns(&client, "shop", json!({"sidecar-injection": "enabled"})).await;
    let sidecar_set = json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet", "metadata": {"name": "log-agent"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "namespaceSelector": {"matchLabels": {"sidecar-injection": "enabled"}},
                 "containers": [{"name": "log-agent", "image": "fluent/fluent-bit:3.1"}]},
    });
    create_yaml(
        &client,
        "",
        "apps.kruise.io",
        "v1beta1",
        "SidecarSet",
        "sidecarsets",
        sidecar_set,
    )
    .await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "shop");
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
    }))
    .unwrap();
    let created = pods.create(&PostParams::default(), &pod).await.unwrap();
    let names: Vec<String> = created
        .spec
        .unwrap()
        .containers
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert!(names.contains(&"log-agent".to_string()), "{names:?}");
    // The same pod outside the labelled namespace is left alone.
    let other = Api::<Pod>::default_namespaced(client.clone())
        .create(&PostParams::default(), &pod)
        .await
        .unwrap();
    assert_eq!(other.spec.unwrap().containers.len(), 1);
    // The kubelet starts both containers.
    eventually("the pod to be Ready", || async {
        let p = pods.get("web").await.unwrap();
        let s = p.status.unwrap_or_default();
        s.container_statuses
            .unwrap_or_default()
            .iter()
            .filter(|c| c.ready)
            .count()
            == 2
    })
    .await;
    pg.shutdown().await;
}

#[tokio::test]
async fn deleting_a_protected_namespace_is_refused() {
    let pg = playground().await;
    let client = pg.client.clone();
    create_ns(
        &client,
        "payments",
        json!({"policy.kruise.io/delete-protection": "Always"}),
    )
    .await;
    let err = Api::<Namespace>::all(client.clone())
        .delete("payments", &DeleteParams::default())
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("{err:?}")
    };
    assert_eq!(status.code, 403);
    assert_eq!(
        status.message,
        "admission webhook \"vnamespace.kb.io\" denied the request: forbidden by ResourcesProtectionDeletion \
         for policy.kruise.io/delete-protection=Always"
    );
    // Still there, not terminating.
    let ns = Api::<Namespace>::all(client.clone())
        .get("payments")
        .await
        .unwrap();
    assert!(ns.metadata.deletion_timestamp.is_none());
    pg.shutdown().await;
}

#[tokio::test]
async fn an_eviction_past_the_budget_is_refused_with_429() {
    // Replacement pods take a second to become Ready, so the second eviction finds the budget spent.
    let options = Options {
        kubelet_delay: Duration::from_secs(1),
        ..Options::default()
    };
    let pg = start(options).await.unwrap();
    let client = pg.client.clone();
    let deploy: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "shop"}},
                 "template": {"metadata": {"labels": {"app": "shop"}},
                              "spec": {"containers": [{"name": "shop", "image": "nginx:1.27"}]}}},
    }))
    .unwrap();
    let pub_ = json!({
        "apiVersion": "policy.kruise.io/v1alpha1", "kind": "PodUnavailableBudget",
        "metadata": {"name": "shop"},
        "spec": {"selector": {"matchLabels": {"app": "shop"}}, "maxUnavailable": 1},
    });
    create_yaml(
        &client,
        "default",
        "policy.kruise.io",
        "v1alpha1",
        "PodUnavailableBudget",
        "podunavailablebudgets",
        pub_,
    )
    .await;
    let budget = ApiResource {
        group: "policy.kruise.io".into(),
        version: "v1alpha1".into(),
        api_version: "policy.kruise.io/v1alpha1".into(),
        kind: "PodUnavailableBudget".into(),
        plural: "podunavailablebudgets".into(),
    };
    let pubs: Api<DynamicObject> = Api::default_namespaced_with(client.clone(), &budget);
    eventually("kruise-rs to see the PUB", || async {
        pubs.get("shop").await.unwrap().data["status"]["observedGeneration"] == 1
    })
    .await;
    // The PUB first: its mutating webhook marks the pods created after it (kruise.io/related-pub).
    Api::<Deployment>::default_namespaced(client.clone())
        .patch("web", &PatchParams::apply("test"), &Patch::Apply(&deploy))
        .await
        .unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let ready = |p: &Pod| {
        p.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
    };
    eventually("three Ready pods", || async {
        let list = pods
            .list(&ListParams::default().labels("app=shop"))
            .await
            .unwrap();
        list.items.iter().filter(|p| ready(p)).count() == 3
    })
    .await;
    let list = pods
        .list(&ListParams::default().labels("app=shop"))
        .await
        .unwrap();
    for p in &list.items {
        assert!(
            p.metadata
                .labels
                .as_ref()
                .unwrap()
                .contains_key("pod-template-hash")
        );
    }
    eventually("the PUB status", || async {
        let p = pubs.get("shop").await.unwrap();
        p.data["status"]["unavailableAllowed"] == 1 && p.data["status"]["currentAvailable"] == 3
    })
    .await;
    let names: Vec<String> = list
        .items
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    pods.evict(&names[0], &EvictParams::default())
        .await
        .expect("first eviction allowed");
    // kube-rs retries 429s by default (until the replacement pod is Ready): ask once, as kubectl does.
    let mut config = kruise_playground::kubeconfig::config(&pg.playground.kubeconfig())
        .await
        .unwrap();
    config.default_retry = false;
    let once: Api<Pod> = Api::default_namespaced(Client::try_from(config).unwrap());
    let err = once.evict(&names[1], &EvictParams::default()).await.unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("{err:?}")
    };
    assert_eq!(status.code, 429, "{status:?}");
    assert!(
        status
            .message
            .starts_with("admission webhook \"vpodeviction.kb.io\" denied the request: "),
        "{}",
        status.message
    );
    assert!(
        pods.get_opt(&names[1]).await.unwrap().is_some(),
        "the refused pod stays"
    );
    pg.shutdown().await;
}

#[tokio::test]
async fn ordered_launch_priority_starts_containers_one_after_the_other() {
    let options = Options {
        kubelet_delay: Duration::from_millis(300),
        ..Options::default()
    };
    let pg = start(options).await.unwrap();
    let client = pg.client.clone();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "ordered", "annotations": {"apps.kruise.io/container-launch-priority": "Ordered"}},
        "spec": {"containers": [{"name": "first", "image": "busybox:1"}, {"name": "second", "image": "busybox:1"}]},
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let (mut blocked_seen, mut both_ready) = (false, false);
    for _ in 0..200 {
        let p = pods.get("ordered").await.unwrap();
        let statuses = p
            .status
            .unwrap_or_default()
            .container_statuses
            .unwrap_or_default();
        let status = |name: &str| statuses.iter().find(|c| c.name == name).cloned();
        let (first, second) = (status("first"), status("second"));
        let ready =
            |c: &Option<k8s_openapi::api::core::v1::ContainerStatus>| c.as_ref().is_some_and(|c| c.ready);
        assert!(
            !ready(&second) || ready(&first),
            "second started before first was ready"
        );
        let reason = second
            .as_ref()
            .and_then(|c| c.state.as_ref())
            .and_then(|s| s.waiting.as_ref())
            .and_then(|w| w.reason.clone());
        blocked_seen |= reason.as_deref() == Some("CreateContainerConfigError");
        if ready(&first) && ready(&second) {
            both_ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(blocked_seen, "the second container waited on its barrier key");
    assert!(both_ready, "both containers end up ready");
    pg.shutdown().await;
}
