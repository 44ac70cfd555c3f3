use serde_json::json;

use super::*;

fn cs(spec: serde_json::Value, status: serde_json::Value) -> CloneSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "web", "generation": 2},
        "spec": spec, "status": status,
    }))
    .unwrap()
}

#[test]
fn an_unobserved_generation_waits() {
    let c = cs(json!({"replicas": 4}), json!({"observedGeneration": 1}));
    assert_eq!(
        cloneset(&c, false).unwrap().line,
        "Waiting for CloneSet spec update to be observed..."
    );
    assert_eq!(
        cloneset(&c, true).unwrap().line,
        "Waiting for CloneSet web spec update to be observed..."
    );
}

#[test]
fn an_in_place_cloneset_waits_for_its_pods_instead_of_being_done_at_once() {
    // kruise-tools reports "partitioned roll out complete" here at once (spec F.5).
    let spec = json!({"replicas": 4, "updateStrategy": {"type": "InPlaceIfPossible"}});
    let c = cs(
        spec.clone(),
        json!({"observedGeneration": 2, "replicas": 4, "readyReplicas": 4, "updatedReplicas": 1, "updatedReadyReplicas": 1}),
    );
    let s = cloneset(&c, false).unwrap();
    assert!(!s.done);
    assert_eq!(
        s.line,
        "Waiting for CloneSet \"web\" rollout to finish: 1 out of 4 new pods have been updated..."
    );
    let c = cs(
        spec.clone(),
        json!({"observedGeneration": 2, "replicas": 4, "readyReplicas": 3, "updatedReplicas": 4, "updatedReadyReplicas": 3}),
    );
    assert_eq!(
        cloneset(&c, false).unwrap().line,
        "Waiting for 1 pods to be ready..."
    );
    let c = cs(
        spec,
        json!({"observedGeneration": 2, "replicas": 4, "readyReplicas": 4, "availableReplicas": 4,
               "updatedReplicas": 4, "updatedReadyReplicas": 4, "updateRevision": "web-5d8f"}),
    );
    assert_eq!(
        cloneset(&c, false).unwrap(),
        Status {
            line: "CloneSet rolling update complete 4 pods at revision web-5d8f...".into(),
            done: true
        }
    );
}

#[test]
fn a_percent_partition_is_resolved_against_the_replicas() {
    // 10 replicas, partition 40% -> 4 kept, 6 to update (kruise-tools printed 10 - IntVal = 10).
    let spec = json!({"replicas": 10, "updateStrategy": {"type": "InPlaceIfPossible", "partition": "40%"}});
    let c = cs(
        spec.clone(),
        json!({"observedGeneration": 2, "replicas": 10, "readyReplicas": 10, "updatedReplicas": 2, "updatedReadyReplicas": 2}),
    );
    assert_eq!(
        cloneset(&c, false).unwrap().line,
        "Waiting for partitioned roll out to finish: 2 out of 6 new pods have been updated..."
    );
    let c = cs(
        spec,
        json!({"observedGeneration": 2, "replicas": 10, "readyReplicas": 10, "updatedReplicas": 6, "updatedReadyReplicas": 6}),
    );
    assert_eq!(
        cloneset(&c, false).unwrap(),
        Status {
            line: "partitioned roll out complete: 6 new pods have been updated...".into(),
            done: true
        }
    );
}

#[test]
fn a_scale_down_waits_for_the_old_pods_to_go() {
    let c = cs(
        json!({"replicas": 2}),
        json!({"observedGeneration": 2, "replicas": 3, "readyReplicas": 3, "updatedReplicas": 3, "updatedReadyReplicas": 3}),
    );
    assert_eq!(
        cloneset(&c, false).unwrap().line,
        "Waiting for CloneSet \"web\" rollout to finish: 1 old pods are pending termination..."
    );
}

#[test]
fn an_invalid_partition_is_an_error() {
    let c = cs(
        json!({"replicas": 2, "updateStrategy": {"partition": "lots"}}),
        json!({"observedGeneration": 2}),
    );
    assert!(cloneset(&c, false).is_err());
}

fn asts(spec: serde_json::Value, status: serde_json::Value) -> StatefulSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
        "metadata": {"name": "db", "generation": 3},
        "spec": spec, "status": status,
    }))
    .unwrap()
}

