//! The EphemeralJob planner (OpenKruise's `pkg/controller/ephemeraljob`; docs/ephemeraljob.md).
//!
//! One pass, for a job and the pods of its namespace:
//!
//! - a job being deleted loses its finalizer (the API cannot remove ephemeral containers, so there is
//!   nothing to clean up); a job without it gets it;
//! - a finished job (`completionTime` set) is deleted once `ttlSecondsAfterFinished` (1800 when unset)
//!   has passed, else looked at again then;
//! - the targets are the active pods the selector matches, oldest first (then by name), skipping pods
//!   holding a container of a template name that another writer added, up to `replicas`;
//! - each target counts as succeeded, failed, running or waiting from the statuses of the template's
//!   containers; the phase follows (first match: no target → Waiting; all `replicas` succeeded →
//!   Succeeded; any running → Running; all failed → Failed; all waiting → Waiting; else Unknown), then
//!   `paused` → Paused, a passed `activeDeadlineSeconds` → Failed (`DeadlineExceeded`), an empty
//!   template → Error;
//! - unless paused or finished, targets without the job's containers get them, while fewer than
//!   `parallelism` (1) targets have unfinished ones.
//!
//! An injected container carries env `KRUISE_EJOB_ID=<job uid>`: how a job knows its own.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ContainerState, EnvVar, EphemeralContainer};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::PodRecord;
use kruise_api::apps_v1alpha1::{
    DEFAULT_TTL_SECONDS_AFTER_FINISHED, EPHEMERAL_CONTAINER_ENV_KEY, EPHEMERAL_JOB_FINALIZER, EphemeralJob,
    EphemeralJobCondition, EphemeralJobConditionType as Cond, EphemeralJobPhase as Phase, EphemeralJobStatus,
};
use kruise_core::pod_state;

/// What one pass sees.
pub struct Input<'a> {
    /// The job.
    pub job: &'a EphemeralJob,
    /// The pods of the job's namespace (the planner selects).
    pub pods: &'a [PodRecord],
    /// Pods (by name) injected by an earlier pass whose containers the cache does not show yet.
    pub injected: &'a BTreeSet<String>,
    /// Now.
    pub now: Timestamp,
}

/// What to do.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    /// Add the finalizer.
    pub add_finalizer: bool,
    /// Remove the finalizer (the job is being deleted).
    pub remove_finalizer: bool,
    /// Delete the job (its TTL passed).
    pub delete_job: bool,
    /// Pods (by name) to add [`Plan::containers`] to, through `pods/ephemeralcontainers`.
    pub inject: Vec<String>,
    /// The containers to add: the template's, each with the job's env marker.
    pub containers: Vec<EphemeralContainer>,
    /// The status to write, when it changed.
    pub status: Option<EphemeralJobStatus>,
    /// Look again after this long.
    pub requeue_after: Option<Duration>,
}

/// How a target's injected containers are doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodResult {
    /// Every one exited 0.
    Succeeded,
    /// One exited non-zero or could not start.
    Failed,
    /// One runs.
    Running,
    /// One waits to start.
    Waiting,
    /// No status yet (not injected, or not reported).
    Unknown,
}

fn uid(job: &EphemeralJob) -> &str {
    job.metadata.uid.as_deref().unwrap_or_default()
}

fn template_names(job: &EphemeralJob) -> BTreeSet<&str> {
    job.spec
        .template
        .ephemeral_containers
        .iter()
        .map(|c| c.name.as_str())
        .collect()
}

/// The pod's ephemeral containers of a template name: `(exists, all ours)`, as OpenKruise's
/// `ContainsEphemeralContainer` (it looks at the first template name the pod holds).
pub fn holds(job: &EphemeralJob, pod: &PodRecord) -> (bool, bool) {
    let names = template_names(job);
    let held = pod
        .spec
        .as_ref()
        .and_then(|s| s.ephemeral_containers.as_ref())
        .into_iter()
        .flatten()
        .find(|c| names.contains(c.name.as_str()));
    match held {
        None => (false, false),
        Some(c) => (true, is_ours(job, c.env.as_deref())),
    }
}

