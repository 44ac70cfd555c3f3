//! Step 3 of `/mutate-pod`: SidecarSet injection, as OpenKruise does it on pod CREATE
//! (docs/sidecarset-injection.md).
//!
//! For an active pod: the SidecarSets that select it (the pod's labels, and its namespace through
//! `namespaceSelector` — which is also what a v1alpha1 `spec.namespace` becomes) are found through the
//! [`SidecarSetIndex`] the view holds; each is resolved to the revision the pod gets
//! (`injectionStrategy.revision`); canaries shadow their base; `patchPodMetadata` is applied; then every
//! SidecarSet's init containers and containers are built (`IS_INJECTED=true`, shared volume mounts and
//! devices, `transferEnv`, resources computed by a `resourcesPolicy` (see [`resources`]), hot-upgrade pairs)
//! and merged into the pod with their volumes and pull secrets, and the pod records what it got in
//! `kruise.io/sidecarset-hash`, `kruise.io/sidecarset-hash-without-image` and
//! `kruise.io/sidecarset-injected-list`.
//!
//! The patch is built against the raw pod: only the lists and annotations injection owns are touched, so
//! fields kruise-rs does not know survive.
//!
//! Decisions where OpenKruise is silent, order-dependent or fails the pod:
//! * **A sidecar whose name equals a container already in the pod replaces that container in place**, as
//!   OpenKruise's merge does (the pod's own definition is lost). This is also how a pod re-created from a
//!   template that already holds the sidecar is handled.
//! * Matched SidecarSets are processed in name order (OpenKruise: cache order). Two of them injecting the
//!   same container name deny the pod (422) instead of producing a pod the apiserver rejects.
//! * An invalid SidecarSet met at pod time (invalid `selector` or `namespaceSelector`, invalid
//!   `updateStrategy.selector` or partition for a `Partial` revision, a `MergePatchJson` value that is not
//!   JSON, a revision that cannot be restored) is skipped with a warning in the admission response; OpenKruise
//!   fails every such pod. A pinned revision that does not exist still fails the pod (500), as in OpenKruise:
//!   it may be a cache that is catching up.
//! * A `resourcesPolicy` that cannot be computed for the pod (no target container, an invalid
//!   `targetContainersNameRegex`, an expression that fails) denies the pod with OpenKruise's message (500), as
//!   OpenKruise does; a target container's quantity that is not one denies it with 400 (OpenKruise cannot
//!   decode such a pod). The sidecars of a SidecarSet already injected (next point) are not recomputed.
//! * Running the step on its own output adds nothing: a SidecarSet already recorded on the pod with the same
//!   hash, whose containers are all present, is not injected again (its record and timestamp are kept).
//! * Without a Namespace object in the view, a `namespaceSelector` on anything but
//!   `kubernetes.io/metadata.name` does not match (as in OpenKruise); the name label is always known.
//! * The SidecarSet hashes are read from the SidecarSet's annotations, computed once when absent.

mod apply;
mod build;
mod clock;
mod index;
mod metadata;
mod plan;
mod pod_containers;
pub(crate) mod resources;
mod revision;

