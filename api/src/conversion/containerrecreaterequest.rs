//! ContainerRecreateRequest: the spec and the common status fields are identical. v1beta1's
//! `status.containerStatusSnapshot` is v1alpha1's annotation `crr.apps.kruise.io/sync-container-statuses`
//! (a JSON array), and a True `PreRecreateGrace` condition is the annotation
//! `crr.apps.kruise.io/unready-acquired` (its RFC 3339 `lastTransitionTime`). Unparsable annotations
//! are dropped on the way to v1beta1, as OpenKruise does; the annotations themselves stay.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::{Map, Value, json};

use super::ConversionError;
use super::json::{Ctx, meta_get, meta_set, object_entry, object_mut};
use crate::apps::shared::containerrecreaterequest::{
    CRR_PRE_RECREATE_GRACE, CRR_PRE_RECREATE_GRACE_MESSAGE, CRR_SYNC_CONTAINER_STATUSES_ANNOTATION,
    CRR_UNREADY_ACQUIRED_KEY, ContainerRecreateRequestSyncContainerStatus,
};

pub(super) fn to_v1beta1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    let snapshot = meta_get(ctx, obj, "annotations", CRR_SYNC_CONTAINER_STATUSES_ANNOTATION)?
        .filter(|raw| !raw.is_empty())
        .and_then(|raw| serde_json::from_str::<Vec<ContainerRecreateRequestSyncContainerStatus>>(&raw).ok());
    let acquired = meta_get(ctx, obj, "annotations", CRR_UNREADY_ACQUIRED_KEY)?
        .filter(|raw| serde_json::from_value::<Time>(Value::String(raw.clone())).is_ok());
    if snapshot.is_none() && acquired.is_none() {
        return Ok(());
    }
    let status = object_entry(ctx, obj, "status", "status")?;
    if let Some(snapshot) = snapshot {
        status.insert(
            "containerStatusSnapshot".into(),
            serde_json::to_value(snapshot).unwrap_or(Value::Null),
        );
    }
    if let Some(at) = acquired {
        status.insert(
            "conditions".into(),
            json!([{
                "type": CRR_PRE_RECREATE_GRACE,
                "status": "True",
                "lastTransitionTime": at,
                "reason": CRR_PRE_RECREATE_GRACE,
                "message": CRR_PRE_RECREATE_GRACE_MESSAGE,
            }]),
        );
    }
    Ok(())
}

pub(super) fn to_v1alpha1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    let Some(status) = object_mut(ctx, obj, "status", "status")? else {
        return Ok(());
    };
    let snapshot = status.remove("containerStatusSnapshot");
    let conditions = status.remove("conditions");
    if let Some(snapshot @ Value::Array(_)) = snapshot {
        meta_set(
            ctx,
            obj,
            "annotations",
            CRR_SYNC_CONTAINER_STATUSES_ANNOTATION,
            snapshot.to_string(),
        )?;
    }
    let grace_start = conditions.as_ref().and_then(Value::as_array).and_then(|all| {
        all.iter().find_map(|c| {
            (c["type"] == CRR_PRE_RECREATE_GRACE && c["status"] == "True")
                .then(|| c["lastTransitionTime"].as_str().map(str::to_owned))
                .flatten()
        })
    });
    if let Some(at) = grace_start {
        meta_set(ctx, obj, "annotations", CRR_UNREADY_ACQUIRED_KEY, at)?;
    }
    Ok(())
}
