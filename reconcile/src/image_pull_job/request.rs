//! One job's tag written into one NodeImage's spec.

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps_v1beta1::{
    CompletionPolicyType, ImagePullJob, ImagePullPolicy, ImageTagPullPolicy, ImageTagSpec, NodeImage,
    ReferenceObject, SandboxConfig,
};

/// Seconds a finished tag of an `Always` job stays on the node beyond the job's own horizon
/// (OpenKruise's `--default-ttlseconds-for-always-nodeimage` default).
pub const ALWAYS_EXTRA_TTL_SECONDS: i32 = 300;
const NEVER_TTL_SECONDS: i32 = 24 * 3600;
const NEVER_MIN_DEADLINE_SECONDS: i64 = 1800;

/// Write `tag` of image `name` into the NodeImage `node` for `owner`.
#[derive(Debug, Clone, PartialEq)]
pub struct TagRequest {
    /// The NodeImage (node) name.
    pub node: String,
    /// Familiar image name (the key of `spec.images`).
    pub name: String,
    /// Tag or digest.
    pub tag: String,
    /// The job, as the tag's owner.
    pub owner: ObjectReference,
    /// Pull policy for a new tag (an existing tag keeps its own: openkruise/kruise#2221 stays).
    pub pull_policy: ImageTagPullPolicy,
    /// `Always` or `IfNotPresent`.
    pub image_pull_policy: ImagePullPolicy,
    /// The job's sandbox config (last writer wins).
    pub sandbox_config: Option<SandboxConfig>,
    /// Pull-secret references the image must carry (added when missing, never removed here).
    pub pull_secrets: Vec<ReferenceObject>,
}

impl TagRequest {
    /// Applies the request to `node_image`'s spec; false when it already holds it. Missing secret
    /// references are added to the image. A new tag gets
    /// version (status version + 1, or 0); a tag owned by others gets `version + 1`, this owner and
    /// a fresh `createdAt`.
    pub fn apply(&self, node_image: &mut NodeImage, now: Timestamp) -> bool {
        let status_version = node_image
            .status
            .as_ref()
            .and_then(|s| s.image_statuses.get(&self.name))
            .and_then(|i| i.tags.iter().find(|t| t.tag == self.tag))
            .map(|t| t.version);
        let image = node_image.spec.images.entry(self.name.clone()).or_default();
        let mut changed = false;
        if self.sandbox_config.is_some() && image.sandbox_config != self.sandbox_config {
            image.sandbox_config.clone_from(&self.sandbox_config);
            changed = true;
        }
        for wanted in &self.pull_secrets {
            let present = image
                .pull_secrets
                .iter()
                .any(|r| r.namespace == wanted.namespace && r.name == wanted.name);
            if !present {
                image.pull_secrets.push(wanted.clone());
                changed = true;
            }
        }
        let now = Time(Timestamp::from_second(now.as_second()).unwrap_or(now));
        match image.tags.iter_mut().find(|t| t.tag == self.tag) {
            Some(tag) if tag.owner_references.iter().any(|o| o.uid == self.owner.uid) => {}
            Some(tag) => {
                tag.version += 1;
                tag.owner_references.push(self.owner.clone());
                tag.created_at = Some(now);
                tag.image_pull_policy = Some(self.image_pull_policy.clone());
                changed = true;
            }
            None => {
                image.tags.push(ImageTagSpec {
                    tag: self.tag.clone(),
                    created_at: Some(now),
                    pull_policy: Some(self.pull_policy.clone()),
                    owner_references: vec![self.owner.clone()],
                    version: status_version.map_or(0, |v| v + 1),
                    image_pull_policy: Some(self.image_pull_policy.clone()),
                });
                image.tags.sort_by(|a, b| a.tag.cmp(&b.tag));
                changed = true;
            }
        }
        changed
    }
}

/// The job as an owner reference of a tag.
pub fn owner_of(job: &ImagePullJob) -> ObjectReference {
    ObjectReference {
        api_version: Some("apps.kruise.io/v1beta1".into()),
        kind: Some("ImagePullJob".into()),
        name: job.metadata.name.clone(),
        namespace: job.metadata.namespace.clone(),
        uid: job.metadata.uid.clone(),
        ..ObjectReference::default()
    }
}

/// The pull policy of a new tag (OpenKruise's table): timeout and backoff copied from the job; an
/// `Always` job's tag lives (job TTL, else job deadline, else timeout × backoff) + 300 s + `jitter`
/// after finishing and has the job's deadline; a `Never` job's lives 24 h ± 10 min and has at least
/// 30 min. `jitter` is a uniform draw in [0, 600) (the loop's; tests pass fixed values).
pub fn derived_pull_policy(job: &ImagePullJob, jitter: i32) -> ImageTagPullPolicy {
    let spec = &job.spec.template;
    let timeout = spec.pull_policy.as_ref().and_then(|p| p.timeout_seconds);
    let backoff = spec.pull_policy.as_ref().and_then(|p| p.backoff_limit);
    let completion = &spec.completion_policy;
    let never = completion.type_ == Some(CompletionPolicyType::Never);
    let (ttl, deadline) = if never {
        let deadline = timeout.map_or(NEVER_MIN_DEADLINE_SECONDS, |t| {
            i64::from(t).max(NEVER_MIN_DEADLINE_SECONDS)
        });
        (NEVER_TTL_SECONDS + jitter * 2 - 600, Some(deadline))
    } else {
        let base = completion
            .ttl_seconds_after_finished
            .or_else(|| {
                completion
                    .active_deadline_seconds
                    .map(|d| i32::try_from(d).unwrap_or(i32::MAX))
            })
            .unwrap_or_else(|| timeout.unwrap_or(600).saturating_mul(backoff.unwrap_or(3)));
        (
            base.saturating_add(ALWAYS_EXTRA_TTL_SECONDS)
                .saturating_add(jitter / 2),
            completion.active_deadline_seconds,
        )
    };
    ImageTagPullPolicy {
        timeout_seconds: timeout,
        backoff_limit: backoff,
        ttl_seconds_after_finished: Some(ttl),
        active_deadline_seconds: deadline,
    }
}