use foldhash::{HashMap, HashMapExt, HashSet};
use std::{
    borrow::Cow,
    cell::OnceCell,
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

use k8s_openapi::api::core::v1::Namespace;
use serde_json::{Map, Value};

pub use index::{
    DEFAULT_REVISION_NAMESPACE, SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION,
    SidecarSetIndex,
};

use self::{
    apply::Produced,
    index::NAMESPACE_NAME_LABEL,
    metadata::Annotations,
    revision::{Failure, Resolved},
};
use super::{PodContext, StepOutput, StepResult};
use crate::{Denial, patch, view::ClusterView};

/// The pod annotation listing the SidecarSets injected into it, sorted, comma-separated.
pub use kruise_core::names::SIDECARSET_INJECTED_LIST_ANNOTATION as SIDECARSET_INJECTED_LIST;
pub use kruise_core::sidecarset::SIDECARSET_WORKING_HOTUPGRADE_CONTAINER;
use kruise_core::sidecarset::{
    UpgradeSpec, go_escape, metadata::apply_metadata_patches, read_records, version_alt_annotation,
    version_annotation, write_records,
};

/// Step of `/mutate-pod`: injects the sidecars of the SidecarSets that select the pod (active pods only,
/// as OpenKruise).
pub fn mutate(context: &PodContext<'_, impl ClusterView>, pod: &Value) -> StepResult {
    let resource = &context.request.resource.resource;
    if !resource.is_empty() && resource != "pods" || !kruise_core::pod_state::is_active_json(pod) {
        return Ok(StepOutput::default());
    }
    let index = kruise_core::derived::get::<SidecarSetIndex>(context.view);
    if index.is_empty() {
        return Ok(StepOutput::default());
    }
    let metadata = pod.get("metadata");
    let labels = metadata.and_then(|m| m.get("labels")).and_then(Value::as_object);
    let pod_label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    let namespace = metadata
        .and_then(|m| m.get("namespace"))
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .or(Some(context.namespace).filter(|n| !n.is_empty()))
        .unwrap_or("default");

    let mut output = StepOutput::default();
    let matched = matching(context.view, &index, namespace, labels, &mut output)?;
    if matched.is_empty() {
        return Ok(output);
    }
    let pod_name = metadata
        .and_then(|m| m.get("name").or_else(|| m.get("generateName")))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let internal = |message: String| Denial::new(500, "InternalError", message);

    let mut annotations = Annotations::of(pod);
    for r in &matched {
        apply_metadata_patches(&mut annotations, &r.plan.patch_pod_metadata).map_err(|e| {
            internal(format!(
                "SidecarSet {} cannot patch pod metadata: {e}",
                r.entry.name
            ))
        })?;
    }

    // What the pod already records.
    let records = |key: &str| {
        read_records(annotations.get(key)).map_err(|e| {
            internal(format!(
                "pod({namespace}/{pod_name}) invalid annotations[{key}] value {}, unmarshal failed: {e}",
                annotations.get(key).unwrap_or_default()
            ))
        })
    };
    let mut hashes = records(SIDECARSET_HASH_ANNOTATION)?;
    let mut hashes_without_image = records(SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION)?;
    let mut working: BTreeMap<String, String> = annotations
        .get(SIDECARSET_WORKING_HOTUPGRADE_CONTAINER)
        .and_then(|v| serde_json::from_str(v).ok())
        .unwrap_or_default();
    let listed: BTreeSet<String> = annotations
        .get(SIDECARSET_INJECTED_LIST)
        .filter(|v| !v.is_empty())
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let mut injected_list = listed.clone();

    let containers = pod_containers::PodContainers::of(pod);
    let now = clock::now_rfc3339();
    let mut init_containers: Vec<Produced> = Vec::new();
    let mut sidecars: Vec<Produced> = Vec::new();
    let mut volumes: Vec<Value> = Vec::new();
    let mut secrets: Vec<Value> = Vec::new();
    let mut hot_annotations: Vec<(String, String)> = Vec::new();
    // Which SidecarSet produced each container name, to refuse conflicts.
    let mut producers: HashMap<String, &str> = HashMap::new();
    let mut conflict = None;
    let mut hot_injected = false;
    // The container names of every matched SidecarSet: never a resourcesPolicy target.
    let excluded: OnceCell<HashSet<&str>> = OnceCell::new();

    for r in &matched {
        let set_name = r.entry.name.as_str();
        injected_list.insert(set_name.to_string());
        if already_injected(r, &containers, &hashes, &listed) {
            continue;
        }
        let label = |k: &str| pod_label(k).map(str::to_string);
        let annotation = |k: &str| annotations.get(k).map(str::to_string);
        let mut produced_any = false;
        let plan = &r.plan;
        for (sidecar, is_init) in plan
            .init_containers
            .iter()
            .map(|s| (s, true))
            .chain(plan.containers.iter().map(|s| (s, false)))
        {
            produced_any = true;
            volumes.extend(sidecar.volumes.iter().cloned());
            let mut container = build::container(sidecar, &containers, label, annotation);
            if let Some(policy) = &sidecar.resources {
                let excluded = excluded.get_or_init(|| {
                    matched
                        .iter()
                        .flat_map(|r| r.plan.names.iter().map(String::as_str))
                        .collect()
                });
                let resources = policy.resources(&containers, excluded)?;
                if let Some(map) = container.as_object_mut() {
                    map.insert("resources".into(), resources);
                }
            }
            let out = if is_init {
                &mut init_containers
            } else {
                &mut sidecars
            };
            let mut push = |name: String, container: Value| {
                if let Some(other) = producers.insert(name.clone(), set_name)
                    && conflict.is_none()
                {
                    conflict = Some(format!(
                        "container name {name:?} is injected by both SidecarSet {other} and SidecarSet {set_name}"
                    ));
                }
                out.push(Produced {
                    name,
                    container,
                    before: sidecar.before,
                });
            };
            match &sidecar.hot_empty_image {
                Some(empty_image) => {
                    let [first, second] = build::hot_pair(&sidecar.name, &container, empty_image);
                    let (n1, n2) = (format!("{}-1", sidecar.name), format!("{}-2", sidecar.name));
                    hot_annotations.extend([
                        (version_annotation(&n1), "1".to_string()),
                        (version_alt_annotation(&n1), "0".to_string()),
                        (version_annotation(&n2), "0".to_string()),
                        (version_alt_annotation(&n2), "1".to_string()),
                    ]);
                    working.insert(sidecar.name.clone(), n1.clone());
                    hot_injected = true;
                    push(n1, first);
                    push(n2, second);
                }
                None => push(sidecar.name.clone(), container),
            }
        }
        secrets.extend(plan.image_pull_secrets.iter().cloned());
        if produced_any {
            let record = |hash: &str, controller_revision: &str| UpgradeSpec {
                update_timestamp: Some(now.clone()),
                hash: hash.to_string(),
                sidecar_set_name: set_name.to_string(),
                sidecar_list: Some(plan.sidecar_list.clone()),
                controller_revision: controller_revision.to_string(),
            };
            hashes.insert(set_name.to_string(), record(&r.hash, &r.controller_revision));
            hashes_without_image.insert(set_name.to_string(), record(&r.hash_without_image, ""));
        }
    }
    if let Some(conflict) = conflict {
        return Err(Denial::new(422, "Invalid", format!("kruise-rs: {conflict}")));
    }

    let mut ops = Vec::new();
    if !init_containers.is_empty() || !sidecars.is_empty() {
        let spec_missing = !pod.get("spec").is_some_and(Value::is_object);
        let target: Cow<'_, Value> = if spec_missing {
            ops.push(patch::add(["spec"], Value::Object(Map::new())));
            let mut copy = pod.clone();
            if let Some(m) = copy.as_object_mut() {
                m.insert("spec".into(), Value::Object(Map::new()));
            }
            Cow::Owned(copy)
        } else {
            Cow::Borrowed(pod)
        };
        init_containers.sort_by(|a, b| a.name.cmp(&b.name));
        ops.extend(apply::merge_containers(
            &target,
            "initContainers",
            init_containers,
        ));
        ops.extend(apply::merge_containers(&target, "containers", sidecars));
        ops.extend(apply::merge_volumes(&target, volumes));
        ops.extend(apply::merge_secrets(&target, secrets));
        annotations.set(SIDECARSET_HASH_ANNOTATION, write_records(&hashes));
        annotations.set(
            SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION,
            write_records(&hashes_without_image),
        );
        let list: Vec<&str> = injected_list.iter().map(String::as_str).collect();
        annotations.set(SIDECARSET_INJECTED_LIST, list.join(","));
        for (k, v) in hot_annotations {
            annotations.set(k, v);
        }
        if hot_injected {
            annotations.set(
                SIDECARSET_WORKING_HOTUPGRADE_CONTAINER,
                go_escape(serde_json::to_string(&working).unwrap_or_default()),
            );
        }
    }
    ops.extend(annotations.patch(pod));
    output.patch = ops;
    Ok(output)
}

