//! One pass over an ImagePullJob (docs/image-pull.md#imagepulljob).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{
    CompletionPolicyType, ImagePullJob, ImagePullJobStatus, ImagePullPhase, ImagePullPolicy, NodeImage,
    ReferenceObject,
};
use kruise_core::image_ref::ImageRef;
use kruise_core::pod_state::is_active;
use kruise_core::selector::Selector;

use super::request::{TagRequest, derived_pull_policy, owner_of};

/// How often a running job is looked at again without a trigger.
const RUNNING_REQUEUE: Duration = Duration::from_secs(10);

/// What one pass reads.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The job (v1beta1).
    pub job: &'a ImagePullJob,
    /// Every NodeImage.
    pub node_images: &'a [NodeImage],
    /// The pods of the job's namespace (read for `podSelector` only).
    pub pods: &'a [PodRecord],
    /// The clock.
    pub now: Timestamp,
    /// A uniform draw in [0, 600) spreading the tags' TTLs (see [`derived_pull_policy`]).
    pub jitter: i32,
    /// The pull-secret references every target's image must carry
    /// ([`super::secrets::SecretsPlan::refs`]).
    pub secrets: &'a [ReferenceObject],
}

/// What one pass decided.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// Tags to write into NodeImages, in target order.
    pub requests: Vec<TagRequest>,
    /// The status to write (the loop writes it when it differs).
    pub status: Option<ImagePullJobStatus>,
    /// `ttlSecondsAfterFinished` passed: delete the job.
    pub delete_job: bool,
    /// Look again after this long.
    pub requeue_after: Option<Duration>,
}

/// The NodeImages the job targets, in OpenKruise's order: pod order for `podSelector` (each node
/// once), the listed order for `names`, name order otherwise. Missing NodeImages are skipped.
pub fn targets<'a>(
    job: &ImagePullJob,
    node_images: &'a [NodeImage],
    pods: &[PodRecord],
) -> Vec<&'a NodeImage> {
    let by_name: BTreeMap<&str, &NodeImage> = node_images
        .iter()
        .map(|n| (n.metadata.name.as_deref().unwrap_or_default(), n))
        .collect();
    let spec = &job.spec.template;
    if let Some(pod_selector) = &spec.pod_selector {
        let selector = Selector::parse(Some(&pod_selector.label_selector));
        let mut seen = BTreeSet::new();
        return pods
            .iter()
            .filter(|p| is_active(p))
            .filter(|p| selector.matches_labels(&p.metadata.labels))
            .filter_map(|p| p.spec.as_ref()?.node_name.as_deref())
            .filter(|node| seen.insert(*node))
            .filter_map(|node| by_name.get(node).copied())
            .collect();
    }
    match &spec.selector {
        Some(s) if !s.names.is_empty() => s
            .names
            .iter()
            .filter_map(|n| by_name.get(n.as_str()).copied())
            .collect(),
        Some(s) => {
            let selector = Selector::parse(Some(&s.label_selector));
            by_name
                .into_values()
                .filter(|n| selector.matches_labels(n.metadata.labels.as_ref().unwrap_or(&BTreeMap::new())))
                .collect()
        }
        None => by_name.into_values().collect(),
    }
}

