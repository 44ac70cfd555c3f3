//! `spec.injectionStrategy.revision`: which revision of a SidecarSet a new pod
//! gets (docs/sidecarset-injection.md#revision).

use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use kruise_api::apps_v1beta1::{SIDECARSET_CUSTOM_VERSION_LABEL, SidecarSetSpec};
use kruise_core::sidecarset::stamped_or_computed_hashes;
use serde_json::{Map, Value};

use super::{
    clock,
    index::{Entry, Partition},
    plan::Plan,
};
use crate::view::ClusterView;

/// The label naming a ControllerRevision's SidecarSet.
pub(crate) const SIDECARSET_NAME_LABEL: &str = "kruise.io/sidecarset-name";

/// A matched SidecarSet at the revision this pod gets.
pub(crate) struct Resolved<'a> {
    pub(crate) entry: &'a Entry,
    pub(crate) plan: Arc<Plan>,
    pub(crate) hash: String,
    pub(crate) hash_without_image: String,
    pub(crate) controller_revision: String,
}

/// Why a SidecarSet is not injected.
pub(crate) enum Failure {
    /// The SidecarSet is invalid: skipped, with this warning.
    Skip(String),
    /// The pod cannot be admitted now (OpenKruise answers 500): a pinned revision is missing.
    Deny(String),
}

/// Picks the revision of `entry` for a pod with these labels.
pub(crate) fn resolve<'a, 'l>(
    entry: &'a Entry,
    plan: &Arc<Plan>,
    view: &impl ClusterView,
    revision_namespace: &str,
    pod_label: impl Fn(&str) -> Option<&'l str>,
) -> Result<Resolved<'a>, Failure> {
    let latest = || Resolved {
        entry,
        plan: plan.clone(),
        hash: entry.hash.clone(),
        hash_without_image: entry.hash_without_image.clone(),
        controller_revision: entry.latest_revision.clone(),
    };
    let Some(pin) = &entry.pin else {
        return Ok(latest());
    };
    // As in OpenKruise, the pinned revision is loaded first: a missing one fails the pod whatever the policy.
    let history = history(entry, view, revision_namespace)?;
    if pin.update_paused || !pin.partial {
        return Ok(history);
    }
    // Partial: pods the update selector does not select keep the pinned revision; the others get it with
    // the partition's probability.
    if let Some(selector) = &pin.update_selector {
        if let Some(e) = selector.error() {
            return Err(Failure::Skip(format!(
                "SidecarSet {} skipped: invalid spec.updateStrategy.selector: {e}",
                entry.name
            )));
        }
        if !selector.matches(pod_label) {
            return Ok(history);
        }
    }
    match &pin.partition {
        Partition::Latest => Ok(latest()),
        Partition::Percent(p) if clock::random_unit() <= *p => Ok(history),
        Partition::Percent(_) => Ok(latest()),
        Partition::Invalid(e) => Err(Failure::Skip(format!("SidecarSet {} skipped: {e}", entry.name))),
    }
}

fn history<'a>(entry: &'a Entry, view: &impl ClusterView, namespace: &str) -> Result<Resolved<'a>, Failure> {
    let Some(pin) = &entry.pin else {
        return Err(Failure::Deny(format!(
            "SidecarSet {} has no pinned revision",
            entry.name
        )));
    };
    let revisions = view.controller_revisions(namespace);
    let revision = if let Some(name) = &pin.revision_name {
        revisions
            .iter()
            .find(|r| r.metadata.name.as_deref() == Some(name.as_str()))
            .ok_or_else(|| {
                Failure::Deny(format!(
                    "SidecarSet {}: controllerrevisions.apps \"{name}\" not found in namespace {namespace}",
                    entry.name
                ))
            })?
    } else {
        let version = pin.custom_version.as_deref().unwrap_or_default();
        fn label<'r>(r: &'r ControllerRevision, key: &str) -> Option<&'r str> {
            r.metadata.labels.as_ref()?.get(key).map(String::as_str)
        }
        let mut matching: Vec<&Arc<ControllerRevision>> = revisions
            .iter()
            .filter(|r| {
                label(r, SIDECARSET_NAME_LABEL) == Some(entry.name.as_str())
                    && label(r, SIDECARSET_CUSTOM_VERSION_LABEL) == Some(version)
            })
            .collect();
        matching.sort_by(|a, b| {
            a.revision
                .cmp(&b.revision)
                .then_with(|| a.metadata.creation_timestamp.cmp(&b.metadata.creation_timestamp))
                .then_with(|| a.metadata.name.cmp(&b.metadata.name))
        });
        *matching.last().ok_or_else(|| {
            Failure::Deny(format!(
                "SidecarSet {}: ControllerRevision.apps \"{}\" not found (no revision with custom version {version:?} in namespace {namespace})",
                entry.name, entry.name
            ))
        })?
    };
    restore(entry, revision).map_err(|e| {
        Failure::Skip(format!(
            "SidecarSet {} skipped: its ControllerRevision {} cannot be restored: {e}",
            entry.name,
            revision.metadata.name.as_deref().unwrap_or_default()
        ))
    })
}

/// Applies the revision's data (`{"spec":{"$patch":"replace",…}}`) to the SidecarSet's spec.
fn restore<'a>(entry: &'a Entry, revision: &ControllerRevision) -> Result<Resolved<'a>, String> {
    let data = &revision.data.0;
    let patch_spec = data
        .get("spec")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut spec = if patch_spec.get("$patch").and_then(Value::as_str) == Some("replace") {
        Map::new()
    } else {
        match serde_json::to_value(&entry.set.spec) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        }
    };
    for (k, v) in patch_spec {
        if k == "$patch" {
            continue;
        }
        if v.is_null() {
            spec.remove(&k);
        } else {
            spec.insert(k, v);
        }
    }
    let spec: SidecarSetSpec = serde_json::from_value(Value::Object(spec)).map_err(|e| e.to_string())?;
    let plan = Plan::new(&spec)?;
    let (hash, hash_without_image) =
        stamped_or_computed_hashes(revision.metadata.annotations.as_ref(), &spec);
    Ok(Resolved {
        entry,
        plan: Arc::new(plan),
        hash,
        hash_without_image,
        controller_revision: revision.metadata.name.clone().unwrap_or_default(),
    })
}
