//! `/validate-pod`: PodUnavailableBudget protection and WorkloadSpread accounting.
//!
//! Every file in `fixtures/pod_validate/` is one case: `objects` (the cluster view), `request` (an
//! AdmissionRequest) and `expect` (allowed or the exact code, reason and message, plus the exact status
//! writes). All are decided at [`NOW`].

use std::path::PathBuf;

use k8s_openapi::jiff::Timestamp;
use kruise_webhooks::{
    AdmissionRequest, ClusterView, Decision, MemoryView, Settings, StatusWrite, WriteTarget, pod_validate,
};
use serde_json::{Value, json};

const NOW: &str = "2024-05-01T10:00:00Z";

fn now() -> Timestamp {
    NOW.parse().unwrap()
}

fn fixtures() -> Vec<(String, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pod_validate");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, value)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn view_of(objects: &Value) -> MemoryView {
    let mut view = MemoryView::default();
    for object in objects.as_array().into_iter().flatten() {
        view.add(object.clone()).unwrap();
    }
    view
}

fn write_json(view: &MemoryView, write: &StatusWrite) -> Value {
    json!({
        "apiVersion": write.target.api_version, "kind": write.target.kind,
        "namespace": write.target.namespace, "name": write.target.name,
        "resourceVersion": write.resource_version, "status": write.new_status(view).unwrap(),
    })
}

fn decide(view: &MemoryView, request: &AdmissionRequest) -> Decision {
    pod_validate::validate_at(request, view, &Settings::default(), now())
}

#[test]
fn fixtures_decide_as_expected() {
    let cases = fixtures();
    assert!(cases.len() >= 70, "fixtures missing: {}", cases.len());
    let mut failures = Vec::new();
    for (name, case) in &cases {
        let mut view = view_of(&case["objects"]);
        let request: AdmissionRequest =
            serde_json::from_value(case["request"].clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let expect = &case["expect"];
        let decision = decide(&view, &request);
        let response = decision.to_response(&request, false);
        let mut problems = Vec::new();
        if response.patch.is_some() || response.patch_type.is_some() {
            problems.push("a validating answer carries a patch".to_string());
        }
        if response.allowed != expect["allowed"].as_bool().unwrap() {
            problems.push(format!(
                "allowed {} (denial {:?})",
                response.allowed, decision.denial
            ));
        }
        if let Some(status) = &response.status {
            if Some(u64::from(status.code)) != expect["code"].as_u64() {
                problems.push(format!("code {} != {}", status.code, expect["code"]));
            }
            if Some(status.reason.as_str()) != expect["reason"].as_str() {
                problems.push(format!("reason {:?} != {}", status.reason, expect["reason"]));
            }
            if let Some(message) = expect["message"].as_str()
                && status.message != message
            {
                problems.push(format!("message {:?}\n     != {message:?}", status.message));
            }
            if let Some(prefix) = expect["messageStartsWith"].as_str()
                && !status.message.starts_with(prefix)
            {
                problems.push(format!(
                    "message {:?} does not start with {prefix:?}",
                    status.message
                ));
            }
        }
        let writes: Vec<Value> = decision.writes.iter().map(|w| write_json(&view, w)).collect();
        if Value::Array(writes.clone()) != expect["writes"] {
            problems.push(format!(
                "writes\n  {}\n  != {}",
                Value::Array(writes),
                expect["writes"]
            ));
        }
        // Spending is idempotent: once the writes are applied, the same request is allowed and spends
        // nothing more (the pod is recorded).
        if problems.is_empty() && !decision.writes.is_empty() {
            for write in &decision.writes {
                if let Err(e) = view.apply_status(write) {
                    problems.push(format!("write does not apply: {e}"));
                }
            }
            let again = decide(&view, &request);
            if !again.allowed() || !again.writes.is_empty() {
                problems.push(format!("repeating the request after the writes: {again:?}"));
            }
        }
        if !problems.is_empty() {
            failures.push(format!("{name}: {}", problems.join("; ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing fixtures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

const MESSAGE: &str =
    "podunavailablebudget.policy.kruise.io \"web-pub\" is forbidden: pub unavailable allowed is negative";

fn budget(allowed: i32) -> Value {
    json!({"apiVersion": "policy.kruise.io/v1alpha1", "kind": "PodUnavailableBudget",
        "metadata": {"name": "web-pub", "namespace": "shop", "resourceVersion": "10"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 3},
        "status": {"unavailableAllowed": allowed, "desiredAvailable": 7, "currentAvailable": 10, "totalReplicas": 10}})
}

fn ready_pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", "labels": {"app": "web"},
            "annotations": {"pub.kruise.io/related-pub": "web-pub"}},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.0"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "app", "image": "nginx:1.0", "imageID": "nginx@sha256:1", "ready": true,
                "restartCount": 0}]}})
}

