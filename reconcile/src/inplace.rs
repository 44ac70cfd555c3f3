//! The in-place update library (docs/cloneset-controller.md#in-place-update): can a revision change be
//! applied to a running pod,
//! the pod patches that apply it one container batch at a time, and when it has completed.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::common::{IN_PLACE_UPDATE_GRACE_KEY, IN_PLACE_UPDATE_READY, IN_PLACE_UPDATE_STATE_KEY};
use serde_json::{Map, Value, json};

use kruise_core::containermeta::{self, MetaField};

use crate::lifecycle;
use crate::pods::{self, CONTROLLER_REVISION_HASH, POD_TEMPLATE_HASH, short_hash};
use crate::rfc3339::rfc3339;

mod env_meta;
mod hooked;
mod refresh;
mod state;

pub use env_meta::{agent_serves, for_pod};

pub use hooked::{BadLifecycleState, start_hooked};
pub(crate) use refresh::patch;
pub use refresh::{Refreshed, refresh_in_place};
pub use state::{
    ContainerBatch, InPlaceUpdateState, LastContainerStatus, PreCheckBeforeNext, RefMetadata, StateText,
    UpdateSpec,
};

/// The legacy state annotation, removed on every in-place update.
pub use kruise_core::in_place::IN_PLACE_UPDATE_STATE_KEY_OLD;
/// When an in-place update has completed: one rule, in `kruise_core`.
pub use kruise_core::in_place::{Completion, env_completed, update_completed};
/// The env the pod webhook injects for container launch priority (`configMapKeyRef.key = p_<n>`).
pub use kruise_core::names::CONTAINER_BARRIER_ENV as BARRIER_ENV;

/// Why a revision change cannot be applied in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotInPlace {
    /// Something other than container images and template labels/annotations changed.
    SpecChanged,
    /// A changed label/annotation feeds a container env (`valueFrom.fieldRef`), or is
    /// `kubectl.kubernetes.io/restartedAt`, which every container reads
    /// ([`containermeta::key_restarts`]). Kubelet only resolves such env at container start, so the
    /// container must restart: in place when the node agent serves the pod ([`for_pod`] gives `spec`
    /// then), else the pod is recreated.
    EnvFromMetadata {
        /// The containers that read a changed key.
        containers: Vec<String>,
        /// The in-place update that restarts them (`updateEnvFromMetadata`).
        spec: Box<UpdateSpec>,
    },
}

/// In-place verdicts already computed in one pass, by the old revision name: every pod of a revision
/// gets the same verdict, and computing it (a template decoded, two templates compared) costs more
/// than the rest of a pod's update.
pub type SpecCache<'a> = Vec<(&'a str, Result<UpdateSpec, NotInPlace>)>;

/// The verdict of `old` in `specs`, computed by `compute` the first time it is asked for.
pub fn cached_spec<'c, 'a>(
    specs: &'c mut SpecCache<'a>,
    old: &'a str,
    compute: impl FnOnce() -> Result<UpdateSpec, NotInPlace>,
) -> &'c Result<UpdateSpec, NotInPlace> {
    let i = match specs.iter().position(|(n, _)| *n == old) {
        Some(i) => i,
        None => {
            specs.push((old, compute()));
            specs.len() - 1
        }
    };
    &specs[i].1
}