/// Finds the SidecarSets that select the pod, resolved to the revision it gets, canary bases removed.
fn matching<'a>(
    view: &impl ClusterView,
    index: &'a SidecarSetIndex,
    namespace: &str,
    labels: Option<&Map<String, Value>>,
    output: &mut StepOutput,
) -> Result<Vec<Resolved<'a>>, Denial> {
    let mut skip = |name: &str, warning: String| {
        output.warnings.push(warning);
        output.skipped_sidecar_sets.push(name.to_string());
    };
    let pod_label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    let mut namespace_object: Option<Option<Arc<Namespace>>> = None;
    let mut matched = Vec::new();
    let mut bases = Vec::new();
    for entry in index.candidates(namespace, labels) {
        if !entry.selector.matches(pod_label) {
            continue;
        }
        if let Some(selector) = &entry.namespace_selector {
            let object = if entry.needs_namespace_labels {
                let object = namespace_object.get_or_insert_with(|| view.namespace(namespace));
                match object {
                    Some(object) => Some(object.clone()),
                    None => continue,
                }
            } else {
                None
            };
            let ns_labels = object.as_ref().and_then(|o| o.metadata.labels.as_ref());
            let ns_label = |k: &str| {
                if k == NAMESPACE_NAME_LABEL {
                    Some(namespace)
                } else {
                    ns_labels.and_then(|l| l.get(k)).map(String::as_str)
                }
            };
            if !selector.matches(ns_label) {
                continue;
            }
            if let Some(e) = selector.error() {
                skip(
                    &entry.name,
                    format!(
                        "SidecarSet {} skipped: invalid spec.namespaceSelector: {e}",
                        entry.name
                    ),
                );
                continue;
            }
        }
        if let Some(e) = entry.selector.error() {
            skip(
                &entry.name,
                format!("SidecarSet {} skipped: invalid spec.selector: {e}", entry.name),
            );
            continue;
        }
        let plan = match &entry.plan {
            Ok(plan) => plan,
            Err(e) => {
                skip(&entry.name, format!("SidecarSet {} skipped: {e}", entry.name));
                continue;
            }
        };
        match revision::resolve(entry, plan, view, index.revision_namespace(), pod_label) {
            Ok(resolved) => {
                if let Some(base) = &entry.canary_base {
                    bases.push(base.as_str());
                }
                matched.push(resolved);
            }
            Err(Failure::Skip(warning)) => skip(&entry.name, warning),
            Err(Failure::Deny(message)) => return Err(Denial::new(500, "InternalError", message)),
        }
    }
    matched.retain(|r| !bases.contains(&r.entry.name.as_str()));
    Ok(matched)
}

/// A SidecarSet the pod already records at this hash, with every container it injects present: injecting
/// it again would change nothing but the timestamp.
fn already_injected(
    r: &Resolved<'_>,
    pod: &pod_containers::PodContainers<'_>,
    hashes: &BTreeMap<String, UpgradeSpec>,
    listed: &BTreeSet<String>,
) -> bool {
    let recorded = hashes
        .get(&r.entry.name)
        .is_some_and(|h| !h.hash.is_empty() && h.hash == r.hash);
    let present = |list: &[Value], name: &str| list.iter().any(|c| pod_containers::name(c) == name);
    recorded
        && listed.contains(&r.entry.name)
        && r.plan
            .init_containers
            .iter()
            .flat_map(|s| s.pod_names())
            .all(|n| present(pod.init_containers, &n))
        && r.plan
            .containers
            .iter()
            .flat_map(|s| s.pod_names())
            .all(|n| present(pod.containers, &n))
}
