//! CloneSet: the flat v1alpha1 update strategy maps to v1beta1 `type` + `rollingUpdate`,
//! `disablePVCReuse` inverts into `enablePVCReuse`, and image pre-download settings move
//! between v1alpha1 annotations and v1beta1 `inPlaceUpdateStrategy` fields.

use serde_json::{Map, Value};

use super::ConversionError;
use super::json::{Ctx, meta_get, meta_set, move_key, object_entry, take_bool, take_object};
use crate::apps::shared::cloneset::{
    CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_KEY, IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS_KEY,
    IMAGE_PRE_DOWNLOAD_PARALLELISM_KEY, IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS_KEY,
};

const ANNOTATIONS: &str = "annotations";
/// Fields that sit directly under v1alpha1 `updateStrategy` and under v1beta1
/// `updateStrategy.rollingUpdate`, unchanged.
const ROLLING_FIELDS: [&str; 6] = [
    "partition",
    "maxUnavailable",
    "maxSurge",
    "paused",
    "priorityStrategy",
    "scatterStrategy",
];
const PARALLELISM: &str = "imagePreDownloadParallelism";
const TIMEOUT: &str = "imagePreDownloadTimeoutSeconds";
const MIN_READY: &str = "imagePreDownloadMinUpdatedReadyPods";

pub(super) fn to_v1beta1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    let exclude_preparing_delete =
        meta_get(ctx, obj, "labels", CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_KEY)?.as_deref()
            == Some("true");
    let pre_download = PreDownload::from_annotations(ctx, obj)?;

    let spec = object_entry(ctx, obj, "spec", "spec")?;

    let scale = object_entry(ctx, spec, "scaleStrategy", "spec.scaleStrategy")?;
    let disable = take_bool(
        ctx,
        scale,
        "disablePVCReuse",
        "spec.scaleStrategy.disablePVCReuse",
    )?;
    scale.remove("enablePVCReuse");
    scale.remove("excludePreparingDelete");
    if !disable {
        scale.insert("enablePVCReuse".into(), Value::Bool(true));
    }
    if exclude_preparing_delete {
        scale.insert("excludePreparingDelete".into(), Value::Bool(true));
    }
    drop_if_empty(spec, "scaleStrategy");

    let mut alpha = take_object(ctx, spec, "updateStrategy", "spec.updateStrategy")?.unwrap_or_default();
    let alpha_type = match alpha.get("type") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(ctx.error("spec.updateStrategy.type", "expected a string")),
    };
    let (beta_type, policy) = match alpha_type.as_deref() {
        Some("OnDelete") => ("OnDelete", None),
        Some("InPlaceIfPossible") => ("RollingUpdate", Some("InPlaceIfPossible")),
        Some("InPlaceOnly") => ("RollingUpdate", Some("InPlaceOnly")),
        // ReCreate, unset and unknown values all mean recreate.
        _ => ("RollingUpdate", Some("ReCreate")),
    };
    let mut beta = Map::new();
    beta.insert("type".into(), Value::String(beta_type.into()));
    if let Some(policy) = policy {
        let mut rolling = Map::new();
        for key in &ROLLING_FIELDS[..3] {
            move_key(&mut alpha, &mut rolling, key);
        }
        rolling.insert("podUpdatePolicy".into(), Value::String(policy.into()));
        for key in &ROLLING_FIELDS[3..] {
            move_key(&mut alpha, &mut rolling, key);
        }
        let src = take_object(
            ctx,
            &mut alpha,
            "inPlaceUpdateStrategy",
            "spec.updateStrategy.inPlaceUpdateStrategy",
        )?;
        if let Some(strategy) = pre_download.merge_into(src) {
            rolling.insert("inPlaceUpdateStrategy".into(), Value::Object(strategy));
        }
        beta.insert("rollingUpdate".into(), Value::Object(rolling));
    }
    spec.insert("updateStrategy".into(), Value::Object(beta));
    Ok(())
}

