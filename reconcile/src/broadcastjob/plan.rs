//! One pass over a BroadcastJob (docs/broadcastjob.md#controller).

use foldhash::{HashMap, HashSet, HashSetExt as _};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::PodRecord;
use kruise_api::apps_v1alpha1::{
    BroadcastJob, BroadcastJobPhase, BroadcastJobStatus, CompletionPolicyType, FailurePolicyType,
    JobCondition, JobConditionType,
};
use kruise_core::node_fit::job_pod_fit;

use super::expectations::NodeExpectations;
use super::pod::{assigned_node, new_pod};
use crate::action::Action;
use crate::int_or_percent::scaled_i32;

/// What one pass reads.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The job.
    pub job: &'a BroadcastJob,
    /// Its pods (controller ownerReference with its uid).
    pub pods: &'a [PodRecord],
    /// Every node.
    pub nodes: &'a [Node],
    /// The clock.
    pub now: Timestamp,
}

/// What one pass decided.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// Pod creates and deletes and events, in order; the loop stops at the first failed call.
    pub actions: Vec<Action>,
    /// The status to write (the loop writes it when it differs from the stored one).
    pub status: Option<BroadcastJobStatus>,
    /// `ttlSecondsAfterFinished` passed: delete the job.
    pub delete_job: bool,
    /// Look again after this long.
    pub requeue_after: Option<Duration>,
    /// Unobserved writes hold this pass (nothing else was decided).
    pub waiting: bool,
}

/// Plans one pass; `expectations` must have observed `input.pods` first.
pub fn plan(input: &Input<'_>, expectations: &NodeExpectations) -> Plan {
    let Input { job, now, .. } = *input;
    if is_finished(job) {
        return finished(job, now);
    }
    if let Some(left) = expectations.wait(now) {
        return Plan {
            waiting: true,
            requeue_after: Some(left),
            ..Plan::default()
        };
    }
    Pass::new(input).run()
}

/// `Complete` or `Failed` True, and the policy is not `Never` (OpenKruise's `IsJobFinished`).
fn is_finished(job: &BroadcastJob) -> bool {
    policy(job) != CompletionPolicyType::Never
        && job.status.as_ref().is_some_and(|s| {
            s.conditions.iter().any(|c| {
                matches!(c.type_, JobConditionType::Complete | JobConditionType::Failed) && c.status == "True"
            })
        })
}

fn policy(job: &BroadcastJob) -> CompletionPolicyType {
    job.spec
        .completion_policy
        .type_
        .clone()
        .unwrap_or(CompletionPolicyType::Always)
}

/// A finished job waits for its TTL, then is deleted.
fn finished(job: &BroadcastJob, now: Timestamp) -> Plan {
    let ttl = job.spec.completion_policy.ttl_seconds_after_finished;
    let done = job.status.as_ref().and_then(|s| s.completion_time.as_ref());
    match (ttl, done) {
        (Some(ttl), Some(Time(done))) => match until(*done, i64::from(ttl), now) {
            Some(left) => Plan {
                requeue_after: Some(left),
                ..Plan::default()
            },
            None => Plan {
                delete_job: true,
                ..Plan::default()
            },
        },
        _ => Plan::default(),
    }
}

/// Time from `now` until `seconds` after `from`; `None` once passed.
fn until(from: Timestamp, seconds: i64, now: Timestamp) -> Option<Duration> {
    let at = from.checked_add(SignedDuration::from_secs(seconds)).ok()?;
    Duration::try_from(at.duration_since(now))
        .ok()
        .filter(|d| !d.is_zero())
}

fn whole_seconds(t: Timestamp) -> Time {
    Time(Timestamp::from_second(t.as_second()).unwrap_or(t))
}

/// The state of one pass.
struct Pass<'a> {
    input: &'a Input<'a>,
    status: BroadcastJobStatus,
    actions: Vec<Action>,
    requeue_after: Option<Duration>,
}

/// Pods by what they count as.
#[derive(Default)]
struct Counts<'a> {
    active: Vec<&'a PodRecord>,
    failed: usize,
    succeeded: usize,
    /// Node → (it has an active pod, it has a finished one).
    by_node: HashMap<&'a str, (bool, bool)>,
}

impl<'a> Pass<'a> {
    fn new(input: &'a Input<'a>) -> Self {
        Pass {
            input,
            status: input.job.status.clone().unwrap_or_default(),
            actions: Vec::new(),
            requeue_after: None,
        }
    }