fn is_ours(job: &EphemeralJob, env: Option<&[EnvVar]>) -> bool {
    env.into_iter()
        .flatten()
        .any(|e| e.name == EPHEMERAL_CONTAINER_ENV_KEY && e.value.as_deref() == Some(uid(job)))
}

/// Whether the pod holds a template-named container some other writer added.
fn foreign(job: &EphemeralJob, pod: &PodRecord) -> bool {
    let names = template_names(job);
    pod.spec
        .as_ref()
        .and_then(|s| s.ephemeral_containers.as_ref())
        .into_iter()
        .flatten()
        .any(|c| names.contains(c.name.as_str()) && !is_ours(job, c.env.as_deref()))
}

/// The pods the job works on: active, selected, not holding someone else's container of a template
/// name; oldest first, then by name; at most `replicas`.
pub fn targets<'a>(job: &EphemeralJob, pods: &'a [PodRecord]) -> Vec<&'a PodRecord> {
    let namespace = job.metadata.namespace.as_deref().unwrap_or_default();
    let mut selected: Vec<&PodRecord> = pods
        .iter()
        .filter(|p| p.metadata.namespace.as_deref().unwrap_or(namespace) == namespace)
        .filter(|p| {
            kruise_core::selector::selects(Some(&job.spec.selector), &p.metadata.labels).unwrap_or(false)
        })
        .filter(|p| pod_state::is_active(p) && !foreign(job, p))
        .collect();
    selected.sort_by(|a, b| {
        let created = |p: &PodRecord| p.metadata.creation_timestamp.as_ref().map(|t| t.0);
        created(a)
            .cmp(&created(b))
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
    if let Some(replicas) = job.spec.replicas {
        selected.truncate(usize::try_from(replicas).unwrap_or(0));
    }
    selected
}

fn container_result(state: Option<&ContainerState>) -> PodResult {
    let Some(state) = state else {
        return PodResult::Unknown;
    };
    if let Some(t) = &state.terminated {
        if t.exit_code != 0 {
            return PodResult::Failed;
        }
        if t.finished_at.is_some() {
            return PodResult::Succeeded;
        }
    }
    if state.running.is_some() {
        return PodResult::Running;
    }
    match &state.waiting {
        Some(w) if w.reason.as_deref() == Some("RunContainerError") => PodResult::Failed,
        Some(_) => PodResult::Waiting,
        None => PodResult::Unknown,
    }
}

/// How the template's containers in `pod` are doing (OpenKruise's `parseEphemeralPodStatus`).
pub fn pod_result(job: &EphemeralJob, pod: &PodRecord) -> PodResult {
    let names = template_names(job);
    let (mut succeeded, mut running, mut waiting) = (0, 0, 0);
    let statuses = pod
        .status
        .as_ref()
        .and_then(|s| s.ephemeral_container_statuses.as_ref());
    for s in statuses.into_iter().flatten() {
        if !names.contains(s.name.as_str()) {
            continue;
        }
        match container_result(s.state.as_ref()) {
            PodResult::Failed => return PodResult::Failed,
            PodResult::Succeeded => succeeded += 1,
            PodResult::Running => running += 1,
            PodResult::Waiting => waiting += 1,
            PodResult::Unknown => {}
        }
    }
    if succeeded > 0 && succeeded == names.len() {
        PodResult::Succeeded
    } else if running > 0 {
        PodResult::Running
    } else if waiting > 0 {
        PodResult::Waiting
    } else {
        PodResult::Unknown
    }
}

fn seconds_left(from: Timestamp, seconds: i64, now: Timestamp) -> Duration {
    from.checked_add(SignedDuration::from_secs(seconds))
        .ok()
        .and_then(|at| Duration::try_from(at.duration_since(now)).ok())
        .unwrap_or(Duration::ZERO)
}

fn whole_seconds(t: Timestamp) -> Time {
    Time(Timestamp::from_second(t.as_second()).unwrap_or(t))
}

/// Sets a condition (status True); one already there with the same reason and message is kept as is.
fn set_condition(
    status: &mut EphemeralJobStatus,
    type_: Cond,
    reason: &str,
    message: String,
    now: Timestamp,
) {
    let condition = EphemeralJobCondition {
        type_: type_.clone(),
        status: "True".into(),
        last_probe_time: Some(whole_seconds(now)),
        last_transition_time: Some(whole_seconds(now)),
        reason: reason.into(),
        message,
    };
    match status.conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(c) if c.reason == condition.reason && c.message == condition.message => {}
        Some(c) => *c = condition,
        None => status.conditions.push(condition),
    }
}

