//! Fidelity of create/get/list/update/delete through a kube-rs client, and the exact Status bodies
//! of kube-apiserver's errors.

use crate::common;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

fn cm(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"k": "v"}})).unwrap()
}

fn api_error(e: kube::Error) -> kube::core::Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn create_stamps_metadata_and_generate_name() {
    let pg = common::start().await;
    let client = pg.client().await.unwrap();
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let mut with_prefix = cm("");
    with_prefix.metadata.name = None;
    with_prefix.metadata.generate_name = Some("cfg-".into());
    let created = cms.create(&PostParams::default(), &with_prefix).await.unwrap();
    let name = created.metadata.name.clone().unwrap();
    assert_eq!(name.len(), 9, "{name}");
    assert!(
        name[4..]
            .bytes()
            .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b)),
        "{name}"
    );
    assert_eq!(created.metadata.namespace.as_deref(), Some("default"));
    assert_eq!(created.metadata.uid.as_ref().map(String::len), Some(36));
    assert!(created.metadata.creation_timestamp.is_some());
    assert_eq!(created.metadata.generation, None, "configmaps have no generation");
    let rv: u64 = created
        .metadata
        .resource_version
        .clone()
        .unwrap()
        .parse()
        .unwrap();
    let got = cms.get(&name).await.unwrap();
    assert_eq!(got, created);
    let list = cms.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items, vec![created]);
    let list_rv: u64 = list.metadata.resource_version.unwrap().parse().unwrap();
    assert!(list_rv >= rv);

    let deployments: Api<Deployment> = Api::default_namespaced(client);
    let d: Deployment = serde_json::from_value(json!({"metadata": {"name": "d"}, "spec": {"replicas": 1,
        "selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]}}}}))
    .unwrap();
    let d = deployments.create(&PostParams::default(), &d).await.unwrap();
    assert_eq!(d.metadata.generation, Some(1));
    let spec = d.spec;
    assert_eq!(
        spec.revision_history_limit,
        Some(10),
        "defaulted like kube-apiserver"
    );
    let pod_spec = spec.template.spec.unwrap();
    assert_eq!(pod_spec.restart_policy.as_deref(), Some("Always"));
    assert_eq!(
        pod_spec.containers[0].image_pull_policy.as_deref(),
        Some("Always")
    );
    pg.shutdown().await;
}

#[tokio::test]
async fn not_found_already_exists_conflict_bodies() {
    let pg = common::start().await;
    let client = pg.client().await.unwrap();
    let (code, body) = common::raw(
        &client,
        "GET",
        "/api/v1/namespaces/default/configmaps/nope",
        "",
        "",
    )
    .await;
    assert_eq!(code, 404);
    assert_eq!(
        body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "configmaps \"nope\" not found", "reason": "NotFound",
            "details": {"name": "nope", "kind": "configmaps"}, "code": 404})
    );
    let (_, body) = common::raw(
        &client,
        "GET",
        "/apis/apps/v1/namespaces/default/deployments/nope",
        "",
        "",
    )
    .await;
    assert_eq!(body["message"], "deployments.apps \"nope\" not found");
    assert_eq!(
        body["details"],
        json!({"name": "nope", "group": "apps", "kind": "deployments"})
    );

    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let first = cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    let err = api_error(cms.create(&PostParams::default(), &cm("a")).await.unwrap_err());
    assert_eq!((err.code, err.reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(err.message, "configmaps \"a\" already exists");

    let mut changed = first.clone();
    changed.data = Some([("k".to_string(), "w".to_string())].into());
    cms.replace("a", &PostParams::default(), &changed).await.unwrap();
    let err = api_error(
        cms.replace("a", &PostParams::default(), &changed)
            .await
            .unwrap_err(),
    );
    assert_eq!((err.code, err.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        err.message,
        "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your \
         changes to the latest version and try again"
    );
    pg.shutdown().await;
}

#[tokio::test]
async fn bad_requests_method_media_type_and_invalid() {
    let pg = common::start().await;
    let client = pg.client().await.unwrap();
    let body =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "other"}});
    let (code, status) = common::raw(
        &client,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        &body.to_string(),
    )
    .await;
    assert_eq!((code, status["reason"].as_str()), (400, Some("BadRequest")));
    assert_eq!(
        status["message"],
        "the namespace of the provided object does not match the namespace sent on the request"
    );

    let (code, status) = common::raw(
        &client,
        "POST",
        "/api/v1/namespaces/default/configmaps/x",
        "application/json",
        "{}",
    )
    .await;
    assert_eq!((code, status["reason"].as_str()), (405, Some("MethodNotAllowed")));
    assert_eq!(
        status,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "the server does not allow this method on the requested resource",
            "reason": "MethodNotAllowed", "details": {}, "code": 405})
    );

    let (code, status) = common::raw(
        &client,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "text/plain",
        "x",
    )
    .await;
    assert_eq!(
        (code, status["reason"].as_str()),
        (415, Some("UnsupportedMediaType"))
    );

    let (code, status) = common::raw(&client, "GET", "/apis/nothing.example.com/v1/things", "", "").await;
    assert_eq!(code, 404);
    assert_eq!(
        status,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "the server could not find the requested resource", "reason": "NotFound", "details": {}, "code": 404})
    );

    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let err = api_error(
        cms.create(&PostParams::default(), &cm("Bad_Name"))
            .await
            .unwrap_err(),
    );
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert!(err.message.starts_with("ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"), "{}", err.message);
    let cause = &err.details.unwrap().causes[0];
    assert_eq!(
        (cause.reason.as_str(), cause.field.as_str()),
        ("FieldValueInvalid", "metadata.name")
    );

    let missing: Api<ConfigMap> = Api::namespaced(client, "missing");
    let err = api_error(
        missing
            .create(&PostParams::default(), &cm("a"))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (err.code, err.message.as_str()),
        (404, "namespaces \"missing\" not found")
    );
    pg.shutdown().await;
}

