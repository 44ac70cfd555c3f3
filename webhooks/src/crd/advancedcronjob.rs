//! AdvancedCronJob: OpenKruise's defaults (`/mutate-apps-kruise-io-advancedcronjob`) and validation
//! (`/validate-apps-kruise-io-advancedcronjob`), `pkg/webhook/advancedcronjob`
//! (docs/advancedcronjob.md#webhooks).
//!
//! Defaults: `concurrencyPolicy: Allow`, `paused: false`, `successfulJobsHistoryLimit: 3`,
//! `failedJobsHistoryLimit: 1`; the template's pod spec gets the template defaults
//! ([`super::defaults::default_pod_spec`]) on CREATE and on an UPDATE that changes the template, unless
//! `TemplateNoDefaults`.
//!
//! Validation (on the defaulted object): on CREATE a name of letters, digits and `-`, at most 63
//! characters; a schedule that parses ([`kruise_core::cron`], the planner's parser) and no `TZ=` prefix
//! together with `timeZone`; `timeZone` a known IANA name, not empty, not `Local`; exactly one template;
//! non-negative deadline and history limits; `concurrencyPolicy` one of Allow, Forbid, Replace. The Job
//! template's pod template is validated with `restartPolicy` Never or OnFailure (a Job refuses others),
//! the BroadcastJob template's spec with the BroadcastJob rules ([`super::broadcastjob::validate_spec`]).
//! On UPDATE only the schedule, time zone, concurrency policy, deadline, history limits and `paused`
//! may change. Refusals are 422 `Invalid`, as OpenKruise answers.

use serde_json::{Map, Value, json};

use super::defaults::{Mutator, default_pod_spec};
use super::field::{ErrorList, Path, forbidden, invalid, not_supported, str_at};
use super::meta::{
    max_len_error, regex_error, validate_nonnegative, validate_object_meta, validate_object_meta_update,
};
use super::podspec::validate_pod_template;
use super::{Which, check_decodes, check_version, judged, raw_object, refuse, strip_nulls};
use crate::{Decision, Settings, review::AdmissionRequest, view::ClusterView};
use kruise_core::cron::{Schedule, time_zone};
use kruise_core::feature_gates::Gate;

const GROUP: &str = "apps.kruise.io";
const KIND: &str = "AdvancedCronJob";
const JOB_POD_SPEC: &[&str] = &["spec", "template", "jobTemplate", "spec", "template", "spec"];
const BROADCAST_POD_SPEC: &[&str] = &[
    "spec",
    "template",
    "broadcastJobTemplate",
    "spec",
    "template",
    "spec",
];

fn p(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

/// OpenKruise's `SetDefaultsAdvancedCronJob` (v1alpha1: no ImageListPullJob template).
pub fn apply_defaults(m: &mut Mutator, template_defaults: bool, settings: &Settings) {
    if template_defaults && !settings.enabled(Gate::TemplateNoDefaults) {
        for spec in [JOB_POD_SPEC, BROADCAST_POD_SPEC] {
            // Only the template that is there: the parent of `spec` must exist.
            if m.has(&p(&spec[..spec.len() - 2])) {
                default_pod_spec(m, &p(spec));
            }
        }
    }
    m.set_default_zero(&p(&["spec", "concurrencyPolicy"]), json!("Allow"));
    m.set_default(&p(&["spec", "paused"]), json!(false));
    m.set_default(&p(&["spec", "successfulJobsHistoryLimit"]), json!(3));
    m.set_default(&p(&["spec", "failedJobsHistoryLimit"]), json!(1));
}

fn decode(object: &Value) -> Result<(), Box<Decision>> {
    check_decodes::<kruise_api::apps_v1alpha1::AdvancedCronJob>(KIND, object).map(drop)
}

/// `/mutate-apps-kruise-io-advancedcronjob`.
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

fn defaulted(request: &AdmissionRequest, which: Which, settings: &Settings) -> Result<Value, Box<Decision>> {
    let object = raw_object(request, which, GROUP, KIND)?;
    decode(&object)?;
    let mut m = Mutator::new(object);
    apply_defaults(&mut m, true, settings);
    Ok(m.doc)
}

/// `/validate-apps-kruise-io-advancedcronjob`: for CREATE and UPDATE, the rules on the defaulted object.
pub fn validate(request: &AdmissionRequest, _view: &impl ClusterView, settings: &Settings) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    if let Err(d) = check_version(request) {
        return *d;
    }
    let obj = match defaulted(request, Which::New, settings) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    let mut errs = if request.operation == crate::Operation::Update {
        match defaulted(request, Which::Old, settings) {
            Ok(old) => validate_update(&obj, &old),
            Err(d) => return *d,
        }
    } else {
        validate_object_meta(obj.get("metadata"), true, name_rule)
    };
    errs.extend(validate_spec(
        obj.get("spec").unwrap_or(&Value::Null),
        &Path::new("spec"),
    ));
    refuse(&errs).unwrap_or_else(Decision::allow)
}

const NAME_FMT: &str = r"^[a-zA-Z0-9\-]+$";

/// `validateAdvancedCronJobName`: `^[a-zA-Z0-9\-]+$`, at most 63 characters.
fn name_rule(name: &str, _prefix: bool) -> Vec<String> {
    let mut errs = Vec::new();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        errs.push(regex_error(
            "AdvancedCronJob name must consist of alphanumeric characters or '-'",
            NAME_FMT,
            &["example-com"],
        ));
    }
    if name.len() > 63 {
        errs.push(max_len_error(63));
    }
    errs
}

