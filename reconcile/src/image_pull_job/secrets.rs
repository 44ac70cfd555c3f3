//! An ImagePullJob's `pullSecrets` made readable by the node agents (docs/image-pull.md#pull-secrets).
//!
//! The agents may read Secrets in one namespace only (the daemon config namespace), so each secret a
//! job names in its own namespace is copied there as `<name>-<6 hex>`, with the source's data, type,
//! labels and annotations plus three annotations: the source (`imagepulljobs.kruise.io/source-key:
//! <ns>/<name>`), the jobs using the copy (`imagepulljobs.kruise.io/references: <ns>/<job>,…`, sorted)
//! and `imagepulljobs.kruise.io/mode: batch`. A copy of the same source is shared by every job that
//! needs it (the first by name already used by this job is preferred) and its data refreshed from the
//! source. A job that finished or is being deleted takes its reference off; a copy left without
//! references is deleted. The NodeImages then reference the copies (`{namespace, name, mode}`).
//!
//! A job in the config namespace itself uses its secrets as they are.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kruise_api::apps_v1beta1::{ImagePullJob, ReferenceObject};

/// The copy's source secret, `<namespace>/<name>`.
pub const SOURCE_KEY_ANNOTATION: &str = "imagepulljobs.kruise.io/source-key";
/// The jobs using the copy, `<namespace>/<name>` sorted and comma-separated.
pub const REFERENCES_ANNOTATION: &str = "imagepulljobs.kruise.io/references";
/// `batch` on copies: NodeImage references to them leave with their tags.
pub const MODE_ANNOTATION: &str = "imagepulljobs.kruise.io/mode";
/// The mode of copies and of the NodeImage references to them.
pub const MODE_BATCH: &str = "batch";
/// The finalizer that keeps a job with pull secrets until its copies are released.
pub const PROTECTION_FINALIZER: &str = "apps.kruise.io/deletion-protection";

/// What the secret sync of one pass reads.
#[derive(Debug, Clone, Copy)]
pub struct SecretsInput<'a> {
    /// The job.
    pub job: &'a ImagePullJob,
    /// The namespace the agents read secrets in.
    pub config_namespace: &'a str,
    /// The job's `pullSecrets` that exist in its namespace (missing ones are skipped).
    pub sources: &'a [Secret],
    /// Every Secret in the config namespace.
    pub copies: &'a [Secret],
    /// Six hex digits naming a new copy (the loop's random draw).
    pub suffix: &'a str,
}

/// What the secret sync decided.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SecretsPlan {
    /// Copies to create.
    pub create: Vec<Secret>,
    /// Copies to replace (carrying the resourceVersion they were read at).
    pub update: Vec<Secret>,
    /// Copies to delete (no job references them any more).
    pub delete: Vec<Secret>,
    /// The references the job's NodeImages need, in `pullSecrets` order.
    pub refs: Vec<ReferenceObject>,
    /// `Some(true)`: add [`PROTECTION_FINALIZER`]; `Some(false)`: remove it.
    pub finalizer: Option<bool>,
}

/// Whether the job still pulls: not being deleted and not finished.
pub fn is_running(job: &ImagePullJob) -> bool {
    job.metadata.deletion_timestamp.is_none()
        && job.status.as_ref().is_none_or(|s| s.completion_time.is_none())
}

