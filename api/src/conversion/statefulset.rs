//! Advanced StatefulSet: both versions share every field `v1alpha1` has, so conversion is field for
//! field. Going down, the `v1beta1`-only fields (spec: reserveOrdinals, lifecycle, scaleStrategy,
//! persistentVolumeClaimRetentionPolicy, ordinals, volumeClaimUpdateStrategy; status:
//! updatedReadyReplicas, updatedAvailableReplicas, volumeClaims) move into the annotation
//! [`V1BETA1_FIELDS_ANNOTATION`]; going up they come back from it (a field the object carries wins)
//! and the annotation is removed (an unreadable value is dropped). OpenKruise drops them, so a v1alpha1 read-modify-write erases them.

use serde_json::{Map, Value};

use super::ConversionError;
use super::json::{Ctx, meta_get, meta_remove, meta_set, object_entry, object_mut};
use crate::apps::shared::statefulset::{
    V1BETA1_FIELDS_ANNOTATION, V1BETA1_ONLY_SPEC_FIELDS, V1BETA1_ONLY_STATUS_FIELDS,
};

const ANNOTATIONS: &str = "annotations";

/// The object's sections holding `v1beta1`-only fields, with those fields.
const SECTIONS: [(&str, &[&str]); 2] = [
    ("spec", &V1BETA1_ONLY_SPEC_FIELDS),
    ("status", &V1BETA1_ONLY_STATUS_FIELDS),
];

pub(super) fn to_v1alpha1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    let mut kept = Map::new();
    for (section, fields) in SECTIONS {
        let Some(part) = object_mut(ctx, obj, section, section)? else {
            continue;
        };
        let mut taken = Map::new();
        for field in fields {
            match part.remove(*field) {
                None | Some(Value::Null) => {}
                Some(v) => {
                    taken.insert((*field).to_string(), v);
                }
            }
        }
        if !taken.is_empty() {
            kept.insert(section.to_string(), Value::Object(taken));
        }
    }
    if kept.is_empty() {
        return meta_remove(ctx, obj, ANNOTATIONS, V1BETA1_FIELDS_ANNOTATION);
    }
    // serde_json's map is ordered by key, so the text is canonical and a round trip reproduces it.
    let text = Value::Object(kept).to_string();
    meta_set(ctx, obj, ANNOTATIONS, V1BETA1_FIELDS_ANNOTATION, text)
}

pub(super) fn to_v1beta1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    let Some(text) = meta_get(ctx, obj, ANNOTATIONS, V1BETA1_FIELDS_ANNOTATION)? else {
        return Ok(());
    };
    meta_remove(ctx, obj, ANNOTATIONS, V1BETA1_FIELDS_ANNOTATION)?;
    // A value that is not a JSON object (edited by hand) is dropped: refusing to convert would make
    // the stored object unreadable.
    let Ok(kept) = serde_json::from_str::<Map<String, Value>>(&text) else {
        return Ok(());
    };
    for (section, fields) in SECTIONS {
        let Some(Value::Object(saved)) = kept.get(section) else {
            continue;
        };
        let part = object_entry(ctx, obj, section, section)?;
        for field in fields {
            if let Some(v) = saved.get(*field).filter(|v| !v.is_null())
                && part.get(*field).is_none_or(Value::is_null)
            {
                part.insert((*field).to_string(), v.clone());
            }
        }
    }
    Ok(())
}
