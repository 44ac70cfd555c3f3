//! Conflicts with the other SidecarSets whose selectors overlap: a container name, a different volume of
//! the same name, an annotation patched with Overwrite.

use std::collections::BTreeMap;

use serde_json::Value;

use super::canary::is_canary;
use super::defaulting::defaulted_volume;
use super::{items, present};
use crate::crd::field::{ErrorList, Path, invalid, str_at};
use crate::crd::meta;

pub(super) fn validate_conflicts(obj: &Value, others: &[Value]) -> ErrorList {
    let sp = Path::new("spec");
    let mut errs = ErrorList::new();
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let (canary, base) = is_canary(obj);
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let ns_overlap = |other: &Value| match (
        present(spec, "namespaceSelector"),
        other.pointer("/spec/namespaceSelector").filter(|v| !v.is_null()),
    ) {
        (Some(a), Some(b)) => meta::selectors_overlap(Some(a), Some(b)),
        _ => true,
    };
    let mut init_in_others = BTreeMap::new();
    let mut containers_in_others = BTreeMap::new();
    let mut volumes_in_others: BTreeMap<String, &Value> = Default::default();
    let mut annotations_in_others = BTreeMap::new();
    for other in others {
        let other_name = other
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        if (canary && base == other_name) || other_name == name {
            continue;
        }
        let ospec = other.get("spec").unwrap_or(&Value::Null);
        if !(ns_overlap(other)
            && meta::selectors_overlap(present(spec, "selector"), present(ospec, "selector")))
        {
            continue;
        }
        for c in items(ospec, "initContainers") {
            init_in_others.insert(str_at(c, "name").to_string(), other_name.to_string());
        }
        for c in items(ospec, "containers") {
            containers_in_others.insert(str_at(c, "name").to_string(), other_name.to_string());
        }
        for v in items(ospec, "volumes") {
            volumes_in_others.insert(str_at(v, "name").to_string(), other);
        }
        for patch in items(ospec, "patchPodMetadata") {
            let policy = str_at(patch, "patchPolicy");
            if policy == "Retain" {
                continue;
            }
            for key in patch
                .get("annotations")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|a| a.keys())
            {
                annotations_in_others.insert(key.clone(), (other_name.to_string(), policy.to_string()));
            }
        }
    }
    for (list, seen) in [
        ("initContainers", &init_in_others),
        ("containers", &containers_in_others),
    ] {
        for c in items(spec, list) {
            let cname = str_at(c, "name");
            if let Some(other) = seen.get(cname) {
                errs.push(invalid(
                    &sp.child("containers"),
                    cname,
                    format!("container {cname} already exist in {other}"),
                ));
            }
        }
    }
    for v in items(spec, "volumes") {
        let vname = str_at(v, "name");
        if let Some(other) = volumes_in_others.get(vname) {
            // Both sides as defaulting leaves them: a stored SidecarSet may never have been defaulted.
            let same = items(other.get("spec").unwrap_or(&Value::Null), "volumes")
                .iter()
                .find(|ov| str_at(ov, "name") == vname)
                .is_some_and(|ov| defaulted_volume(ov) == defaulted_volume(v));
            if !same {
                let other_name = other
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                errs.push(invalid(
                    &sp.child("volumes"),
                    vname,
                    format!("volume {vname} is in conflict with sidecarset {other_name}"),
                ));
            }
        }
    }
    for patch in items(spec, "patchPodMetadata") {
        let policy = str_at(patch, "patchPolicy");
        if policy == "Retain" {
            continue;
        }
        for key in patch
            .get("annotations")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|a| a.keys())
        {
            if let Some((other, other_policy)) = annotations_in_others.get(key)
                && (policy == "Overwrite" || other_policy == "Overwrite")
            {
                errs.push(invalid(
                    &sp.child("patchPodMetadata"),
                    key.as_str(),
                    format!("annotation {key} is in conflict with sidecarset {other}"),
                ));
            }
        }
    }
    errs
}
