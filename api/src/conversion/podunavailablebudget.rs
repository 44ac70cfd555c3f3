//! PodUnavailableBudget: v1beta1 `protectOperations` / `protectTotalReplicas` travel through
//! the v1alpha1 annotations; `ignoredPodSelector` has no v1alpha1 form and is dropped.

use serde_json::{Map, Value};

use super::ConversionError;
use super::json::{Ctx, meta_get, meta_map_mut, meta_remove, meta_set, object_entry, object_mut};
use crate::policy::shared::{
    PUB_PROTECT_OPERATION_ANNOTATION, PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION, PubOperation,
};

const ANNOTATIONS: &str = "annotations";
const BETA_ONLY: [&str; 3] = ["protectOperations", "protectTotalReplicas", "ignoredPodSelector"];

pub(super) fn to_v1beta1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    let operations = match meta_get(ctx, obj, ANNOTATIONS, PUB_PROTECT_OPERATION_ANNOTATION)? {
        Some(value) => parse_operations(ctx, &value)?,
        None => Vec::new(),
    };
    let total = match meta_get(ctx, obj, ANNOTATIONS, PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION)? {
        Some(value) if !value.is_empty() => Some(value.parse::<i32>().map_err(|e| {
            ctx.error(
                format!("metadata.annotations[{PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION}]"),
                format!("failed to parse {PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION}: {e}"),
            )
        })?),
        _ => None,
    };
    let spec = object_entry(ctx, obj, "spec", "spec")?;
    for key in BETA_ONLY {
        spec.remove(key);
    }
    if !operations.is_empty() {
        spec.insert("protectOperations".into(), Value::from(operations));
    }
    if let Some(total) = total {
        spec.insert("protectTotalReplicas".into(), Value::from(total));
    }
    Ok(())
}

pub(super) fn to_v1alpha1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    let mut operations = None;
    let mut total = None;
    if let Some(spec) = object_mut(ctx, obj, "spec", "spec")? {
        operations = match spec.remove("protectOperations") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => {
                let mut names = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let name = item.as_str().ok_or_else(|| {
                        ctx.error(format!("spec.protectOperations[{i}]"), "expected a string")
                    })?;
                    if !name.is_empty() {
                        names.push(name.to_string());
                    }
                }
                Some(names.join(","))
            }
            Some(_) => return Err(ctx.error("spec.protectOperations", "expected an array")),
        };
        total = match spec.remove("protectTotalReplicas") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => Some(n.to_string()),
            Some(_) => return Err(ctx.error("spec.protectTotalReplicas", "expected an integer")),
        };
        for key in BETA_ONLY {
            spec.remove(key);
        }
    }
    // OpenKruise derives both annotations from the spec: set when present, removed otherwise.
    match operations {
        Some(ops) if !ops.is_empty() => {
            meta_set(ctx, obj, ANNOTATIONS, PUB_PROTECT_OPERATION_ANNOTATION, ops)?
        }
        _ => meta_remove(ctx, obj, ANNOTATIONS, PUB_PROTECT_OPERATION_ANNOTATION)?,
    }
    match total {
        Some(total) => meta_set(
            ctx,
            obj,
            ANNOTATIONS,
            PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION,
            total,
        )?,
        None => meta_remove(ctx, obj, ANNOTATIONS, PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION)?,
    }
    // Go omits an empty annotation map.
    if meta_map_mut(ctx, obj, ANNOTATIONS)?.is_some_and(|m| m.is_empty())
        && let Some(Value::Object(meta)) = obj.get_mut("metadata")
    {
        meta.remove(ANNOTATIONS);
    }
    Ok(())
}

/// Parses `"DELETE, EVICT"` into operation names, rejecting unknown ones like OpenKruise.
fn parse_operations(ctx: &Ctx, value: &str) -> Result<Vec<String>, ConversionError> {
    let mut out = Vec::new();
    for item in value.split(',') {
        let op = item.trim();
        if op.is_empty() {
            continue;
        }
        if matches!(PubOperation::from(op), PubOperation::Other(_)) {
            return Err(ctx.error(
                format!("metadata.annotations[{PUB_PROTECT_OPERATION_ANNOTATION}]"),
                format!("invalid {PUB_PROTECT_OPERATION_ANNOTATION} value {op:?}"),
            ));
        }
        out.push(op.to_string());
    }
    Ok(out)
}
