//! SidecarSet: v1alpha1 `spec.namespace` and the custom-version label map to v1beta1
//! `namespaceSelector` and `spec.customVersion`; everything else is shared.

use serde_json::{Map, Value, json};

use super::ConversionError;
use super::json::{Ctx, meta_get, meta_remove, meta_set, object_mut, take_str};
use crate::apps::shared::sidecarset::{LABEL_METADATA_NAME, SIDECARSET_CUSTOM_VERSION_LABEL};

const LABELS: &str = "labels";

pub(super) fn to_v1beta1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    if let Some(spec) = object_mut(ctx, obj, "spec", "spec")? {
        // v1beta1-only field: a v1alpha1 object never carries it.
        spec.remove("customVersion");
        // A namespace wins over a namespaceSelector, as in OpenKruise.
        let namespace = take_str(ctx, spec, "namespace", "spec.namespace")?;
        if let Some(ns) = namespace.filter(|ns| !ns.is_empty()) {
            spec.insert(
                "namespaceSelector".into(),
                json!({ "matchLabels": { LABEL_METADATA_NAME: ns } }),
            );
        }
    }
    // The custom version moves from the label into the spec; the label is removed.
    if let Some(version) = meta_get(ctx, obj, LABELS, SIDECARSET_CUSTOM_VERSION_LABEL)? {
        meta_remove(ctx, obj, LABELS, SIDECARSET_CUSTOM_VERSION_LABEL)?;
        if !version.is_empty() {
            let spec = super::json::object_entry(ctx, obj, "spec", "spec")?;
            spec.insert("customVersion".into(), Value::String(version));
        }
    }
    Ok(())
}

pub(super) fn to_v1alpha1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    let mut custom_version = None;
    if let Some(spec) = object_mut(ctx, obj, "spec", "spec")? {
        // v1alpha1-only field: a v1beta1 object never carries it.
        spec.remove("namespace");
        custom_version = take_str(ctx, spec, "customVersion", "spec.customVersion")?;
    }
    if let Some(version) = custom_version.filter(|v| !v.is_empty()) {
        meta_set(ctx, obj, LABELS, SIDECARSET_CUSTOM_VERSION_LABEL, version)?;
    }
    Ok(())
}
