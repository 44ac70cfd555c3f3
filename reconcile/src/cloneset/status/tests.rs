use super::*;
use crate::cloneset::arithmetic::Params;
use crate::cloneset::testing::{self, cloneset};
use crate::pods::fixtures::{labelled, now, pod, unready};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{CloneSet, RollingUpdateCloneSetStrategy};
use kruise_api::common::LIFECYCLE_STATE_KEY;

fn run(cs: &CloneSet, pods: &[PodRecord]) -> (CloneSetStatus, Option<Duration>) {
    let ctx = Ctx {
        params: Params::resolve(cs, false, false).unwrap(),
        ..testing::ctx(cs, pods.iter().collect())
    };
    compute(&ctx, None, None, None)
}

fn ago(secs: i64) -> Timestamp {
    now().checked_sub(SignedDuration::from_secs(secs)).unwrap()
}

#[test]
fn counters() {
    let mut cs = cloneset(4);
    cs.spec.min_ready_seconds = 7200;
    let pods = vec![
        pod("a", "demo-1"),
        unready(pod("b", "demo-2")),
        labelled(pod("c", "demo-2"), LIFECYCLE_STATE_KEY, "PreparingNormal"),
        pod("d", "x-2"),
    ];
    let (s, _) = run(&cs, &pods);
    assert_eq!(s.replicas, 4);
    assert_eq!(s.ready_replicas, 3, "readiness ignores the lifecycle state");
    assert_eq!(s.available_replicas, 0, "minReadySeconds not reached");
    assert_eq!(s.updated_replicas, 3, "short-hash compare counts x-2");
    assert_eq!((s.updated_ready_replicas, s.updated_available_replicas), (2, 0));
    assert_eq!(s.current_revision.as_deref(), Some("demo-1"));
    assert_eq!(s.expected_updated_replicas, 4);
    assert_eq!(s.observed_generation, 1);
    cs.spec.min_ready_seconds = 0;
    let (s, _) = run(&cs, &pods);
    assert_eq!((s.available_replicas, s.updated_available_replicas), (2, 1));
}

#[test]
fn current_revision_follows_once_every_pod_is_updated_ready_or_not() {
    let cs = cloneset(2);
    let (s, _) = run(&cs, &[pod("a", "demo-2"), unready(pod("b", "demo-2"))]);
    assert_eq!(s.current_revision.as_deref(), Some("demo-2"));
    let (s, _) = run(&cs, &[pod("a", "demo-2")]);
    assert_eq!(
        s.current_revision.as_deref(),
        Some("demo-1"),
        "one pod short of spec.replicas"
    );
}

fn progressing(s: &CloneSetStatus) -> Option<(String, String)> {
    s.conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == CloneSetConditionType::Progressing)
        .map(|c| (c.status.clone(), c.reason.clone().unwrap_or_default()))
}

#[test]
fn progressing_condition() {
    let base = |deadline: Option<i32>| {
        let mut cs = cloneset(2);
        cs.spec.progress_deadline_seconds = deadline;
        cs
    };
    let paused = {
        let mut cs = base(Some(600));
        cs.spec.update_strategy.rolling_update = Some(RollingUpdateCloneSetStrategy {
            paused: true,
            ..Default::default()
        });
        cs
    };
    let partition = {
        let mut cs = base(Some(600));
        cs.spec.update_strategy.rolling_update = Some(RollingUpdateCloneSetStrategy {
            partition: Some(IntOrString::Int(1)),
            ..Default::default()
        });
        cs
    };
    let with_existing = |reason: &str, since: i64| {
        let mut cs = base(Some(600));
        cs.status = Some(CloneSetStatus {
            conditions: Some(vec![condition(
                CloneSetConditionType::Progressing,
                "True",
                reason,
                String::new(),
                ago(since),
            )]),
            ..Default::default()
        });
        cs
    };
    let done = vec![pod("a", "demo-2"), pod("b", "demo-2")];
    let mid = vec![pod("a", "demo-2"), pod("b", "demo-1")];
    let t = |s: &str, r: &str| Some((s.to_string(), r.to_string()));
    type Row = (&'static str, CloneSet, Vec<PodRecord>, Option<(String, String)>);
    let rows: Vec<Row> = vec![
        ("no deadline: no condition", base(None), mid.clone(), None),
        (
            "MaxInt32 deadline: no condition",
            base(Some(i32::MAX)),
            mid.clone(),
            None,
        ),
        (
            "everything updated and available",
            base(Some(600)),
            done.clone(),
            t("True", CLONESET_AVAILABLE),
        ),
        ("paused", paused, mid.clone(), t("True", CLONESET_PROGRESS_PAUSED)),
        (
            "stopped at an available partition",
            partition,
            mid.clone(),
            t("True", CLONESET_PROGRESS_PARTITION_AVAILABLE),
        ),
        (
            "mid-rollout",
            base(Some(600)),
            mid.clone(),
            t("True", CLONESET_PROGRESS_UPDATED),
        ),
        (
            "mid-rollout for longer than the deadline",
            with_existing(CLONESET_PROGRESS_UPDATED, 601),
            mid.clone(),
            t("False", CLONESET_PROGRESS_DEADLINE_EXCEEDED),
        ),
        (
            "deadline exceeded sticks until the rollout completes",
            with_existing(CLONESET_PROGRESS_DEADLINE_EXCEEDED, 1),
            mid.clone(),
            t("False", CLONESET_PROGRESS_DEADLINE_EXCEEDED),
        ),
        (
            "and clears when it does",
            with_existing(CLONESET_PROGRESS_DEADLINE_EXCEEDED, 1),
            done,
            t("True", CLONESET_AVAILABLE),
        ),
    ];
    for (name, cs, pods, want) in rows {
        assert_eq!(progressing(&run(&cs, &pods).0), want, "{name}");
    }
}

#[test]
fn the_deadline_runs_from_the_last_reason_change_and_requeues() {
    let mut cs = cloneset(2);
    cs.spec.progress_deadline_seconds = Some(600);
    cs.status = Some(CloneSetStatus {
        conditions: Some(vec![condition(
            CloneSetConditionType::Progressing,
            "True",
            CLONESET_PROGRESS_UPDATED,
            "CloneSet is progressing".into(),
            ago(100),
        )]),
        ..Default::default()
    });
    let (s, requeue) = run(&cs, &[pod("a", "demo-2"), pod("b", "demo-1")]);
    let c = s.conditions.unwrap().into_iter().next().unwrap();
    assert_eq!(
        c.last_update_time.unwrap().0,
        ago(100),
        "same reason: the condition is kept as is"
    );
    assert_eq!(requeue, Some(Duration::from_secs(501)));
}

#[test]
fn status_writes_only_on_relevant_changes() {
    let cs = cloneset(2);
    let (s, _) = run(&cs, &[pod("a", "demo-2")]);
    assert!(changed(None, &s));
    assert!(!changed(Some(&s), &s.clone()));
    let mut other = s.clone();
    other.ready_replicas += 1;
    assert!(changed(Some(&s), &other));
    let mut older_generation = s.clone();
    older_generation.observed_generation -= 1;
    assert!(
        !changed(Some(&s), &older_generation),
        "a lower observedGeneration alone is not written"
    );
}
