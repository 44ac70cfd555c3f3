//! Table tests of the pull-secret sync.

use k8s_openapi::api::core::v1::Secret;
use kruise_api::apps_v1beta1::ImagePullJob;
use serde_json::{Value, json};

use super::*;

const CONFIG: &str = "kruise-daemon";

fn job(extra: Value) -> ImagePullJob {
    let mut j = json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "ImagePullJob",
        "metadata": {"name": "warm", "namespace": "shop", "uid": "u1"},
        "spec": {"image": "demo:v1", "pullSecrets": ["regcred"]}});
    merge(&mut j, extra);
    serde_json::from_value(j).unwrap()
}

fn merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (slot, v) => *slot = v,
    }
}

fn source(data: &str) -> Secret {
    serde_json::from_value(json!({"metadata": {"name": "regcred", "namespace": "shop",
        "labels": {"team": "a"}, "annotations": {"note": "x"}},
        "type": "kubernetes.io/dockerconfigjson",
        "data": {".dockerconfigjson": data}}))
    .unwrap()
}

fn copy(name: &str, source: &str, refs: &str, data: &str) -> Secret {
    serde_json::from_value(json!({"metadata": {"name": name, "namespace": CONFIG, "resourceVersion": "7",
        "annotations": {SOURCE_KEY_ANNOTATION: source, REFERENCES_ANNOTATION: refs, MODE_ANNOTATION: "batch"}},
        "type": "kubernetes.io/dockerconfigjson",
        "data": {".dockerconfigjson": data}}))
    .unwrap()
}

fn run(job: &ImagePullJob, sources: &[Secret], copies: &[Secret]) -> SecretsPlan {
    plan_secrets(&SecretsInput {
        job,
        config_namespace: CONFIG,
        sources,
        copies,
        suffix: "a1b2c3",
    })
}

fn names(secrets: &[Secret]) -> Vec<&str> {
    secrets
        .iter()
        .filter_map(|s| s.metadata.name.as_deref())
        .collect()
}

fn batch(name: &str) -> ReferenceObject {
    ReferenceObject {
        namespace: CONFIG.into(),
        name: name.into(),
        mode: MODE_BATCH.into(),
    }
}

#[test]
fn a_running_job_s_secret_is_copied_once_and_referenced() {
    let job = job(json!({}));
    let plan = run(&job, &[source("e30=")], &[]);
    assert_eq!(names(&plan.create), ["regcred-a1b2c3"]);
    let created = &plan.create[0];
    assert_eq!(created.metadata.namespace.as_deref(), Some(CONFIG));
    assert_eq!(created.type_.as_deref(), Some("kubernetes.io/dockerconfigjson"));
    assert_eq!(created.data, source("e30=").data);
    assert_eq!(created.metadata.labels, source("e30=").metadata.labels);
    let annotations = created.metadata.annotations.as_ref().unwrap();
    assert_eq!(annotations[SOURCE_KEY_ANNOTATION], "shop/regcred");
    assert_eq!(annotations[REFERENCES_ANNOTATION], "shop/warm");
    assert_eq!(annotations[MODE_ANNOTATION], "batch");
    assert_eq!(annotations["note"], "x");
    assert_eq!(plan.refs, [batch("regcred-a1b2c3")]);
    assert_eq!(plan.finalizer, Some(true));
    assert!(plan.update.is_empty() && plan.delete.is_empty());

    // Next pass: the copy exists, references the job and holds the data: nothing to do.
    let mut with_finalizer = job.clone();
    with_finalizer.metadata.finalizers = Some(vec![PROTECTION_FINALIZER.into()]);
    let existing = copy("regcred-a1b2c3", "shop/regcred", "shop/warm", "e30=");
    let plan = run(
        &with_finalizer,
        &[source("e30=")],
        std::slice::from_ref(&existing),
    );
    assert_eq!(
        plan,
        SecretsPlan {
            refs: vec![batch("regcred-a1b2c3")],
            ..SecretsPlan::default()
        }
    );
    // The source changed: the copy's data follows.
    let plan = run(&with_finalizer, &[source("bmV3")], &[existing]);
    assert_eq!(names(&plan.update), ["regcred-a1b2c3"]);
    assert_eq!(plan.update[0].data, source("bmV3").data);
    assert_eq!(plan.update[0].metadata.resource_version.as_deref(), Some("7"));
}

