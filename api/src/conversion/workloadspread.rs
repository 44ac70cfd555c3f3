//! WorkloadSpread: subset node-selector fields are renamed, and subset conditions switch
//! between the v1alpha1 condition type and the standard `metav1.Condition`.

use serde_json::{Map, Value};

use super::ConversionError;
use super::json::{Ctx, object_mut, rename_key};

const ALPHA_REQUIRED: &str = "requiredNodeSelectorTerm";
const ALPHA_PREFERRED: &str = "preferredNodeSelectorTerms";
const BETA_REQUIRED: &str = "requiredNodeSelector";
const BETA_PREFERRED: &str = "preferredNodeSelector";

pub(super) fn to_v1beta1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    for_each_subset(ctx, obj, |subset| {
        subset.remove(BETA_REQUIRED);
        subset.remove(BETA_PREFERRED);
        rename_key(subset, ALPHA_REQUIRED, BETA_REQUIRED);
        rename_key(subset, ALPHA_PREFERRED, BETA_PREFERRED);
    })?;
    for_each_condition(ctx, obj, |cond| {
        // metav1.Condition requires a reason and always carries a message.
        let reason_missing = !matches!(cond.get("reason"), Some(Value::String(r)) if !r.is_empty());
        if reason_missing {
            cond.insert("reason".into(), Value::String("Unknown".into()));
        }
        if matches!(cond.get("message"), None | Some(Value::Null)) {
            cond.insert("message".into(), Value::String(String::new()));
        }
        cond.remove("observedGeneration");
    })
}

pub(super) fn to_v1alpha1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    for_each_subset(ctx, obj, |subset| {
        subset.remove(ALPHA_REQUIRED);
        subset.remove(ALPHA_PREFERRED);
        rename_key(subset, BETA_REQUIRED, ALPHA_REQUIRED);
        rename_key(subset, BETA_PREFERRED, ALPHA_PREFERRED);
    })?;
    for_each_condition(ctx, obj, |cond| {
        // v1alpha1 has no observedGeneration and omits empty reason/message.
        cond.remove("observedGeneration");
        for key in ["reason", "message"] {
            if matches!(cond.get(key), Some(Value::String(s)) if s.is_empty()) {
                cond.remove(key);
            }
        }
    })
}

fn for_each_subset(
    ctx: &Ctx,
    obj: &mut Map<String, Value>,
    mut f: impl FnMut(&mut Map<String, Value>),
) -> Result<(), ConversionError> {
    let Some(spec) = object_mut(ctx, obj, "spec", "spec")? else {
        return Ok(());
    };
    match spec.get_mut("subsets") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Array(subsets)) => {
            for (i, subset) in subsets.iter_mut().enumerate() {
                let subset = subset
                    .as_object_mut()
                    .ok_or_else(|| ctx.error(format!("spec.subsets[{i}]"), "expected an object"))?;
                f(subset);
            }
            Ok(())
        }
        Some(_) => Err(ctx.error("spec.subsets", "expected an array")),
    }
}

fn for_each_condition(
    ctx: &Ctx,
    obj: &mut Map<String, Value>,
    mut f: impl FnMut(&mut Map<String, Value>),
) -> Result<(), ConversionError> {
    let Some(status) = object_mut(ctx, obj, "status", "status")? else {
        return Ok(());
    };
    if let Some(list) = status.get_mut("subsetStatuses") {
        conditions_in_list(ctx, list, "status.subsetStatuses", &mut f)?;
    }
    match status.get_mut("versionedSubsetStatuses") {
        None | Some(Value::Null) => {}
        Some(Value::Object(versions)) => {
            for (version, list) in versions.iter_mut() {
                conditions_in_list(
                    ctx,
                    list,
                    &format!("status.versionedSubsetStatuses[{version}]"),
                    &mut f,
                )?;
            }
        }
        Some(_) => return Err(ctx.error("status.versionedSubsetStatuses", "expected an object")),
    }
    Ok(())
}

fn conditions_in_list(
    ctx: &Ctx,
    list: &mut Value,
    path: &str,
    f: &mut impl FnMut(&mut Map<String, Value>),
) -> Result<(), ConversionError> {
    let statuses = match list {
        Value::Null => return Ok(()),
        Value::Array(a) => a,
        _ => return Err(ctx.error(path, "expected an array")),
    };
    for (i, status) in statuses.iter_mut().enumerate() {
        let status = status
            .as_object_mut()
            .ok_or_else(|| ctx.error(format!("{path}[{i}]"), "expected an object"))?;
        match status.get_mut("conditions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(conds)) => {
                for (j, cond) in conds.iter_mut().enumerate() {
                    let cond = cond.as_object_mut().ok_or_else(|| {
                        ctx.error(format!("{path}[{i}].conditions[{j}]"), "expected an object")
                    })?;
                    f(cond);
                }
            }
            Some(_) => return Err(ctx.error(format!("{path}[{i}].conditions"), "expected an array")),
        }
    }
    Ok(())
}
