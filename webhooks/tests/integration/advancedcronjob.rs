//! The AdvancedCronJob webhooks: defaults applied through the returned patch, OpenKruise's validation
//! rules and messages, the immutable template.

use crate::common;

use common::crd::{call, denial, patched, request, view_of};
use serde_json::{Value, json};

const MUTATE: &str = "/mutate-apps-kruise-io-advancedcronjob";
const VALIDATE: &str = "/validate-apps-kruise-io-advancedcronjob";

fn pod_template() -> Value {
    json!({"spec": {"restartPolicy": "Never",
        "containers": [{"name": "work", "image": "busybox", "command": ["true"]}]}})
}

fn acj(spec: Value) -> Value {
    let mut acj = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "AdvancedCronJob",
        "metadata": {"name": "nightly", "namespace": "ops"},
        "spec": {"schedule": "*/1 * * * *",
            "template": {"jobTemplate": {"spec": {"template": pod_template()}}}}});
    if let (Some(to), Some(from)) = (acj["spec"].as_object_mut(), spec.as_object()) {
        for (k, v) in from {
            to.insert(k.clone(), v.clone());
        }
    }
    acj
}

/// The object as the mutating webhook leaves it.
fn defaulted(object: &Value) -> Value {
    let decision = call(MUTATE, &request("CREATE", Some(object), None), &view_of(&[]));
    assert!(decision.allowed(), "{:?}", decision.denial);
    patched(object, &decision)
}

fn validate(operation: &str, object: &Value, old: Option<&Value>) -> kruise_webhooks::Decision {
    call(VALIDATE, &request(operation, Some(object), old), &view_of(&[]))
}

#[test]
fn defaults_fill_the_policy_the_history_limits_paused_and_the_pod_template() {
    let out = defaulted(&acj(json!({})));
    assert_eq!(out["spec"]["concurrencyPolicy"], "Allow");
    assert_eq!(out["spec"]["paused"], false);
    assert_eq!(out["spec"]["successfulJobsHistoryLimit"], 3);
    assert_eq!(out["spec"]["failedJobsHistoryLimit"], 1);
    let pod = &out["spec"]["template"]["jobTemplate"]["spec"]["template"]["spec"];
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["restartPolicy"], "Never", "a set value is kept");
    assert_eq!(pod["containers"][0]["imagePullPolicy"], "Always");
    assert_eq!(pod["containers"][0]["terminationMessagePolicy"], "File");
    assert!(
        out["spec"]["template"].get("broadcastJobTemplate").is_none(),
        "no second template is made up"
    );
    let decision = validate("CREATE", &out, None);
    assert!(decision.allowed(), "{:?}", decision.denial);
}

#[test]
fn a_broadcast_job_template_gets_pod_defaults_and_set_values_are_kept() {
    let object = acj(json!({"concurrencyPolicy": "Forbid", "paused": true,
        "successfulJobsHistoryLimit": 0, "failedJobsHistoryLimit": 5,
        "template": {"broadcastJobTemplate": {"metadata": {"labels": {"team": "ops"}},
            "spec": {"parallelism": 2, "template": pod_template()}}}}));
    let out = defaulted(&object);
    assert_eq!(out["spec"]["concurrencyPolicy"], "Forbid");
    assert_eq!(out["spec"]["paused"], true);
    assert_eq!(out["spec"]["successfulJobsHistoryLimit"], 0);
    assert_eq!(out["spec"]["failedJobsHistoryLimit"], 5);
    let template = &out["spec"]["template"]["broadcastJobTemplate"];
    assert_eq!(template["metadata"]["labels"]["team"], "ops");
    assert_eq!(template["spec"]["parallelism"], 2);
    assert_eq!(template["spec"]["template"]["spec"]["dnsPolicy"], "ClusterFirst");
    assert!(out["spec"]["template"].get("jobTemplate").is_none());
    let decision = validate("CREATE", &out, None);
    assert!(decision.allowed(), "{:?}", decision.denial);
}

