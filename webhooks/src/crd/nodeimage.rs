//! NodeImage validation (`/validate-apps-kruise-io-nodeimage`), after OpenKruise's
//! `pkg/webhook/nodeimage/validating`; its defaults are in [`mutate`].
//!
//! With `KruiseDaemon` off every CREATE/UPDATE is refused with 403. Otherwise the spec lists at most
//! 256 images; each image has a name; each of its tags is non-empty and unique within the image and
//! has `createdAt`, a non-negative `version`, a `pullPolicy` and `pullPolicy.ttlSecondsAfterFinished`.
//! Both versions have the same rules (a v1alpha1 pull-secret reference only lacks `mode`).
//!
//! Deviations (`docs/image-pull.md`): OpenKruise stops at the first error and answers 400 with a bare
//! sentence; kruise-rs reports every error with its path and OpenKruise's sentence as the detail
//! (`spec.images[demo].tags[0].version: Invalid value: -1: version for demo/v1 can not be less than
//! 0`), as 422 `Invalid` like every CRD.

use super::field::{ErrorList, Path, invalid, required};
use super::{Which, check_decodes, check_version, judged, raw_object, refuse};
use crate::{Decision, Settings, review::AdmissionRequest};
use kruise_api::apps_v1beta1::NodeImageSpec;
use kruise_core::feature_gates::Gate;

mod mutate;

pub use mutate::{mutate, mutate_at};

const GROUP: &str = "apps.kruise.io";
const KIND: &str = "NodeImage";
/// OpenKruise's `defaultMaxImagesPerNode`.
pub const MAX_IMAGES: usize = 256;

/// `/validate-apps-kruise-io-nodeimage`: CREATE and UPDATE.
pub fn validate(request: &AdmissionRequest, settings: &Settings) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    if !settings.enabled(Gate::KruiseDaemon) {
        return Decision::forbid(format!(
            "feature-gate {} is not enabled",
            Gate::KruiseDaemon.name()
        ));
    }
    if let Err(d) = check_version(request) {
        return *d;
    }
    let object = match raw_object(request, Which::New, GROUP, KIND) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    let raw_spec = object.get("spec").filter(|s| !s.is_null()).cloned();
    let spec: NodeImageSpec = match raw_spec {
        Some(raw) => match check_decodes(KIND, &raw) {
            Ok(s) => s,
            Err(d) => return *d,
        },
        None => NodeImageSpec::default(),
    };
    refuse(&spec_errors(&spec)).unwrap_or_else(Decision::allow)
}

/// Every error of a NodeImage spec, in image-name then tag order.
pub fn spec_errors(spec: &NodeImageSpec) -> ErrorList {
    let images = Path::new("spec").child("images");
    let mut errs = ErrorList::new();
    let count = spec.images.len();
    if count > MAX_IMAGES {
        errs.push(invalid(
            &images,
            i64::try_from(count).unwrap_or(i64::MAX),
            format!("spec images length {count} can not be more than {MAX_IMAGES}"),
        ));
    }
    for (name, image) in &spec.images {
        let at = images.key(name);
        if name.is_empty() {
            errs.push(invalid(&at, String::new(), "image name can not be empty"));
            continue;
        }
        let mut seen = std::collections::BTreeSet::new();
        for (i, tag) in image.tags.iter().enumerate() {
            let at = at.child("tags").index(i);
            if tag.tag.is_empty() {
                errs.push(required(
                    &at.child("tag"),
                    format!("tag for image {name} can not be empty"),
                ));
                continue;
            }
            if !seen.insert(tag.tag.as_str()) {
                errs.push(invalid(
                    &at.child("tag"),
                    tag.tag.clone(),
                    format!("duplicated tag {} for image {name}", tag.tag),
                ));
                continue;
            }
            let full = format!("{name}/{}", tag.tag);
            if tag.created_at.is_none() {
                errs.push(required(
                    &at.child("createdAt"),
                    format!("createAt field for {full} can not be empty"),
                ));
            }
            if tag.version < 0 {
                errs.push(invalid(
                    &at.child("version"),
                    tag.version,
                    format!("version for {full} can not be less than 0"),
                ));
            }
            match &tag.pull_policy {
                None => errs.push(required(
                    &at.child("pullPolicy"),
                    format!("pullPolicy field for {full} must set"),
                )),
                Some(policy) if policy.ttl_seconds_after_finished.is_none() => errs.push(required(
                    &at.child("pullPolicy").child("ttlSecondsAfterFinished"),
                    format!("pullPolicy.ttlSecondsAfterFinished for {full} must set"),
                )),
                Some(_) => {}
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests;
