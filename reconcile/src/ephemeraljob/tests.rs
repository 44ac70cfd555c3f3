//! Table tests of the EphemeralJob planner.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting,
    EphemeralContainer,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1alpha1::{
    EPHEMERAL_JOB_FINALIZER, EphemeralContainerTemplateSpec, EphemeralJob, EphemeralJobPhase as Phase,
    EphemeralJobSpec, EphemeralJobStatus,
};
use kruise_api::pod::{ContainerRecord, EphemeralStatusRecord, PodRecordSpec, PodRecordStatus};

use super::*;

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + s).expect("time")
}

fn job(replicas: Option<i32>, parallelism: Option<i32>) -> EphemeralJob {
    let mut j = EphemeralJob::new(
        "dbg",
        EphemeralJobSpec {
            selector: LabelSelector {
                match_labels: Some([("app".to_string(), "web".to_string())].into()),
                ..Default::default()
            },
            replicas,
            parallelism,
            template: EphemeralContainerTemplateSpec {
                ephemeral_containers: vec![EphemeralContainer {
                    name: "debugger".into(),
                    image: Some("busybox".into()),
                    ..Default::default()
                }],
            },
            ..Default::default()
        },
    );
    j.metadata.namespace = Some("ns".into());
    j.metadata.uid = Some("job-uid".into());
    j.metadata.finalizers = Some(vec![EPHEMERAL_JOB_FINALIZER.into()]);
    j
}

/// A running pod `name` created at second `created`; `state` is its `debugger` container's, if
/// injected by `owner` (a job uid).
fn pod(name: &str, created: i64, injected: Option<(&str, ContainerState)>) -> PodRecord {
    let mut p = PodRecord::default();
    p.metadata.name = Some(name.into());
    p.metadata.namespace = Some("ns".into());
    p.metadata.labels =
        kruise_api::pod::InternedMap::from(Some([("app".to_string(), "web".to_string())].into()));
    p.metadata.creation_timestamp = Some(Time(at(created)));
    let mut spec = PodRecordSpec::default();
    let mut status = PodRecordStatus {
        phase: Some("Running".into()),
        ..Default::default()
    };
    if let Some((owner, state)) = injected {
        spec.ephemeral_containers = Some(vec![ContainerRecord {
            name: "debugger".into(),
            env: Some(vec![k8s_openapi::api::core::v1::EnvVar {
                name: "KRUISE_EJOB_ID".into(),
                value: Some(owner.into()),
                value_from: None,
            }]),
            ..Default::default()
        }]);
        status.ephemeral_container_statuses = Some(vec![EphemeralStatusRecord {
            name: "debugger".into(),
            state: Some(state),
        }]);
    }
    p.spec = Some(spec);
    p.status = Some(status);
    p
}

fn running() -> ContainerState {
    ContainerState {
        running: Some(ContainerStateRunning::default()),
        ..Default::default()
    }
}

fn waiting(reason: &str) -> ContainerState {
    ContainerState {
        waiting: Some(ContainerStateWaiting {
            reason: Some(reason.into()),
            message: None,
        }),
        ..Default::default()
    }
}