#[test]
fn an_update_that_keeps_the_template_leaves_it_undefaulted() {
    let old = acj(json!({"concurrencyPolicy": "Allow", "paused": false,
        "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1}));
    let mut new = old.clone();
    new["spec"]["paused"] = json!(true);
    let decision = call(MUTATE, &request("UPDATE", Some(&new), Some(&old)), &view_of(&[]));
    assert_eq!(patched(&new, &decision), new);
    // A changed template is defaulted again.
    new["spec"]["template"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"] =
        json!("busybox:2");
    let decision = call(MUTATE, &request("UPDATE", Some(&new), Some(&old)), &view_of(&[]));
    let out = patched(&new, &decision);
    assert_eq!(
        out["spec"]["template"]["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"],
        "ClusterFirst"
    );
}

#[test]
fn validation_rules_and_messages() {
    type Case = (&'static str, Value, &'static str);
    let named = |name: &str| {
        let mut a = acj(json!({}));
        a["metadata"]["name"] = json!(name);
        a
    };
    let cases: Vec<Case> = vec![
        (
            "an empty schedule",
            acj(json!({"schedule": ""})),
            "spec.schedule: Invalid value: \"\": schedule cannot be empty, please provide valid cron schedule.",
        ),
        (
            "four fields",
            acj(json!({"schedule": "* * * *"})),
            "spec.schedule: Invalid value: \"* * * *\": unparseable schedule \"* * * *\": expected exactly 5 fields",
        ),
        (
            "a minute out of range",
            acj(json!({"schedule": "61 * * * *"})),
            "spec.schedule: Invalid value: \"61 * * * *\": unparseable schedule",
        ),
        (
            "TZ in the schedule and timeZone",
            acj(json!({"schedule": "TZ=UTC 0 0 * * *", "timeZone": "Europe/Paris"})),
            "spec.schedule: Invalid value: \"TZ=UTC 0 0 * * *\": cannot use both timeZone field and TZ or CRON_TZ in schedule",
        ),
        (
            "an unknown zone",
            acj(json!({"timeZone": "Mars/Olympus"})),
            "spec.timeZone: Invalid value: \"Mars/Olympus\": unknown time zone Mars/Olympus",
        ),
        (
            "an empty zone",
            acj(json!({"timeZone": ""})),
            "spec.timeZone: Invalid value: \"\": timeZone must be nil or non-empty string",
        ),
        (
            "Local",
            acj(json!({"timeZone": "Local"})),
            "spec.timeZone: Invalid value: \"Local\": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        ),
        (
            "no template",
            acj(json!({"template": {}})),
            "spec.template: Forbidden: spec must have one template, either JobTemplate or BroadcastJobTemplate should be provided",
        ),
        (
            "two templates",
            acj(
                json!({"template": {"jobTemplate": {"spec": {"template": pod_template()}},
                "broadcastJobTemplate": {"spec": {"template": pod_template()}}}}),
            ),
            "spec.template: Forbidden: spec can have only one template, either JobTemplate or BroadcastJobTemplate should be provided",
        ),
        (
            "a negative deadline",
            acj(json!({"startingDeadlineSeconds": -1})),
            "spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            "a negative history limit",
            acj(json!({"failedJobsHistoryLimit": -2})),
            "spec.failedJobsHistoryLimit: Invalid value: -2: must be greater than or equal to 0",
        ),
        (
            "an unknown concurrency policy",
            acj(json!({"concurrencyPolicy": "Sometimes"})),
            "spec.concurrencyPolicy: Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\"",
        ),
        (
            "a Job pod restarting Always",
            acj(
                json!({"template": {"jobTemplate": {"spec": {"template": {"spec": {
                "containers": [{"name": "work", "image": "busybox"}]}}}}}}),
            ),
            "spec.template.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\"",
        ),
        (
            "a Job pod without containers",
            acj(
                json!({"template": {"jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never", "containers": []}}}}}}),
            ),
            "spec.template.jobTemplate.spec.template.spec.containers: Required value",
        ),
        (
            "a BroadcastJob template with the BroadcastJob rules",
            acj(json!({"template": {"broadcastJobTemplate": {"spec": {
                "completionPolicy": {"type": "Never", "ttlSecondsAfterFinished": 10},
                "template": pod_template()}}}})),
            "spec.template.broadcastJobTemplate.spec.completionPolicy.ttlSecondsAfterFinished: Invalid value: 10: ttlSecondsAfterFinished can just work with Always CompletionPolicyType",
        ),
        (
            "a name with a dot",
            named("nightly.report"),
            "metadata.name: Invalid value: \"nightly.report\": AdvancedCronJob name must consist of alphanumeric characters or '-' (e.g. 'example-com', regex used for validation is '^[a-zA-Z0-9\\-]+$')",
        ),
        (
            "a name of 64 characters",
            named(&"a".repeat(64)),
            "must be no more than 63 characters",
        ),
    ];
    for (name, object, message) in cases {
        let decision = validate("CREATE", &defaulted(&object), None);
        let (code, got) = denial(&decision);
        assert_eq!(code, 422, "{name}");
        assert!(got.contains(message), "{name}: {got}");
    }
}

#[test]
fn valid_schedules_and_zones_pass() {
    for (schedule, zone) in [
        ("@hourly", None),
        ("0 9 * * mon-fri", Some("Asia/Shanghai")),
        ("CRON_TZ=America/New_York 30 6 1 * *", None),
        ("*/5 0-6 * jan,jul *", Some("UTC")),
    ] {
        let mut object = acj(json!({"schedule": schedule}));
        if let Some(zone) = zone {
            object["spec"]["timeZone"] = json!(zone);
        }
        let decision = validate("CREATE", &defaulted(&object), None);
        assert!(decision.allowed(), "{schedule} {zone:?}: {:?}", decision.denial);
    }
}

#[test]
fn updates_may_change_the_schedule_and_policies_but_not_the_template() {
    let old = defaulted(&acj(json!({})));
    let mut new = old.clone();
    new["spec"]["schedule"] = json!("0 * * * *");
    new["spec"]["timeZone"] = json!("Europe/Berlin");
    new["spec"]["concurrencyPolicy"] = json!("Replace");
    new["spec"]["paused"] = json!(true);
    new["spec"]["successfulJobsHistoryLimit"] = json!(1);
    new["spec"]["startingDeadlineSeconds"] = json!(30);
    let decision = validate("UPDATE", &new, Some(&old));
    assert!(decision.allowed(), "{:?}", decision.denial);

    let mut changed = old.clone();
    changed["spec"]["template"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"] =
        json!("busybox:2");
    let (code, message) = denial(&validate("UPDATE", &changed, Some(&old)));
    assert_eq!(code, 422);
    assert_eq!(
        message,
        "spec: Forbidden: updates to advancedcronjob spec for fields other than 'schedule', 'concurrencyPolicy', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit', 'startingDeadlineSeconds', 'timeZone' and 'paused' are forbidden"
    );

    // The spec rules hold on UPDATE too; the name rule only on CREATE, as OpenKruise.
    let mut bad = old.clone();
    bad["spec"]["schedule"] = json!("not a schedule");
    let (_, message) = denial(&validate("UPDATE", &bad, Some(&old)));
    assert!(message.starts_with("spec.schedule: Invalid value"), "{message}");
}

#[test]
fn deletes_and_status_writes_are_not_judged() {
    let object = acj(json!({"schedule": ""}));
    assert!(call(VALIDATE, &request("DELETE", None, Some(&object)), &view_of(&[])).allowed());
    let mut status = request("UPDATE", Some(&object), Some(&object));
    status.sub_resource = Some("status".into());
    assert!(call(VALIDATE, &status, &view_of(&[])).allowed());
}
