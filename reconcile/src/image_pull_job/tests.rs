//! Table tests of the ImagePullJob planner: requests are applied to the NodeImages and the result read.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{ImagePullJob, NodeImage};
use serde_json::{Value, json};

use super::*;

const UID: &str = "job-uid";

fn now() -> Timestamp {
    "2026-01-01T12:00:00Z".parse().unwrap()
}

fn job(spec: Value) -> ImagePullJob {
    let mut spec = spec;
    spec["image"] = json!("127.0.0.1:5000/demo:v2");
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "ImagePullJob",
        "metadata": {"name": "pull", "namespace": "default", "uid": UID},
        "spec": spec,
    }))
    .unwrap()
}

fn node_image(name: &str, pool: &str) -> NodeImage {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "NodeImage",
        "metadata": {"name": name, "labels": {"pool": pool}}, "spec": {},
    }))
    .unwrap()
}

/// The NodeImages after applying every request of the plan.
fn apply(plan: &Plan, images: &mut [NodeImage]) {
    for request in &plan.requests {
        let n = images
            .iter_mut()
            .find(|n| n.metadata.name.as_deref() == Some(request.node.as_str()))
            .unwrap();
        assert!(request.apply(n, now()));
    }
}

/// The agent's report for `node`: the tag at its spec version, in `phase`.
fn report(images: &mut [NodeImage], node: &str, phase: &str) {
    let n = images
        .iter_mut()
        .find(|n| n.metadata.name.as_deref() == Some(node))
        .unwrap();
    let version = n.spec.images["127.0.0.1:5000/demo"].tags[0].version;
    n.status = Some(
        serde_json::from_value(json!({"desired": 1, "succeeded": 0, "failed": 0, "pulling": 0, "waiting": 0,
            "imageStatuses": {"127.0.0.1:5000/demo": {"tags": [{"tag": "v2", "phase": phase, "version": version}]}}}))
        .unwrap(),
    );
}

fn run(job: &ImagePullJob, images: &[NodeImage], pods: &[PodRecord]) -> Plan {
    plan(&Input {
        job,
        node_images: images,
        pods,
        now: now(),
        jitter: 0,
        secrets: &[],
    })
}

fn names(plan: &Plan) -> Vec<&str> {
    plan.requests.iter().map(|r| r.node.as_str()).collect()
}

#[test]
fn parallelism_bounds_the_nodes_pulling_and_progress_is_read_back() {
    let mut job = job(json!({"selector": {"names": ["a", "b", "c"]}, "parallelism": 2,
        "completionPolicy": {"type": "Always"}}));
    let mut images = vec![
        node_image("a", "x"),
        node_image("b", "x"),
        node_image("c", "y"),
        node_image("d", "y"),
    ];
    let first = run(&job, &images, &[]);
    assert_eq!(names(&first), ["a", "b"]);
    let status = first.status.clone().unwrap();
    assert_eq!((status.desired, status.active), (3, 0));
    assert_eq!(status.message, "job is running, progress 0.0%");
    apply(&first, &mut images);
    let tag = &images[0].spec.images["127.0.0.1:5000/demo"].tags[0];
    assert_eq!(tag.tag, "v2");
    assert_eq!(tag.version, 0);
    assert_eq!(tag.owner_references[0].uid.as_deref(), Some(UID));
    assert_eq!(
        tag.pull_policy.as_ref().unwrap().ttl_seconds_after_finished,
        Some(600 * 3 + 300)
    );
    job.status = first.status;

    // Both nodes pulling: no room for c.
    let second = run(&job, &images, &[]);
    assert!(second.requests.is_empty());
    assert_eq!(second.status.as_ref().unwrap().active, 2);

    // a succeeds, b fails: c gets its turn.
    report(&mut images, "a", "Succeeded");
    report(&mut images, "b", "Failed");
    let third = run(&job, &images, &[]);
    assert_eq!(names(&third), ["c"]);
    let status = third.status.clone().unwrap();
    assert_eq!((status.succeeded, status.failed, status.active), (1, 1, 0));
    assert_eq!(status.failed_nodes, ["b"]);
    assert_eq!(status.message, "job is running, progress 66.7%");
    apply(&third, &mut images);
    report(&mut images, "c", "Succeeded");
    job.status = third.status;

    let done = run(&job, &images, &[]);
    let status = done.status.unwrap();
    assert!(status.completion_time.is_some());
    assert_eq!(status.message, "job has completed");
    assert_eq!((status.succeeded, status.failed), (2, 1));
}

