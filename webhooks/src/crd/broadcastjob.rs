//! BroadcastJob: OpenKruise's defaults (`/mutate-apps-kruise-io-broadcastjob`) and validation
//! (`/validate-apps-kruise-io-broadcastjob`), `pkg/webhook/broadcastjob`.
//!
//! Defaults: `completionPolicy.type: Always`, `parallelism: 2147483647`, `failurePolicy.type:
//! FailFast`; the pod template gets the template defaults ([`super::defaults::default_pod_spec`]) on
//! CREATE and on an UPDATE that changes it, unless `TemplateNoDefaults`.
//!
//! Validation (on the defaulted object): a name of letters, digits and `-`, at most 63 characters;
//! `Never` forbids `ttlSecondsAfterFinished` and `activeDeadlineSeconds`; the template's
//! `restartPolicy` is `Never` or `OnFailure`; its labels may not preset `broadcastjob-name` or
//! `broadcastjob-controller-uid`; the template is a valid pod template. The spec is mutable.
//! OpenKruise answers a refusal with 500; kruise-rs with 422 `Invalid`, like every CRD (module docs
//! of [`super`]).

use serde_json::{Value, json};

use super::defaults::{Mutator, default_pod_spec};
use super::field::{ErrorList, GoValue, Path, go_string_map, invalid, str_at};
use super::meta::validate_object_meta;
use super::podspec::validate_pod_template;
use super::{Which, check_decodes, check_version, judged, raw_object, refuse, strip_nulls};
use crate::{Decision, Settings, review::AdmissionRequest, view::ClusterView};
use kruise_api::apps_v1alpha1::{BROADCAST_JOB_CONTROLLER_UID_LABEL, BROADCAST_JOB_NAME_LABEL};
use kruise_core::feature_gates::Gate;

const GROUP: &str = "apps.kruise.io";
const KIND: &str = "BroadcastJob";

fn p(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

/// OpenKruise's `SetDefaultsBroadcastJob`.
pub fn apply_defaults(m: &mut Mutator, template_defaults: bool, settings: &Settings) {
    if template_defaults && !settings.enabled(Gate::TemplateNoDefaults) {
        default_pod_spec(m, &p(&["spec", "template", "spec"]));
    }
    m.set_default(&p(&["spec", "completionPolicy"]), json!({}));
    m.set_default_zero(&p(&["spec", "completionPolicy", "type"]), json!("Always"));
    m.set_default(&p(&["spec", "parallelism"]), json!(i32::MAX));
    m.set_default(&p(&["spec", "failurePolicy"]), json!({}));
    m.set_default_zero(&p(&["spec", "failurePolicy", "type"]), json!("FailFast"));
}

fn decode(object: &Value) -> Result<(), Box<Decision>> {
    check_decodes::<kruise_api::apps_v1alpha1::BroadcastJob>(KIND, object).map(drop)
}

/// `/mutate-apps-kruise-io-broadcastjob`.
pub fn mutate(request: &AdmissionRequest, settings: &Settings) -> Decision {
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
    if let Err(d) = decode(&object) {
        return *d;
    }
    let template_defaults = if request.operation == crate::Operation::Update {
        match raw_object(request, Which::Old, GROUP, KIND) {
            Ok(old) => {
                let at = |v: &Value| strip_nulls(v.pointer("/spec/template").unwrap_or(&Value::Null));
                at(&object) != at(&old)
            }
            Err(d) => return *d,
        }
    } else {
        true
    };
    let mut m = Mutator::new(request.object.clone().unwrap_or(object));
    apply_defaults(&mut m, template_defaults, settings);
    Decision::patched(m.ops)
}

/// `/validate-apps-kruise-io-broadcastjob`: for CREATE and UPDATE, the BroadcastJob rules on the
/// defaulted object.
pub fn validate(request: &AdmissionRequest, _view: &impl ClusterView, settings: &Settings) -> Decision {
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
    if let Err(d) = decode(&object) {
        return *d;
    }
    let mut m = Mutator::new(object);
    apply_defaults(&mut m, true, settings);
    refuse(&validate_broadcast_job(&m.doc)).unwrap_or_else(Decision::allow)
}

/// `validateBroadcastJobName`: `^[a-zA-Z0-9\-]+$`, at most 63 characters.
fn name_rule(name: &str, _prefix: bool) -> Vec<String> {
    let mut errs = Vec::new();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        errs.push("name can only include alphanumerics and '-'".to_string());
    }
    if name.len() > 63 {
        errs.push("name length should not be more than 63".to_string());
    }
    errs
}

/// `validateBroadcastJob` on a defaulted object.
pub fn validate_broadcast_job(obj: &Value) -> ErrorList {
    let mut errs = validate_object_meta(obj.get("metadata"), true, name_rule);
    errs.extend(validate_spec(
        obj.get("spec").unwrap_or(&Value::Null),
        &Path::new("spec"),
    ));
    errs
}

/// The rules of a BroadcastJob's `spec` at `sp` (also an AdvancedCronJob's BroadcastJob template).
pub fn validate_spec(spec: &Value, sp: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let null = Value::Null;
    let completion = spec.get("completionPolicy").unwrap_or(&null);
    if str_at(completion, "type") == "Never" {
        let cp = sp.child("completionPolicy");
        for (field, value) in [
            (
                "ttlSecondsAfterFinished",
                completion.get("ttlSecondsAfterFinished"),
            ),
            ("activeDeadlineSeconds", completion.get("activeDeadlineSeconds")),
        ] {
            if let Some(v) = value.filter(|v| !v.is_null()) {
                errs.push(invalid(
                    &cp.child(field),
                    v.as_i64().map_or(GoValue::Null, GoValue::Int),
                    format!("{field} can just work with Always CompletionPolicyType"),
                ));
            }
        }
    }
    let template = spec.get("template").unwrap_or(&null);
    let tp = sp.child("template");
    let restart = template
        .pointer("/spec/restartPolicy")
        .and_then(Value::as_str)
        .unwrap_or("");
    if restart != "Never" && restart != "OnFailure" {
        errs.push(invalid(
            &tp.child("spec").child("restartPolicy"),
            restart,
            "pod restartPolicy can only be Never or OnFailure",
        ));
    }
    let labels = template.pointer("/metadata/labels").filter(|v| !v.is_null());
    let preset = |key: &str| {
        labels
            .and_then(|l| l.get(key))
            .and_then(Value::as_str)
            .is_some_and(|v| !v.is_empty())
    };
    if preset(BROADCAST_JOB_NAME_LABEL) || preset(BROADCAST_JOB_CONTROLLER_UID_LABEL) {
        errs.push(invalid(
            &tp.child("metadata").child("labels"),
            GoValue::Raw(go_string_map(labels)),
            format!(
                "\"{BROADCAST_JOB_NAME_LABEL}\" and \"{BROADCAST_JOB_CONTROLLER_UID_LABEL}\" are not allowed to preset in pod labels"
            ),
        ));
    }
    errs.extend(validate_pod_template(template, &tp));
    errs
}