/// Plans the secret sync of one pass.
pub fn plan_secrets(input: &SecretsInput<'_>) -> SecretsPlan {
    let job = input.job;
    let job_namespace = job.metadata.namespace.as_deref().unwrap_or_default();
    let job_key = format!(
        "{job_namespace}/{}",
        job.metadata.name.as_deref().unwrap_or_default()
    );
    let running = is_running(job);
    let has_finalizer = job
        .metadata
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|f| f == PROTECTION_FINALIZER));
    let mut plan = SecretsPlan::default();
    if job_namespace == input.config_namespace {
        if running {
            plan.refs = job
                .spec
                .template
                .pull_secrets
                .iter()
                .map(|name| ReferenceObject {
                    namespace: job_namespace.to_owned(),
                    name: name.clone(),
                    mode: String::new(),
                })
                .collect();
        }
        plan.finalizer = has_finalizer.then_some(false);
        return plan;
    }
    let wanted: BTreeSet<String> = if running {
        job.spec
            .template
            .pull_secrets
            .iter()
            .map(|name| format!("{job_namespace}/{name}"))
            .collect()
    } else {
        BTreeSet::new()
    };
    // The copy each wanted source uses, and the copies this job lets go.
    let mut chosen: BTreeMap<String, &Secret> = BTreeMap::new();
    let mut copies: Vec<&Secret> = input
        .copies
        .iter()
        .filter(|s| s.metadata.deletion_timestamp.is_none())
        .collect();
    copies.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    for copy in copies {
        let refs = references(copy);
        let source = annotation(copy, SOURCE_KEY_ANNOTATION).unwrap_or_default();
        if wanted.contains(source) {
            let better = chosen
                .get(source)
                .is_none_or(|current| !references(current).contains(&job_key) && refs.contains(&job_key));
            if better {
                if let Some(previous) = chosen.insert(source.to_owned(), copy) {
                    release(&mut plan, previous, &job_key);
                }
            } else {
                release(&mut plan, copy, &job_key);
            }
        } else {
            release(&mut plan, copy, &job_key);
        }
    }
    if running {
        for name in &job.spec.template.pull_secrets {
            let key = format!("{job_namespace}/{name}");
            let Some(source) = input
                .sources
                .iter()
                .find(|s| s.metadata.name.as_deref() == Some(name.as_str()))
            else {
                continue;
            };
            let copy_name = match chosen.get(&key) {
                Some(copy) => {
                    let mut updated = (*copy).clone();
                    updated.data.clone_from(&source.data);
                    let mut refs = references(copy);
                    refs.insert(job_key.clone());
                    set_references(&mut updated, &refs);
                    if updated != **copy {
                        plan.update.push(updated);
                    }
                    copy.metadata.name.clone().unwrap_or_default()
                }
                None => {
                    let new = new_copy(source, input.config_namespace, &key, &job_key, input.suffix);
                    let copy_name = new.metadata.name.clone().unwrap_or_default();
                    plan.create.push(new);
                    copy_name
                }
            };
            plan.refs.push(ReferenceObject {
                namespace: input.config_namespace.to_owned(),
                name: copy_name,
                mode: MODE_BATCH.to_owned(),
            });
        }
        if !job.spec.template.pull_secrets.is_empty() && !has_finalizer {
            plan.finalizer = Some(true);
        }
    } else if has_finalizer && job.metadata.deletion_timestamp.is_some() {
        plan.finalizer = Some(false);
    }
    plan
}

/// Takes `job_key` off `copy`: an update, or a deletion when no reference is left.
fn release(plan: &mut SecretsPlan, copy: &Secret, job_key: &str) {
    let mut refs = references(copy);
    if !refs.remove(job_key) {
        return;
    }
    if refs.is_empty() {
        plan.delete.push(copy.clone());
    } else {
        let mut updated = copy.clone();
        set_references(&mut updated, &refs);
        plan.update.push(updated);
    }
}

fn new_copy(source: &Secret, namespace: &str, source_key: &str, job_key: &str, suffix: &str) -> Secret {
    let mut annotations = source.metadata.annotations.clone().unwrap_or_default();
    annotations.insert(SOURCE_KEY_ANNOTATION.to_owned(), source_key.to_owned());
    annotations.insert(REFERENCES_ANNOTATION.to_owned(), job_key.to_owned());
    annotations.insert(MODE_ANNOTATION.to_owned(), MODE_BATCH.to_owned());
    Secret {
        metadata: ObjectMeta {
            name: Some(format!(
                "{}-{suffix}",
                source.metadata.name.as_deref().unwrap_or_default()
            )),
            namespace: Some(namespace.to_owned()),
            labels: source.metadata.labels.clone(),
            annotations: Some(annotations),
            ..ObjectMeta::default()
        },
        data: source.data.clone(),
        type_: source.type_.clone(),
        ..Secret::default()
    }
}

fn annotation<'a>(secret: &'a Secret, key: &str) -> Option<&'a str> {
    secret.metadata.annotations.as_ref()?.get(key).map(String::as_str)
}

/// The jobs a copy is referenced by.
pub fn references(secret: &Secret) -> BTreeSet<String> {
    annotation(secret, REFERENCES_ANNOTATION)
        .unwrap_or_default()
        .split(',')
        .filter(|r| r.contains('/'))
        .map(str::to_owned)
        .collect()
}

fn set_references(secret: &mut Secret, refs: &BTreeSet<String>) {
    let value = refs.iter().map(String::as_str).collect::<Vec<_>>().join(",");
    secret
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(REFERENCES_ANNOTATION.to_owned(), value);
}

#[cfg(test)]
mod tests;
