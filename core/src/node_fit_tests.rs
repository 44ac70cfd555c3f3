//! The cases of Kubernetes' `TestNodeShouldRunDaemonPod` and `TestTaintsAndTolerations`-style
//! predicates that still apply (resources and ports are no longer checked), and OpenKruise's.

use k8s_openapi::api::core::v1::{Node, PodSpec, Taint, Toleration};
use serde_json::json;

use super::*;

fn node(value: serde_json::Value) -> Node {
    serde_json::from_value(value).unwrap()
}

fn spec(value: serde_json::Value) -> PodSpec {
    let mut v = value;
    v["containers"] = json!([{"name": "main", "image": "busybox"}]);
    serde_json::from_value(v).unwrap()
}

fn plain_node(taints: serde_json::Value) -> Node {
    node(
        json!({"metadata": {"name": "n1", "labels": {"zone": "a", "disk": "ssd"}}, "spec": {"taints": taints}}),
    )
}

fn fit(run: bool, stay: bool) -> Fit {
    Fit {
        should_run: run,
        should_continue_running: stay,
    }
}

#[test]
fn a_plain_template_runs_on_a_plain_node() {
    assert_eq!(
        daemon_pod_fit(&spec(json!({})), &plain_node(json!([]))),
        fit(true, true)
    );
}

#[test]
fn node_name_must_be_the_nodes() {
    let n = plain_node(json!([]));
    assert_eq!(
        daemon_pod_fit(&spec(json!({"nodeName": "n2"})), &n),
        fit(false, false)
    );
    assert_eq!(
        daemon_pod_fit(&spec(json!({"nodeName": "n1"})), &n),
        fit(true, true)
    );
    assert_eq!(
        daemon_pod_fit(&spec(json!({"nodeName": ""})), &n),
        fit(true, true)
    );
}

#[test]
fn node_selector_and_required_affinity_select_the_node() {
    let n = plain_node(json!([]));
    assert_eq!(
        daemon_pod_fit(&spec(json!({"nodeSelector": {"zone": "a"}})), &n),
        fit(true, true)
    );
    assert_eq!(
        daemon_pod_fit(&spec(json!({"nodeSelector": {"zone": "b"}})), &n),
        fit(false, false)
    );
    let affinity = |terms: serde_json::Value| {
        spec(
            json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}}),
        )
    };
    let on = affinity(json!([{"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]));
    assert_eq!(daemon_pod_fit(&on, &n), fit(true, true));
    let off =
        affinity(json!([{"matchExpressions": [{"key": "disk", "operator": "NotIn", "values": ["ssd"]}]}]));
    assert_eq!(daemon_pod_fit(&off, &n), fit(false, false));
    // The node affinity upstream's controller pins pods with: metadata.name.
    let pinned =
        affinity(json!([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]));
    assert_eq!(daemon_pod_fit(&pinned, &n), fit(true, true));
    let elsewhere =
        affinity(json!([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]));
    assert_eq!(daemon_pod_fit(&elsewhere, &n), fit(false, false));
    // No terms, and a term upstream cannot parse, select nothing.
    assert_eq!(daemon_pod_fit(&affinity(json!([])), &n), fit(false, false));
    let bad = affinity(json!([{"matchExpressions": [{"key": "disk", "operator": "Gt", "values": ["x"]}]}]));
    assert_eq!(daemon_pod_fit(&bad, &n), fit(false, false));
    // Both must hold.
    let both = spec(json!({"nodeSelector": {"zone": "b"},
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "disk", "operator": "Exists"}]}]}}}}));
    assert_eq!(daemon_pod_fit(&both, &n), fit(false, false));
}

#[test]
fn an_untolerated_no_schedule_taint_keeps_new_pods_off_but_lets_running_ones_stay() {
    let n = plain_node(json!([{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]));
    assert_eq!(daemon_pod_fit(&spec(json!({})), &n), fit(false, true));
    let tolerating = spec(
        json!({"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"}]}),
    );
    assert_eq!(daemon_pod_fit(&tolerating, &n), fit(true, true));
    let wrong_value = spec(json!({"tolerations": [{"key": "dedicated", "value": "web"}]}));
    assert_eq!(daemon_pod_fit(&wrong_value, &n), fit(false, true));
}

#[test]
fn an_untolerated_no_execute_taint_removes_running_pods_too() {
    let n = plain_node(json!([{"key": "dedicated", "value": "db", "effect": "NoExecute"}]));
    assert_eq!(daemon_pod_fit(&spec(json!({})), &n), fit(false, false));
    let any = spec(json!({"tolerations": [{"operator": "Exists"}]}));
    assert_eq!(daemon_pod_fit(&any, &n), fit(true, true));
    // PreferNoSchedule never matters.
    let soft = plain_node(json!([{"key": "dedicated", "effect": "PreferNoSchedule"}]));
    assert_eq!(daemon_pod_fit(&spec(json!({})), &soft), fit(true, true));
}

