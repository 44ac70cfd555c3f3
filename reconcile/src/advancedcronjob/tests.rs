//! Table tests of the AdvancedCronJob planner: the clock is an input, so minutes pass in a line.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kruise_api::apps_v1alpha1::AdvancedCronJob;
use serde_json::{Value, json};

use super::*;

fn t(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn acj(spec: Value, status: Value) -> AdvancedCronJob {
    let mut full = json!({"schedule": "*/1 * * * *", "template": {"jobTemplate": {
        "metadata": {"labels": {"team": "a"}},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox"}]}}}}}});
    for (k, v) in spec.as_object().unwrap() {
        full[k] = v.clone();
    }
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "AdvancedCronJob",
        "metadata": {"name": "tick", "namespace": "ns", "uid": "uid-acj",
            "creationTimestamp": "2026-01-01T00:00:30Z"},
        "spec": full, "status": status,
    }))
    .unwrap()
}

fn child(name: &str, at: &str, succeeded: Option<bool>) -> Child {
    Child {
        kind: ChildKind::Job,
        name: name.into(),
        uid: Some(format!("uid-{name}")),
        scheduled_at: Some(t(at)),
        succeeded,
    }
}

fn run(acj: &AdvancedCronJob, children: &[Child], now: &str) -> Plan {
    plan(&Input {
        acj,
        children,
        now: t(now),
    })
}

fn created(plan: &Plan) -> Vec<String> {
    plan.steps
        .iter()
        .filter_map(|s| match s {
            Step::Create(NewChild::Job(j)) => j.metadata.name.clone(),
            Step::Create(NewChild::BroadcastJob(b)) => b.metadata.name.clone(),
            _ => None,
        })
        .collect()
}

fn deleted(plan: &Plan) -> Vec<String> {
    plan.steps
        .iter()
        .filter_map(|s| match s {
            Step::Delete { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

fn last(plan: &Plan) -> Option<Timestamp> {
    plan.status.last_schedule_time.as_ref().map(|t| t.0)
}

#[test]
fn a_due_run_creates_its_child_and_waits_for_the_next() {
    let a = acj(json!({}), json!({}));
    let before = run(&a, &[], "2026-01-01T00:00:45Z");
    assert!(created(&before).is_empty(), "not due before 00:01");
    assert_eq!(before.requeue_after, Some(Duration::from_secs(15)));
    let p = run(&a, &[], "2026-01-01T00:01:02Z");
    let name = format!("tick-{}", t("2026-01-01T00:01:00Z").as_second());
    assert_eq!(created(&p), [name]);
    assert_eq!(last(&p), Some(t("2026-01-01T00:01:00Z")));
    assert_eq!(p.requeue_after, Some(Duration::from_secs(58)));
    assert_eq!(p.status.active.len(), 1);
    let Step::Create(NewChild::Job(job)) = &p.steps[0] else {
        panic!()
    };
    let annotations = job.metadata.annotations.as_ref().unwrap();
    assert_eq!(annotations["apps.kruise.io/scheduled-at"], "2026-01-01T00:01:00Z");
    assert_eq!(job.metadata.labels.as_ref().unwrap()["team"], "a");
    let owner = &job.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str()),
        ("AdvancedCronJob", "uid-acj")
    );
}

#[test]
fn only_the_latest_missed_run_starts() {
    let a = acj(json!({}), json!({"lastScheduleTime": "2026-01-01T00:01:00Z"}));
    let p = run(&a, &[], "2026-01-01T00:05:10Z");
    assert_eq!(
        created(&p),
        [format!("tick-{}", t("2026-01-01T00:05:00Z").as_second())]
    );
}

#[test]
fn a_deleted_finished_child_never_runs_again() {
    // openkruise/kruise#792, #1488: with the child deleted (TTL, history limit 0), lastScheduleTime was
    // recomputed from the surviving children (none) and the run was made again and again.
    let a = acj(json!({"successfulJobsHistoryLimit": 0}), json!({}));
    let first = run(&a, &[], "2026-01-01T00:01:05Z");
    assert_eq!(created(&first).len(), 1);
    let mut stored = a.clone();
    stored.status = Some(first.status.clone());
    let done = [child(&created(&first)[0], "2026-01-01T00:01:00Z", Some(true))];
    let cleaned = run(&stored, &done, "2026-01-01T00:01:20Z");
    assert_eq!(deleted(&cleaned), [created(&first)[0].clone()], "history limit 0");
    assert!(created(&cleaned).is_empty());
    stored.status = Some(cleaned.status.clone());
    let after = run(&stored, &[], "2026-01-01T00:01:30Z");
    assert!(
        created(&after).is_empty(),
        "the deleted child's run is not made again"
    );
    assert_eq!(last(&after), Some(t("2026-01-01T00:01:00Z")));
}

#[test]
fn last_schedule_time_only_moves_forward() {
    let a = acj(json!({}), json!({"lastScheduleTime": "2026-01-01T00:03:00Z"}));
    let older = [child("tick-old", "2026-01-01T00:02:00Z", Some(true))];
    assert_eq!(
        last(&run(&a, &older, "2026-01-01T00:03:10Z")),
        Some(t("2026-01-01T00:03:00Z"))
    );
    let a = acj(json!({}), json!({}));
    assert_eq!(
        last(&run(&a, &older, "2026-01-01T00:02:10Z")),
        Some(t("2026-01-01T00:02:00Z")),
        "from the children when nothing is stored"
    );
}

#[test]
fn concurrency_policies() {
    let running = [child("tick-1", "2026-01-01T00:01:00Z", None)];
    let status = json!({"lastScheduleTime": "2026-01-01T00:01:00Z"});
    let now = "2026-01-01T00:02:01Z";
    let allow = run(
        &acj(json!({"concurrencyPolicy": "Allow"}), status.clone()),
        &running,
        now,
    );
    assert_eq!((created(&allow).len(), deleted(&allow).len()), (1, 0));
    assert_eq!(allow.status.active.len(), 2);
    let forbid = run(
        &acj(json!({"concurrencyPolicy": "Forbid"}), status.clone()),
        &running,
        now,
    );
    assert!(forbid.steps.is_empty(), "Forbid skips while one runs");
    assert_eq!(last(&forbid), Some(t("2026-01-01T00:01:00Z")));
    let replace = run(
        &acj(json!({"concurrencyPolicy": "Replace"}), status),
        &running,
        now,
    );
    assert_eq!(deleted(&replace), ["tick-1"]);
    assert_eq!(created(&replace).len(), 1);
    assert_eq!(replace.status.active.len(), 1);
}

#[test]
fn paused_creates_nothing() {
    let a = acj(
        json!({"paused": true}),
        json!({"lastScheduleTime": "2026-01-01T00:01:00Z"}),
    );
    let p = run(&a, &[], "2026-01-01T00:05:00Z");
    assert!(p.steps.is_empty());
    assert_eq!(p.requeue_after, None);
}

#[test]
fn a_run_missed_by_more_than_the_starting_deadline_is_skipped() {
    let a = acj(
        json!({"startingDeadlineSeconds": 10}),
        json!({"lastScheduleTime": "2026-01-01T00:01:00Z"}),
    );
    assert!(created(&run(&a, &[], "2026-01-01T00:02:30Z")).is_empty());
    assert_eq!(created(&run(&a, &[], "2026-01-01T00:02:05Z")).len(), 1);
}

#[test]
fn history_limits_delete_the_oldest_finished_children() {
    let a = acj(
        json!({"successfulJobsHistoryLimit": 2, "failedJobsHistoryLimit": 1}),
        json!({"lastScheduleTime": "2026-01-01T00:06:00Z"}),
    );
    let children = [
        child("s1", "2026-01-01T00:01:00Z", Some(true)),
        child("s2", "2026-01-01T00:02:00Z", Some(true)),
        child("s3", "2026-01-01T00:03:00Z", Some(true)),
        child("f1", "2026-01-01T00:04:00Z", Some(false)),
        child("f2", "2026-01-01T00:05:00Z", Some(false)),
        child("r1", "2026-01-01T00:06:00Z", None),
    ];
    let p = run(&a, &children, "2026-01-01T00:06:30Z");
    assert_eq!(deleted(&p), ["s1", "f1"]);
}

#[test]
fn schedules_in_time_zones_and_descriptors() {
    let berlin = Schedule::parse("30 2 * * *", Some("Europe/Berlin")).unwrap();
    assert_eq!(
        berlin.next_after(t("2026-01-01T00:00:00Z")),
        Some(t("2026-01-01T01:30:00Z"))
    );
    assert_eq!(
        berlin.next_after(t("2026-07-01T00:00:00Z")),
        Some(t("2026-07-01T00:30:00Z")),
        "summer time"
    );
    let prefixed = Schedule::parse("CRON_TZ=Asia/Tokyo 0 9 * * *", None).unwrap();
    assert_eq!(
        prefixed.next_after(t("2026-01-01T00:00:00Z")),
        Some(t("2026-01-02T00:00:00Z"))
    );
    let hourly = Schedule::parse("@hourly", None).unwrap();
    assert_eq!(
        hourly.next_after(t("2026-01-01T00:00:00Z")),
        Some(t("2026-01-01T01:00:00Z"))
    );
    for bad in ["* * * *", "0 0 * * * *", "61 * * * *", "@often"] {
        assert!(Schedule::parse(bad, None).is_err(), "{bad}");
    }
    assert_eq!(
        Schedule::parse("* * * * *", Some("Mars/Olympus")).unwrap_err(),
        ScheduleError::UnknownTimeZone("Mars/Olympus".into())
    );
}

#[test]
fn a_broadcast_job_template_makes_broadcast_jobs() {
    let mut a = acj(json!({}), json!({}));
    a.spec.template.job_template = None;
    a.spec.template.broadcast_job_template = serde_json::from_value(json!({
        "metadata": {"labels": {"app": "clean"}},
        "spec": {"parallelism": 2, "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}))
    .unwrap();
    let p = run(&a, &[], "2026-01-01T00:01:01Z");
    let Step::Create(NewChild::BroadcastJob(b)) = &p.steps[0] else {
        panic!("{:?}", p.steps)
    };
    assert_eq!(b.metadata.labels.as_ref().unwrap()["app"], "clean");
    assert_eq!(p.status.type_.as_ref().map(|k| k.as_str()), Some("BroadcastJob"));
}