/// Plans one pass.
pub fn plan(input: &Input<'_>) -> Plan {
    let Input { job, now, .. } = *input;
    let old = job.status.clone().unwrap_or_default();
    if let Some(Time(done)) = old.completion_time {
        return finished(job, done, now);
    }
    let Ok(image) = ImageRef::parse(&job.spec.image) else {
        // The webhook refuses such jobs; one stored before stays untouched.
        return Plan::default();
    };
    let uid = job.metadata.uid.as_deref().unwrap_or_default();
    let targets = targets(job, input.node_images, input.pods);
    let mut status = ImagePullJobStatus {
        start_time: Some(old.start_time.clone().unwrap_or_else(|| whole_seconds(now))),
        desired: len_i32(targets.len()),
        ..ImagePullJobStatus::default()
    };
    let mut failed_nodes = BTreeSet::new();
    let mut unsynced = Vec::new();
    // Nodes whose tag is the job's but whose image lacks one of the job's secrets.
    let mut lacking_secrets = Vec::new();
    let mut active_nodes = Vec::new();
    for node_image in &targets {
        let node = node_image.metadata.name.clone().unwrap_or_default();
        let image_spec = node_image.spec.images.get(&image.name);
        let spec_tag = image_spec
            .and_then(|i| i.tags.iter().find(|t| t.tag == image.tag))
            .filter(|t| t.owner_references.iter().any(|o| o.uid.as_deref() == Some(uid)));
        let Some(spec_tag) = spec_tag else {
            unsynced.push(node);
            continue;
        };
        let has_secrets = input.secrets.iter().all(|wanted| {
            image_spec.is_some_and(|i| {
                i.pull_secrets
                    .iter()
                    .any(|r| r.namespace == wanted.namespace && r.name == wanted.name)
            })
        });
        if !has_secrets {
            lacking_secrets.push(node.clone());
        }
        let status_tag = node_image
            .status
            .as_ref()
            .and_then(|s| s.image_statuses.get(&image.name))
            .and_then(|i| i.tags.iter().find(|t| t.tag == image.tag))
            .filter(|t| t.version == spec_tag.version);
        match status_tag.map(|t| &t.phase) {
            Some(ImagePullPhase::Succeeded) => status.succeeded += 1,
            Some(ImagePullPhase::Failed) => {
                status.failed += 1;
                failed_nodes.insert(node);
            }
            _ => active_nodes.push(node),
        }
    }
    status.active = len_i32(active_nodes.len());
    let always = job.spec.template.completion_policy.type_ != Some(CompletionPolicyType::Never);
    let deadline = job
        .spec
        .template
        .completion_policy
        .active_deadline_seconds
        .filter(|_| always)
        .and_then(|d| {
            status
                .start_time
                .as_ref()?
                .0
                .checked_add(SignedDuration::from_secs(d))
                .ok()
        });
    let mut plan = Plan::default();
    if deadline.is_some_and(|at| at <= now) {
        status.completion_time = Some(whole_seconds(now));
        status.failed += status.active + len_i32(unsynced.len());
        status.active = 0;
        failed_nodes.extend(active_nodes);
        failed_nodes.extend(unsynced);
        status.failed_nodes = failed_nodes.into_iter().collect();
        status.message = "job exceeds activeDeadlineSeconds".into();
        plan.status = Some(status);
        plan.requeue_after = ttl_left(job, now, now);
        return plan;
    }
    if always && status.desired == status.succeeded + status.failed {
        status.completion_time = Some(whole_seconds(now));
    }
    status.failed_nodes = failed_nodes.into_iter().collect();
    status.message = message(&status);
    if status.completion_time.is_none() {
        let room = usize::try_from(parallelism(job).saturating_sub(status.active)).unwrap_or(0);
        let owner = owner_of(job);
        let pull_policy = derived_pull_policy(job, input.jitter);
        let image_pull_policy = job
            .spec
            .template
            .image_pull_policy
            .clone()
            .unwrap_or(ImagePullPolicy::IfNotPresent);
        // Adding a secret starts no pull, so those nodes are not held back by `parallelism`.
        plan.requests = unsynced
            .into_iter()
            .take(room)
            .chain(lacking_secrets)
            .map(|node| TagRequest {
                node,
                name: image.name.clone(),
                tag: image.tag.clone(),
                owner: owner.clone(),
                pull_policy: pull_policy.clone(),
                image_pull_policy: image_pull_policy.clone(),
                sandbox_config: job.spec.template.sandbox_config.clone(),
                pull_secrets: input.secrets.to_vec(),
            })
            .collect();
        let to_deadline = deadline.and_then(|at| Duration::try_from(at.duration_since(now)).ok());
        plan.requeue_after = Some(to_deadline.map_or(RUNNING_REQUEUE, |d| {
            d.clamp(Duration::from_secs(1), RUNNING_REQUEUE)
        }));
    } else {
        plan.requeue_after = ttl_left(job, now, now);
    }
    plan.status = Some(status);
    plan
}

/// OpenKruise's `formatStatusMessage`.
fn message(status: &ImagePullJobStatus) -> String {
    if status.completion_time.is_some() {
        "job has completed".into()
    } else if status.desired == 0 {
        "job is running, no progress".into()
    } else {
        let done = f64::from(status.succeeded + status.failed);
        format!(
            "job is running, progress {:.1}%",
            100.0 * done / f64::from(status.desired)
        )
    }
}

/// Nodes pulling at once: an integer, unset 1, 0 pauses (the webhook refuses percents and negatives).
fn parallelism(job: &ImagePullJob) -> i32 {
    match &job.spec.template.parallelism {
        None => 1,
        Some(IntOrString::Int(n)) => (*n).max(0),
        Some(IntOrString::String(s)) => s.parse::<i32>().map_or(1, |n| n.max(0)),
    }
}

/// A finished job waits for its TTL, then is deleted.
fn finished(job: &ImagePullJob, done: Timestamp, now: Timestamp) -> Plan {
    match job.spec.template.completion_policy.ttl_seconds_after_finished {
        None => Plan::default(),
        Some(_) => match ttl_left(job, done, now) {
            Some(left) => Plan {
                requeue_after: Some(left),
                ..Plan::default()
            },
            None => Plan {
                delete_job: true,
                ..Plan::default()
            },
        },
    }
}

/// Time left until `ttlSecondsAfterFinished` after `done`; `None` without a TTL or once passed.
fn ttl_left(job: &ImagePullJob, done: Timestamp, now: Timestamp) -> Option<Duration> {
    let ttl = job.spec.template.completion_policy.ttl_seconds_after_finished?;
    let at = done.checked_add(SignedDuration::from_secs(i64::from(ttl))).ok()?;
    Duration::try_from(at.duration_since(now))
        .ok()
        .filter(|d| !d.is_zero())
}

fn whole_seconds(t: Timestamp) -> Time {
    Time(Timestamp::from_second(t.as_second()).unwrap_or(t))
}

fn len_i32(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}
