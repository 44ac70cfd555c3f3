//! Deletion lifecycle through kube-rs: finalizers, preconditions, graceful pod deletion, garbage
//! collection by ownerReferences, namespace termination; server-side apply; CRD registration.

use crate::common;

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::core::{DynamicObject, GroupVersionKind};
use serde_json::json;

fn api_error(e: kube::Error) -> kube::core::Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn cm(value: serde_json::Value) -> ConfigMap {
    serde_json::from_value(value).unwrap()
}

#[tokio::test]
async fn finalizers_hold_deletion_and_preconditions_apply() {
    let pg = common::start().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(pg.client().await.unwrap());
    let c = cms
        .create(
            &PostParams::default(),
            &cm(json!({"metadata": {"name": "f", "finalizers": ["example.com/hold"]}})),
        )
        .await
        .unwrap();
    let dp = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some("wrong".into()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    let err = api_error(cms.delete("f", &dp).await.unwrap_err());
    assert_eq!(err.code, 409);
    let uid = c.metadata.uid.clone().unwrap();
    assert_eq!(
        err.message,
        format!(
            "Operation cannot be fulfilled on configmaps \"f\": Precondition failed: UID in precondition: wrong, UID in object meta: {uid}"
        )
    );
    let pending = cms
        .delete("f", &DeleteParams::default())
        .await
        .unwrap()
        .left()
        .expect("the object, still there");
    assert!(pending.metadata.deletion_timestamp.is_some());
    assert_eq!(pending.metadata.deletion_grace_period_seconds, Some(0));
    assert!(cms.get("f").await.is_ok());
    cms.patch(
        "f",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert_eq!(api_error(cms.get("f").await.unwrap_err()).code, 404);

    // Without finalizers: a Success Status naming the object.
    cms.create(&PostParams::default(), &cm(json!({"metadata": {"name": "g"}})))
        .await
        .unwrap();
    let status = cms
        .delete("g", &DeleteParams::default())
        .await
        .unwrap()
        .right()
        .expect("a Status");
    assert_eq!(status.details.unwrap().name, "g");
    pg.shutdown().await;
}

#[tokio::test]
async fn pods_on_nodes_terminate_gracefully() {
    let pg = common::start().await;
    let pods: Api<Pod> = Api::default_namespaced(pg.client().await.unwrap());
    let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "p"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]}}))
    .unwrap();
    let created = pods.create(&PostParams::default(), &pod).await.unwrap();
    assert_eq!(created.status.unwrap().phase.as_deref(), Some("Pending"));
    let deleting = pods
        .delete("p", &DeleteParams::default())
        .await
        .unwrap()
        .left()
        .unwrap();
    assert_eq!(deleting.metadata.deletion_grace_period_seconds, Some(30));
    common::eventually("the kubelet to remove the pod", || async {
        pods.get_opt("p").await.unwrap().is_none().then_some(())
    })
    .await;
    let unscheduled: Pod = serde_json::from_value(json!({"metadata": {"name": "q"},
        "spec": {"containers": [{"name": "c", "image": "i"}]}}))
    .unwrap();
    pods.create(&PostParams::default(), &unscheduled).await.unwrap();
    let gone = pods
        .delete("q", &DeleteParams::default())
        .await
        .unwrap()
        .left()
        .unwrap();
    assert_eq!(
        gone.metadata.name.as_deref(),
        Some("q"),
        "pods answer the deleted object"
    );
    assert!(pods.get_opt("q").await.unwrap().is_none());
    pg.shutdown().await;
}

