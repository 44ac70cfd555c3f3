//! PersistentPodState validation (`vpersistentpodstate.kb.io`), as OpenKruise's
//! `PersistentPodStateCreateUpdateHandler`, on the v1beta1 form of the object:
//!
//! * `targetRef` has an apiVersion, a kind and a name ("empty targetRef is not valid …");
//! * it names a StatefulSet of group `apps` or `apps.kruise.io` (OpenKruise also takes the kinds of
//!   its `PPS_Watch_Custom_Workload_WhiteList`; kruise-rs's controller handles StatefulSets only, so
//!   the list is not read);
//! * a required or at least one preferred topology term;
//! * (kruise-rs) every preferred weight within 1-100, the range a pod's preferred node affinity
//!   allows — OpenKruise accepts any non-negative weight and every pod it then injects is refused;
//! * on UPDATE, `targetRef` unchanged;
//! * no other PersistentPodState of the namespace targets the same workload (group, kind, name).

use kruise_api::apps_v1beta1::{PersistentPodState, TargetReference};
use kruise_core::owner::{ObjectRef, same_group_kind_name};
use serde_json::Value;

use super::field::{ErrorList, GoValue, Path, forbidden, go_target_reference, invalid};
use super::{Which, check_decodes, check_version, judged, raw_object, refuse};
use crate::{Decision, Operation, review::AdmissionRequest, view::ClusterView};

const GROUP: &str = "apps.kruise.io";
const KIND: &str = "PersistentPodState";

fn v1beta1(request: &AdmissionRequest, which: Which) -> Result<PersistentPodState, Box<Decision>> {
    let version = check_version(request)?;
    let object = raw_object(request, which, GROUP, KIND)?;
    if version == "v1alpha1" {
        check_decodes::<kruise_api::apps_v1alpha1::PersistentPodState>(KIND, &object).map(drop)?;
    }
    let object: Value = kruise_api::convert_object(&object, "apps.kruise.io/v1beta1")
        .map_err(|e| Box::new(Decision::bad_request(e.to_string())))?;
    check_decodes::<PersistentPodState>(KIND, &object)
}

/// `/validate-apps-kruise-io-persistentpodstate`.
pub fn validate(request: &AdmissionRequest, view: &impl ClusterView) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    let new = match v1beta1(request, Which::New) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    let old = if request.operation == Operation::Update {
        match v1beta1(request, Which::Old) {
            Ok(o) => Some(o),
            Err(d) => return *d,
        }
    } else {
        None
    };
    let namespace = new
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| request.namespace.clone());
    let others = view.kinds().persistent_pod_states.list(Some(&namespace));
    let others: Vec<&PersistentPodState> = others.iter().map(|o| &**o).collect();
    refuse(&validate_pps(&new, old.as_ref(), &others)).unwrap_or_else(Decision::allow)
}

fn target_value(target: &TargetReference) -> Value {
    serde_json::to_value(target).unwrap_or(Value::Null)
}

fn as_ref(target: &TargetReference) -> ObjectRef<'_> {
    ObjectRef {
        api_version: &target.api_version,
        kind: &target.kind,
        name: &target.name,
        uid: "",
    }
}

/// Every error of a v1beta1 PersistentPodState (and, on UPDATE, against its old form), given the
/// other PersistentPodStates of its namespace.
pub fn validate_pps(
    new: &PersistentPodState,
    old: Option<&PersistentPodState>,
    others: &[&PersistentPodState],
) -> ErrorList {
    let mut errs = ErrorList::new();
    let spec = Path::new("spec");
    let target_path = spec.child("targetRef");
    let target = &new.spec.target_ref;
    let shown = || go_target_reference("v1beta1", Some(&target_value(target)));
    if target.api_version.is_empty() || target.kind.is_empty() || target.name.is_empty() {
        errs.push(invalid(
            &target_path,
            shown(),
            "empty targetRef is not valid for PersistentPodState.",
        ));
    }
    let group = kruise_core::owner::api_group(&target.api_version);
    if !(matches!(group, Ok("apps" | "apps.kruise.io")) && target.kind == "StatefulSet") {
        errs.push(invalid(
            &target_path,
            shown(),
            "targetRef.Kind must be StatefulSet or in PPS_Watch_Custom_Workload_WhiteList",
        ));
    }
    if new.spec.required_persistent_topology.is_none() && new.spec.preferred_persistent_topology.is_empty() {
        errs.push(invalid(
            &spec,
            GoValue::Raw("v1beta1.PersistentPodStateSpec{…}".into()),
            "TopologyConstraint and TopologyPreference cannot be empty at the same time",
        ));
    }
    for (i, term) in new.spec.preferred_persistent_topology.iter().enumerate() {
        if !(1..=100).contains(&term.weight) {
            errs.push(invalid(
                &spec.child("preferredPersistentTopology").index(i).child("weight"),
                i64::from(term.weight),
                "must be in the range 1-100",
            ));
        }
    }
    if let Some(old) = old
        && old.spec.target_ref != new.spec.target_ref
    {
        errs.push(forbidden(&target_path, "targetRef is immutable"));
    }
    let name = new.metadata.name.as_deref().unwrap_or("");
    if let Some(other) = others.iter().find(|o| {
        o.metadata.name.as_deref() != Some(name)
            && same_group_kind_name(as_ref(target), as_ref(&o.spec.target_ref))
    }) {
        errs.push(invalid(
            &target_path,
            shown(),
            format!(
                "targetRef is in conflict with other PersistentPodState {}",
                other.metadata.name.as_deref().unwrap_or("")
            ),
        ));
    }
    errs
}

#[cfg(test)]
mod tests;