#[test]
fn advanced_statefulset_lines_are_openkruises() {
    let a = asts(
        json!({"replicas": 5, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}}),
        json!({"observedGeneration": 3, "updatedReplicas": 1}),
    );
    assert_eq!(
        advanced_statefulset(&a).unwrap().line,
        "Waiting for partitioned roll out to finish:1 out of 3 new pods has been updated..."
    );
    let a = asts(json!({"replicas": 5}), json!({"observedGeneration": 2}));
    assert_eq!(
        advanced_statefulset(&a).unwrap().line,
        "Waiting for Advanced StatefulSet spec update to be observed..."
    );
    let a = asts(
        json!({"replicas": 3}),
        json!({"observedGeneration": 3, "updatedReplicas": 3, "readyReplicas": 1}),
    );
    assert_eq!(
        advanced_statefulset(&a).unwrap().line,
        "Waiting for 2 pods to be ready..."
    );
    let a = asts(
        json!({"replicas": 3}),
        json!({"observedGeneration": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3, "updateRevision": "db-7c9"}),
    );
    assert_eq!(
        advanced_statefulset(&a).unwrap(),
        Status {
            line: "Advanced StatefulSet rolling update complete 3 pods at revision db-7c9...".into(),
            done: true
        }
    );
}

fn ads(strategy: serde_json::Value, status: serde_json::Value) -> DaemonSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "generation": 2},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
            "template": {"spec": {"containers": [{"name": "a", "image": "a:2"}]}},
            "updateStrategy": strategy},
        "status": status,
    }))
    .unwrap()
}

fn ads_status(updated: i32, available: i32) -> serde_json::Value {
    json!({"observedGeneration": 2, "desiredNumberScheduled": 10, "currentNumberScheduled": 10,
        "numberMisscheduled": 0, "numberReady": available, "numberAvailable": available,
        "updatedNumberScheduled": updated, "updateRevision": "agent-7d9f"})
}

#[test]
fn advanced_daemonset_lines_are_kubectls_daemonset_lines() {
    // kruise-tools has no viewer here: "no status viewer has been implemented for DaemonSet.apps.kruise.io".
    let rolling = json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}});
    let mut unobserved = ads_status(10, 10);
    unobserved["observedGeneration"] = json!(1);
    let lines = [
        (
            unobserved,
            "Waiting for daemon set spec update to be observed...",
            false,
        ),
        (
            ads_status(4, 8),
            "Waiting for daemon set \"agent\" rollout to finish: 4 out of 10 new pods have been updated...",
            false,
        ),
        (
            ads_status(10, 9),
            "Waiting for daemon set \"agent\" rollout to finish: 9 of 10 updated pods are available...",
            false,
        ),
        (
            ads_status(10, 10),
            "daemon set \"agent\" successfully rolled out",
            true,
        ),
    ];
    for (status, line, done) in lines {
        let s = advanced_daemonset(&ads(rolling.clone(), status)).unwrap();
        assert_eq!((s.line.as_str(), s.done), (line, done));
    }
}

#[test]
fn an_advanced_daemonset_partition_is_resolved_as_the_controller_does() {
    // 30% of 10 nodes stay on the old revision: 7 to update.
    let partitioned = json!({"rollingUpdate": {"partition": "30%"}});
    let s = advanced_daemonset(&ads(partitioned.clone(), ads_status(6, 10))).unwrap();
    assert_eq!(
        (s.line.as_str(), s.done),
        (
            "Waiting for daemon set \"agent\" rollout to finish: 6 out of 7 new pods have been updated...",
            false
        )
    );
    let s = advanced_daemonset(&ads(partitioned, ads_status(7, 10))).unwrap();
    assert_eq!(
        (s.line.as_str(), s.done),
        (
            "partitioned roll out complete: 7 new pods have been updated...",
            true
        )
    );
    let on_delete = advanced_daemonset(&ads(json!({"type": "OnDelete"}), ads_status(0, 10)));
    assert_eq!(
        on_delete.unwrap_err().to_string(),
        "rollout status is only available for RollingUpdate strategy type"
    );
}