    fn job(&self) -> &'a BroadcastJob {
        self.input.job
    }

    fn later(&mut self, after: Duration) {
        self.requeue_after = Some(self.requeue_after.map_or(after, |r| r.min(after)));
    }

    fn event(&mut self, warning: bool, reason: &'static str, message: String) {
        self.actions.push(if warning {
            Action::warning(reason, message)
        } else {
            Action::normal(reason, message)
        });
    }

    fn run(mut self) -> Plan {
        let job = self.job();
        let now = self.input.now;
        let always = policy(job) == CompletionPolicyType::Always;
        if self.status.start_time.is_none() {
            self.status.start_time = Some(whole_seconds(now));
        }
        if always
            && let (Some(deadline), Some(Time(start))) = (
                job.spec.completion_policy.active_deadline_seconds,
                self.status.start_time.as_ref(),
            )
            && let Some(left) = until(*start, deadline, now)
        {
            self.later(left);
        }
        if self.status.phase.as_str().is_empty() {
            self.status.phase = BroadcastJobPhase::Running;
        }

        let counts = self.count();
        let (desired, to_run, unfit, all_ran) = self.nodes(&counts);
        self.status.active = len(counts.active.len());
        self.status.failed = len(counts.failed);
        self.status.succeeded = len(counts.succeeded);
        self.status.desired = len(desired.len());

        if self.status.phase == BroadcastJobPhase::Failed {
            return self.done();
        }
        let failure = job
            .spec
            .failure_policy
            .type_
            .clone()
            .unwrap_or(FailurePolicyType::FailFast);
        let failure_pause = failure == FailurePolicyType::Pause && counts.failed > 0;
        if job.spec.paused || failure_pause {
            if self.status.phase != BroadcastJobPhase::Paused {
                if failure_pause && !job.spec.paused {
                    self.event(true, "Paused", "job is paused, due to failed pod".into());
                }
                self.status.phase = BroadcastJobPhase::Paused;
            }
            return self.done();
        }
        if self.status.phase == BroadcastJobPhase::Paused {
            self.status.phase = BroadcastJobPhase::Running;
            self.event(false, "Continue", "continue to process job".into());
        }

        let failed = if counts.failed > 0 && failure == FailurePolicyType::FailFast {
            Some(("FailedPodFound", "failed pod is found".to_owned()))
        } else if always && self.past_deadline() {
            Some((
                "DeadlineExceeded",
                "Job was active longer than specified deadline".to_owned(),
            ))
        } else {
            None
        };
        if let Some((reason, message)) = failed {
            for pod in &counts.active {
                self.delete(pod);
            }
            self.status.phase = BroadcastJobPhase::Failed;
            self.finish(JobConditionType::Failed, reason, message.clone());
            self.event(true, reason, message);
            return self.done();
        }

        let leaving: Vec<&PodRecord> = if unfit.is_empty() {
            Vec::new()
        } else {
            let on_unfit = |p: &&&PodRecord| assigned_node(p).is_some_and(|n| unfit.contains(n));
            counts.active.iter().filter(on_unfit).copied().collect()
        };
        for pod in &leaving {
            self.delete(pod);
        }
        let active = counts.active.len() - leaving.len();
        let parallelism = self.parallelism(desired.len());
        if active > parallelism {
            self.event(
                true,
                "TooManyActivePods",
                format!("Too many active pods running, active: {active}, parallelism: {parallelism}"),
            );
        }
        let room = parallelism.saturating_sub(active);
        if room > 0 && !to_run.is_empty() {
            let template = Arc::new(new_pod(job));
            for node in to_run.iter().take(room) {
                self.actions.push(Action::CreatePodOnNode {
                    template: Arc::clone(&template),
                    node: (*node).to_owned(),
                });
            }
        }
        if always && !desired.is_empty() && all_ran {
            self.status.phase = BroadcastJobPhase::Completed;
            let message = format!(
                "Job {}/{} is completed, {} pods succeeded, {} pods failed",
                job.metadata.namespace.as_deref().unwrap_or_default(),
                job.metadata.name.as_deref().unwrap_or_default(),
                counts.succeeded,
                counts.failed
            );
            self.finish(JobConditionType::Complete, "Complete", String::new());
            self.event(false, "JobComplete", message);
        }
        self.done()
    }

    /// Classifies the pods (OpenKruise's `filterPods`): Succeeded, Failed (or an `OnFailure` pod
    /// restarted more than `restartLimit` times), and the rest active unless being deleted.
    fn count(&self) -> Counts<'a> {
        let limit = self.job().spec.failure_policy.restart_limit;
        let mut counts = Counts::default();
        for pod in self.input.pods {
            let (active, done) = match kruise_core::pod_state::phase(pod) {
                "Succeeded" => (false, true),
                "Failed" => (false, true),
                _ if pod.metadata.deletion_timestamp.is_some() => (false, false),
                _ if restarted_past(pod, limit) => (false, true),
                _ => (true, false),
            };
            match kruise_core::pod_state::phase(pod) {
                "Succeeded" => counts.succeeded += 1,
                _ if done => counts.failed += 1,
                _ if active => counts.active.push(pod),
                _ => {}
            }
            if let Some(node) = assigned_node(pod) {
                let entry = counts.by_node.entry(node).or_default();
                entry.0 |= active;
                entry.1 |= done;
            }
        }
        counts
    }

    /// Desired nodes, nodes to run a new pod on (name order), nodes whose active pods must go, and
    /// whether every desired node ran its pod (it has a finished one and none still active).
    fn nodes(&self, counts: &Counts<'a>) -> (Vec<&'a str>, Vec<&'a str>, HashSet<&'a str>, bool) {
        let template = self.job().spec.template.spec.clone().unwrap_or_default();
        let with_pod = &counts.by_node;
        let (mut desired, mut to_run, mut unfit) = (Vec::new(), Vec::new(), HashSet::new());
        let mut all_ran = true;
        for node in self.input.nodes {
            let Some(name) = node.metadata.name.as_deref() else {
                continue;
            };
            let fit = job_pod_fit(&template, node);
            if let Some(&(active, done)) = with_pod.get(name) {
                if fit.should_continue_running {
                    desired.push(name);
                    all_ran &= !active && done;
                } else {
                    unfit.insert(name);
                }
            } else if fit.should_run {
                desired.push(name);
                to_run.push(name);
                all_ran = false;
            }
        }
        to_run.sort_unstable();
        (desired, to_run, unfit, all_ran)
    }

    /// `parallelism` against the desired count, rounded up; unbounded when absent or invalid.
    fn parallelism(&self, desired: usize) -> usize {
        let Some(value) = &self.job().spec.parallelism else {
            return usize::MAX;
        };
        let total = i32::try_from(desired).unwrap_or(i32::MAX);
        match value {
            IntOrString::Int(i) => usize::try_from(*i).unwrap_or(0),
            IntOrString::String(_) => scaled_i32(value, total, true, "parallelism")
                .ok()
                .and_then(|v| usize::try_from(v).ok())
                .unwrap_or(usize::MAX),
        }
    }

    fn past_deadline(&self) -> bool {
        let deadline = self.job().spec.completion_policy.active_deadline_seconds;
        match (deadline, self.status.start_time.as_ref()) {
            (Some(deadline), Some(Time(start))) => until(*start, deadline, self.input.now).is_none(),
            _ => false,
        }
    }

    /// Deletes an active pod; it counts as failed from now on (as OpenKruise counts it).
    fn delete(&mut self, pod: &PodRecord) {
        self.actions.push(Action::DeletePod {
            name: pod.metadata.name.clone().unwrap_or_default(),
            uid: pod.metadata.uid.clone(),
        });
        self.status.active -= 1;
        self.status.failed += 1;
    }

    /// Marks the job finished: the condition, `completionTime`, and a look again at the TTL.
    fn finish(&mut self, type_: JobConditionType, reason: &str, message: String) {
        let now = whole_seconds(self.input.now);
        self.status.conditions.retain(|c| c.type_ != type_);
        self.status.conditions.push(JobCondition {
            type_,
            status: "True".into(),
            last_probe_time: Some(now.clone()),
            last_transition_time: Some(now.clone()),
            reason: reason.into(),
            message,
        });
        self.status.completion_time = Some(now);
        self.requeue_after = None;
        if let Some(ttl) = self.job().spec.completion_policy.ttl_seconds_after_finished {
            self.later(Duration::from_secs(u64::try_from(ttl).unwrap_or(0) + 1));
        }
    }

    fn done(self) -> Plan {
        Plan {
            actions: self.actions,
            status: Some(self.status),
            delete_job: false,
            requeue_after: self.requeue_after,
            waiting: false,
        }
    }
}

/// An `OnFailure` pod whose containers restarted more than `limit` times in all.
fn restarted_past(pod: &PodRecord, limit: i32) -> bool {
    let on_failure = pod.spec.as_ref().and_then(|s| s.restart_policy.as_deref()) == Some("OnFailure");
    let restarts: i64 = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .map(|c| c.iter().map(|c| i64::from(c.restart_count)).sum())
        .unwrap_or(0);
    on_failure && restarts > i64::from(limit)
}

fn len(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}