/// `validateAdvancedCronJobSpec` on a defaulted spec at `sp`.
pub fn validate_spec(spec: &Value, sp: &Path) -> ErrorList {
    let mut errs = validate_schedule(spec, sp);
    errs.extend(validate_templates(spec, sp));
    for field in [
        "startingDeadlineSeconds",
        "successfulJobsHistoryLimit",
        "failedJobsHistoryLimit",
    ] {
        if let Some(v) = spec.get(field).and_then(Value::as_i64) {
            errs.extend(validate_nonnegative(v, &sp.child(field)));
        }
    }
    let policy = str_at(spec, "concurrencyPolicy");
    if !matches!(policy, "Allow" | "Forbid" | "Replace") {
        errs.push(not_supported(
            &sp.child("concurrencyPolicy"),
            policy,
            &["Allow", "Forbid", "Replace"],
        ));
    }
    if let Some(zone) = spec.get("timeZone").filter(|v| !v.is_null()) {
        errs.extend(validate_time_zone(
            zone.as_str().unwrap_or(""),
            &sp.child("timeZone"),
        ));
    }
    errs
}

fn validate_schedule(spec: &Value, sp: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let path = sp.child("schedule");
    let schedule = str_at(spec, "schedule");
    if schedule.is_empty() {
        errs.push(invalid(
            &path,
            schedule,
            "schedule cannot be empty, please provide valid cron schedule.",
        ));
    }
    // The schedule alone (a `TZ=` prefix included); `timeZone` has its own rule below.
    if let Err(e) = Schedule::parse(schedule, None) {
        errs.push(invalid(&path, schedule, e.to_string()));
    }
    if schedule.contains("TZ") && spec.get("timeZone").is_some_and(|v| !v.is_null()) {
        errs.push(invalid(
            &path,
            schedule,
            "cannot use both timeZone field and TZ or CRON_TZ in schedule",
        ));
    }
    errs
}

fn validate_time_zone(zone: &str, path: &Path) -> ErrorList {
    if zone.is_empty() {
        return vec![invalid(path, zone, "timeZone must be nil or non-empty string")];
    }
    let mut errs = ErrorList::new();
    if zone.eq_ignore_ascii_case("Local") {
        errs.push(invalid(
            path,
            zone,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        ));
    }
    if zone != "Local" && time_zone(zone).is_err() {
        errs.push(invalid(path, zone, format!("unknown time zone {zone}")));
    }
    errs
}

fn present<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

/// `validateAdvancedCronJobSpecTemplate`: exactly one template, each valid for its kind.
fn validate_templates(spec: &Value, sp: &Path) -> ErrorList {
    let null = Value::Null;
    let template = spec.get("template").unwrap_or(&null);
    let tp = sp.child("template");
    let mut errs = ErrorList::new();
    let mut count = 0;
    if let Some(job) = present(template, "jobTemplate") {
        count += 1;
        let pod = job.pointer("/spec/template").unwrap_or(&null);
        let pp = tp.child("jobTemplate").child("spec").child("template");
        errs.extend(validate_pod_template(pod, &pp));
        let restart = pod
            .pointer("/spec/restartPolicy")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !matches!(restart, "Never" | "OnFailure") {
            errs.push(not_supported(
                &pp.child("spec").child("restartPolicy"),
                restart,
                &["OnFailure", "Never"],
            ));
        }
    }
    if let Some(bcj) = present(template, "broadcastJobTemplate") {
        count += 1;
        let bp = tp.child("broadcastJobTemplate").child("spec");
        errs.extend(super::broadcastjob::validate_spec(
            bcj.get("spec").unwrap_or(&null),
            &bp,
        ));
    }
    match count {
        0 => errs.push(forbidden(
            &tp,
            "spec must have one template, either JobTemplate or BroadcastJobTemplate should be provided",
        )),
        1 => {}
        _ => errs.push(forbidden(
            &tp,
            "spec can have only one template, either JobTemplate or BroadcastJobTemplate should be provided",
        )),
    }
    errs
}

const MUTABLE_SPEC_FIELDS: &[&str] = &[
    "schedule",
    "timeZone",
    "concurrencyPolicy",
    "successfulJobsHistoryLimit",
    "failedJobsHistoryLimit",
    "startingDeadlineSeconds",
    "paused",
];

fn frozen_spec(obj: &Value) -> Value {
    let mut spec: Map<String, Value> = obj
        .get("spec")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for key in MUTABLE_SPEC_FIELDS {
        spec.remove(*key);
    }
    strip_nulls(&Value::Object(spec))
}

/// `validateAdvancedCronJobUpdate`'s metadata and immutable-spec rules (the spec rules apply too).
pub fn validate_update(obj: &Value, old: &Value) -> ErrorList {
    let mut errs = validate_object_meta_update(obj.get("metadata"), old.get("metadata"));
    if frozen_spec(obj) != frozen_spec(old) {
        errs.push(forbidden(
            &Path::new("spec"),
            "updates to advancedcronjob spec for fields other than 'schedule', 'concurrencyPolicy', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit', 'startingDeadlineSeconds', 'timeZone' and 'paused' are forbidden",
        ));
    }
    errs
}
