//! `rollout approve` writes the Rollout's status with the resourceVersion it read: when another
//! writer (the Rollout controller) changes the status in between, the plugin reads again and decides
//! again, instead of approving a step the controller has already left. Against a bare playground
//! whose `Faults` hook interleaves that other write and answers the plugin's write with 409.

use kruise_playground::{
    Playground, PlaygroundOptions,
    api::{UpdateMode, key},
    faults::{Faults, Interleaved, Target},
};
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use kubectl_kruise::{client::Session, kinds, rollout::approve};

const CRD: &str = include_str!("../fixtures/rollouts-crd.yaml");

/// Another writer's status change, made in-process just before the injected conflict.
fn other_writer(playground: &Playground, change: fn(&mut Value)) -> Interleaved {
    let api = playground.api().clone();
    Box::new(move || {
        Box::pin(async move {
            let def = api
                .registry
                .find("rollouts.kruise.io", "v1beta1", "rollouts")
                .expect("rollouts are served");
            let mut object = api.store.get(&key(&def), "shop", "demo").expect("the Rollout");
            change(&mut object);
            api.update(&def, "shop", "demo", object, UpdateMode::Status, false)
                .await
                .expect("the other writer's update");
        })
    })
}

async fn paused(rollouts: &Api<DynamicObject>) {
    let status =
        json!({"status": {"canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused"}}});
    rollouts
        .patch_status("demo", &PatchParams::default(), &Patch::Merge(status))
        .await
        .expect("status written");
}

async fn state(rollouts: &Api<DynamicObject>) -> (String, String) {
    let object = rollouts.get("demo").await.expect("the Rollout");
    let text = |p: &str| {
        object
            .data
            .pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    (
        text("/status/canaryStatus/currentStepState"),
        text("/status/message"),
    )
}

#[tokio::test]
async fn approve_reads_and_decides_again_after_a_conflicting_status_write() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let faults = Faults::new();
    let playground = Playground::start(PlaygroundOptions {
        admission: vec![faults.clone()],
        nodes: 0,
        ..PlaygroundOptions::default()
    })
    .await
    .expect("the playground starts");
    let client = playground.client().await.expect("a client");
    let crd: Value = serde_saphyr::from_str(CRD).expect("the fixture CRD");
    let crds: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &kube::api::ApiResource::erase::<
            k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
        >(&()),
    );
    crds.create(&PostParams::default(), &serde_json::from_value(crd).unwrap())
        .await
        .expect("the CRD is created");
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "shop"}})).unwrap(),
        )
        .await
        .expect("the namespace is created");
    let session = Session {
        client: client.clone(),
        namespace: "shop".to_string(),
    };
    let targets = approve::resolve(&session, kinds::targets(&["rollout/demo".to_string()]).unwrap())
        .await
        .expect("the Rollout kind resolves");
    let rollouts = session.api(targets[0].ty.resource().unwrap());
    let rollout = json!({
        "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
        "metadata": {"name": "demo"},
        "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "shop"},
                 "strategy": {"canary": {"steps": [{"replicas": 1}, {"replicas": 2}]}}}
    });
    rollouts
        .create(&PostParams::default(), &serde_json::from_value(rollout).unwrap())
        .await
        .expect("the Rollout is created");
    let status_writes = Target::writes("rollouts.kruise.io", "rollouts")
        .object("shop", "demo")
        .subresource("status");

    // The controller only touched the message: approved on the second attempt, its write kept.
    paused(&rollouts).await;
    faults.conflict_once(
        status_writes.clone(),
        Some(other_writer(&playground, |r| {
            r["status"]["message"] = json!("waiting for approval")
        })),
    );
    approve::approve(&session, &targets)
        .await
        .expect("approved after the conflict");
    assert_eq!(faults.armed(), 0, "the conflict was injected");
    assert_eq!(
        state(&rollouts).await,
        ("StepReady".to_string(), "waiting for approval".to_string())
    );

    // The controller left the paused step meanwhile: nothing to approve any more, and its state stays.
    paused(&rollouts).await;
    faults.conflict_once(
        status_writes,
        Some(other_writer(&playground, |r| {
            r["status"]["canaryStatus"]["currentStepState"] = json!("StepUpgrade")
        })),
    );
    let refused = approve::approve(&session, &targets).await.unwrap_err();
    assert_eq!(faults.armed(), 0, "the conflict was injected");
    assert_eq!(
        refused.printed(),
        "error: rollouts.rollouts.kruise.io \"demo\" does not allow to approve, because current canary state is not 'StepPaused'"
    );
    assert_eq!(state(&rollouts).await.0, "StepUpgrade");
}
