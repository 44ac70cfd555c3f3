//! The ImageListPullJob planner (`pkg/controller/imagelistpulljob`; docs/image-pull.md#imagelistpulljob):
//! one child ImagePullJob per listed image, carrying the list's template; children of removed images
//! or with an outdated template are deleted (and recreated); the status counts the children.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::apps_v1beta1::{
    CompletionPolicyType, FailedImageStatus, ImageListPullJob, ImageListPullJobStatus, ImagePullJob,
    ImagePullJobSpec,
};

/// What one pass reads.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The list job (v1beta1).
    pub job: &'a ImageListPullJob,
    /// Its children (ImagePullJobs whose controller is the list job's uid).
    pub children: &'a [ImagePullJob],
    /// The clock.
    pub now: Timestamp,
}

/// What one pass decided.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// Children to create (`generateName: <list>-`).
    pub create: Vec<ImagePullJob>,
    /// Children to delete, by name.
    pub delete: Vec<String>,
    /// The status to write.
    pub status: Option<ImageListPullJobStatus>,
    /// The TTL passed: delete the list job.
    pub delete_job: bool,
    /// Look again after this long.
    pub requeue_after: Option<Duration>,
}

/// Plans one pass.
pub fn plan(input: &Input<'_>) -> Plan {
    let Input { job, children, now } = *input;
    let old = job.status.clone().unwrap_or_default();
    if let Some(Time(done)) = old.completion_time {
        let ttl = job.spec.template.completion_policy.ttl_seconds_after_finished;
        return match ttl.and_then(|t| done.checked_add(SignedDuration::from_secs(i64::from(t))).ok()) {
            None => Plan::default(),
            Some(at) if at <= now => Plan {
                delete_job: true,
                ..Plan::default()
            },
            Some(at) => Plan {
                requeue_after: Duration::try_from(at.duration_since(now)).ok(),
                ..Plan::default()
            },
        };
    }
    let live: Vec<&ImagePullJob> = children
        .iter()
        .filter(|c| c.metadata.deletion_timestamp.is_none())
        .collect();
    let wanted: BTreeSet<&str> = job.spec.images.iter().map(String::as_str).collect();
    let mut plan = Plan::default();
    let mut current = Vec::new();
    let mut covered = BTreeSet::new();
    for child in &live {
        let image = child.spec.image.as_str();
        let mut theirs = child.spec.template.clone();
        theirs
            .image_pull_policy
            .clone_from(&job.spec.template.image_pull_policy);
        let up_to_date = theirs == job.spec.template;
        if wanted.contains(image) && up_to_date && covered.insert(image) {
            current.push(*child);
        } else {
            plan.delete.push(child.metadata.name.clone().unwrap_or_default());
        }
    }
    for image in &job.spec.images {
        if !covered.contains(image.as_str()) {
            plan.create.push(child_for(job, image));
        }
    }
    let mut status = ImageListPullJobStatus {
        start_time: Some(old.start_time.clone().unwrap_or_else(|| whole_seconds(now))),
        desired: i32::try_from(job.spec.images.len()).unwrap_or(i32::MAX),
        ..ImageListPullJobStatus::default()
    };
    for child in current
        .iter()
        .filter(|c| c.status.as_ref().is_some_and(|s| s.start_time.is_some()))
    {
        let s = child.status.clone().unwrap_or_default();
        if s.active > 0 {
            status.active += 1;
        }
        if s.desired == s.succeeded + s.failed {
            status.completed += 1;
        }
        if s.desired == s.succeeded {
            status.succeeded += 1;
        }
        if s.failed > 0 {
            let name = child.metadata.name.clone().unwrap_or_default();
            status.failed_image_statuses.push(FailedImageStatus {
                message: format!(
                    "Please check for details which nodes failed by 'kubectl get ImagePullJob {name}'."
                ),
                image_pull_job: name,
                name: child.spec.image.clone(),
            });
        }
    }
    let never = job.spec.template.completion_policy.type_ == Some(CompletionPolicyType::Never);
    if !never && plan.create.is_empty() && plan.delete.is_empty() && status.desired == status.completed {
        status.completion_time = Some(whole_seconds(now));
    }
    plan.status = Some(status);
    plan
}

