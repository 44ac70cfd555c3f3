//! EphemeralJob validation (`/validate-apps-kruise-io-v1alpha1-ephemeraljob`), OpenKruise's
//! `pkg/webhook/ephemeraljob/validating`: the template's ephemeral containers as Kubernetes validates
//! a pod's, with no defaults applied first (OpenKruise has no defaulting webhook for the kind, so
//! `imagePullPolicy` and `terminationMessagePolicy` must be given).
//!
//! Per container (paths `ephemeralContainers[i]…`, as OpenKruise names them): a DNS-1123 label name,
//! unique in the template; an image without surrounding whitespace; `terminationMessagePolicy` `File`
//! or `FallbackToLogsOnError`; valid ports; env names present; `imagePullPolicy` `Always`,
//! `IfNotPresent` or `Never`; none of `ports`, `resources`, `resizePolicy`, the three probes,
//! `lifecycle`, `restartPolicy` (`Forbidden: cannot be set for an Ephemeral Container`); no volume
//! mount `subPath`/`subPathExpr`. `targetContainerName` is not checked (the pods are not known yet).
//! OpenKruise answers a refusal with 400; kruise-rs with 422 `Invalid`, like every CRD.

use std::collections::BTreeSet;

use serde_json::Value;

use super::field::{ErrorList, Path, duplicate, forbidden, invalid, not_supported, required, str_at};
use super::meta::dns1123_label;
use super::podspec::validate_ports;
use super::{Which, check_decodes, check_version, judged, raw_object, refuse};
use crate::{Decision, Settings, review::AdmissionRequest, view::ClusterView};

const GROUP: &str = "apps.kruise.io";
const KIND: &str = "EphemeralJob";

/// Container fields an ephemeral container may not set.
const NOT_ALLOWED: &[&str] = &[
    "ports",
    "resources",
    "resizePolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "restartPolicy",
];

/// `/validate-apps-kruise-io-v1alpha1-ephemeraljob`: CREATE and UPDATE.
pub fn validate(request: &AdmissionRequest, _view: &impl ClusterView, _settings: &Settings) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    if let Err(d) = check_version(request) {
        return *d;
    }
    let object = match raw_object(request, Which::New, GROUP, KIND) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    if let Err(d) = check_decodes::<kruise_api::apps_v1alpha1::EphemeralJob>(KIND, &object) {
        return *d;
    }
    let containers = object
        .pointer("/spec/template/ephemeralContainers")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    refuse(&validate_ephemeral_containers(
        containers,
        &Path::new("ephemeralContainers"),
    ))
    .unwrap_or_else(Decision::allow)
}

fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// Whether a field holds a non-zero value (Go compares each field to its zero value).
fn is_set(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Object(m)) => m.values().any(|v| is_set(Some(v))),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
    }
}

/// OpenKruise's `validateEphemeralContainers`.
pub fn validate_ephemeral_containers(containers: &[Value], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut names = BTreeSet::new();
    for (i, c) in containers.iter().enumerate() {
        let p = path.index(i);
        let name = str_at(c, "name");
        if name.is_empty() {
            errs.push(required(&p.child("name"), ""));
        } else {
            errs.extend(
                dns1123_label(name)
                    .into_iter()
                    .map(|m| invalid(&p.child("name"), name, m)),
            );
        }
        let image = str_at(c, "image");
        if image.is_empty() {
            errs.push(required(&p.child("image"), ""));
        }
        match str_at(c, "terminationMessagePolicy") {
            "File" | "FallbackToLogsOnError" => {}
            "" => errs.push(required(&p.child("terminationMessagePolicy"), "")),
            other => errs.push(not_supported(
                &p.child("terminationMessagePolicy"),
                other,
                &["File", "FallbackToLogsOnError"],
            )),
        }
        errs.extend(validate_ports(items(c, "ports"), &p.child("ports")));
        for (j, env) in items(c, "env").iter().enumerate() {
            if str_at(env, "name").is_empty() {
                errs.push(required(&p.child("env").index(j).child("name"), ""));
            }
        }
        match str_at(c, "imagePullPolicy") {
            "Always" | "IfNotPresent" | "Never" => {}
            "" => errs.push(required(&p.child("imagePullPolicy"), "")),
            other => errs.push(not_supported(
                &p.child("imagePullPolicy"),
                other,
                &["Always", "IfNotPresent", "Never"],
            )),
        }
        if image.len() != image.trim().len() {
            errs.push(invalid(
                &p.child("image"),
                image,
                "must not have leading or trailing whitespace",
            ));
        }
        if !name.is_empty() && !names.insert(name.to_string()) {
            errs.push(duplicate(&p.child("name"), name));
        }
        for field in NOT_ALLOWED {
            if is_set(c.get(*field)) {
                errs.push(forbidden(
                    &p.child(field),
                    "cannot be set for an Ephemeral Container",
                ));
            }
        }
        for (j, m) in items(c, "volumeMounts").iter().enumerate() {
            for field in ["subPath", "subPathExpr"] {
                if is_set(m.get(field)) {
                    errs.push(forbidden(
                        &p.child("volumeMounts").index(j).child(field),
                        "cannot be set for an Ephemeral Container",
                    ));
                }
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::field::aggregate;
    use serde_json::json;

    fn check(containers: Value) -> Option<String> {
        let list = containers.as_array().cloned().unwrap_or_default();
        aggregate(&validate_ephemeral_containers(
            &list,
            &Path::new("ephemeralContainers"),
        ))
    }

    fn good() -> Value {
        json!({"name": "debugger", "image": "busybox", "imagePullPolicy": "IfNotPresent",
            "terminationMessagePolicy": "File", "targetContainerName": "test",
            "securityContext": {"capabilities": {"add": ["SYS_ADMIN", "NET_ADMIN"]}}})
    }

    #[test]
    fn openkruise_sample_is_allowed() {
        assert_eq!(check(json!([good()])), None);
        let mut no_target = good();
        no_target["targetContainerName"] = json!("");
        assert_eq!(check(json!([no_target])), None);
    }

    #[test]
    fn undefaulted_policies_are_required() {
        let c = json!({"name": "debugger", "image": "busybox"});
        assert_eq!(
            check(json!([c])).as_deref(),
            Some(
                "[ephemeralContainers[0].terminationMessagePolicy: Required value, \
                 ephemeralContainers[0].imagePullPolicy: Required value]"
            )
        );
    }

    #[test]
    fn workload_fields_names_and_subpaths() {
        let mut c = good();
        c["ports"] = json!([{"containerPort": 80, "protocol": "TCP"}]);
        c["readinessProbe"] = json!({"exec": {"command": ["true"]}});
        c["volumeMounts"] = json!([{"name": "v", "mountPath": "/v", "subPathExpr": "$(X)"}]);
        let mut twin = good();
        twin["name"] = json!("Debugger_2");
        let mut dup = good();
        dup["imagePullPolicy"] = json!("Sometimes");
        let message = check(json!([c, twin, dup])).expect("refused");
        for expected in [
            "ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container",
            "ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container",
            "ephemeralContainers[0].volumeMounts[0].subPathExpr: Forbidden: cannot be set for an Ephemeral Container",
            "ephemeralContainers[1].name: Invalid value: \"Debugger_2\": a lowercase RFC 1123 label",
            "ephemeralContainers[2].imagePullPolicy: Unsupported value: \"Sometimes\"",
            "ephemeralContainers[2].name: Duplicate value: \"debugger\"",
        ] {
            assert!(message.contains(expected), "{expected} in {message}");
        }
    }
}
