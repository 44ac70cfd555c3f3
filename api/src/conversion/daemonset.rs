//! Advanced DaemonSet: field for field but for three mappings (OpenKruise's
//! `apis/apps/v1alpha1/daemonset_conversion.go`):
//!
//! * `rollingUpdateType: Surging` becomes `Standard` on the way up; where the object leaves
//!   `maxSurge` / `maxUnavailable` unset they become 1 / 0, so the pods still surge (OpenKruise only
//!   renames the type, leaving the object to the defaulting webhook);
//! * the annotation `daemonset.kruise.io/progressive-create-pod: "true"` turns on
//!   `scaleStrategy.partitionedScaling` going up; going down the annotation mirrors the field (set
//!   when true, removed when false), and `scaleStrategy` leaves the spec;
//! * `status.daemonSetHash` ↔ `status.updateRevision`.

use serde_json::{Map, Value};

use super::ConversionError;
use super::json::{Ctx, meta_get, meta_remove, meta_set, object_entry, object_mut, rename_key};
use crate::apps::shared::daemonset::PROGRESSIVE_CREATE_POD_ANNOTATION;

const ANNOTATIONS: &str = "annotations";

pub(super) fn to_v1beta1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    if let Some(spec) = object_mut(ctx, obj, "spec", "spec")?
        && let Some(strategy) = object_mut(ctx, spec, "updateStrategy", "spec.updateStrategy")?
        && let Some(rolling) = object_mut(
            ctx,
            strategy,
            "rollingUpdate",
            "spec.updateStrategy.rollingUpdate",
        )?
        && rolling.get("rollingUpdateType").and_then(Value::as_str) == Some("Surging")
    {
        rolling.insert("rollingUpdateType".into(), Value::String("Standard".into()));
        if rolling.get("maxSurge").is_none_or(Value::is_null) {
            rolling.insert("maxSurge".into(), Value::from(1));
        }
        if rolling.get("maxUnavailable").is_none_or(Value::is_null) {
            rolling.insert("maxUnavailable".into(), Value::from(0));
        }
    }
    if meta_get(ctx, obj, ANNOTATIONS, PROGRESSIVE_CREATE_POD_ANNOTATION)?.as_deref() == Some("true") {
        let spec = object_entry(ctx, obj, "spec", "spec")?;
        let scale = object_entry(ctx, spec, "scaleStrategy", "spec.scaleStrategy")?;
        scale.insert("partitionedScaling".into(), Value::Bool(true));
    }
    if let Some(status) = object_mut(ctx, obj, "status", "status")? {
        rename_key(status, "daemonSetHash", "updateRevision");
    }
    Ok(())
}

pub(super) fn to_v1alpha1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    let mut partitioned = false;
    if let Some(spec) = object_mut(ctx, obj, "spec", "spec")?
        && let Some(scale) = spec.remove("scaleStrategy")
    {
        partitioned = scale.get("partitionedScaling").and_then(Value::as_bool) == Some(true);
    }
    if partitioned {
        meta_set(
            ctx,
            obj,
            ANNOTATIONS,
            PROGRESSIVE_CREATE_POD_ANNOTATION,
            "true".into(),
        )?;
    } else {
        meta_remove(ctx, obj, ANNOTATIONS, PROGRESSIVE_CREATE_POD_ANNOTATION)?;
    }
    if let Some(status) = object_mut(ctx, obj, "status", "status")? {
        rename_key(status, "updateRevision", "daemonSetHash");
    }
    Ok(())
}