fn delete_request(pod: &Value) -> AdmissionRequest {
    serde_json::from_value(
        json!({"uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "name": pod["metadata"]["name"], "namespace": "shop", "operation": "DELETE", "oldObject": pod,
        "options": {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"}}),
    )
    .unwrap()
}

fn eviction_request(name: &str, body_dry_run: bool) -> AdmissionRequest {
    let mut body = json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": "shop"}});
    if body_dry_run {
        body["deleteOptions"] = json!({"dryRun": ["All"]});
    }
    serde_json::from_value(
        json!({"uid": format!("u-{name}"), "kind": {"group": "policy", "version": "v1", "kind": "Eviction"},
        "resource": {"group": "", "version": "v1", "resource": "pods"}, "subResource": "eviction",
        "name": name, "namespace": "shop", "operation": "CREATE", "object": body,
        "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}}),
    )
    .unwrap()
}

fn pub_status(view: &MemoryView) -> Value {
    serde_json::to_value(&*view.pod_unavailable_budgets("shop")[0]).unwrap()["status"].clone()
}

#[test]
fn deletions_spend_the_budget_one_by_one_then_are_denied() {
    let pods: Vec<Value> = (0..3).map(|i| ready_pod(&format!("web-{i}"))).collect();
    let mut view = view_of(&json!([budget(2), pods[0], pods[1], pods[2]]));
    for (i, pod) in pods.iter().enumerate().take(2) {
        let decision = decide(&view, &delete_request(pod));
        assert!(decision.allowed(), "{i}: {decision:?}");
        assert_eq!(decision.writes.len(), 1);
        let write = &decision.writes[0];
        assert_eq!(
            write.target,
            WriteTarget {
                api_version: "policy.kruise.io/v1beta1".into(),
                kind: "PodUnavailableBudget".into(),
                plural: "podunavailablebudgets".into(),
                namespace: "shop".into(),
                name: "web-pub".into(),
            }
        );
        let status = write.new_status(&view).unwrap();
        assert_eq!(status["unavailableAllowed"], 1 - i as i64);
        assert_eq!(status["disruptedPods"][format!("web-{i}")], NOW);
        view.apply_status(write).unwrap();
    }
    let status = pub_status(&view);
    assert_eq!(status["unavailableAllowed"], 0);
    assert_eq!(status["disruptedPods"], json!({"web-0": NOW, "web-1": NOW}));
    assert_eq!(
        status["desiredAvailable"], 7,
        "fields the webhook does not own are kept"
    );

    let denied = decide(&view, &delete_request(&pods[2]));
    let denial = denied.denial.expect("third deletion must be denied");
    assert_eq!(
        (denial.code, denial.reason.as_str(), denial.message.as_str()),
        (403, "Forbidden", MESSAGE)
    );
    assert!(denied.writes.is_empty());
    let event = &denied.events[..];
    assert_eq!(event.len(), 1, "one event on the protected pod");
    assert_eq!(
        (event[0].reason, event[0].message.as_str(), event[0].warning),
        (
            "PubPreventPodDeletion",
            "openkruise pub prevents pod deletion",
            true
        )
    );
    assert_eq!(
        (
            event[0].regarding.kind.as_str(),
            event[0].regarding.namespace.as_str(),
            event[0].regarding.name.as_str()
        ),
        ("Pod", "shop", "web-2")
    );
    let evicted = decide(&view, &eviction_request("web-2", false));
    let denial = evicted.denial.as_ref().expect("eviction must be denied too");
    assert_eq!(
        (denial.code, denial.reason.as_str(), denial.message.as_str()),
        (429, "TooManyRequests", MESSAGE)
    );
    assert_eq!(evicted.events.len(), 1);
    assert_eq!(
        evicted.budget_refusal.map(|r| r.kind_namespace_name).as_deref(),
        Some("unknown_shop_web-2"),
        "a pod without a controller is named as OpenKruise names it"
    );
}

#[test]
fn dry_runs_consume_nothing() {
    let view = view_of(&json!([budget(1), ready_pod("web-0")]));
    let before = pub_status(&view);
    let mut flagged = delete_request(&ready_pod("web-0"));
    flagged.dry_run = Some(true);
    let mut options = delete_request(&ready_pod("web-0"));
    options.options = Some(json!({"kind": "DeleteOptions", "dryRun": ["All"]}));
    let mut eviction_flag = eviction_request("web-0", false);
    eviction_flag.dry_run = Some(true);
    for (what, request) in [
        ("request.dryRun", flagged),
        ("options.dryRun", options),
        ("Eviction deleteOptions.dryRun", eviction_request("web-0", true)),
        ("eviction request.dryRun", eviction_flag),
    ] {
        let decision = decide(&view, &request);
        assert!(decision.allowed(), "{what}: {decision:?}");
        assert!(
            decision.writes.is_empty(),
            "{what} must not write: {:?}",
            decision.writes
        );
    }
    assert_eq!(pub_status(&view), before);
    // The same eviction without dry run does spend: the tests above guard the flag, not a broken budget.
    assert_eq!(decide(&view, &eviction_request("web-0", false)).writes.len(), 1);
}

#[test]
fn too_many_unconfirmed_records_deny() {
    let mut pub_ = budget(5);
    let records: serde_json::Map<String, Value> =
        (0..2001).map(|i| (format!("old-{i}"), json!(NOW))).collect();
    pub_["status"]["disruptedPods"] = Value::Object(records);
    let view = view_of(&json!([pub_]));
    let denial = decide(&view, &delete_request(&ready_pod("web-0")))
        .denial
        .unwrap();
    assert_eq!(denial.code, 403);
    assert_eq!(
        denial.message,
        "podunavailablebudget.policy.kruise.io \"web-pub\" is forbidden: DisruptedPods and UnavailablePods map too big - too many unavailable not confirmed by PUB controller"
    );
    // 2000 records is still fine.
    let mut pub_ = budget(5);
    let records: serde_json::Map<String, Value> =
        (0..2000).map(|i| (format!("old-{i}"), json!(NOW))).collect();
    pub_["status"]["disruptedPods"] = Value::Object(records);
    assert!(decide(&view_of(&json!([pub_])), &delete_request(&ready_pod("web-0"))).allowed());
}

#[test]
fn a_stale_decision_conflicts_and_the_retry_sees_the_new_budget() {
    let mut view = view_of(&json!([budget(1), ready_pod("web-0"), ready_pod("web-1")]));
    let first = decide(&view, &delete_request(&ready_pod("web-0")));
    let second = decide(&view, &delete_request(&ready_pod("web-1")));
    assert!(
        first.allowed() && second.allowed(),
        "both decided against the same snapshot"
    );
    view.apply_status(&first.writes[0]).unwrap();
    assert!(
        view.apply_status(&second.writes[0]).is_err(),
        "the stale write must conflict"
    );
    let retried = decide(&view, &delete_request(&ready_pod("web-1")));
    assert_eq!(retried.denial.map(|d| d.message), Some(MESSAGE.to_string()));
}

#[test]
fn timestamps_are_the_injected_time_at_second_precision() {
    let view = view_of(&json!([budget(1)]));
    let at: Timestamp = "2024-05-01T10:00:00.987654Z".parse().unwrap();
    let decision = pod_validate::validate_at(
        &delete_request(&ready_pod("web-0")),
        &view,
        &Settings::default(),
        at,
    );
    assert_eq!(
        decision.writes[0].new_status(&view).unwrap()["disruptedPods"]["web-0"],
        NOW
    );
    // `validate` stamps the real time.
    let decision = pod_validate::validate(&delete_request(&ready_pod("web-0")), &view, &Settings::default());
    let stamp = decision.writes[0].new_status(&view).unwrap()["disruptedPods"]["web-0"]
        .as_str()
        .unwrap()
        .to_string();
    let stamp: Timestamp = stamp.parse().unwrap();
    assert!((Timestamp::now().as_second() - stamp.as_second()).abs() < 60);
}

#[test]
fn conflict_denial_names_the_object_like_the_apiserver() {
    let view = view_of(&json!([budget(1)]));
    let decision = decide(&view, &delete_request(&ready_pod("web-0")));
    let denial = pod_validate::conflict_denial(&decision.writes[0]).denial.unwrap();
    assert_eq!(denial.code, 429);
    assert_eq!(
        denial.message,
        "Operation cannot be fulfilled on podunavailablebudgets.policy.kruise.io \"web-pub\": the object has been modified; please apply your changes to the latest version and try again"
    );
}

#[test]
fn a_v1alpha1_budget_protects_the_operations_of_its_annotation() {
    // The api crate maps the v1alpha1 annotation to spec.protectOperations (trimmed).
    let mut pub_ = budget(0);
    pub_["metadata"]["annotations"] = json!({"kruise.io/pub-protect-operations": "EVICT, UPDATE"});
    let view = view_of(&json!([pub_, ready_pod("web-0")]));
    assert!(decide(&view, &delete_request(&ready_pod("web-0"))).allowed());
    assert_eq!(
        decide(&view, &eviction_request("web-0", false))
            .denial
            .map(|d| d.code),
        Some(429)
    );
}

#[test]
fn the_view_is_only_read() {
    let view = view_of(&json!([budget(1), ready_pod("web-0")]));
    let decision = decide(&view, &delete_request(&ready_pod("web-0")));
    assert_eq!(decision.writes.len(), 1);
    assert_eq!(pub_status(&view)["unavailableAllowed"], 1);
    assert!(view.pod("shop", "web-0").is_some());
}
