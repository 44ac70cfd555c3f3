//! ResourceDistribution: v1alpha1 `targets.namespaceLabelSelector` is v1beta1
//! `targets.namespaceSelector`, and a condition's `failedNamespace` is `failedNamespaces`.
//! Everything else, the embedded resource included, is carried over untouched.

use serde_json::{Map, Value};

use super::ConversionError;
use super::json::{Ctx, object_mut, rename_key};

pub(super) fn to_v1beta1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    rename(
        ctx,
        obj,
        ("namespaceLabelSelector", "namespaceSelector"),
        ("failedNamespace", "failedNamespaces"),
    )
}

pub(super) fn to_v1alpha1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    rename(
        ctx,
        obj,
        ("namespaceSelector", "namespaceLabelSelector"),
        ("failedNamespaces", "failedNamespace"),
    )
}

fn rename(
    ctx: &Ctx,
    obj: &mut Map<String, Value>,
    selector: (&str, &str),
    failed: (&str, &str),
) -> Result<(), ConversionError> {
    if let Some(spec) = object_mut(ctx, obj, "spec", "spec")?
        && let Some(targets) = object_mut(ctx, spec, "targets", "spec.targets")?
    {
        targets.remove(selector.1);
        rename_key(targets, selector.0, selector.1);
    }
    if let Some(status) = object_mut(ctx, obj, "status", "status")? {
        match status.get_mut("conditions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(conditions)) => {
                for (i, condition) in conditions.iter_mut().enumerate() {
                    let condition = condition
                        .as_object_mut()
                        .ok_or_else(|| ctx.error(format!("status.conditions[{i}]"), "expected an object"))?;
                    condition.remove(failed.1);
                    rename_key(condition, failed.0, failed.1);
                }
            }
            Some(_) => return Err(ctx.error("status.conditions", "expected an array")),
        }
    }
    Ok(())
}
