use serde_json::{Value, json};

use super::*;

fn pod(containers: usize, annotations: Value) -> Value {
    let containers: Vec<Value> = (0..containers)
        .map(|i| json!({"name": format!("c{i}"), "image": "nginx"}))
        .collect();
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-1", "namespace": "shop", "labels": {"app": "web", "controller-revision-hash": "web-v1"},
            "annotations": annotations,
            "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet", "name": "web",
                                 "uid": "cs-uid", "controller": true}]},
        "spec": {"containers": containers, "nodeName": "node-a"},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})
}

fn sidecar_set(name: &str, app: &str, paused: bool) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": app}}, "injectionStrategy": {"paused": paused},
                 "containers": [{"name": format!("{name}-c"), "image": "busybox"}]}})
}

fn budget(name: &str, app: &str, allowed: i64) -> Value {
    json!({"apiVersion": "policy.kruise.io/v1beta1", "kind": "PodUnavailableBudget",
        "metadata": {"name": name, "namespace": "shop", "generation": 1},
        "spec": {"selector": {"matchLabels": {"app": app}}, "maxUnavailable": 1},
        "status": {"observedGeneration": 1, "desiredAvailable": 2, "currentAvailable": 2 + allowed,
                   "unavailableAllowed": allowed, "totalReplicas": 3}})
}

fn spread(max: i64, used: i64) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
        "metadata": {"name": "spread", "namespace": "shop", "generation": 1},
        "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet", "name": "web"},
                 "subsets": [{"name": "zone-a", "maxReplicas": max}, {"name": "zone-b", "maxReplicas": max}]},
        "status": {"observedGeneration": 1, "versionedSubsetStatuses": {"versionIgnored": [
            {"name": "zone-a", "missingReplicas": max - used, "replicas": used},
            {"name": "zone-b", "missingReplicas": max - used, "replicas": used}]}}})
}

fn base() -> Vec<Value> {
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}),
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
               "metadata": {"name": "web", "namespace": "shop", "uid": "cs-uid"},
               "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
                        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c0", "image": "nginx"}]}}}}),
    ]
}

fn state(extra: Vec<Value>) -> State {
    let mut objects = base();
    objects.extend(extra);
    State::new(objects)
}

#[test]
fn sidecar_sets_matching_not_matching_and_paused() {
    let s = state(vec![
        sidecar_set("log-agent", "web", false),
        sidecar_set("metrics", "db", false),
        sidecar_set("paused-agent", "web", true),
    ]);
    let report = explain(&s, &pod(1, json!({}))).unwrap();
    let by_name = |n: &str| report.sidecar_sets.iter().find(|f| f.name == n).unwrap().clone();
    assert_eq!(
        by_name("log-agent"),
        Finding {
            name: "log-agent".into(),
            applies: true,
            detail: "injects log-agent-c".into()
        }
    );
    let metrics = by_name("metrics");
    assert!(!metrics.applies);
    assert_eq!(
        metrics.detail,
        r#"spec.selector {"matchLabels":{"app":"db"}} does not select the pod's labels {"app":"web","controller-revision-hash":"web-v1"}"#
    );
    let paused = by_name("paused-agent");
    assert_eq!(
        (paused.applies, paused.detail.as_str()),
        (false, "injection is paused (spec.injectionStrategy.paused)")
    );
    let text = report.to_string();
    assert!(
        text.starts_with("Pod shop/web-1\nSidecarSets:\n  log-agent: applies: injects log-agent-c\n"),
        "{text}"
    );
}

#[test]
fn an_injected_pod_is_explained_as_if_created_now() {
    // The pod records an injection of a SidecarSet whose selector no longer matches it.
    let s = state(vec![sidecar_set("metrics", "db", false)]);
    let p = pod(1, json!({"kruise.io/sidecarset-injected-list": "metrics"}));
    let report = explain(&s, &p).unwrap();
    assert!(!report.sidecar_sets[0].applies, "{report}");
}

#[test]
fn budgets_with_room_and_spent() {
    let s = state(vec![
        budget("room", "web", 1),
        budget("spent", "web", 0),
        budget("other", "db", 1),
    ]);
    let report = explain(&s, &pod(1, json!({}))).unwrap();
    let by_name = |n: &str| report.budgets.iter().find(|f| f.name == n).unwrap().clone();
    let room = by_name("room");
    assert!(room.applies);
    assert_eq!(
        room.detail,
        "covers the pod; an eviction now would be allowed (status.unavailableAllowed 1)"
    );
    let spent = by_name("spent");
    assert!(spent.applies);
    assert!(
        spent
            .detail
            .starts_with("covers the pod; an eviction now would be refused (429): "),
        "{}",
        spent.detail
    );
    let other = by_name("other");
    assert!(!other.applies);
    assert!(
        other
            .detail
            .starts_with("spec.selector {\"matchLabels\":{\"app\":\"db\"}}"),
        "{}",
        other.detail
    );
}

#[test]
fn a_spread_with_room_places_the_pod_and_a_full_one_says_so() {
    let p = pod(1, json!({}));
    let report = explain(&state(vec![spread(2, 0)]), &p).unwrap();
    assert_eq!(report.spreads[0].detail, "places the pod in subset zone-a");
    assert!(report.spreads[0].applies);
    let report = explain(&state(vec![spread(1, 1)]), &p).unwrap();
    assert!(!report.spreads[0].applies, "{report}");
    assert_eq!(
        report.spreads[0].detail,
        "every subset is full (zone-a: missingReplicas 0, zone-b: missingReplicas 0)"
    );
    // A pod already placed says where.
    let placed = pod(
        1,
        json!({"apps.kruise.io/matched-workloadspread": "{\"name\":\"spread\",\"subset\":\"zone-b\"}"}),
    );
    let report = explain(&state(vec![spread(1, 1)]), &placed).unwrap();
    assert_eq!(
        report.spreads[0].detail,
        "the pod is in subset zone-b (recorded when it was created)"
    );
}

#[test]
fn launch_priority_ordered_unordered_and_single_container() {
    let s = state(vec![]);
    let ordered = pod(2, json!({"apps.kruise.io/container-launch-priority": "Ordered"}));
    let f = explain(&s, &ordered).unwrap().launch_priority.unwrap();
    assert_eq!(
        (f.applies, f.detail.as_str()),
        (
            true,
            "2 containers start in priority order (env KRUISE_CONTAINER_BARRIER)"
        )
    );
    let f = explain(&s, &pod(2, json!({}))).unwrap().launch_priority.unwrap();
    assert!(!f.applies);
    assert!(f.detail.starts_with("the pod asks for no order"), "{}", f.detail);
    let f = explain(
        &s,
        &pod(1, json!({"apps.kruise.io/container-launch-priority": "Ordered"})),
    )
    .unwrap()
    .launch_priority
    .unwrap();
    assert!(!f.applies);
    assert!(f.detail.ends_with("(the pod has 1 container(s))"), "{}", f.detail);
}