#[test]
fn the_taints_of_the_node_lifecycle_are_tolerated_by_every_daemon_pod() {
    for (key, effect) in [
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        // A cordoned node still runs daemon pods.
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ] {
        let n = plain_node(json!([{"key": key, "effect": effect}]));
        assert_eq!(daemon_pod_fit(&spec(json!({})), &n), fit(true, true), "{key}");
    }
    // Network unavailable: only host-network pods.
    let n = plain_node(json!([{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}]));
    assert_eq!(daemon_pod_fit(&spec(json!({})), &n), fit(false, true));
    assert_eq!(
        daemon_pod_fit(&spec(json!({"hostNetwork": true})), &n),
        fit(true, true)
    );
}

#[test]
fn daemon_tolerations_replace_an_identical_one_and_keep_the_others() {
    let template = spec(json!({"tolerations": [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Equal", "value": "x", "effect": "NoExecute"},
        {"key": "dedicated", "operator": "Exists"}
    ]}));
    let all = daemon_tolerations(&template);
    assert_eq!(all.len(), 3 + 5, "{all:?}");
    assert_eq!(
        all[0].toleration_seconds, None,
        "the daemon pod is never evicted for not-ready"
    );
    assert_eq!(
        all[1].value.as_deref(),
        Some("x"),
        "a different toleration of the same key stays"
    );
    assert!(
        !all.iter()
            .any(|t| t.key.as_deref() == Some(taints::NETWORK_UNAVAILABLE))
    );
}

#[test]
fn tolerates_follows_kubernetes() {
    let taint = |key: &str, value: Option<&str>, effect: &str| Taint {
        key: key.into(),
        value: value.map(Into::into),
        effect: effect.into(),
        time_added: None,
    };
    let toleration =
        |key: Option<&str>, operator: Option<&str>, value: Option<&str>, effect: Option<&str>| Toleration {
            key: key.map(Into::into),
            operator: operator.map(Into::into),
            value: value.map(Into::into),
            effect: effect.map(Into::into),
            toleration_seconds: None,
        };
    let t = taint("k", Some("v"), "NoSchedule");
    assert!(
        tolerates(&toleration(Some("k"), None, Some("v"), None), &t),
        "Equal is the default; empty effect matches all"
    );
    assert!(!tolerates(&toleration(Some("k"), None, Some("w"), None), &t));
    assert!(
        tolerates(&toleration(None, Some("Exists"), None, None), &t),
        "empty key with Exists: everything"
    );
    assert!(!tolerates(
        &toleration(Some("k"), Some("Exists"), None, Some("NoExecute")),
        &t
    ));
    assert!(!tolerates(
        &toleration(Some("other"), Some("Exists"), None, None),
        &t
    ));
    assert!(
        !tolerates(&toleration(Some("k"), Some("Lt"), Some("v"), None), &t),
        "unknown operator"
    );
    // A taint without a value is tolerated by Equal with no value.
    assert!(tolerates(
        &toleration(Some("k"), Some("Equal"), None, None),
        &taint("k", None, "NoExecute")
    ));
}

#[test]
fn a_job_pod_gets_no_daemon_tolerations() {
    let not_ready = plain_node(json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]));
    assert_eq!(daemon_pod_fit(&spec(json!({})), &not_ready), fit(true, true));
    assert_eq!(job_pod_fit(&spec(json!({})), &not_ready), fit(false, false));
    let tolerating =
        spec(json!({"tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}]}));
    assert_eq!(job_pod_fit(&tolerating, &not_ready), fit(true, true));
}

#[test]
fn a_cordoned_node_takes_only_job_pods_tolerating_unschedulable() {
    let cordoned = node(json!({"metadata": {"name": "n1"}, "spec": {"unschedulable": true}}));
    assert_eq!(job_pod_fit(&spec(json!({})), &cordoned), fit(false, true));
    let tolerating = spec(json!({"tolerations": [
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]}));
    assert_eq!(job_pod_fit(&tolerating, &cordoned), fit(true, true));
    assert_eq!(daemon_pod_fit(&spec(json!({})), &cordoned), fit(true, true));
}

#[test]
fn job_pods_follow_selector_affinity_and_taints_like_daemon_pods() {
    let tainted = plain_node(json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]));
    assert_eq!(job_pod_fit(&spec(json!({})), &tainted), fit(false, true));
    let tolerating = spec(json!({"tolerations": [{"key": "dedicated", "operator": "Exists"}]}));
    assert_eq!(job_pod_fit(&tolerating, &tainted), fit(true, true));
    let elsewhere = spec(json!({"nodeSelector": {"disk": "hdd"}}));
    assert_eq!(job_pod_fit(&elsewhere, &tainted), fit(false, false));
}