#[test]
fn copies_are_shared_and_the_one_already_used_is_preferred() {
    let job = job(json!({}));
    // Another job's copy of the same source is reused: this job is added to its references.
    let other = copy("regcred-000001", "shop/regcred", "shop/other", "e30=");
    let plan = run(&job, &[source("e30=")], std::slice::from_ref(&other));
    assert!(plan.create.is_empty());
    assert_eq!(names(&plan.update), ["regcred-000001"]);
    assert_eq!(
        plan.update[0].metadata.annotations.as_ref().unwrap()[REFERENCES_ANNOTATION],
        "shop/other,shop/warm"
    );
    assert_eq!(plan.refs, [batch("regcred-000001")]);
    // Two copies of one source: the one referencing this job wins though it sorts later.
    let mine = copy("regcred-ffffff", "shop/regcred", "shop/warm", "e30=");
    let plan = run(&job, &[source("e30=")], &[other, mine]);
    assert_eq!(plan.refs, [batch("regcred-ffffff")]);
    assert!(plan.update.is_empty() && plan.create.is_empty() && plan.delete.is_empty());
}

#[test]
fn finished_or_deleted_jobs_release_their_copies() {
    let shared = copy("regcred-000001", "shop/regcred", "shop/other,shop/warm", "e30=");
    let alone = copy("regcred-000002", "shop/regcred", "shop/warm", "e30=");
    let unrelated = copy("x-000003", "web/x", "web/j", "e30=");
    let copies = [shared, alone, unrelated];
    let done = job(json!({"status": {"completionTime": "2026-01-01T00:00:00Z"},
        "metadata": {"finalizers": [PROTECTION_FINALIZER]}}));
    let plan = run(&done, &[source("e30=")], &copies);
    assert_eq!(names(&plan.update), ["regcred-000001"]);
    assert_eq!(
        plan.update[0].metadata.annotations.as_ref().unwrap()[REFERENCES_ANNOTATION],
        "shop/other"
    );
    assert_eq!(names(&plan.delete), ["regcred-000002"]);
    assert!(plan.refs.is_empty() && plan.create.is_empty());
    // Completed but not deleted: the finalizer stays until the deletion.
    assert_eq!(plan.finalizer, None);
    let deleting = job(json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z",
        "finalizers": [PROTECTION_FINALIZER]}}));
    let plan = run(&deleting, &[source("e30=")], &copies);
    assert_eq!(names(&plan.delete), ["regcred-000002"]);
    assert_eq!(plan.finalizer, Some(false));
}

#[test]
fn missing_sources_jobs_without_secrets_and_config_namespace_jobs() {
    // A missing source is skipped (no copy, no reference); the finalizer still protects the job.
    let plan = run(&job(json!({})), &[], &[]);
    assert!(plan.create.is_empty() && plan.refs.is_empty());
    assert_eq!(plan.finalizer, Some(true));
    // A job without pull secrets needs nothing.
    let plain = job(json!({"spec": {"pullSecrets": []}}));
    assert_eq!(run(&plain, &[], &[]), SecretsPlan::default());
    // A job in the config namespace uses its secrets in place.
    let local = job(json!({"metadata": {"namespace": CONFIG}}));
    let plan = run(&local, &[], &[]);
    assert_eq!(
        plan.refs,
        [ReferenceObject {
            namespace: CONFIG.into(),
            name: "regcred".into(),
            mode: String::new()
        }]
    );
    assert!(plan.create.is_empty() && plan.finalizer.is_none());
}
