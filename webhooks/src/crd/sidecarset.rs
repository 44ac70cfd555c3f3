//! SidecarSet: OpenKruise's defaults and hash annotations (`msidecarset.kb.io`), and its validation
//! (`vsidecarset.kb.io`).
//!
//! Defaults (both versions): `updateStrategy.type: RollingUpdate`, `maxUnavailable: 1`, `partition: 0`;
//! per container `podInjectPolicy` (`BeforeAppContainer`, `AfterAppContainer` for init containers),
//! `upgradeStrategy.upgradeType: ColdUpgrade`, `shareVolumePolicy.type: disabled`, the core/v1 container
//! defaults (see [`super::defaults`]) and transferEnv `fieldRef.apiVersion: v1`; volume defaults;
//! `revisionHistoryLimit: 10`; `patchPodMetadata[].patchPolicy: Retain`;
//! `injectionStrategy.revision.policy: Always`. Then `kruise.io/sidecarset-hash` and
//! `kruise.io/sidecarset-hash-without-image` are stamped from the defaulted containers
//! (`kruise_core::sidecarset::gojson`).
//!
//! Validation follows OpenKruise's `validateSidecarSet`: name (`^[a-zA-Z0-9\-]+$`, at most 63), canary
//! annotations, selectors (required, valid, non-empty), injection strategy (revision must exist),
//! update strategy, containers (policies, transferEnv fieldRefs, resourcesPolicy, then Kubernetes' pod
//! validation of a pod made of the sidecars and volumes), patchPodMetadata (needs the whitelist in
//! `kruise-configuration`, as with OpenKruise's default gates), on UPDATE containers may not be added
//! and their upgradeType may not change; when all that passes, conflicts with every other SidecarSet
//! whose selectors overlap (same container name, a different volume of the same name, conflicting
//! Overwrite annotations).
//!
//! One file per concern under `sidecarset/`: defaulting, canary, injection, update strategy,
//! containers, resources policy, patchPodMetadata, conflicts.
//! `targetContainersNameRegex` is compiled by the `regex` crate (RE2 syntax, as Go's; the error text is the
//! crate's description in Go's frame) and each resource expression is parsed by the calculator the pod
//! webhook evaluates it with.

use serde_json::Value;

use super::defaults::Mutator;
use super::field::{ErrorList, Path, go_label_selector, invalid, required, str_at};
use super::meta::{
    self, selector_conversion_fails, selector_is_empty, validate_label_selector, validate_object_meta,
};
use super::{Which, check_decodes, check_version, judged, raw_object, refuse};
use crate::{Decision, review::AdmissionRequest, view::ClusterView};

mod canary;
mod conflicts;
mod containers;
mod defaulting;
mod injection;
mod patch_metadata;
mod resources_policy;
mod update_strategy;

pub use defaulting::apply_defaults;
pub use update_strategy::{priority_strategy_error, scatter_strategy_error};

use canary::validate_canary;
use conflicts::validate_conflicts;
use containers::{validate_container_updates, validate_containers};
use injection::validate_injection_strategy;
use patch_metadata::validate_patch_pod_metadata;
use update_strategy::validate_update_strategy;

const GROUP: &str = "apps.kruise.io";
const KIND: &str = "SidecarSet";

fn decode_any_version(version: &str, object: &Value) -> Result<(), Box<Decision>> {
    match version {
        "v1alpha1" => check_decodes::<kruise_api::apps_v1alpha1::SidecarSet>(KIND, object).map(drop),
        _ => check_decodes::<kruise_api::apps_v1beta1::SidecarSet>(KIND, object).map(drop),
    }
}

/// `/mutate-apps-kruise-io-sidecarset`.
pub fn mutate(request: &AdmissionRequest) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    let version = match check_version(request) {
        Ok(v) => v,
        Err(d) => return *d,
    };
    let object = match raw_object(request, Which::New, GROUP, KIND) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    if let Err(d) = decode_any_version(version, &object) {
        return *d;
    }
    // Patch against exactly what was sent: only apiVersion/kind/namespace may have been filled in, and
    // none of those paths are defaulted here.
    let mut m = Mutator::new(request.object.clone().unwrap_or(object));
    apply_defaults(&mut m);
    Decision::patched(m.ops)
}

