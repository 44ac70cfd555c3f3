//! One pass over an AdvancedCronJob (docs/advancedcronjob.md#controller).

use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::apps_v1alpha1::{
    AdvancedCronJob, AdvancedCronJobStatus, BroadcastJob, ConcurrencyPolicy, SCHEDULED_AT_ANNOTATION,
    TemplateKind,
};

use crate::rfc3339::rfc3339;
use kruise_core::cron::{Schedule, ScheduleError};

/// The kind of a child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildKind {
    /// `batch/v1` Job.
    Job,
    /// `apps.kruise.io/v1alpha1` BroadcastJob.
    BroadcastJob,
}

/// A child the AdvancedCronJob controls, as the planner needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Child {
    /// Its kind.
    pub kind: ChildKind,
    /// Its name.
    pub name: String,
    /// Its uid.
    pub uid: Option<String>,
    /// Its `apps.kruise.io/scheduled-at` annotation, else its creation time.
    pub scheduled_at: Option<Timestamp>,
    /// `Some(true)`: completed; `Some(false)`: failed; `None`: still running.
    pub succeeded: Option<bool>,
}

/// A child to create.
#[derive(Debug, Clone, PartialEq)]
pub enum NewChild {
    /// A Job.
    Job(Box<Job>),
    /// A BroadcastJob.
    BroadcastJob(Box<BroadcastJob>),
}

/// One API call.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Create a child.
    Create(NewChild),
    /// Delete a child (background propagation).
    Delete {
        /// Its kind.
        kind: ChildKind,
        /// Its name.
        name: String,
        /// Its uid, for a precondition.
        uid: Option<String>,
    },
}

/// What one pass reads.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The AdvancedCronJob.
    pub acj: &'a AdvancedCronJob,
    /// Its children.
    pub children: &'a [Child],
    /// The clock.
    pub now: Timestamp,
}

/// What one pass decided.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// Deletions (history limits, `Replace`) then at most one create.
    pub steps: Vec<Step>,
    /// The status to write.
    pub status: AdvancedCronJobStatus,
    /// Look again after this long (the next scheduled time).
    pub requeue_after: Option<Duration>,
    /// A schedule that cannot be used (nothing is scheduled until it is fixed).
    pub error: Option<ScheduleError>,
}

/// More missed runs than this since the last one: nothing is started (OpenKruise, Kubernetes).
pub const TOO_MANY_MISSED: usize = 100;

/// Plans one pass.
pub fn plan(input: &Input<'_>) -> Plan {
    let Input { acj, children, now } = *input;
    let spec = &acj.spec;
    let mut plan = Plan::default();
    let kind = if spec.template.broadcast_job_template.is_some() {
        TemplateKind::BroadcastJob
    } else {
        TemplateKind::Job
    };
    plan.status.type_ = Some(kind.clone());
    let stored = acj
        .status
        .as_ref()
        .and_then(|s| s.last_schedule_time.as_ref())
        .map(|t| t.0);
    let newest_child = children.iter().filter_map(|c| c.scheduled_at).max();
    let mut last = stored.max(newest_child);
    let active: Vec<&Child> = children.iter().filter(|c| c.succeeded.is_none()).collect();
    plan.status.active = active.iter().map(|c| reference(acj, c)).collect();

    history(
        &mut plan,
        children,
        spec.successful_jobs_history_limit.unwrap_or(3),
        Some(true),
    );
    history(
        &mut plan,
        children,
        spec.failed_jobs_history_limit.unwrap_or(1),
        Some(false),
    );
    plan.status.last_schedule_time = last.map(Time);
    if spec.paused == Some(true) {
        return plan;
    }
    let schedule = match Schedule::parse(&spec.schedule, spec.time_zone.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            plan.error = Some(e);
            return plan;
        }
    };
    let created = acj
        .metadata
        .creation_timestamp
        .as_ref()
        .map(|t| t.0)
        .unwrap_or(now);
    let mut earliest = last.unwrap_or(created);
    if let Some(deadline) = spec.starting_deadline_seconds
        && let Ok(floor) = now.checked_sub(SignedDuration::from_secs(deadline))
    {
        earliest = earliest.max(floor);
    }
    let mut missed = None;
    let mut count = 0usize;
    let mut t = earliest;
    while let Some(next) = schedule.next_after(t) {
        if next > now {
            break;
        }
        missed = Some(next);
        count += 1;
        if count > TOO_MANY_MISSED {
            return plan;
        }
        t = next;
    }
    plan.requeue_after = schedule.next_after(now).and_then(|next| until(now, next));
    let Some(run) = missed else { return plan };
    if let Some(deadline) = spec.starting_deadline_seconds
        && run
            .checked_add(SignedDuration::from_secs(deadline))
            .is_ok_and(|end| end < now)
    {
        return plan;
    }
    match spec
        .concurrency_policy
        .clone()
        .unwrap_or(ConcurrencyPolicy::Allow)
    {
        ConcurrencyPolicy::Forbid if !active.is_empty() => return plan,
        ConcurrencyPolicy::Replace => {
            for child in &active {
                plan.steps.push(Step::Delete {
                    kind: child.kind,
                    name: child.name.clone(),
                    uid: child.uid.clone(),
                });
            }
            plan.status.active.clear();
        }
        _ => {}
    }
    let name = format!(
        "{}-{}",
        acj.metadata.name.as_deref().unwrap_or_default(),
        run.as_second()
    );
    if children.iter().any(|c| c.name == name) {
        return plan;
    }
    let child = new_child(acj, &name, run);
    let created_kind = match &child {
        NewChild::Job(_) => ChildKind::Job,
        NewChild::BroadcastJob(_) => ChildKind::BroadcastJob,
    };
    plan.status.active.push(reference(
        acj,
        &Child {
            kind: created_kind,
            name,
            uid: None,
            scheduled_at: Some(run),
            succeeded: None,
        },
    ));
    plan.steps.push(Step::Create(child));
    last = last.max(Some(run));
    plan.status.last_schedule_time = last.map(Time);
    plan
}

