use super::*;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_core::pod_state::is_state_consistent;
use serde_json::{Value, json};

fn t(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn time(s: &str) -> Time {
    Time(t(s))
}

fn budget(spec: Value, status: Value) -> PodUnavailableBudget {
    serde_json::from_value(json!({
        "apiVersion": "policy.kruise.io/v1beta1", "kind": "PodUnavailableBudget",
        "metadata": {"name": "web", "namespace": "ns", "generation": 3, "resourceVersion": "10"},
        "spec": spec, "status": status,
    }))
    .unwrap()
}

fn pod(name: &str, ready: bool) -> Arc<PodRecord> {
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}],
                "containerStatuses": [{"name": "main", "image": "nginx:1.25", "imageID": "docker-pullable://nginx@sha256:1",
                    "ready": ready, "restartCount": 0}]},
        }))
        .unwrap(),
    )
}

#[test]
fn int_or_percent_fields_round_up_and_refuse_bare_numbers() {
    let cases = [
        (IntOrString::Int(3), 10, 7),
        (IntOrString::String("25%".into()), 10, 7), // 2.5 rounds up to 3
        (IntOrString::String("50%".into()), 5, 2),
        (IntOrString::String("0%".into()), 5, 5),
        (IntOrString::String("100%".into()), 7, 0),
    ];
    for (value, expected, desired) in cases {
        let mut b = budget(json!({}), Value::Null);
        b.spec.max_unavailable = Some(value.clone());
        assert_eq!(
            desired_available(&b, expected),
            Ok(desired),
            "{value:?} of {expected}"
        );
    }
    let mut b = budget(json!({}), Value::Null);
    b.spec.min_available = Some(IntOrString::String("25".into()));
    let err = desired_available(&b, 10).unwrap_err();
    assert_eq!(err.field, "spec.minAvailable");
    // Beyond int32, as Kubernetes' fields are.
    b.spec.min_available = Some(IntOrString::String("99999999999%".into()));
    assert_eq!(desired_available(&b, 10).unwrap_err().value, "99999999999%");
}

#[test]
fn desired_available_from_max_unavailable_or_min_available() {
    let cases = [
        (json!({"maxUnavailable": "25%"}), 10, 7),
        (json!({"maxUnavailable": 2}), 10, 8),
        (json!({"maxUnavailable": 20}), 10, 0),
        (json!({"maxUnavailable": 1, "minAvailable": 9}), 10, 9), // maxUnavailable wins
        (json!({"minAvailable": 2}), 10, 2),
        (json!({"minAvailable": "50%"}), 5, 3),
        (json!({"minAvailable": 20}), 10, 20), // an int is taken as is
    ];
    for (spec, expected, desired) in cases {
        assert_eq!(
            desired_available(&budget(spec.clone(), Value::Null), expected),
            Ok(desired),
            "{spec}"
        );
    }
}

