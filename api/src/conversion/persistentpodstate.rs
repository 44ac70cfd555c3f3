//! PersistentPodState: v1alpha1 `nodeTopologyKeys` is v1beta1 `keys`, in
//! `spec.requiredPersistentTopology` and in each `spec.preferredPersistentTopology[].preference`.
//! Everything else is carried over untouched.

use serde_json::{Map, Value};

use super::ConversionError;
use super::json::{Ctx, object_mut, rename_key};

pub(super) fn to_v1beta1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    rename(ctx, obj, "nodeTopologyKeys", "keys")
}

pub(super) fn to_v1alpha1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    rename(ctx, obj, "keys", "nodeTopologyKeys")
}

fn rename(ctx: &Ctx, obj: &mut Map<String, Value>, from: &str, to: &str) -> Result<(), ConversionError> {
    let Some(spec) = object_mut(ctx, obj, "spec", "spec")? else {
        return Ok(());
    };
    if let Some(term) = object_mut(
        ctx,
        spec,
        "requiredPersistentTopology",
        "spec.requiredPersistentTopology",
    )? {
        term.remove(to);
        rename_key(term, from, to);
    }
    match spec.get_mut("preferredPersistentTopology") {
        None | Some(Value::Null) => {}
        Some(Value::Array(terms)) => {
            for (i, term) in terms.iter_mut().enumerate() {
                let path = format!("spec.preferredPersistentTopology[{i}]");
                let term = term
                    .as_object_mut()
                    .ok_or_else(|| ctx.error(path.clone(), "expected an object"))?;
                if let Some(preference) = object_mut(ctx, term, "preference", &format!("{path}.preference"))?
                {
                    preference.remove(to);
                    rename_key(preference, from, to);
                }
            }
        }
        Some(_) => return Err(ctx.error("spec.preferredPersistentTopology", "expected an array")),
    }
    Ok(())
}