/// Deletes the oldest finished children of one outcome beyond `limit`.
fn history(plan: &mut Plan, children: &[Child], limit: i32, outcome: Option<bool>) {
    let mut finished: Vec<&Child> = children.iter().filter(|c| c.succeeded == outcome).collect();
    let keep = usize::try_from(limit).unwrap_or(0);
    if finished.len() <= keep {
        return;
    }
    finished.sort_by(|a, b| {
        a.scheduled_at
            .cmp(&b.scheduled_at)
            .then_with(|| a.name.cmp(&b.name))
    });
    let excess = finished.len() - keep;
    for child in finished.into_iter().take(excess) {
        plan.steps.push(Step::Delete {
            kind: child.kind,
            name: child.name.clone(),
            uid: child.uid.clone(),
        });
    }
}

fn until(now: Timestamp, at: Timestamp) -> Option<Duration> {
    Duration::try_from(at.duration_since(now))
        .ok()
        .map(|d| d.max(Duration::from_millis(100)))
}

fn reference(acj: &AdvancedCronJob, child: &Child) -> ObjectReference {
    let (api_version, kind) = match child.kind {
        ChildKind::Job => ("batch/v1", "Job"),
        ChildKind::BroadcastJob => ("apps.kruise.io/v1alpha1", "BroadcastJob"),
    };
    ObjectReference {
        api_version: Some(api_version.into()),
        kind: Some(kind.into()),
        name: Some(child.name.clone()),
        namespace: acj.metadata.namespace.clone(),
        uid: child.uid.clone(),
        ..Default::default()
    }
}

/// The child for the run at `run`: the template's labels and annotations, the `scheduled-at`
/// annotation, the AdvancedCronJob as controller.
fn new_child(acj: &AdvancedCronJob, name: &str, run: Timestamp) -> NewChild {
    let owner = OwnerReference {
        api_version: "apps.kruise.io/v1alpha1".into(),
        kind: "AdvancedCronJob".into(),
        name: acj.metadata.name.clone().unwrap_or_default(),
        uid: acj.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    let meta = |source: Option<&ObjectMeta>| {
        let source = source.cloned().unwrap_or_default();
        let mut annotations = source.annotations.unwrap_or_default();
        annotations.insert(SCHEDULED_AT_ANNOTATION.into(), rfc3339(run));
        ObjectMeta {
            name: Some(name.to_owned()),
            namespace: acj.metadata.namespace.clone(),
            labels: source.labels,
            annotations: Some(annotations),
            owner_references: Some(vec![owner.clone()]),
            ..Default::default()
        }
    };
    let template = &acj.spec.template;
    match &template.broadcast_job_template {
        Some(b) => NewChild::BroadcastJob(Box::new(BroadcastJob {
            metadata: meta(b.metadata.as_ref()),
            spec: b.spec.clone(),
            status: None,
        })),
        None => {
            let j = template.job_template.clone().unwrap_or_default();
            NewChild::Job(Box::new(Job {
                metadata: meta(j.metadata.as_ref()),
                spec: j.spec,
                status: None,
            }))
        }
    }
}