#[test]
fn a_status_of_an_older_version_counts_as_active() {
    let job = job(json!({"selector": {"names": ["a"]}, "completionPolicy": {"type": "Always"}}));
    let mut images = vec![node_image("a", "x")];
    report_stale(&mut images);
    let first = run(&job, &images, &[]);
    apply(&first, &mut images);
    // The new tag continues from the reported version.
    assert_eq!(images[0].spec.images["127.0.0.1:5000/demo"].tags[0].version, 5);
    let second = run(&job, &images, &[]);
    assert_eq!(second.status.unwrap().active, 1);
}

fn report_stale(images: &mut [NodeImage]) {
    images[0].status = Some(
        serde_json::from_value(json!({"desired": 0, "succeeded": 0, "failed": 0, "pulling": 0, "waiting": 0,
            "imageStatuses": {"127.0.0.1:5000/demo": {"tags": [{"tag": "v2", "phase": "Succeeded", "version": 4}]}}}))
        .unwrap(),
    );
}

#[test]
fn a_tag_owned_by_another_job_gets_a_new_version_and_this_owner() {
    let job = job(json!({"selector": {"names": ["a"]}, "completionPolicy": {"type": "Always"}}));
    let mut images = vec![node_image("a", "x")];
    let mut other = job.clone();
    other.metadata.uid = Some("other".into());
    let first = run(&other, &images, &[]);
    apply(&first, &mut images);
    let second = run(&job, &images, &[]);
    apply(&second, &mut images);
    let tag = &images[0].spec.images["127.0.0.1:5000/demo"].tags[0];
    assert_eq!(tag.version, 1);
    let owners: Vec<_> = tag
        .owner_references
        .iter()
        .map(|o| o.uid.clone().unwrap())
        .collect();
    assert_eq!(owners, ["other", UID]);
    // Already owned: nothing more to write.
    assert!(run(&job, &images, &[]).requests.is_empty());
}

#[test]
fn targets_by_labels_all_or_pods() {
    let images = vec![node_image("a", "x"), node_image("b", "y"), node_image("c", "x")];
    let by_label = job(
        json!({"selector": {"matchLabels": {"pool": "x"}}, "parallelism": 10,
        "completionPolicy": {"type": "Always"}}),
    );
    assert_eq!(names(&run(&by_label, &images, &[])), ["a", "c"]);
    let all = job(json!({"parallelism": 10, "completionPolicy": {"type": "Always"}}));
    assert_eq!(names(&run(&all, &images, &[])), ["a", "b", "c"]);
    let pod = |name: &str, node: &str, app: &str, phase: &str| -> PodRecord {
        serde_json::from_value(
            json!({"metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
            "spec": {"nodeName": node}, "status": {"phase": phase}}),
        )
        .unwrap()
    };
    let pods = vec![
        pod("p1", "c", "web", "Running"),
        pod("p2", "c", "web", "Running"),
        pod("p3", "a", "db", "Running"),
        pod("p4", "b", "web", "Succeeded"),
        pod("p5", "missing", "web", "Running"),
        pod("p6", "a", "web", "Pending"),
    ];
    let by_pods = job(
        json!({"podSelector": {"matchLabels": {"app": "web"}}, "parallelism": 10,
        "completionPolicy": {"type": "Always"}}),
    );
    let plan = run(&by_pods, &images, &pods);
    assert_eq!(names(&plan), ["c", "a"]);
    assert_eq!(plan.status.unwrap().desired, 2);
}

#[test]
fn zero_parallelism_pauses() {
    let job = job(json!({"parallelism": 0, "completionPolicy": {"type": "Always"}}));
    let plan = run(&job, &[node_image("a", "x")], &[]);
    assert!(plan.requests.is_empty());
    assert_eq!(plan.status.unwrap().message, "job is running, progress 0.0%");
}

#[test]
fn the_deadline_fails_unfinished_nodes() {
    let mut job = job(json!({"selector": {"names": ["a", "b", "c"]}, "parallelism": 1,
        "completionPolicy": {"type": "Always", "activeDeadlineSeconds": 60}}));
    let mut images = vec![node_image("a", "x"), node_image("b", "x"), node_image("c", "x")];
    let first = run(&job, &images, &[]);
    apply(&first, &mut images);
    report(&mut images, "a", "Succeeded");
    let mut status = first.status.unwrap();
    assert_eq!(first.requeue_after, Some(Duration::from_secs(10)));
    status.start_time = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        "2026-01-01T11:58:00Z".parse().unwrap(),
    ));
    job.status = Some(status);
    let late = run(&job, &images, &[]);
    assert!(late.requests.is_empty());
    let status = late.status.unwrap();
    assert_eq!(status.message, "job exceeds activeDeadlineSeconds");
    assert_eq!((status.succeeded, status.failed, status.active), (1, 2, 0));
    assert_eq!(status.failed_nodes, ["b", "c"]);
    assert!(status.completion_time.is_some());
}

