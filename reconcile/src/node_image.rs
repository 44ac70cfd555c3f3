//! The NodeImage planner (`pkg/controller/nodeimage`; docs/image-pull.md#nodeimage): one NodeImage per
//! node, created once the node has been Ready for the creation delay and deleted with it; its labels mirror the node's; tags whose
//! owners are gone or whose TTL passed leave the spec; tags the node never answered, or that outlived
//! their deadline, are failed in the status.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, NodeCondition, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::apps_v1beta1::{
    FAKE_NODE_IMAGE_LABEL, ImagePullPhase, ImageTagStatus, NodeImage, NodeImageSpec, NodeImageStatus,
};

/// Seconds a node has to report a tag before the controller fails it.
pub const RESPONSE_TIMEOUT_SECONDS: i64 = 600;
/// The shortest requeue (OpenKruise: anything under 3 s becomes 3–5 s).
const MIN_REQUEUE: Duration = Duration::from_secs(3);

/// What one pass reads.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The node's name (the NodeImage's name).
    pub name: &'a str,
    /// The node, if it exists.
    pub node: Option<&'a Node>,
    /// The NodeImage, if it exists.
    pub node_image: Option<&'a NodeImage>,
    /// Uids of the ImagePullJobs that exist (owners with another uid are gone).
    pub live_jobs: &'a BTreeSet<String>,
    /// How long a node must have been Ready before its NodeImage is created
    /// (`--nodeimage-creation-delay`, [`DEFAULT_CREATION_DELAY`]).
    pub creation_delay: Duration,
    /// The clock.
    pub now: Timestamp,
}

/// OpenKruise's `--nodeimage-creation-delay` default.
pub const DEFAULT_CREATION_DELAY: Duration = Duration::from_secs(30);

/// What one pass decided.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// Create this NodeImage.
    pub create: Option<NodeImage>,
    /// Delete the NodeImage (its node is gone).
    pub delete: bool,
    /// Write these labels and spec.
    pub update: Option<NodeImage>,
    /// Write this status.
    pub status: Option<NodeImageStatus>,
    /// The tags this status fails: once it is written, each is announced (Warning `PullImageFailed`
    /// on its owners and the NodeImage).
    pub failed: Vec<FailedTag>,
    /// Look again after this long.
    pub requeue_after: Option<Duration>,
}

/// A tag the controller failed for its node.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedTag {
    /// `<name>:<tag>`.
    pub image: String,
    /// Why.
    pub message: &'static str,
    /// The tag's owners (usually ImagePullJobs).
    pub owners: Vec<ObjectReference>,
}

impl FailedTag {
    /// OpenKruise's event message (`nodeimage-controller`).
    pub fn note(&self, node: &str) -> String {
        format!(
            "Failed to pull image {} on node {node} for {}",
            self.image, self.message
        )
    }
}