/// A child ImagePullJob for `image`, controlled by the list job.
pub fn child_for(job: &ImageListPullJob, image: &str) -> ImagePullJob {
    let name = job.metadata.name.clone().unwrap_or_default();
    // The child's webhook defaults `imagePullPolicy`; up-to-date checks ignore that field.
    let template = job.spec.template.clone();
    ImagePullJob {
        metadata: ObjectMeta {
            generate_name: Some(format!("{name}-")),
            namespace: job.metadata.namespace.clone(),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps.kruise.io/v1beta1".into(),
                kind: "ImageListPullJob".into(),
                name,
                uid: job.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..ObjectMeta::default()
        },
        spec: ImagePullJobSpec {
            image: image.to_owned(),
            template,
        },
        status: None,
    }
}

fn whole_seconds(t: Timestamp) -> Time {
    Time(Timestamp::from_second(t.as_second()).unwrap_or(t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> Timestamp {
        "2026-01-01T12:00:00Z".parse().unwrap()
    }

    fn list(images: &[&str]) -> ImageListPullJob {
        serde_json::from_value(
            json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "ImageListPullJob",
            "metadata": {"name": "list", "namespace": "default", "uid": "list-uid"},
            "spec": {"images": images, "parallelism": 2, "completionPolicy": {"type": "Always"}}}),
        )
        .unwrap()
    }

    /// Children as the API server would store the plan's creates, named `list-<i>`.
    fn created(plan: &Plan) -> Vec<ImagePullJob> {
        plan.create
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut c = c.clone();
                c.metadata.name = Some(format!("list-{i}"));
                c
            })
            .collect()
    }

    fn report(child: &mut ImagePullJob, desired: i32, succeeded: i32, failed: i32) {
        child.status = Some(
            serde_json::from_value(json!({"startTime": "2026-01-01T11:00:00Z", "desired": desired,
                "succeeded": succeeded, "failed": failed, "active": desired - succeeded - failed}))
            .unwrap(),
        );
    }

    #[test]
    fn one_child_per_image_with_the_list_s_template_and_counts_read_back() {
        let job = list(&["a:v1", "b:v1"]);
        let first = plan(&Input {
            job: &job,
            children: &[],
            now: now(),
        });
        let mut children = created(&first);
        assert_eq!(children.len(), 2);
        assert_eq!(children[0].spec.image, "a:v1");
        assert_eq!(children[0].metadata.generate_name.as_deref(), Some("list-"));
        assert_eq!(children[0].spec.template, job.spec.template);
        let owner = &children[0].metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!((owner.uid.as_str(), owner.controller), ("list-uid", Some(true)));
        assert_eq!(first.status.as_ref().unwrap().desired, 2);

        report(&mut children[0], 2, 2, 0);
        report(&mut children[1], 2, 1, 1);
        let done = plan(&Input {
            job: &job,
            children: &children,
            now: now(),
        });
        assert!(done.create.is_empty() && done.delete.is_empty());
        let status = done.status.unwrap();
        assert_eq!((status.completed, status.succeeded, status.active), (2, 1, 0));
        assert_eq!(status.failed_image_statuses.len(), 1);
        assert_eq!(status.failed_image_statuses[0].name, "b:v1");
        assert_eq!(
            status.failed_image_statuses[0].message,
            "Please check for details which nodes failed by 'kubectl get ImagePullJob list-1'."
        );
        assert!(status.completion_time.is_some());
    }

    #[test]
    fn removed_images_and_stale_templates_are_replaced() {
        let job = list(&["a:v1", "b:v1"]);
        let mut children = created(&plan(&Input {
            job: &job,
            children: &[],
            now: now(),
        }));
        let mut changed = list(&["a:v1", "c:v1"]);
        changed.spec.template.parallelism =
            Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(5));
        let p = plan(&Input {
            job: &changed,
            children: &children,
            now: now(),
        });
        assert_eq!(p.delete, ["list-0", "list-1"]);
        let images: Vec<_> = p.create.iter().map(|c| c.spec.image.as_str()).collect();
        assert_eq!(images, ["a:v1", "c:v1"]);
        assert!(p.status.unwrap().completion_time.is_none());
        // Same template, an image dropped: only that child goes.
        children.retain(|c| c.spec.image == "a:v1" || c.spec.image == "b:v1");
        let p = plan(&Input {
            job: &list(&["a:v1"]),
            children: &children,
            now: now(),
        });
        assert_eq!(p.delete, ["list-1"]);
        assert!(p.create.is_empty());
    }
}
