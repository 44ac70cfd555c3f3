//! Discovery documents, pod subresources, JSON patch, and kube-runtime's watcher (list+watch and
//! streaming lists) against the playground.

use crate::common;

use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, EvictParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use serde_json::json;

#[tokio::test]
async fn discovery_documents() {
    let pg = common::start().await;
    let client = pg.client().await.unwrap();
    let (code, v1) = common::raw(&client, "GET", "/api/v1", "", "").await;
    assert_eq!(code, 200);
    assert_eq!(
        (v1["kind"].as_str(), v1["groupVersion"].as_str()),
        (Some("APIResourceList"), Some("v1"))
    );
    let find = |name: &str| {
        v1["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap()
    };
    let pods = find("pods");
    assert_eq!(pods["shortNames"], json!(["po"]));
    assert_eq!(pods["namespaced"], true);
    assert_eq!(pods["categories"], json!(["all"]));
    assert_eq!(find("pods/status")["verbs"], json!(["get", "patch", "update"]));
    let eviction = find("pods/eviction");
    assert_eq!(
        (eviction["group"].as_str(), eviction["kind"].as_str()),
        (Some("policy"), Some("Eviction"))
    );
    assert_eq!(find("pods/binding")["verbs"], json!(["create"]));
    assert!(
        !find("namespaces")["verbs"]
            .as_array()
            .unwrap()
            .contains(&json!("deletecollection"))
    );

    let (_, apps) = common::raw(&client, "GET", "/apis/apps/v1", "", "").await;
    let scale = apps["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "deployments/scale")
        .unwrap()
        .clone();
    assert_eq!(
        (scale["group"].as_str(), scale["kind"].as_str()),
        (Some("autoscaling"), Some("Scale"))
    );

    let req = http::Request::get("/apis")
        .header(
            "accept",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
        )
        .body(kube::client::Body::empty())
        .unwrap();
    let groups: serde_json::Value = client.request(req.map(|_| Vec::new())).await.unwrap();
    assert_eq!(
        groups["kind"], "APIGroupList",
        "aggregated discovery falls back to the plain type"
    );
    let names: Vec<&str> = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    for g in [
        "apps",
        "policy",
        "coordination.k8s.io",
        "apiextensions.k8s.io",
        "admissionregistration.k8s.io",
    ] {
        assert!(names.contains(&g), "{g} in {names:?}");
    }
    let (code, _) = common::raw(&client, "GET", "/apis/unknown.example.com", "", "").await;
    assert_eq!(code, 404);
    let version: serde_json::Value = client
        .request(http::Request::get("/version").body(Vec::new()).unwrap())
        .await
        .unwrap();
    assert_eq!(version["major"], "1");
    pg.shutdown().await;
}

#[tokio::test]
async fn binding_eviction_and_json_patch() {
    let options = kruise_playground::PlaygroundOptions {
        pod_termination_delay: std::time::Duration::from_secs(2),
        ..Default::default()
    };
    let pg = common::start_with(options).await;
    let client = pg.client().await.unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i"}]}}))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}});
    let (code, status) = common::raw(
        &client,
        "POST",
        "/api/v1/namespaces/default/pods/p/binding",
        "application/json",
        &binding.to_string(),
    )
    .await;
    assert_eq!((code, status["status"].as_str()), (201, Some("Success")));
    assert_eq!(
        pods.get("p").await.unwrap().spec.unwrap().node_name.as_deref(),
        Some("n1")
    );

    let patch: json_patch::Patch = serde_json::from_value(json!([
        {"op": "add", "path": "/metadata/labels", "value": {"a": "b"}},
        {"op": "test", "path": "/spec/nodeName", "value": "n1"},
    ]))
    .unwrap();
    let patched = pods
        .patch("p", &PatchParams::default(), &Patch::Json::<()>(patch))
        .await
        .unwrap();
    assert_eq!(patched.metadata.labels.unwrap()["a"], "b");
    let failing: json_patch::Patch =
        serde_json::from_value(json!([{"op": "test", "path": "/spec/nodeName", "value": "other"}])).unwrap();
    let err = pods
        .patch("p", &PatchParams::default(), &Patch::Json::<()>(failing))
        .await
        .unwrap_err();
    assert!(matches!(err, kube::Error::Api(s) if s.code == 422));

    pods.evict("p", &EvictParams::default()).await.unwrap();
    let evicted = pods.get("p").await.unwrap();
    assert!(
        evicted.metadata.deletion_timestamp.is_some(),
        "a bound pod terminates gracefully"
    );
    common::eventually("the evicted pod to go", || async {
        pods.get_opt("p").await.unwrap().is_none().then_some(())
    })
    .await;
    pg.shutdown().await;
}

#[tokio::test]
async fn kube_runtime_watcher_lists_then_watches() {
    let pg = common::start().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(pg.client().await.unwrap());
    let cm = |n: &str| serde_json::from_value::<ConfigMap>(json!({"metadata": {"name": n}})).unwrap();
    cms.create(&PostParams::default(), &cm("before")).await.unwrap();
    for config in [
        watcher::Config::default(),
        watcher::Config::default().streaming_lists(),
    ] {
        let mut events = watcher(cms.clone(), config).boxed();
        let mut initial = vec![];
        loop {
            match events.try_next().await.unwrap().unwrap() {
                watcher::Event::Init => {}
                watcher::Event::InitApply(o) => initial.push(o.metadata.name.unwrap()),
                watcher::Event::InitDone => break,
                other => panic!("unexpected {other:?} during the initial list"),
            }
        }
        assert!(initial.contains(&"before".to_string()), "{initial:?}");
        let name = format!("after-{}", initial.len());
        cms.create(&PostParams::default(), &cm(&name)).await.unwrap();
        match events.try_next().await.unwrap().unwrap() {
            watcher::Event::Apply(o) => assert_eq!(o.metadata.name.as_deref(), Some(name.as_str())),
            other => panic!("expected the new object, got {other:?}"),
        }
    }
    pg.shutdown().await;
}

#[tokio::test]
async fn metadata_only_clients() {
    let pg = common::start().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(pg.client().await.unwrap());
    let cm = serde_json::from_value::<ConfigMap>(
        json!({"metadata": {"name": "m", "labels": {"a": "b"}}, "data": {"k": "v"}}),
    );
    cms.create(&PostParams::default(), &cm.unwrap()).await.unwrap();
    let one = cms.get_metadata("m").await.unwrap();
    assert_eq!(
        one.types.map(|t| t.kind).as_deref(),
        Some("PartialObjectMetadata")
    );
    assert_eq!(one.metadata.labels.unwrap()["a"], "b");
    let list = cms.list_metadata(&Default::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    let metadata: Api<kube::core::PartialObjectMeta<ConfigMap>> =
        Api::default_namespaced(pg.client().await.unwrap());
    let mut events = watcher(metadata, watcher::Config::default()).boxed();
    assert!(matches!(
        events.try_next().await.unwrap(),
        Some(watcher::Event::Init)
    ));
    match events.try_next().await.unwrap() {
        Some(watcher::Event::InitApply(o)) => assert_eq!(o.metadata.name.as_deref(), Some("m")),
        other => panic!("expected the object's metadata, got {other:?}"),
    }
    pg.shutdown().await;
}