async fn owner_and_dependent(client: &kube::Client) -> (Api<ReplicaSet>, Api<ConfigMap>) {
    let owners: Api<ReplicaSet> = Api::default_namespaced(client.clone());
    let rs: ReplicaSet = serde_json::from_value(json!({"metadata": {"name": "owner"}, "spec": {
        "selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]}}}}))
    .unwrap();
    let rs = owners.create(&PostParams::default(), &rs).await.unwrap();
    let dependents: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let owned = cm(
        json!({"metadata": {"name": "dep", "ownerReferences": [{"apiVersion": "apps/v1",
        "kind": "ReplicaSet", "name": "owner", "uid": rs.metadata.uid, "blockOwnerDeletion": true}]}}),
    );
    dependents.create(&PostParams::default(), &owned).await.unwrap();
    (owners, dependents)
}

#[tokio::test]
async fn garbage_collection_background_foreground_orphan() {
    let pg = common::start().await;
    let client = pg.client().await.unwrap();

    let (owners, deps) = owner_and_dependent(&client).await;
    owners.delete("owner", &DeleteParams::background()).await.unwrap();
    common::eventually("background GC", || async {
        deps.get_opt("dep").await.unwrap().is_none().then_some(())
    })
    .await;

    let (owners, deps) = owner_and_dependent(&client).await;
    let owner = owners
        .delete("owner", &DeleteParams::foreground())
        .await
        .unwrap()
        .left()
        .unwrap();
    assert_eq!(
        owner.metadata.finalizers,
        Some(vec!["foregroundDeletion".to_string()])
    );
    common::eventually("foreground GC", || async {
        let gone =
            owners.get_opt("owner").await.unwrap().is_none() && deps.get_opt("dep").await.unwrap().is_none();
        gone.then_some(())
    })
    .await;

    let (owners, deps) = owner_and_dependent(&client).await;
    owners.delete("owner", &DeleteParams::orphan()).await.unwrap();
    common::eventually("orphaning", || async {
        owners.get_opt("owner").await.unwrap().is_none().then_some(())
    })
    .await;
    let orphan = deps.get("dep").await.unwrap();
    assert_eq!(orphan.metadata.owner_references, None);
    pg.shutdown().await;
}

#[tokio::test]
async fn namespace_termination() {
    let pg = common::start().await;
    let client = pg.client().await.unwrap();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "doomed"}})).unwrap();
    namespaces.create(&PostParams::default(), &ns).await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "doomed");
    cms.create(
        &PostParams::default(),
        &cm(json!({"metadata": {"name": "held", "finalizers": ["example.com/x"]}})),
    )
    .await
    .unwrap();
    let terminating = namespaces
        .delete("doomed", &DeleteParams::default())
        .await
        .unwrap()
        .left()
        .unwrap();
    assert_eq!(terminating.status.unwrap().phase.as_deref(), Some("Terminating"));
    let err = api_error(
        cms.create(&PostParams::default(), &cm(json!({"metadata": {"name": "late"}})))
            .await
            .unwrap_err(),
    );
    assert_eq!((err.code, err.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        err.message,
        "configmaps \"late\" is forbidden: unable to create new content in namespace doomed because it is being terminated"
    );
    common::eventually("the held configmap to be marked deleted", || async {
        cms.get("held")
            .await
            .unwrap()
            .metadata
            .deletion_timestamp
            .map(|_| ())
    })
    .await;
    assert!(
        namespaces.get_opt("doomed").await.unwrap().is_some(),
        "content with finalizers holds the namespace"
    );
    cms.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    common::eventually("the namespace to go", || async {
        namespaces
            .get_opt("doomed")
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;
    pg.shutdown().await;
}

#[tokio::test]
async fn server_side_apply_with_field_managers() {
    let pg = common::start().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(pg.client().await.unwrap());
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"a": "1", "b": "2"}});
    let created = cms
        .patch("ssa", &PatchParams::apply("alice"), &Patch::Apply(&config))
        .await
        .unwrap();
    let mf = created.metadata.managed_fields.clone().unwrap();
    assert_eq!(
        (mf[0].manager.as_deref(), mf[0].operation.as_deref()),
        (Some("alice"), Some("Apply"))
    );
    let other =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"a": "9"}});
    let err = api_error(
        cms.patch("ssa", &PatchParams::apply("bob"), &Patch::Apply(&other))
            .await
            .unwrap_err(),
    );
    assert_eq!((err.code, err.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"alice\" using v1: .data.a"
    );
    let forced = cms
        .patch("ssa", &PatchParams::apply("bob").force(), &Patch::Apply(&other))
        .await
        .unwrap();
    assert_eq!(forced.data.unwrap()["a"], "9");
    let shrunk = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {}});
    let after = cms
        .patch("ssa", &PatchParams::apply("alice"), &Patch::Apply(&shrunk))
        .await
        .unwrap();
    assert_eq!(
        after.data.unwrap(),
        [("a".to_string(), "9".to_string())].into(),
        "alice's b goes, bob's a stays"
    );
    pg.shutdown().await;
}