/// The containers the job injects: its template, each with env `KRUISE_EJOB_ID=<uid>`.
pub fn containers(job: &EphemeralJob) -> Vec<EphemeralContainer> {
    job.spec
        .template
        .ephemeral_containers
        .iter()
        .map(|c| {
            let mut c = c.clone();
            c.env.get_or_insert_with(Vec::new).push(EnvVar {
                name: EPHEMERAL_CONTAINER_ENV_KEY.into(),
                value: Some(uid(job).into()),
                value_from: None,
            });
            c
        })
        .collect()
}

/// One pass.
pub fn plan(input: &Input<'_>) -> Plan {
    let Input { job, now, .. } = *input;
    let finalizers = job.metadata.finalizers.as_deref().unwrap_or_default();
    let has_finalizer = finalizers.iter().any(|f| f == EPHEMERAL_JOB_FINALIZER);
    if job.metadata.deletion_timestamp.is_some() {
        return Plan {
            remove_finalizer: has_finalizer,
            ..Plan::default()
        };
    }
    let mut plan = Plan {
        add_finalizer: !has_finalizer,
        ..Plan::default()
    };
    let old = job.status.clone().unwrap_or_default();
    if let Some(Time(done)) = old.completion_time {
        let ttl = job
            .spec
            .ttl_seconds_after_finished
            .unwrap_or(DEFAULT_TTL_SECONDS_AFTER_FINISHED);
        let left = seconds_left(done, i64::from(ttl), now);
        if left.is_zero() {
            plan.delete_job = true;
        } else {
            plan.requeue_after = Some(left);
        }
        return plan;
    }
    let mut status = old.clone();
    let start = status.start_time.get_or_insert_with(|| whole_seconds(now)).0;
    if let Some(deadline) = job.spec.active_deadline_seconds {
        plan.requeue_after = Some(seconds_left(start, deadline, now));
    }
    let targets = targets(job, input.pods);
    compute_status(job, &targets, &mut status, now);
    let finished = status.completion_time.is_some();
    if status.phase != Phase::Paused && !finished {
        plan.inject = to_inject(job, &targets, input.injected);
        if !plan.inject.is_empty() {
            plan.containers = containers(job);
        }
    }
    if finished {
        let ttl = job
            .spec
            .ttl_seconds_after_finished
            .unwrap_or(DEFAULT_TTL_SECONDS_AFTER_FINISHED);
        plan.requeue_after = Some(Duration::from_secs(u64::try_from(ttl).unwrap_or(0)));
    }
    if status != old {
        plan.status = Some(status);
    }
    plan
}