/// OpenKruise's `defaultCalculateInPlaceUpdateSpec`: only container images and template
/// labels/annotations may differ.
pub fn calculate_spec(
    old: &PodTemplateSpec,
    new: &PodTemplateSpec,
    revision: &str,
) -> Result<UpdateSpec, NotInPlace> {
    let (old_spec, new_spec) = (
        old.spec.clone().unwrap_or_default(),
        new.spec.clone().unwrap_or_default(),
    );
    if old_spec.containers.len() != new_spec.containers.len() {
        return Err(NotInPlace::SpecChanged);
    }
    let mut images = BTreeMap::new();
    let (mut o, mut n) = (old_spec.clone(), new_spec.clone());
    for (oc, nc) in o.containers.iter_mut().zip(n.containers.iter_mut()) {
        if oc.name != nc.name || oc.image.is_some() != nc.image.is_some() {
            return Err(NotInPlace::SpecChanged);
        }
        if oc.image != nc.image {
            images.insert(nc.name.clone(), nc.image.clone().unwrap_or_default());
        }
        oc.image = None;
        nc.image = None;
    }
    if o != n {
        return Err(NotInPlace::SpecChanged);
    }
    let (om, nm) = (
        old.metadata.clone().unwrap_or_default(),
        new.metadata.clone().unwrap_or_default(),
    );
    let mut meta = Map::new();
    let mut restart = Vec::new();
    let mut ref_metadata: BTreeMap<String, RefMetadata> = BTreeMap::new();
    for (field, kind, before, after) in [
        ("labels", MetaField::Labels, &om.labels, &nm.labels),
        (
            "annotations",
            MetaField::Annotations,
            &om.annotations,
            &nm.annotations,
        ),
    ] {
        let (before, after) = (
            before.clone().unwrap_or_default(),
            after.clone().unwrap_or_default(),
        );
        let mut diff = Map::new();
        for (k, v) in &after {
            if before.get(k) == Some(v) {
                continue;
            }
            let mut read = false;
            for c in &new_spec.containers {
                if !containermeta::key_restarts(c.env.as_deref().unwrap_or_default(), kind, k) {
                    continue;
                }
                read = true;
                if !restart.contains(&c.name) {
                    restart.push(c.name.clone());
                }
                let entry = ref_metadata.entry(c.name.clone()).or_default();
                let map = match kind {
                    MetaField::Labels => &mut entry.labels,
                    MetaField::Annotations => &mut entry.annotations,
                };
                map.insert(k.clone(), v.clone());
            }
            // A key some env reads is applied with its containers' batch, not with the rest.
            if !read {
                diff.insert(k.clone(), json!(v));
            }
        }
        for k in before.keys().filter(|k| !after.contains_key(*k)) {
            diff.insert(k.clone(), Value::Null);
        }
        if !diff.is_empty() {
            meta.insert(field.into(), Value::Object(diff));
        }
    }
    let spec = UpdateSpec {
        revision: revision.into(),
        container_images: images,
        update_env_from_metadata: !ref_metadata.is_empty(),
        container_ref_metadata: ref_metadata,
        meta_data_patch: (!meta.is_empty()).then(|| json!({ "metadata": meta })),
        grace_seconds: 0,
    };
    if !restart.is_empty() {
        return Err(NotInPlace::EnvFromMetadata {
            containers: restart,
            spec: Box::new(spec),
        });
    }
    Ok(spec)
}

/// Merges JSON object `b` into `a` (objects recursively, anything else replaced).
pub fn merge(a: &mut Value, b: Value) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (a, b) => *a = b,
    }
}

/// A container's launch priority from its injected barrier env (`p_<n>`); `None` without it.
pub fn container_priority(pod: &PodRecord, container: &str) -> Option<i64> {
    let c = pod
        .spec
        .as_ref()?
        .containers
        .iter()
        .find(|c| c.name == container)?;
    let env = c.env.as_ref()?.iter().find(|e| e.name == BARRIER_ENV)?;
    let key = env
        .value_from
        .as_ref()
        .and_then(|v| v.config_map_key_ref.as_ref())
        .map_or("", |r| r.key.as_str());
    Some(key.get(2..).and_then(|p| p.parse().ok()).unwrap_or(0))
}

/// `PatchSpecToPod` for one batch: the containers without priority plus those at the highest priority
/// among those with a new image or changed env metadata (and, to a fixpoint, those sharing a changed
/// key with them); the rest go to the state's `next*` maps. Returns the pod patch (images, metadata and
/// the re-serialised state annotation).
pub fn patch_batch(
    pod: &PodRecord,
    images: &BTreeMap<String, String>,
    ref_metadata: &BTreeMap<String, RefMetadata>,
    meta_patch: Option<&Value>,
    state: &mut InPlaceUpdateState,
    now: Timestamp,
) -> Value {
    let (containers, batch_meta) = apply_batch(pod, images, ref_metadata, state, now);
    let mut annotations = Map::new();
    annotations.insert(IN_PLACE_UPDATE_STATE_KEY.into(), Value::String(state_json(state)));
    let mut patch = Map::new();
    patch.insert(
        "metadata".into(),
        object([("annotations", Value::Object(annotations))]),
    );
    if !containers.is_empty() {
        patch.insert("spec".into(), object([("containers", Value::Array(containers))]));
    }
    let mut patch = Value::Object(patch);
    if let Some(meta) = meta_patch {
        merge(&mut patch, meta.clone());
    }
    if let Some(meta) = batch_meta {
        merge(&mut patch, meta);
    }
    patch
}

/// A JSON object from static keys.
fn object<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    let mut map = Map::new();
    for (k, v) in pairs {
        map.insert(k.to_owned(), v);
    }
    Value::Object(map)
}

fn state_json(state: &InPlaceUpdateState) -> String {
    serde_json::to_string(state).unwrap_or_default()
}

