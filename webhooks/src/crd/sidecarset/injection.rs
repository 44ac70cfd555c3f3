//! `spec.injectionStrategy.revision`: the ControllerRevision it names must exist.

use serde_json::Value;

use super::present;
use crate::crd::KRUISE_NAMESPACE;
use crate::crd::field::{ErrorList, GoValue, Path, go_quote, invalid, str_at};
use crate::view::ClusterView;

fn go_opt_string_ptr(v: Option<&Value>) -> String {
    match v.and_then(Value::as_str) {
        None => "(*string)(nil)".into(),
        Some(_) => "(*string)(0xc000000000)".into(),
    }
}

pub(super) fn validate_injection_strategy(obj: &Value, spec: &Value, view: &impl ClusterView) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(rev) = spec
        .pointer("/injectionStrategy/revision")
        .filter(|r| !r.is_null())
    else {
        return errs;
    };
    let go_rev = || {
        GoValue::Raw(format!(
            "v1beta1.SidecarSetInjectRevision{{CustomVersion:{}, RevisionName:{}, Policy:{}}}",
            go_opt_string_ptr(present(rev, "customVersion")),
            go_opt_string_ptr(present(rev, "revisionName")),
            go_quote(str_at(rev, "policy"))
        ))
    };
    let rpath = Path::new("revision");
    let revision_name = present(rev, "revisionName").and_then(Value::as_str);
    let custom_version = present(rev, "customVersion").and_then(Value::as_str);
    let set_name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let revisions = view.controller_revisions(KRUISE_NAMESPACE);
    let missing = match (revision_name, custom_version) {
        (None, None) => {
            errs.push(invalid(
                &rpath,
                go_rev(),
                "revisionName and customVersion cannot be empty simultaneously",
            ));
            None
        }
        (Some(name), _) => (!revisions.iter().any(|r| r.metadata.name.as_deref() == Some(name)))
            .then(|| format!("controllerrevisions.apps {} not found", go_quote(name))),
        (None, Some(version)) => {
            let found = revisions.iter().any(|r| {
                let labels = r.metadata.labels.as_ref();
                let label = |k: &str| labels.and_then(|l| l.get(k)).map(String::as_str);
                label("kruise.io/sidecarset-name") == Some(set_name)
                    && label("apps.kruise.io/sidecarset-custom-version") == Some(version)
            });
            (!found).then(|| format!("ControllerRevision.apps {} not found", go_quote(set_name)))
        }
    };
    if let Some(err) = missing {
        errs.push(invalid(
            &rpath,
            GoValue::Null,
            format!("Cannot find specific ControllerRevision, err: {err}"),
        ));
    }
    match str_at(rev, "policy") {
        "" | "Always" | "Partial" => {}
        policy => errs.push(invalid(
            &rpath.child("policy"),
            go_rev(),
            format!("Invalid policy {policy}, supported: [Always, Partial]"),
        )),
    }
    errs
}