/// Plans one pass.
pub fn plan(input: &Input<'_>) -> Plan {
    let Input {
        name,
        node,
        node_image,
        now,
        ..
    } = *input;
    let node = node.filter(|n| n.metadata.deletion_timestamp.is_none());
    // Virtual-kubelet nodes run no agent: they get no NodeImage.
    let virtual_node =
        node.is_some_and(|n| kruise_core::names::is_virtual_kubelet(n.metadata.labels.as_ref()));
    let Some(node_image) = node_image else {
        return match node {
            Some(node) if !virtual_node => create(name, node, input.creation_delay, now),
            _ => Plan::default(),
        };
    };
    if node.is_none() {
        let fake = label(&node_image.metadata, FAKE_NODE_IMAGE_LABEL).is_some();
        return Plan {
            delete: !fake,
            ..Plan::default()
        };
    }
    let mut plan = Plan::default();
    let mut next: Option<Timestamp> = None;
    let mut wanted = node_image.clone();
    if let Some(node) = node
        && node.metadata.labels.is_some()
        && wanted.metadata.labels != node.metadata.labels
    {
        wanted.metadata.labels.clone_from(&node.metadata.labels);
    }
    let statuses = node_image.status.as_ref().map(|s| &s.image_statuses);
    for (image, spec) in &mut wanted.spec.images {
        spec.tags.retain_mut(|tag| {
            if tag.created_at.is_none() {
                return false;
            }
            let before = tag.owner_references.len();
            tag.owner_references.retain(|o| {
                let is_job = o.kind.as_deref() == Some("ImagePullJob")
                    && o.api_version
                        .as_deref()
                        .is_some_and(|v| v.starts_with("apps.kruise.io/"));
                !is_job || o.uid.as_ref().is_some_and(|uid| input.live_jobs.contains(uid))
            });
            if before > 0 && tag.owner_references.is_empty() {
                return false;
            }
            let done = status_of(statuses, image, &tag.tag)
                .filter(|s| s.version == tag.version)
                .and_then(|s| s.completion_time.as_ref());
            let ttl = tag
                .pull_policy
                .as_ref()
                .and_then(|p| p.ttl_seconds_after_finished);
            if let (Some(Time(done)), Some(ttl)) = (done, ttl) {
                let at = done
                    .checked_add(SignedDuration::from_secs(i64::from(ttl)))
                    .unwrap_or(*done);
                if at <= now {
                    return false;
                }
                next = earliest(next, at);
            }
            true
        });
    }
    wanted.spec.images.retain(|_, i| !i.tags.is_empty());
    if wanted.metadata.labels != node_image.metadata.labels || wanted.spec != node_image.spec {
        plan.update = Some(wanted.clone());
    }
    let old_status = node_image.status.clone().unwrap_or_default();
    let mut status = old_status.clone();
    for (image, spec) in &wanted.spec.images {
        for tag in &spec.tags {
            let created = tag.created_at.as_ref().map_or(now, |t| t.0);
            let current =
                status_of(Some(&status.image_statuses), image, &tag.tag).filter(|s| s.version == tag.version);
            let failure = match current {
                None => {
                    let at = created
                        .checked_add(SignedDuration::from_secs(RESPONSE_TIMEOUT_SECONDS))
                        .unwrap_or(created);
                    if at <= now {
                        Some("node has not responded for a long time")
                    } else {
                        next = earliest(next, at);
                        None
                    }
                }
                Some(s) if s.completion_time.is_none() => {
                    let deadline = tag.pull_policy.as_ref().and_then(|p| p.active_deadline_seconds);
                    match deadline {
                        Some(d) => {
                            let at = created
                                .checked_add(SignedDuration::from_secs(
                                    d.saturating_add(RESPONSE_TIMEOUT_SECONDS),
                                ))
                                .unwrap_or(created);
                            if at <= now {
                                Some("pulling exceeds the activeDeadlineSeconds")
                            } else {
                                next = earliest(next, at);
                                None
                            }
                        }
                        None => None,
                    }
                }
                Some(_) => None,
            };
            if let Some(message) = failure {
                plan.failed.push(FailedTag {
                    image: format!("{image}:{}", tag.tag),
                    message,
                    owners: tag.owner_references.clone(),
                });
                let tags = &mut status.image_statuses.entry(image.clone()).or_default().tags;
                tags.retain(|t| t.tag != tag.tag);
                tags.push(ImageTagStatus {
                    tag: tag.tag.clone(),
                    phase: ImagePullPhase::Failed,
                    completion_time: Some(Time(Timestamp::from_second(now.as_second()).unwrap_or(now))),
                    version: tag.version,
                    message: message.to_owned(),
                    ..ImageTagStatus::default()
                });
                tags.sort_by(|a, b| a.tag.cmp(&b.tag));
            }
        }
    }
    if status != old_status {
        count(&wanted.spec, &mut status);
        plan.status = Some(status);
    }
    plan.requeue_after = next.map(|at| {
        Duration::try_from(at.duration_since(now))
            .unwrap_or(MIN_REQUEUE)
            .max(MIN_REQUEUE)
    });
    plan
}

/// The NodeImage of a node without one: created once the node has been Ready for `delay` (since its
/// Ready condition's last transition; a condition without one counts as Ready long ago), else a requeue
/// at that moment. A node that is not Ready gets nothing (its next change triggers a pass).
fn create(name: &str, node: &Node, delay: Duration, now: Timestamp) -> Plan {
    let Some(ready) = ready_condition(node) else {
        return Plan::default();
    };
    if let Some(Time(since)) = &ready.last_transition_time {
        let at = SignedDuration::try_from(delay)
            .ok()
            .and_then(|d| since.checked_add(d).ok())
            .unwrap_or(*since);
        if at > now {
            return Plan {
                requeue_after: Duration::try_from(at.duration_since(now)).ok(),
                ..Plan::default()
            };
        }
    }
    Plan {
        create: Some(NodeImage {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                labels: node.metadata.labels.clone(),
                ..ObjectMeta::default()
            },
            spec: NodeImageSpec::default(),
            status: None,
        }),
        ..Plan::default()
    }
}

/// Recounts `desired` (tags in the spec) and the phases of the statuses at their spec version.
pub fn count(spec: &NodeImageSpec, status: &mut NodeImageStatus) {
    let (mut desired, mut succeeded, mut failed, mut pulling, mut waiting) = (0, 0, 0, 0, 0);
    for (image, s) in &spec.images {
        for tag in &s.tags {
            desired += 1;
            match status_of(Some(&status.image_statuses), image, &tag.tag)
                .filter(|t| t.version == tag.version)
                .map(|t| &t.phase)
            {
                Some(ImagePullPhase::Succeeded) => succeeded += 1,
                Some(ImagePullPhase::Failed) => failed += 1,
                Some(ImagePullPhase::Pulling) => pulling += 1,
                _ => waiting += 1,
            }
        }
    }
    status.desired = desired;
    status.succeeded = succeeded;
    status.failed = failed;
    status.pulling = pulling;
    status.waiting = waiting;
}

fn status_of<'a>(
    statuses: Option<&'a BTreeMap<String, kruise_api::apps_v1beta1::ImageStatus>>,
    image: &str,
    tag: &str,
) -> Option<&'a ImageTagStatus> {
    statuses?.get(image)?.tags.iter().find(|t| t.tag == tag)
}

fn earliest(a: Option<Timestamp>, b: Timestamp) -> Option<Timestamp> {
    Some(a.map_or(b, |a| a.min(b)))
}

fn label<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.labels.as_ref()?.get(key).map(String::as_str)
}

/// The node's `Ready` condition, when it is `True`.
fn ready_condition(node: &Node) -> Option<&NodeCondition> {
    node.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "Ready")
        .filter(|c| c.status == "True")
}

#[cfg(test)]
mod tests;