/// Picks the batch, records it in `state`, and returns the container entries of the patch and the
/// batch's labels/annotations (`{"metadata": …}`).
fn apply_batch(
    pod: &PodRecord,
    images: &BTreeMap<String, String>,
    ref_metadata: &BTreeMap<String, RefMetadata>,
    state: &mut InPlaceUpdateState,
    now: Timestamp,
) -> (Vec<Value>, Option<Value>) {
    let changed: std::collections::BTreeSet<&String> = images.keys().chain(ref_metadata.keys()).collect();
    let top = changed.iter().filter_map(|c| container_priority(pod, c)).max();
    let mut batch: std::collections::BTreeSet<&String> = changed
        .iter()
        .copied()
        .filter(|c| {
            let p = container_priority(pod, c);
            p.is_none() || p == top
        })
        .collect();
    // A lower-priority container reading a key the batch changes must restart with it.
    loop {
        let shares = |m: &RefMetadata, b: &RefMetadata| {
            m.labels.keys().any(|k| b.labels.contains_key(k))
                || m.annotations.keys().any(|k| b.annotations.contains_key(k))
        };
        let joining: Vec<&String> = ref_metadata
            .iter()
            .filter(|(c, m)| {
                !batch.contains(c)
                    && batch
                        .iter()
                        .filter_map(|b| ref_metadata.get(*b))
                        .any(|b| shares(m, b))
            })
            .map(|(c, _)| c)
            .collect();
        if joining.is_empty() {
            break;
        }
        batch.extend(joining);
    }
    let statuses = pod.container_statuses();
    let mut containers = Vec::with_capacity(images.len());
    state.next_container_images.clear();
    state.next_container_ref_metadata.clear();
    for (name, image) in images {
        if !batch.contains(name) {
            state.next_container_images.insert(name.clone(), image.clone());
            continue;
        }
        containers.push(object([
            ("name", Value::String(name.clone())),
            ("image", Value::String(image.clone())),
        ]));
        let image_id = statuses
            .iter()
            .find(|s| &s.name == name)
            .map(|s| s.image_id.clone())
            .unwrap_or_default();
        state
            .last_container_statuses
            .insert(name.clone(), LastContainerStatus { image_id });
    }
    let (mut labels, mut annotations) = (Map::new(), Map::new());
    for (name, meta) in ref_metadata {
        if !batch.contains(name) {
            state
                .next_container_ref_metadata
                .insert(name.clone(), meta.clone());
            continue;
        }
        labels.extend(
            meta.labels
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone()))),
        );
        annotations.extend(
            meta.annotations
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone()))),
        );
    }
    let mut metadata = Map::new();
    if !labels.is_empty() {
        metadata.insert("labels".into(), Value::Object(labels));
    }
    if !annotations.is_empty() {
        metadata.insert("annotations".into(), Value::Object(annotations));
    }
    let names: Vec<String> = batch.into_iter().cloned().collect();
    let parked = !state.next_container_images.is_empty() || !state.next_container_ref_metadata.is_empty();
    state.pre_check_before_next = parked.then(|| PreCheckBeforeNext {
        containers_required_ready: names.clone(),
    });
    state.container_batches_record.push(ContainerBatch {
        timestamp: Time(now),
        containers: names,
    });
    let meta = (!metadata.is_empty()).then(|| object([("metadata", Value::Object(metadata))]));
    (containers, meta)
}

/// The pod's in-place state, if any (an unreadable one counts as none).
pub fn state_of(pod: &PodRecord) -> Option<InPlaceUpdateState> {
    pods::annotation(pod, IN_PLACE_UPDATE_STATE_KEY).and_then(|s| serde_json::from_str(s).ok())
}

/// The pod's pending grace-period spec, if any.
pub fn grace_of(pod: &PodRecord) -> Option<UpdateSpec> {
    pods::annotation(pod, IN_PLACE_UPDATE_GRACE_KEY).and_then(|s| serde_json::from_str(s).ok())
}