fn exited(code: i32) -> ContainerState {
    ContainerState {
        terminated: Some(ContainerStateTerminated {
            exit_code: code,
            finished_at: Some(Time(at(5))),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn run(job: &EphemeralJob, pods: &[PodRecord], now: i64) -> Plan {
    plan(&Input {
        job,
        pods,
        injected: &BTreeSet::new(),
        now: at(now),
    })
}

fn status(plan: &Plan) -> &EphemeralJobStatus {
    plan.status.as_ref().expect("a status")
}

#[test]
fn parallelism_one_injects_one_pod_at_a_time_oldest_first() {
    let j = job(None, None);
    // Nothing injected: the oldest pod only.
    let pods = [pod("c", 3, None), pod("a", 1, None), pod("b", 1, None)];
    let p = run(&j, &pods, 10);
    assert_eq!(p.inject, ["a"]);
    let env = p.containers[0].env.as_ref().expect("env");
    assert_eq!(
        (env[0].name.as_str(), env[0].value.as_deref()),
        ("KRUISE_EJOB_ID", Some("job-uid"))
    );
    assert_eq!(status(&p).matches, 3);
    assert_eq!(status(&p).phase, Phase::Unknown);
    // Injected but not yet seen by the cache: nothing more.
    let pending: BTreeSet<String> = ["a".to_string()].into();
    let p = plan(&Input {
        job: &j,
        pods: &pods,
        injected: &pending,
        now: at(10),
    });
    assert!(p.inject.is_empty());
    // a waits, then runs: still one in flight.
    for state in [waiting("ContainerCreating"), running()] {
        let pods = [
            pod("a", 1, Some(("job-uid", state))),
            pod("b", 1, None),
            pod("c", 3, None),
        ];
        assert!(run(&j, &pods, 10).inject.is_empty());
    }
    // a ended: b is next.
    let pods = [
        pod("a", 1, Some(("job-uid", exited(0)))),
        pod("b", 1, None),
        pod("c", 3, None),
    ];
    let p = run(&j, &pods, 10);
    assert_eq!(p.inject, ["b"]);
    assert_eq!(
        (status(&p).succeeded, status(&p).phase.clone()),
        (1, Phase::Unknown)
    );
}

#[test]
fn parallelism_and_replicas_bound_the_injections() {
    let pods: Vec<PodRecord> = (0..5).map(|i| pod(&format!("p{i}"), i, None)).collect();
    let p = run(&job(Some(3), Some(2)), &pods, 10);
    assert_eq!(p.inject, ["p0", "p1"]);
    assert_eq!(status(&p).matches, 3);
    let mut pods = pods;
    pods[0] = pod("p0", 0, Some(("job-uid", running())));
    let p = run(&job(Some(3), Some(2)), &pods, 10);
    assert_eq!(p.inject, ["p1"]);
    assert_eq!(
        (status(&p).running, status(&p).phase.clone()),
        (1, Phase::Running)
    );
}

/// Succeeded, failed, running and waiting counts.
type Counts = (i32, i32, i32, i32);

#[test]
fn phases_follow_openkruise_order() {
    let j = job(None, Some(3));
    let cases: Vec<(Vec<ContainerState>, Phase, Counts)> = vec![
        (vec![exited(0), exited(0)], Phase::Succeeded, (2, 0, 0, 0)),
        (vec![exited(0), running()], Phase::Running, (1, 0, 1, 0)),
        (vec![exited(2), exited(1)], Phase::Failed, (0, 2, 0, 0)),
        (
            vec![waiting("RunContainerError"), exited(1)],
            Phase::Failed,
            (0, 2, 0, 0),
        ),
        (
            vec![waiting("ContainerCreating"), waiting("ImagePullBackOff")],
            Phase::Waiting,
            (0, 0, 0, 2),
        ),
        (vec![exited(0), exited(1)], Phase::Unknown, (1, 1, 0, 0)),
    ];
    for (states, phase, (s, f, r, w)) in cases {
        let pods: Vec<PodRecord> = states
            .into_iter()
            .enumerate()
            .map(|(i, st)| pod(&format!("p{i}"), i as i64, Some(("job-uid", st))))
            .collect();
        let p = run(&j, &pods, 10);
        let st = status(&p);
        assert_eq!(st.phase, phase, "{pods:?}");
        assert_eq!(
            (st.succeeded, st.failed, st.running, st.waiting),
            (s, f, r, w),
            "{phase:?}"
        );
        let finished = matches!(phase, Phase::Succeeded | Phase::Failed);
        assert_eq!(st.completion_time.is_some(), finished, "{phase:?}");
        assert!(p.inject.is_empty());
    }
}

#[test]
fn no_match_waits_and_foreign_containers_are_skipped() {
    let j = job(None, None);
    let p = run(&j, &[], 0);
    let st = status(&p);
    assert_eq!(st.phase, Phase::Waiting);
    let types: Vec<&str> = st.conditions.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(types, ["Initialized", "MatchedEmpty"]);
    // A pod holding a `debugger` someone else added is not a target.
    let mut other = pod("x", 0, Some(("someone-else", running())));
    other.metadata.labels =
        kruise_api::pod::InternedMap::from(Some([("app".to_string(), "web".to_string())].into()));
    let mut unlabelled = pod("y", 0, None);
    unlabelled.metadata.labels = Default::default();
    let p = run(&j, &[other, unlabelled], 0);
    assert_eq!(status(&p).matches, 0);
    assert!(p.inject.is_empty());
}

#[test]
fn deadline_fails_the_job_and_stops_injecting() {
    let mut j = job(None, None);
    j.spec.active_deadline_seconds = Some(30);
    j.status = Some(EphemeralJobStatus {
        start_time: Some(Time(at(0))),
        ..Default::default()
    });
    let pods = [pod("a", 0, Some(("job-uid", running()))), pod("b", 1, None)];
    let p = run(&j, &pods, 10);
    assert_eq!(p.requeue_after, Some(Duration::from_secs(20)));
    assert_eq!(status(&p).phase, Phase::Running);
    let p = run(&j, &pods, 30);
    let st = status(&p);
    assert_eq!(st.phase, Phase::Failed);
    assert_eq!(st.completion_time, Some(Time(at(30))));
    let c = st
        .conditions
        .iter()
        .find(|c| c.type_.as_str() == "JobFailed")
        .expect("JobFailed");
    assert_eq!(c.reason, "DeadlineExceeded");
    assert_eq!(
        c.message,
        "EphemeralJob ns/dbg was active longer than specified deadline"
    );
    assert!(p.inject.is_empty());
}

#[test]
fn ttl_deletes_a_finished_job() {
    let mut j = job(None, None);
    j.spec.ttl_seconds_after_finished = Some(60);
    j.status = Some(EphemeralJobStatus {
        completion_time: Some(Time(at(100))),
        phase: Phase::Succeeded,
        ..Default::default()
    });
    let p = run(&j, &[], 130);
    assert_eq!(
        (p.delete_job, p.requeue_after),
        (false, Some(Duration::from_secs(30)))
    );
    assert!(p.status.is_none());
    assert!(run(&j, &[], 160).delete_job);
    // Unset: 1800 s.
    j.spec.ttl_seconds_after_finished = None;
    assert!(!run(&j, &[], 1899).delete_job);
    assert!(run(&j, &[], 1900).delete_job);
}

#[test]
fn finalizer_added_and_removed_on_deletion() {
    let mut j = job(None, None);
    j.metadata.finalizers = None;
    assert!(run(&j, &[], 0).add_finalizer);
    j.metadata.finalizers = Some(vec![EPHEMERAL_JOB_FINALIZER.into()]);
    j.metadata.deletion_timestamp = Some(Time(at(0)));
    let p = run(&j, &[pod("a", 0, None)], 0);
    assert_eq!(
        (p.remove_finalizer, p.inject.len(), p.status.is_none()),
        (true, 0, true)
    );
}

#[test]
fn paused_and_empty_template() {
    let mut j = job(None, None);
    j.spec.paused = true;
    let p = run(&j, &[pod("a", 0, None)], 0);
    assert_eq!(status(&p).phase, Phase::Paused);
    assert!(p.inject.is_empty());
    let mut j = job(None, None);
    j.spec.template.ephemeral_containers.clear();
    let p = run(&j, &[pod("a", 0, None)], 0);
    assert_eq!(status(&p).phase, Phase::Error);
    assert!(p.inject.is_empty());
}

#[test]
fn a_steady_status_is_not_rewritten() {
    let j = job(None, None);
    let pods = [pod("a", 0, Some(("job-uid", running())))];
    let first = run(&j, &pods, 0);
    let mut again = j.clone();
    again.status = first.status.clone();
    assert_eq!(run(&again, &pods, 7).status, None);
}