pub(super) fn to_v1alpha1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    let spec = object_entry(ctx, obj, "spec", "spec")?;

    let scale = object_entry(ctx, spec, "scaleStrategy", "spec.scaleStrategy")?;
    let enable = take_bool(ctx, scale, "enablePVCReuse", "spec.scaleStrategy.enablePVCReuse")?;
    scale.remove("disablePVCReuse");
    // v1alpha1 only reads the label; OpenKruise does not write it back.
    scale.remove("excludePreparingDelete");
    if !enable {
        scale.insert("disablePVCReuse".into(), Value::Bool(true));
    }
    drop_if_empty(spec, "scaleStrategy");

    let mut beta = take_object(ctx, spec, "updateStrategy", "spec.updateStrategy")?.unwrap_or_default();
    let beta_type = match beta.get("type") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(ctx.error("spec.updateStrategy.type", "expected a string")),
    };
    let mut rolling = take_object(
        ctx,
        &mut beta,
        "rollingUpdate",
        "spec.updateStrategy.rollingUpdate",
    )?;
    let alpha_type = if beta_type.as_deref() == Some("OnDelete") {
        "OnDelete"
    } else {
        match rolling
            .as_ref()
            .and_then(|r| r.get("podUpdatePolicy"))
            .and_then(Value::as_str)
        {
            Some("InPlaceIfPossible") => "InPlaceIfPossible",
            Some("InPlaceOnly") => "InPlaceOnly",
            _ => "ReCreate",
        }
    };
    let mut alpha = Map::new();
    alpha.insert("type".into(), Value::String(alpha_type.into()));
    let mut pre_download = PreDownload::default();
    if let Some(rolling) = rolling.as_mut() {
        for key in ROLLING_FIELDS {
            move_key(rolling, &mut alpha, key);
        }
        let strategy = take_object(
            ctx,
            rolling,
            "inPlaceUpdateStrategy",
            "spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy",
        )?;
        if let Some(mut strategy) = strategy {
            pre_download = PreDownload::take_fields(ctx, &mut strategy)?;
            // Only the grace period stays in v1alpha1; the pre-download fields go to the
            // annotations. Without a grace period the strategy is left out rather than written as
            // `{}` (OpenKruise writes `{}` when only pre-download fields were set): both read the
            // same, and leaving it out lets a v1alpha1 object that never had one round-trip.
            let grace = strategy
                .get("gracePeriodSeconds")
                .filter(|g| !g.is_null() && g.as_i64() != Some(0));
            if let Some(grace) = grace {
                let mut dst = Map::new();
                dst.insert("gracePeriodSeconds".into(), grace.clone());
                alpha.insert("inPlaceUpdateStrategy".into(), Value::Object(dst));
            }
        }
    }
    spec.insert("updateStrategy".into(), Value::Object(alpha));
    pre_download.write_annotations(ctx, obj)
}

/// An empty strategy object means the same as none; dropping it keeps round trips exact.
fn drop_if_empty(spec: &mut Map<String, Value>, key: &str) {
    if spec
        .get(key)
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        spec.remove(key);
    }
}

/// Image pre-download settings, in whichever version's form.
#[derive(Default)]
struct PreDownload {
    parallelism: Option<Value>,
    timeout: Option<Value>,
    min_ready: Option<Value>,
}

impl PreDownload {
    /// Reads the v1alpha1 annotations; unparsable numbers are ignored, as in OpenKruise.
    fn from_annotations(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<Self, ConversionError> {
        let get = |obj: &mut Map<String, Value>, key| -> Result<Option<String>, ConversionError> {
            Ok(meta_get(ctx, obj, ANNOTATIONS, key)?.filter(|v| !v.is_empty()))
        };
        let int32 = |s: Option<String>| s.and_then(|s| s.parse::<i32>().ok()).map(Value::from);
        Ok(Self {
            parallelism: get(obj, IMAGE_PRE_DOWNLOAD_PARALLELISM_KEY)?.map(|s| match s.parse::<i32>() {
                Ok(n) => Value::from(n),
                Err(_) => Value::String(s),
            }),
            timeout: int32(get(obj, IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS_KEY)?),
            min_ready: int32(get(obj, IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS_KEY)?),
        })
    }

    /// Builds the v1beta1 `inPlaceUpdateStrategy` from the v1alpha1 one plus the annotations.
    ///
    /// A strategy with nothing set (no non-zero grace period, no pre-download setting) is left
    /// out, in both directions, rather than kept as `{}` as OpenKruise does: both read the same,
    /// and dropping it makes converting a converted object give the same result again.
    fn merge_into(self, src: Option<Map<String, Value>>) -> Option<Map<String, Value>> {
        let mut dst = Map::new();
        if let Some(grace) = src
            .and_then(|mut s| s.remove("gracePeriodSeconds"))
            .filter(|g| !g.is_null() && g.as_i64() != Some(0))
        {
            dst.insert("gracePeriodSeconds".into(), grace);
        }
        for (key, value) in [
            (PARALLELISM, self.parallelism),
            (TIMEOUT, self.timeout),
            (MIN_READY, self.min_ready),
        ] {
            if let Some(v) = value {
                dst.insert(key.into(), v);
            }
        }
        (!dst.is_empty()).then_some(dst)
    }

    /// Takes the v1beta1 fields out of an `inPlaceUpdateStrategy` object.
    fn take_fields(ctx: &Ctx, strategy: &mut Map<String, Value>) -> Result<Self, ConversionError> {
        let base = "spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy";
        let mut take = |key: &str, int_or_string: bool| -> Result<Option<Value>, ConversionError> {
            match strategy.remove(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v @ Value::Number(_)) => Ok(Some(v)),
                Some(v @ Value::String(_)) if int_or_string => Ok(Some(v)),
                Some(_) => Err(ctx.error(format!("{base}.{key}"), "expected an integer")),
            }
        };
        Ok(Self {
            parallelism: take(PARALLELISM, true)?,
            timeout: take(TIMEOUT, false)?,
            min_ready: take(MIN_READY, false)?,
        })
    }

    /// Writes the settings into the v1alpha1 annotations.
    fn write_annotations(self, ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
        for (key, value) in [
            (IMAGE_PRE_DOWNLOAD_PARALLELISM_KEY, self.parallelism),
            (IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS_KEY, self.timeout),
            (IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS_KEY, self.min_ready),
        ] {
            if let Some(v) = value {
                let text = match v {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                meta_set(ctx, obj, ANNOTATIONS, key, text)?;
            }
        }
        Ok(())
    }
}