/// The pod patch that starts an in-place update to `spec` (`updatePodInPlace`): revision labels, the
/// move to `lifecycle_state` (the lifecycle `Updating` label and timestamp, when the pod is not there
/// yet), the state annotation, then either the first batch (no grace period) or the grace annotation.
/// Conditional on the pod's resourceVersion. `texts` serialises the state annotation.
pub fn begin(
    pod: &PodRecord,
    spec: &UpdateSpec,
    grace_seconds: i32,
    lifecycle_state: Option<&str>,
    now: Timestamp,
    texts: &mut StateText,
) -> Value {
    let mut state = InPlaceUpdateState {
        update_images: !spec.container_images.is_empty(),
        update_env_from_metadata: spec.update_env_from_metadata,
        ..InPlaceUpdateState::new(&spec.revision, now)
    };
    let mut labels = Map::new();
    labels.insert(
        CONTROLLER_REVISION_HASH.into(),
        Value::String(spec.revision.clone()),
    );
    labels.insert(
        POD_TEMPLATE_HASH.into(),
        Value::String(short_hash(&spec.revision).to_owned()),
    );
    let mut annotations = Map::new();
    annotations.insert(IN_PLACE_UPDATE_STATE_KEY_OLD.into(), Value::Null);
    if let Some(lifecycle_state) = lifecycle_state {
        lifecycle::add_state(&mut labels, &mut annotations, lifecycle_state, now);
    }
    let mut containers = Vec::new();
    let mut batch_meta = None;
    if grace_seconds <= 0 {
        annotations.insert(IN_PLACE_UPDATE_GRACE_KEY.into(), Value::Null);
        (containers, batch_meta) = apply_batch(
            pod,
            &spec.container_images,
            &spec.container_ref_metadata,
            &mut state,
            now,
        );
    } else {
        let grace = UpdateSpec {
            grace_seconds,
            ..spec.clone()
        };
        annotations.insert(
            IN_PLACE_UPDATE_GRACE_KEY.into(),
            Value::String(serde_json::to_string(&grace).unwrap_or_default()),
        );
    }
    annotations.insert(IN_PLACE_UPDATE_STATE_KEY.into(), Value::String(texts.json(state)));
    let mut metadata = Map::new();
    metadata.insert("labels".into(), Value::Object(labels));
    metadata.insert("annotations".into(), Value::Object(annotations));
    if let Some(rv) = &pod.metadata.resource_version {
        metadata.insert("resourceVersion".into(), Value::String(rv.clone()));
    }
    let mut patch = Map::new();
    patch.insert("metadata".into(), Value::Object(metadata));
    if !containers.is_empty() {
        patch.insert("spec".into(), object([("containers", Value::Array(containers))]));
    }
    let mut patch = Value::Object(patch);
    if grace_seconds <= 0
        && let Some(meta) = &spec.meta_data_patch
    {
        merge(&mut patch, meta.clone());
    }
    if let Some(meta) = batch_meta {
        merge(&mut patch, meta);
    }
    patch
}

/// The `pods/status` patch setting `InPlaceUpdateReady` (False with reason `StartInPlaceUpdate`, or
/// True); a False one also forces `Ready=False` when the pod is ready, so traffic leaves at once.
pub fn ready_condition_patch(pod: &PodRecord, ready: bool, now: Timestamp) -> Value {
    let at = Value::String(rfc3339(now));
    let status = |v: bool| Value::String(if v { "True" } else { "False" }.into());
    let mut cond = Map::new();
    cond.insert("type".into(), Value::String(IN_PLACE_UPDATE_READY.into()));
    cond.insert("status".into(), status(ready));
    cond.insert("lastTransitionTime".into(), at.clone());
    if ready {
        // A strategic merge patch merges the condition field by field: clear what the False patch set,
        // or the condition stays `reason: StartInPlaceUpdate` and is never seen as ready again.
        cond.insert("reason".into(), Value::Null);
        cond.insert("message".into(), Value::Null);
    } else {
        cond.insert("reason".into(), Value::String("StartInPlaceUpdate".into()));
    }
    let mut conditions = Vec::with_capacity(2);
    conditions.push(Value::Object(cond));
    if !ready && pods::is_ready(pod) {
        conditions.push(object([
            ("type", Value::String("Ready".into())),
            ("status", status(false)),
            ("lastTransitionTime", at),
        ]));
    }
    object([("status", object([("conditions", Value::Array(conditions))]))])
}

/// The pod asks for the `InPlaceUpdateReady` readiness gate.
pub fn has_gate(pod: &PodRecord) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.readiness_gates.as_ref())
        .is_some_and(|g| g.iter().any(|g| g.condition_type == IN_PLACE_UPDATE_READY))
}

/// `defaultCheckContainersInPlaceUpdateCompleted` for a state this crate wrote
/// ([`kruise_core::in_place::containers_completed`]).
pub fn containers_completed(pod: &PodRecord, state: &InPlaceUpdateState) -> bool {
    kruise_core::in_place::containers_completed(
        pod,
        &state.last_container_statuses,
        state.update_env_from_metadata,
    )
}

#[cfg(test)]
mod tests;
