//! Which workloads a UnitedDeployment owns (Kubernetes' `ClaimObjects`, as OpenKruise's subset control
//! uses it): a workload it controls whose labels still match its selector is kept, one that no longer
//! matches is released (our owner reference removed), and an orphan (no controller) that matches is
//! adopted (our controller reference added). Workloads controlled by another object are left alone.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kruise_api::apps_v1beta1::UnitedDeployment;
use kruise_core::selector::selects_non_empty;
use serde_json::{Value, json};

/// What to do with one workload of the UD's namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// Ours and still selected.
    Keep,
    /// An orphan the selector matches: add our controller reference.
    Adopt,
    /// Ours but no longer selected: remove our owner reference.
    Release,
    /// Not ours and not to be taken.
    Ignore,
}

fn controller_uid(object: &Value) -> Option<&str> {
    object["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|o| o["controller"] == true)
        .map(|o| o["uid"].as_str().unwrap_or(""))
}

fn deleting(object: &Value) -> bool {
    !object["metadata"]["deletionTimestamp"].is_null()
}

/// The claim on `workload` (raw object as read). A UD without a usable selector selects nothing.
pub fn claim(ud: &UnitedDeployment, workload: &Value) -> Claim {
    let uid = ud.metadata.uid.as_deref().unwrap_or_default();
    let labels = workload["metadata"]["labels"].as_object();
    // A null or empty selector selects nothing; an invalid one neither.
    let selected = selects_non_empty(ud.spec.selector.as_ref(), &labels).unwrap_or(false);
    match controller_uid(workload) {
        Some(owner) if owner == uid && !uid.is_empty() => {
            if selected || ud.metadata.deletion_timestamp.is_some() {
                Claim::Keep
            } else {
                Claim::Release
            }
        }
        Some(_) => Claim::Ignore,
        None if selected && !deleting(workload) && ud.metadata.deletion_timestamp.is_none() => Claim::Adopt,
        None => Claim::Ignore,
    }
}

/// The UD as a workload's controller reference.
pub fn controller_reference(ud: &UnitedDeployment) -> OwnerReference {
    OwnerReference {
        api_version: "apps.kruise.io/v1beta1".into(),
        kind: "UnitedDeployment".into(),
        name: ud.metadata.name.clone().unwrap_or_default(),
        uid: ud.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// `workload` with the claim carried out: our controller reference added (adopt) or our owner
/// reference removed (release); unchanged otherwise.
pub fn claimed(ud: &UnitedDeployment, workload: &Value, claim: Claim) -> Value {
    let mut out = workload.clone();
    let uid = ud.metadata.uid.clone().unwrap_or_default();
    let mut owners: Vec<Value> = out["metadata"]["ownerReferences"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    match claim {
        Claim::Adopt => owners.push(json!(controller_reference(ud))),
        Claim::Release => owners.retain(|o| o["uid"] != uid.as_str()),
        Claim::Keep | Claim::Ignore => return out,
    }
    out["metadata"]["ownerReferences"] = json!(owners);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ud(deleting: bool) -> UnitedDeployment {
        let mut ud: UnitedDeployment = serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
            "metadata": {"name": "web", "namespace": "prod", "uid": "ud-uid"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {}, "topology": {}}}))
        .unwrap();
        if deleting {
            ud.metadata.deletion_timestamp =
                Some(serde_json::from_value(json!("2026-11-29T12:00:00Z")).unwrap());
        }
        ud
    }

    fn workload(app: &str, controller: Option<&str>, deleting: bool) -> Value {
        let mut w = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web-a", "labels": {"app": app}, "ownerReferences": []}});
        if let Some(uid) = controller {
            w["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps.kruise.io/v1beta1",
                "kind": "UnitedDeployment", "name": "x", "uid": uid, "controller": true}]);
        }
        if deleting {
            w["metadata"]["deletionTimestamp"] = json!("2026-11-29T12:00:00Z");
        }
        w
    }

    #[test]
    fn orphans_that_match_are_adopted_and_ours_that_left_are_released() {
        let live = ud(false);
        let cases = [
            (workload("web", Some("ud-uid"), false), Claim::Keep),
            (workload("other", Some("ud-uid"), false), Claim::Release),
            (workload("web", None, false), Claim::Adopt),
            (workload("web", None, true), Claim::Ignore),
            (workload("other", None, false), Claim::Ignore),
            (workload("web", Some("someone-else"), false), Claim::Ignore),
        ];
        for (w, want) in &cases {
            assert_eq!(claim(&live, w), *want, "{w}");
        }
        // A UD being deleted adopts nothing and releases nothing.
        let gone = ud(true);
        assert_eq!(claim(&gone, &workload("web", None, false)), Claim::Ignore);
        assert_eq!(
            claim(&gone, &workload("other", Some("ud-uid"), false)),
            Claim::Keep
        );
    }

    #[test]
    fn adoption_adds_our_controller_reference_and_release_removes_it() {
        let live = ud(false);
        let adopted = claimed(&live, &workload("web", None, false), Claim::Adopt);
        assert_eq!(adopted["metadata"]["ownerReferences"][0]["uid"], "ud-uid");
        assert_eq!(adopted["metadata"]["ownerReferences"][0]["controller"], true);
        assert_eq!(claim(&live, &adopted), Claim::Keep);
        let mut mixed = workload("other", Some("ud-uid"), false);
        mixed["metadata"]["ownerReferences"]
            .as_array_mut()
            .unwrap()
            .push(json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "keep", "uid": "cm"}));
        let released = claimed(&live, &mixed, Claim::Release);
        assert_eq!(
            released["metadata"]["ownerReferences"],
            json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "keep", "uid": "cm"}])
        );
    }
}