#[tokio::test]
async fn crds_register_resources_and_refuse_strategic_merge() {
    let pg = common::start().await;
    let client = pg.client().await.unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in kruise_api::crds() {
        crds.create(&PostParams::default(), &crd).await.unwrap();
    }
    let established = crds.get("sidecarsets.apps.kruise.io").await.unwrap();
    let conditions = established.status.unwrap().conditions.unwrap();
    assert!(
        conditions
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
    );

    let discovery = kube::Discovery::new(client.clone()).run().await.unwrap();
    // v1beta1 is the storage version: no conversion webhook (none runs here) is needed.
    let gvk = GroupVersionKind::gvk("apps.kruise.io", "v1beta1", "SidecarSet");
    let (ar, caps) = discovery.resolve_gvk(&gvk).expect("SidecarSet is discovered");
    assert_eq!(caps.scope, kube::discovery::Scope::Cluster);
    let sidecarsets: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    let obj: DynamicObject = serde_json::from_value(
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": "s"}, "spec": {"selector": {"matchLabels": {"a": "b"}}, "containers": []}}),
    )
    .unwrap();
    sidecarsets.create(&PostParams::default(), &obj).await.unwrap();
    let err = api_error(
        sidecarsets
            .patch(
                "s",
                &PatchParams::default(),
                &Patch::Strategic(json!({"metadata": {"labels": {"x": "y"}}})),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 415);
    assert_eq!(
        err.message,
        "the body of the request was in an unknown format - accepted media types include: \
         application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    );
    crds.delete("sidecarsets.apps.kruise.io", &DeleteParams::default())
        .await
        .unwrap();
    let (code, _) = common::raw(
        &client,
        "GET",
        "/apis/apps.kruise.io/v1alpha1/sidecarsets",
        "",
        "",
    )
    .await;
    assert_eq!(code, 404);
    pg.shutdown().await;
}

#[tokio::test]
async fn apply_to_the_status_subresource_writes_only_status() {
    let pg = common::start().await;
    let pods: Api<Pod> = Api::default_namespaced(pg.client().await.unwrap());
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i"}]}});
    pods.patch("p", &PatchParams::apply("me"), &Patch::Apply(&pod))
        .await
        .unwrap();
    let status = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "changed"}]}, "status": {"phase": "Running"}});
    let after = pods
        .patch_status("p", &PatchParams::apply("kubelet"), &Patch::Apply(&status))
        .await
        .unwrap();
    assert_eq!(after.status.unwrap().phase.as_deref(), Some("Running"));
    assert_eq!(after.spec.unwrap().containers[0].image.as_deref(), Some("i"));
    pg.shutdown().await;
}

#[tokio::test]
async fn apply_requires_a_field_manager() {
    let pg = common::start().await;
    let client = pg.client().await.unwrap();
    let body = r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}"#;
    let path = "/api/v1/namespaces/default/configmaps/x";
    let (code, status) = common::raw(&client, "PATCH", path, "application/apply-patch+yaml", body).await;
    assert_eq!(code, 422);
    assert_eq!(
        status,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
            "reason": "Invalid", "details": {"group": "meta.k8s.io", "kind": "PatchOptions", "causes": [
                {"reason": "FieldValueRequired", "message": "Required value: is required for apply patch", "field": "fieldManager"}]},
            "code": 422})
    );
    pg.shutdown().await;
}