/// The counts, phase and conditions (OpenKruise's `calculateStatus`).
fn compute_status(
    job: &EphemeralJob,
    targets: &[&PodRecord],
    status: &mut EphemeralJobStatus,
    now: Timestamp,
) {
    if status.conditions.is_empty() {
        set_condition(status, Cond::Initialized, "Initialized", String::new(), now);
    }
    let (mut succeeded, mut failed, mut running, mut waiting) = (0, 0, 0, 0);
    for pod in targets {
        match pod_result(job, pod) {
            PodResult::Succeeded => succeeded += 1,
            PodResult::Failed => failed += 1,
            PodResult::Running => running += 1,
            PodResult::Waiting => waiting += 1,
            PodResult::Unknown => {}
        }
    }
    let matches = i32::try_from(targets.len()).unwrap_or(i32::MAX);
    (status.matches, status.succeeded, status.failed) = (matches, succeeded, failed);
    (status.running, status.waiting) = (running, waiting);
    let replicas = job.spec.replicas.unwrap_or(matches);
    let name = format!(
        "{}/{}",
        job.metadata.namespace.as_deref().unwrap_or_default(),
        job.metadata.name.as_deref().unwrap_or_default()
    );
    let done = |status: &mut EphemeralJobStatus, phase: Phase| {
        status.phase = phase;
        status.completion_time = Some(whole_seconds(now));
    };
    if matches == 0 {
        status.phase = Phase::Waiting;
        set_condition(
            status,
            Cond::MatchedEmpty,
            "MatchEmpty",
            "job match no pods".into(),
            now,
        );
    } else if succeeded == replicas && succeeded > 0 {
        done(status, Phase::Succeeded);
        let message = "job success to run all tasks".into();
        set_condition(status, Cond::JobSucceeded, "JobSucceeded", message, now);
    } else if running > 0 {
        status.phase = Phase::Running;
    } else if failed == replicas {
        done(status, Phase::Failed);
        set_condition(
            status,
            Cond::JobFailed,
            "JobFailed",
            "job failed to run all tasks".into(),
            now,
        );
    } else if waiting == replicas {
        status.phase = Phase::Waiting;
    } else {
        status.phase = Phase::Unknown;
    }
    if job.spec.paused {
        status.phase = Phase::Paused;
    }
    if failed > 0 && status.phase != Phase::Failed {
        let message = format!("EphemeralJob {name} failed to create ephemeral container");
        set_condition(status, Cond::JobFailed, "CreateFailed", message, now);
    }
    let active = matches!(status.phase, Phase::Waiting | Phase::Unknown | Phase::Running);
    let past_deadline = job.spec.active_deadline_seconds.is_some_and(|d| {
        status
            .start_time
            .as_ref()
            .is_some_and(|Time(start)| seconds_left(*start, d, now).is_zero())
    });
    if active && past_deadline {
        done(status, Phase::Failed);
        let message = format!("EphemeralJob {name} was active longer than specified deadline");
        set_condition(status, Cond::JobFailed, "DeadlineExceeded", message, now);
    }
    if job.spec.template.ephemeral_containers.is_empty() {
        status.phase = Phase::Error;
        set_condition(
            status,
            Cond::JobError,
            "Error",
            "job spec invalid fields.".into(),
            now,
        );
    }
}

/// Targets to inject into now: those without the job's containers, while fewer than `parallelism`
/// targets have containers not yet ended (injected ones the cache does not show yet included).
fn to_inject(job: &EphemeralJob, targets: &[&PodRecord], injected: &BTreeSet<String>) -> Vec<String> {
    if job.spec.template.ephemeral_containers.is_empty() {
        return vec![];
    }
    let name = |p: &PodRecord| p.metadata.name.clone().unwrap_or_default();
    let (mut in_flight, mut candidates) = (0usize, vec![]);
    for pod in targets {
        let pending = injected.contains(&name(pod));
        if holds(job, pod).0 || pending {
            let ended = matches!(pod_result(job, pod), PodResult::Succeeded | PodResult::Failed);
            if !ended {
                in_flight += 1;
            }
        } else {
            candidates.push(name(pod));
        }
    }
    let parallelism = usize::try_from(job.spec.parallelism.unwrap_or(1)).unwrap_or(0);
    candidates.truncate(parallelism.saturating_sub(in_flight));
    candidates
}

#[cfg(test)]
mod tests;
