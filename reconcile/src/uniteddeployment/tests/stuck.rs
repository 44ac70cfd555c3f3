//! The apps/v1 StatefulSet work-around: pods at or above the partition, not at the update revision and
//! not Ready are deleted after the subset's update.

use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::SubsetKind;
use serde_json::{Value, json};

use crate::uniteddeployment::Desired;
use crate::uniteddeployment::plan::stuck_pods;

fn pod(name: &str, revision: &str, ready: bool) -> PodRecord {
    serde_json::from_value(json!({"metadata": {"name": name, "namespace": "prod",
        "labels": {"apps.kruise.io/subset-name": "a", "apps.kruise.io/controller-revision-hash": revision}},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}}))
    .unwrap()
}

fn set(strategy: Value) -> Value {
    json!({"metadata": {"name": "web-a-x"}, "spec": {"updateStrategy": strategy}})
}

#[test]
fn only_not_ready_old_pods_at_or_above_the_partition_are_stuck() {
    let pods = [
        pod("web-a-x-0", "old", false), // below the partition
        pod("web-a-x-1", "old", false), // stuck
        pod("web-a-x-2", "old", true),  // ready: the rollout proceeds
        pod("web-a-x-3", "new", false), // already at the revision
        pod("other-4", "old", false),   // not the set's
    ];
    let refs: Vec<&PodRecord> = pods.iter().collect();
    let desired = Desired {
        subset: "a",
        revision: "new",
        replicas: 4,
        partition: 1,
    };
    let rolling = set(json!({"type": "RollingUpdate"}));
    assert_eq!(
        stuck_pods(SubsetKind::StatefulSet, &rolling, &desired, &refs),
        ["web-a-x-1"]
    );
    // An unset strategy is RollingUpdate; OnDelete and the other kinds are left alone.
    assert_eq!(
        stuck_pods(SubsetKind::StatefulSet, &set(json!({})), &desired, &refs),
        ["web-a-x-1"]
    );
    let on_delete = set(json!({"type": "OnDelete"}));
    assert!(stuck_pods(SubsetKind::StatefulSet, &on_delete, &desired, &refs).is_empty());
    assert!(stuck_pods(SubsetKind::AdvancedStatefulSet, &rolling, &desired, &refs).is_empty());
}