#[tokio::test]
async fn generation_and_status_subresource() {
    let pg = common::start().await;
    let client = pg.client().await.unwrap();
    let deployments: Api<Deployment> = Api::default_namespaced(client);
    let d: Deployment = serde_json::from_value(json!({"metadata": {"name": "d"}, "spec": {"replicas": 1,
        "selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]}}}, "status": {"replicas": 7}}))
    .unwrap();
    let d = deployments.create(&PostParams::default(), &d).await.unwrap();
    assert_eq!(
        d.status, None,
        "create drops status when there is a status subresource"
    );
    let pp = PatchParams::default();
    let labelled = deployments
        .patch(
            "d",
            &pp,
            &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
        )
        .await
        .unwrap();
    assert_eq!(labelled.metadata.generation, Some(1));
    let scaled = deployments
        .patch(
            "d",
            &pp,
            &Patch::Merge(json!({"spec": {"replicas": 3}, "status": {"replicas": 9}})),
        )
        .await
        .unwrap();
    assert_eq!(scaled.metadata.generation, Some(2));
    assert_eq!(scaled.status, None, "the main resource ignores status");
    let status = deployments
        .patch_status(
            "d",
            &pp,
            &Patch::Merge(json!({"spec": {"replicas": 5}, "status": {"replicas": 3}})),
        )
        .await
        .unwrap();
    assert_eq!(status.status.unwrap().replicas, Some(3));
    assert_eq!(
        status.spec.replicas,
        Some(3),
        "the status subresource ignores spec"
    );
    assert_eq!(status.metadata.generation, Some(2));
    let scale = deployments.get_scale("d").await.unwrap();
    assert_eq!(scale.spec.unwrap().replicas, Some(3));
    assert_eq!(
        status.metadata.labels.unwrap().get("x").map(String::as_str),
        Some("y")
    );
    let unlabelled = deployments
        .patch_status(
            "d",
            &pp,
            &Patch::Merge(json!({"metadata": {"labels": {"x": "z"}}})),
        )
        .await
        .unwrap();
    assert_eq!(
        unlabelled.metadata.labels.unwrap()["x"],
        "y",
        "a Deployment's status subresource ignores metadata"
    );
    // Pods' status strategy keeps labels and annotations: node agents report through pods/status.
    let pods: Api<Pod> = Api::default_namespaced(pg.client().await.unwrap());
    let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i"}]}}))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let reported = pods
        .patch_status(
            "p",
            &pp,
            &Patch::Strategic(json!({"metadata": {"annotations": {"a": "1"}},
                "spec": {"nodeName": "elsewhere"}})),
        )
        .await
        .unwrap();
    assert_eq!(reported.metadata.annotations.unwrap()["a"], "1");
    assert_eq!(reported.spec.unwrap().node_name, None, "but not the spec");
    pg.shutdown().await;
}

#[tokio::test]
async fn selectors_and_deletecollection() {
    let pg = common::start().await;
    let client = pg.client().await.unwrap();
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    for (name, tier) in [("a", "web"), ("b", "db"), ("c", "web")] {
        let mut c = cm(name);
        c.metadata.labels = Some([("tier".to_string(), tier.to_string())].into());
        cms.create(&PostParams::default(), &c).await.unwrap();
    }
    let names = |l: kube::core::ObjectList<ConfigMap>| {
        l.items
            .into_iter()
            .map(|c| c.metadata.name.unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(cms.list(&ListParams::default().labels("tier=web")).await.unwrap()),
        ["a", "c"]
    );
    assert_eq!(
        names(
            cms.list(&ListParams::default().labels("tier notin (web)"))
                .await
                .unwrap()
        ),
        ["b"]
    );
    assert_eq!(
        names(
            cms.list(&ListParams::default().fields("metadata.name!=a"))
                .await
                .unwrap()
        ),
        ["b", "c"]
    );
    let page = cms.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(page.items.len(), 2);
    let token = page.metadata.continue_.clone().unwrap();
    let rest = cms
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(names(rest), ["c"]);

    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let err = api_error(
        pods.list(&ListParams::default().fields("spec.bogus=x"))
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 400);

    cms.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("tier=web"),
    )
    .await
    .unwrap();
    assert_eq!(names(cms.list(&ListParams::default()).await.unwrap()), ["b"]);
    let namespaces: Api<Namespace> = Api::all(client);
    let ns = namespaces.get("default").await.unwrap();
    assert_eq!(ns.status.unwrap().phase.as_deref(), Some("Active"));
    pg.shutdown().await;
}

#[tokio::test]
async fn concurrent_updates_from_one_resource_version_one_wins() {
    let pg = common::start().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(pg.client().await.unwrap());
    let base = cms.create(&PostParams::default(), &cm("race")).await.unwrap();
    let attempts = (0..8).map(|i| {
        let cms = cms.clone();
        let mut next = base.clone();
        next.data = Some([("writer".to_string(), i.to_string())].into());
        async move { cms.replace("race", &PostParams::default(), &next).await }
    });
    let results = futures::future::join_all(attempts).await;
    let wins = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(wins, 1, "{results:?}");
    for r in results.into_iter().filter_map(Result::err) {
        assert_eq!(api_error(r).reason, "Conflict");
    }
    let dry = cms
        .delete(
            "race",
            &DeleteParams {
                dry_run: true,
                ..DeleteParams::default()
            },
        )
        .await
        .unwrap();
    assert!(dry.is_right());
    assert!(
        cms.get_opt("race").await.unwrap().is_some(),
        "a dry-run delete keeps the object"
    );
    pg.shutdown().await;
}