#[test]
fn counts_prunes_and_schedules_the_next_check() {
    let now = t("2026-01-01T00:01:00Z");
    let b = budget(
        json!({"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}}),
        json!({
            "unavailableAllowed": 0, "currentAvailable": 5, "desiredAvailable": 4, "totalReplicas": 5,
            "disruptedPods": {
                "a": "2026-01-01T00:00:55Z", // 5s old: kept until 00:01:15
                "b": "2026-01-01T00:00:35Z", // 25s old: never deleted -> dropped, NotDeleted
                "gone": "2026-01-01T00:00:59Z", // no such pod any more -> dropped
            },
            "unavailablePods": {
                "c": "2026-01-01T00:00:55Z", // 5s old: kept until 00:01:05
                "d": "2026-01-01T00:00:49Z", // 11s old: dropped
            },
        }),
    );
    let mut finished = (*pod("f", true)).clone();
    finished.status.as_mut().unwrap().phase = Some("Succeeded".into());
    let pods = vec![
        pod("a", true),
        pod("b", true),
        pod("c", true),
        pod("d", true),
        pod("e", false),
        Arc::new(finished),
    ];
    let plan = plan(&b, &pods, 5, now).unwrap();
    assert_eq!(
        plan.status.disrupted_pods,
        Some(BTreeMap::from([("a".to_string(), time("2026-01-01T00:00:55Z"))]))
    );
    assert_eq!(
        plan.status.unavailable_pods,
        Some(BTreeMap::from([("c".to_string(), time("2026-01-01T00:00:55Z"))]))
    );
    assert_eq!(plan.not_deleted, vec!["b".to_string()]);
    // Available: b and d (ready, no longer recorded); a and c are recorded, e is not ready, f finished.
    assert_eq!(plan.status.current_available, 2);
    assert_eq!(plan.status.desired_available, 4);
    assert_eq!(plan.status.unavailable_allowed, 0);
    assert_eq!(plan.status.total_replicas, 5);
    assert_eq!(plan.status.observed_generation, 3);
    assert_eq!(plan.recheck_at, Some(t("2026-01-01T00:01:05Z")));
    assert!(plan.changed);
}

#[test]
fn unchanged_status_is_not_rewritten_and_empty_maps_are_omitted() {
    let now = t("2026-01-01T00:01:00Z");
    let b = budget(
        json!({"minAvailable": 1}),
        json!({"observedGeneration": 3, "unavailableAllowed": 1, "currentAvailable": 2,
            "desiredAvailable": 1, "totalReplicas": 2, "disruptedPods": {}}),
    );
    let plan = plan(&b, &[pod("a", true), pod("b", true)], 2, now).unwrap();
    assert!(!plan.changed, "{:?}", plan.status);
    assert_eq!(plan.status.disrupted_pods, None);
    assert_eq!(plan.recheck_at, None);
}

#[test]
fn allowed_is_current_minus_desired_floored_at_zero() {
    let now = t("2026-01-01T00:00:00Z");
    let pods: Vec<_> = (0..10).map(|i| pod(&format!("p{i}"), i < 8)).collect();
    let plan = plan(
        &budget(json!({"maxUnavailable": "30%"}), Value::Null),
        &pods,
        10,
        now,
    )
    .unwrap();
    // desired = 10 - ceil(3.0) = 7; current = 8; allowed = 1.
    assert_eq!(
        (
            plan.status.desired_available,
            plan.status.current_available,
            plan.status.unavailable_allowed
        ),
        (7, 8, 1)
    );
    let plan = plan_with_labels(now);
    assert_eq!(
        plan.status.current_available, 0,
        "an unavailable-pod label makes the pod unavailable"
    );
}

fn plan_with_labels(now: Timestamp) -> Plan {
    let mut p = (*pod("a", true)).clone();
    p.metadata.labels = kruise_api::pod::InternedMap::from(Some(
        [("unavailable-pod.kruise.io/drain".to_string(), "true".to_string())].into(),
    ));
    plan(
        &budget(json!({"maxUnavailable": 0}), Value::Null),
        &[Arc::new(p)],
        1,
        now,
    )
    .unwrap()
}

#[test]
fn consistency_of_images_and_in_place_updates() {
    let digest_pod = |image: &str, image_id: &str| -> PodRecord {
        serde_json::from_value(json!({
            "metadata": {"name": "a"},
            "spec": {"containers": [{"name": "main", "image": image}]},
            "status": {"containerStatuses": [{"name": "main", "image": image, "imageID": image_id,
                "ready": true, "restartCount": 0}]},
        }))
        .unwrap()
    };
    assert!(is_state_consistent(&digest_pod(
        "busybox@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "docker-pullable://busybox@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    )));
    assert!(!is_state_consistent(&digest_pod(
        "busybox@sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
        "docker-pullable://busybox@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    )));
    // Tagged images: consistent unless an in-place update is still pending.
    let mut tagged = digest_pod("nginx:1.26", "docker-pullable://nginx@sha256:old");
    assert!(is_state_consistent(&tagged));
    tagged
        .status
        .as_mut()
        .unwrap()
        .container_statuses
        .as_mut()
        .unwrap()[0]
        .image = "nginx:1.25".into();
    tagged.metadata.annotations = kruise_api::pod::InternedMap::from(Some(
        [(
            "apps.kruise.io/inplace-update-state".to_string(),
            json!({"revision": "r2", "updateTimestamp": "2026-01-01T00:00:00Z",
                "lastContainerStatuses": {"main": {"imageID": "docker-pullable://nginx@sha256:old"}}})
            .to_string(),
        )]
        .into(),
    ));
    assert!(!is_state_consistent(&tagged), "kubelet still runs the old image");
    tagged
        .status
        .as_mut()
        .unwrap()
        .container_statuses
        .as_mut()
        .unwrap()[0]
        .image = "nginx:1.26".into();
    tagged
        .status
        .as_mut()
        .unwrap()
        .container_statuses
        .as_mut()
        .unwrap()[0]
        .image_id = "docker-pullable://nginx@sha256:new".into();
    assert!(
        is_state_consistent(&tagged),
        "imageID changed: the update is done"
    );
    tagged
        .metadata
        .annotations
        .insert("apps.kruise.io/inplace-update-grace".into(), "{}".into());
    assert!(!is_state_consistent(&tagged), "in the grace period");
}

#[test]
fn a_budget_covers_its_target_workload_or_its_selected_pods() {
    let labels: BTreeMap<String, String> = [("app".to_string(), "web".to_string())].into();
    let by_ref = budget(
        json!({"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "selector": {"matchLabels": {"app": "web"}}}),
        Value::Null,
    );
    let by_selector = budget(json!({"selector": {"matchLabels": {"app": "web"}}}), Value::Null);
    let invalid = budget(
        json!({"selector": {"matchExpressions": [{"key": "app", "operator": "Bogus"}]}}),
        Value::Null,
    );
    let cases = [
        (&by_ref, "ns", Some(("Deployment", "web")), true),
        (&by_ref, "ns", Some(("Deployment", "db")), false),
        (&by_ref, "ns", None, false), // a targetRef wins over the selector
        (&by_ref, "other", Some(("Deployment", "web")), false),
        (&by_selector, "ns", None, true),
        (&by_selector, "other", None, false),
        (&invalid, "ns", None, false),
        (
            &budget(json!({}), Value::Null),
            "ns",
            Some(("Deployment", "web")),
            false,
        ),
    ];
    for (b, namespace, workload, expected) in cases {
        assert_eq!(
            covers(b, namespace, &labels, workload),
            expected,
            "{:?} {namespace} {workload:?}",
            b.spec
        );
    }
}

#[test]
fn the_next_pass_is_due_when_the_earliest_record_expires() {
    let now = t("2026-01-01T00:01:00Z");
    let b = budget(
        json!({"maxUnavailable": 1}),
        json!({"unavailableAllowed": 0, "currentAvailable": 1, "desiredAvailable": 0, "totalReplicas": 1,
            "disruptedPods": {"a": "2026-01-01T00:00:55Z"}}),
    );
    let plan = plan(&b, &[pod("a", true)], 1, now).unwrap();
    assert_eq!(plan.requeue_after(now), Some(Duration::from_secs(15)));
    let idle = plan_with_labels(now);
    assert_eq!(idle.requeue_after(now), None);
}
