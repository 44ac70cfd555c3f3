//! The admission hook point: hooks see every write and may mutate or deny it.

use crate::common;

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::ConfigMap;
use kruise_playground::{AdmissionHook, ApiError, Attributes, Operation, PlaygroundOptions};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<String>>,
}

impl AdmissionHook for Recorder {
    fn admit<'a>(&'a self, a: Attributes<'a>) -> BoxFuture<'a, Result<Option<Value>, ApiError>> {
        Box::pin(async move {
            let op = format!("{:?} {} {}", a.operation, a.resource.plural, a.name);
            self.seen.lock().unwrap().push(op);
            assert!(a.api.store.revision() > 0, "hooks can read the store");
            if a.name == "denied" {
                return Err(ApiError::forbidden(
                    &a.resource.group_resource(),
                    a.name,
                    "denied by test hook",
                ));
            }
            if a.operation == Operation::Create {
                let mut obj = a.object.cloned().unwrap_or_default();
                obj["metadata"]["labels"] = json!({"admitted": "yes"});
                return Ok(Some(obj));
            }
            Ok(None)
        })
    }
}

#[tokio::test]
async fn hooks_mutate_and_deny_every_write() {
    let recorder = Arc::new(Recorder::default());
    let options = PlaygroundOptions {
        admission: vec![recorder.clone()],
        ..PlaygroundOptions::default()
    };
    let pg = common::start_with(options).await;
    let cms: Api<ConfigMap> = Api::default_namespaced(pg.client().await.unwrap());
    let cm = |name: &str| serde_json::from_value::<ConfigMap>(json!({"metadata": {"name": name}})).unwrap();
    let created = cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    assert_eq!(created.metadata.labels.unwrap()["admitted"], "yes");
    let err = cms
        .create(&PostParams::default(), &cm("denied"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(s) if s.code == 403 && s.message.ends_with("denied by test hook"))
    );
    cms.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "v"}})),
    )
    .await
    .unwrap();
    cms.delete("a", &DeleteParams::default()).await.unwrap();
    let seen = recorder.seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            "Create configmaps a",
            "Create configmaps denied",
            "Update configmaps a",
            "Delete configmaps a"
        ]
    );
    pg.shutdown().await;
}

struct DenyEvictions;

impl AdmissionHook for DenyEvictions {
    fn admit<'a>(&'a self, a: Attributes<'a>) -> BoxFuture<'a, Result<Option<Value>, ApiError>> {
        Box::pin(async move {
            assert_ne!(
                a.operation,
                Operation::Delete,
                "an eviction's delete is not admitted again"
            );
            if a.operation == Operation::Create && a.subresource == Some("eviction") && a.dry_run {
                assert_eq!(a.object.map(|o| o["kind"].clone()), Some(json!("Eviction")));
                let why = "evictions are not allowed";
                return Err(ApiError::forbidden(&a.resource.group_resource(), a.name, why));
            }
            Ok(None)
        })
    }
}

#[tokio::test]
async fn eviction_is_a_create_of_the_subresource() {
    let options = PlaygroundOptions {
        admission: vec![Arc::new(DenyEvictions)],
        ..PlaygroundOptions::default()
    };
    let pg = common::start_with(options).await;
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::default_namespaced(pg.client().await.unwrap());
    let pod = serde_json::from_value(
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}),
    );
    pods.create(&PostParams::default(), &pod.unwrap()).await.unwrap();
    let dry = kube::api::EvictParams {
        post_options: PostParams {
            dry_run: true,
            ..PostParams::default()
        },
        ..Default::default()
    };
    let err = pods.evict("p", &dry).await.unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(s) if s.code == 403 && s.message.ends_with("evictions are not allowed"))
    );
    assert!(pods.get_opt("p").await.unwrap().is_some());
    pods.evict("p", &Default::default()).await.unwrap();
    assert!(
        pods.get_opt("p").await.unwrap().is_none(),
        "an unscheduled pod goes at once"
    );
    pg.shutdown().await;
}
