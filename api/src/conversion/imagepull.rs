//! NodeImage, ImagePullJob, ImageListPullJob: the two versions have the same shape, but a v1alpha1
//! NodeImage's pull-secret references have no `mode`, which is dropped on the way down (and cannot
//! come back). ImagePullJob and ImageListPullJob convert unchanged.

use serde_json::{Map, Value};

use super::ConversionError;
use super::json::{Ctx, object_mut};

pub(super) fn node_image_to_v1alpha1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    let Some(spec) = object_mut(ctx, obj, "spec", "spec")? else {
        return Ok(());
    };
    let Some(images) = object_mut(ctx, spec, "images", "spec.images")? else {
        return Ok(());
    };
    for (name, image) in images.iter_mut() {
        let Some(image) = image.as_object_mut() else {
            return Err(ctx.error(format!("spec.images.{name}"), "expected an object"));
        };
        if let Some(Value::Array(secrets)) = image.get_mut("pullSecrets") {
            for secret in secrets.iter_mut().filter_map(Value::as_object_mut) {
                secret.remove("mode");
            }
        }
    }
    Ok(())
}