#[test]
fn a_never_job_does_not_complete_and_its_tags_live_a_day() {
    let job = job(
        json!({"selector": {"names": ["a"]}, "pullPolicy": {"timeoutSeconds": 3600},
        "completionPolicy": {"type": "Never"}}),
    );
    let mut images = vec![node_image("a", "x")];
    let first = run(&job, &images, &[]);
    apply(&first, &mut images);
    let policy = images[0].spec.images["127.0.0.1:5000/demo"].tags[0]
        .pull_policy
        .clone()
        .unwrap();
    assert_eq!(policy.ttl_seconds_after_finished, Some(24 * 3600 - 600));
    assert_eq!(policy.active_deadline_seconds, Some(3600));
    report(&mut images, "a", "Succeeded");
    let done = run(&job, &images, &[]).status.unwrap();
    assert!(done.completion_time.is_none());
    assert_eq!(done.message, "job is running, progress 100.0%");
}

#[test]
fn a_finished_job_is_deleted_after_its_ttl() {
    let mut job = job(json!({"completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 30}}));
    job.status = Some(
        serde_json::from_value(json!({"desired": 0, "completionTime": "2026-01-01T11:59:50Z"})).unwrap(),
    );
    let waiting = run(&job, &[], &[]);
    assert_eq!(waiting.requeue_after, Some(Duration::from_secs(20)));
    assert!(!waiting.delete_job && waiting.status.is_none());
    job.status.as_mut().unwrap().completion_time = Some(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time("2026-01-01T11:59:00Z".parse().unwrap()),
    );
    assert!(run(&job, &[], &[]).delete_job);
}

#[test]
fn a_digest_reference_is_written_as_a_digest_tag() {
    let digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    let mut job = job(json!({"completionPolicy": {"type": "Always"}}));
    job.spec.image = format!("127.0.0.1:5000/demo@{digest}");
    let mut images = vec![node_image("a", "x")];
    let plan = run(&job, &images, &[]);
    apply(&plan, &mut images);
    assert_eq!(images[0].spec.images["127.0.0.1:5000/demo"].tags[0].tag, digest);
}

#[test]
fn secret_references_reach_every_target_image_even_when_pulling() {
    use kruise_api::apps_v1beta1::ReferenceObject;
    let job = job(json!({"selector": {"names": ["a", "b"]}, "parallelism": 1}));
    let secret = ReferenceObject {
        namespace: "kruise-daemon".into(),
        name: "regcred-a1b2c3".into(),
        mode: "batch".into(),
    };
    let with_secrets = |images: &[NodeImage]| {
        plan(&Input {
            job: &job,
            node_images: images,
            pods: &[],
            now: now(),
            jitter: 0,
            secrets: std::slice::from_ref(&secret),
        })
    };
    let mut images = vec![node_image("a", "x"), node_image("b", "x")];
    let first = with_secrets(&images);
    assert_eq!(names(&first), ["a"]);
    apply(&first, &mut images);
    assert_eq!(
        images[0].spec.images["127.0.0.1:5000/demo"].pull_secrets,
        std::slice::from_ref(&secret)
    );
    // a's tag was written before the job had its secret (another writer dropped it): a is pulling,
    // so there is no room for b, but a gets its reference back.
    images[0]
        .spec
        .images
        .get_mut("127.0.0.1:5000/demo")
        .unwrap()
        .pull_secrets
        .clear();
    let second = with_secrets(&images);
    assert_eq!(names(&second), ["a"]);
    assert_eq!(second.status.as_ref().unwrap().active, 1);
    apply(&second, &mut images);
    let tags = &images[0].spec.images["127.0.0.1:5000/demo"];
    assert_eq!(tags.pull_secrets, std::slice::from_ref(&secret));
    assert_eq!(tags.tags[0].version, 0, "adding a secret is not a new pull");
    // Nothing left to add: no request, and applying again changes nothing.
    assert!(with_secrets(&images).requests.is_empty());
    assert!(!second.requests[0].apply(&mut images[0], now()));
}