/// The object as v1beta1 JSON after defaults, for validation.
fn defaulted_v1beta1(request: &AdmissionRequest, which: Which) -> Result<Value, Box<Decision>> {
    let version = check_version(request)?;
    let object = raw_object(request, which, GROUP, KIND)?;
    decode_any_version(version, &object)?;
    let mut m = Mutator::new(object);
    apply_defaults(&mut m);
    kruise_api::convert_object(&m.doc, "apps.kruise.io/v1beta1")
        .map_err(|e| Box::new(Decision::bad_request(e.to_string())))
}

/// `/validate-apps-kruise-io-sidecarset`.
pub fn validate(request: &AdmissionRequest, view: &impl ClusterView) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    let obj = match defaulted_v1beta1(request, Which::New) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    let old = if request.operation == crate::Operation::Update {
        match defaulted_v1beta1(request, Which::Old) {
            Ok(o) => Some(o),
            Err(d) => return *d,
        }
    } else {
        None
    };
    let others: Vec<Value> = view
        .sidecar_sets()
        .iter()
        .filter_map(|s| serde_json::to_value(&**s).ok())
        .collect();
    let errs = validate_sidecarset(&obj, old.as_ref(), &others, view);
    refuse(&errs).unwrap_or_else(Decision::allow)
}

fn sidecarset_name(name: &str, _prefix: bool) -> Vec<String> {
    let mut errs = Vec::new();
    if name.is_empty() || !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-') {
        errs.push(meta::regex_error(
            "sidecarset name must consist of alphanumeric characters or '-'",
            "^[a-zA-Z0-9\\-]+$",
            &["example-com"],
        ));
    }
    if name.len() > 63 {
        errs.push(meta::max_len_error(63));
    }
    errs
}

/// Every check of OpenKruise's `validateSidecarSet` on a defaulted v1beta1 SidecarSet.
pub fn validate_sidecarset(
    obj: &Value,
    old: Option<&Value>,
    others: &[Value],
    view: &impl ClusterView,
) -> ErrorList {
    let mut errs = validate_object_meta(obj.get("metadata"), false, sidecarset_name);
    errs.extend(validate_canary(obj, old, others));
    let null = Value::Null;
    let spec = obj.get("spec").unwrap_or(&null);
    errs.extend(validate_spec(obj, spec, view));
    if let Some(old) = old {
        errs.extend(validate_container_updates(spec, old.get("spec").unwrap_or(&null)));
    }
    if !errs.is_empty() {
        return errs;
    }
    errs.extend(validate_conflicts(obj, others));
    errs
}

fn validate_selector(selector: &Value, path: &Path) -> ErrorList {
    let mut errs = validate_label_selector(Some(selector), path);
    if selector_is_empty(selector) {
        errs.push(invalid(
            path,
            go_label_selector(Some(selector)),
            "empty selector is not valid for sidecarset.",
        ));
    }
    if selector_conversion_fails(Some(selector)) {
        errs.push(invalid(
            &path.child("selector"),
            go_label_selector(Some(selector)),
            "",
        ));
    }
    errs
}

fn present<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn validate_spec(obj: &Value, spec: &Value, view: &impl ClusterView) -> ErrorList {
    let sp = Path::new("spec");
    let mut errs = ErrorList::new();
    let strategy_type = spec.pointer("/updateStrategy/type").and_then(Value::as_str);
    for c in items(spec, "initContainers") {
        if str_at(c, "restartPolicy") == "Always" && strategy_type == Some("RollingUpdate") {
            errs.push(required(
                &sp.child("updateStrategy"),
                "The initContainer in-place upgrade is not currently supported.",
            ));
        }
    }
    match present(spec, "selector") {
        None => errs.push(required(
            &sp.child("selector"),
            "no selector defined for SidecarSet",
        )),
        Some(sel) => errs.extend(validate_selector(sel, &sp.child("selector"))),
    }
    if let Some(ns) = present(spec, "namespaceSelector") {
        errs.extend(validate_selector(ns, &sp.child("namespaceSelector")));
    }
    errs.extend(validate_injection_strategy(obj, spec, view));
    errs.extend(validate_update_strategy(
        spec.get("updateStrategy").unwrap_or(&Value::Null),
        &sp.child("updateStrategy"),
    ));
    let (init, containers) = (items(spec, "initContainers"), items(spec, "containers"));
    if init.is_empty() && containers.is_empty() {
        errs.push(required(
            &sp,
            "no initContainer or container defined for SidecarSet",
        ));
    } else {
        errs.extend(validate_containers(init, containers, items(spec, "volumes")));
    }
    errs.extend(validate_patch_pod_metadata(obj, spec, view));
    errs
}
