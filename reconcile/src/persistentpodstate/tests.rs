use std::sync::Arc;

use serde_json::{Value, json};

use super::*;

fn pps(spec: Value, status: Value) -> PersistentPodState {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "PersistentPodState",
        "metadata": {"name": "web", "namespace": "ns", "generation": 2},
        "spec": spec, "status": status,
    }))
    .unwrap()
}

fn zone_spec() -> Value {
    json!({"targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web"},
        "requiredPersistentTopology": {"keys": ["zone"]},
        "preferredPersistentTopology": [{"weight": 50, "preference": {"keys": ["kubernetes.io/hostname"]}}],
        "persistentPodAnnotations": [{"key": "ip"}]})
}

fn pod(name: &str, node: &str, ready: bool) -> PodRecord {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "ns", "annotations": {"ip": format!("10.0.0.{}", name.len()), "other": "x"}},
        "spec": {"containers": [{"name": "main", "image": "nginx"}], "nodeName": node},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]},
    }))
    .unwrap()
}

fn nodes(name: &str) -> Option<Arc<Node>> {
    let zone = match name {
        "n1" => "a",
        "n2" => "b",
        "n3" => "c",
        _ => return None,
    };
    Some(Arc::new(
        serde_json::from_value(json!({"metadata": {"name": name,
            "labels": {"zone": zone, "kubernetes.io/hostname": name, "rack": "r1"}}}))
        .unwrap(),
    ))
}

fn state(node: &str, zone: &str, ip: &str) -> Value {
    json!({"nodeName": node, "nodeTopologyLabels": {"zone": zone, "kubernetes.io/hostname": node},
        "annotations": {"ip": ip}})
}

fn target(replicas: i64) -> Target {
    Target {
        replicas,
        ..Target::default()
    }
}

fn states(status: &PersistentPodStateStatus) -> Value {
    serde_json::to_value(&status.pod_states).unwrap()
}

#[test]
fn ready_scheduled_pods_record_their_node_topology_and_annotations() {
    let p = pps(zone_spec(), json!({}));
    let pods = [
        pod("web-0", "n1", true),
        pod("web-1", "n2", true),
        pod("web-2", "n3", false),
        pod("web-3", "", true),
    ];
    let refs: Vec<&PodRecord> = pods.iter().collect();
    let status = plan_status(&p, Some(&target(4)), &refs, nodes).expect("changed");
    assert_eq!(status.observed_generation, 2);
    // Only the configured keys are recorded (not `rack`), only the listed annotation (not `other`);
    // the unready pod and the unscheduled pod are not recorded.
    assert_eq!(
        states(&status),
        json!({"web-0": state("n1", "a", "10.0.0.5"), "web-1": state("n2", "b", "10.0.0.5")})
    );
}

#[test]
fn an_unchanged_status_is_not_written_and_a_moved_pod_is_rerecorded() {
    let recorded = json!({"observedGeneration": 2, "podStates": {"web-0": state("n1", "a", "10.0.0.5")}});
    let p = pps(zone_spec(), recorded);
    let same = [pod("web-0", "n1", true)];
    assert_eq!(plan_status(&p, Some(&target(1)), &[&same[0]], nodes), None);
    let moved = [pod("web-0", "n2", true)];
    let status = plan_status(&p, Some(&target(1)), &[&moved[0]], nodes).expect("moved");
    assert_eq!(states(&status), json!({"web-0": state("n2", "b", "10.0.0.5")}));
    // A pod on a node the cache does not know keeps its old state.
    let unknown = [pod("web-0", "n9", true)];
    assert_eq!(plan_status(&p, Some(&target(1)), &[&unknown[0]], nodes), None);
}

#[test]
fn states_of_pods_gone_outside_the_replicas_are_dropped_when_scaled() {
    let recorded = json!({"observedGeneration": 2, "podStates": {
        "web-0": state("n1", "a", "x"), "web-1": state("n2", "b", "x"), "web-2": state("n3", "c", "x"),
        "odd-name": state("n1", "a", "x")}});
    type Case = (
        &'static str,
        Value,
        Target,
        &'static [&'static str],
        &'static [&'static str],
    );
    let cases: [Case; 6] = [
        // Scaled to 1: web-1 and web-2 are gone and outside; web-0 is within even while recreated.
        ("scale-down", zone_spec(), target(1), &[], &["odd-name", "web-0"]),
        // A pod still present keeps its state even outside the replicas (it is being scaled down).
        (
            "still present",
            zone_spec(),
            target(1),
            &["web-2"],
            &["odd-name", "web-0", "web-2"],
        ),
        // Reserved ordinal 0 shifts the live ordinals to 1 and 2 for two replicas.
        (
            "reserved ordinals",
            zone_spec(),
            Target {
                start: 0,
                replicas: 2,
                reserved: BTreeSet::from([0]),
                deleting: false,
            },
            &[],
            &["odd-name", "web-1", "web-2"],
        ),
        // ordinals.start 2 with one replica: only web-2 is live.
        (
            "ordinals start",
            zone_spec(),
            Target {
                start: 2,
                replicas: 1,
                ..Target::default()
            },
            &[],
            &["odd-name", "web-2"],
        ),
        (
            "nothing gone",
            zone_spec(),
            target(3),
            &[],
            &["odd-name", "web-0", "web-1", "web-2"],
        ),
        (
            "WhenDeleted keeps everything",
            {
                let mut s = zone_spec();
                s["persistentPodStateRetentionPolicy"] = json!("WhenDeleted");
                s
            },
            target(0),
            &[],
            &["odd-name", "web-0", "web-1", "web-2"],
        ),
    ];
    for (name, spec, target, present, kept) in cases {
        let p = pps(spec, recorded.clone());
        // Present pods are unready here, so they are not re-recorded; only retention is at play.
        let pods: Vec<PodRecord> = present.iter().map(|n| pod(n, "n1", false)).collect();
        let refs: Vec<&PodRecord> = pods.iter().collect();
        let status =
            plan_status(&p, Some(&target), &refs, nodes).unwrap_or_else(|| p.status.clone().unwrap());
        let got: Vec<&str> = status.pod_states.keys().map(String::as_str).collect();
        assert_eq!(got, kept, "{name}");
    }
}

#[test]
fn a_missing_or_deleting_target_clears_every_state() {
    let recorded = json!({"observedGeneration": 2, "podStates": {"web-0": state("n1", "a", "x")}});
    let p = pps(zone_spec(), recorded);
    let pods = [pod("web-0", "n1", true)];
    for target in [
        None,
        Some(Target {
            replicas: 1,
            deleting: true,
            ..Target::default()
        }),
    ] {
        let status = plan_status(&p, target.as_ref(), &[&pods[0]], nodes).expect("cleared");
        assert!(status.pod_states.is_empty());
        assert_eq!(status.observed_generation, 2);
    }
    let empty = pps(zone_spec(), json!({"observedGeneration": 2}));
    assert_eq!(plan_status(&empty, None, &[], nodes), None, "already clear");
}

#[test]
fn ordinals_are_the_number_after_the_last_dash() {
    assert_eq!(ordinal("web-0"), Some(0));
    assert_eq!(ordinal("my-web-12"), Some(12));
    assert_eq!(ordinal("web"), None);
    assert_eq!(ordinal("web-x"), None);
}

fn sts(annotations: Value, uid: &str) -> ObjectMeta {
    serde_json::from_value(json!({"name": "web", "namespace": "ns", "uid": uid, "annotations": annotations}))
        .unwrap()
}

fn workload(meta: &ObjectMeta) -> Workload<'_> {
    Workload {
        api_version: "apps.kruise.io/v1beta1",
        kind: "StatefulSet",
        metadata: meta,
    }
}

#[test]
fn annotated_statefulsets_get_a_generated_pps_owned_by_them() {
    let meta = sts(
        json!({AUTO_GENERATE_ANNOTATION: "true", REQUIRED_TOPOLOGY_ANNOTATION: "zone, rack",
            PREFERRED_TOPOLOGY_ANNOTATION: "kubernetes.io/hostname", PERSISTENT_POD_ANNOTATIONS_ANNOTATION: "ip"}),
        "u1",
    );
    let Generated::Create(created) = plan_generated(workload(&meta), None) else {
        panic!("create")
    };
    let got = serde_json::to_value(&*created).unwrap();
    assert_eq!(
        got,
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "PersistentPodState",
            "metadata": {"name": "web", "namespace": "ns", "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1",
                "kind": "StatefulSet", "name": "web", "uid": "u1", "controller": true}]},
            "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "web"},
                "requiredPersistentTopology": {"keys": ["zone", "rack"]},
                "preferredPersistentTopology": [{"weight": 100, "preference": {"keys": ["kubernetes.io/hostname"]}}],
                "persistentPodAnnotations": [{"key": "ip"}]}})
    );
    // The same spec again: nothing to do. A changed annotation: the spec is replaced.
    assert_eq!(plan_generated(workload(&meta), Some(&created)), Generated::Keep);
    let changed = sts(
        json!({AUTO_GENERATE_ANNOTATION: "true", REQUIRED_TOPOLOGY_ANNOTATION: "zone"}),
        "u1",
    );
    let Generated::UpdateSpec(spec) = plan_generated(workload(&changed), Some(&created)) else {
        panic!("update")
    };
    assert_eq!(spec.required_persistent_topology.unwrap().keys, ["zone"]);
    assert!(spec.preferred_persistent_topology.is_empty());
    // The annotation removed (or not "true"): the generated object is deleted.
    for annotations in [
        json!({}),
        json!({AUTO_GENERATE_ANNOTATION: "false", REQUIRED_TOPOLOGY_ANNOTATION: "zone"}),
    ] {
        let off = sts(annotations, "u1");
        assert_eq!(plan_generated(workload(&off), Some(&created)), Generated::Delete);
    }
}

#[test]
fn generation_needs_a_topology_key_and_never_touches_foreign_objects() {
    let incomplete = sts(
        json!({AUTO_GENERATE_ANNOTATION: "true", REQUIRED_TOPOLOGY_ANNOTATION: " , "}),
        "u1",
    );
    assert_eq!(plan_generated(workload(&incomplete), None), Generated::Keep);
    // A hand-made PersistentPodState with the workload's name (no controller reference to it).
    let foreign = pps(zone_spec(), json!({}));
    let wants = sts(
        json!({AUTO_GENERATE_ANNOTATION: "true", REQUIRED_TOPOLOGY_ANNOTATION: "rack"}),
        "u1",
    );
    assert_eq!(plan_generated(workload(&wants), Some(&foreign)), Generated::Keep);
    assert_eq!(
        plan_generated(workload(&sts(json!({}), "u1")), Some(&foreign)),
        Generated::Keep
    );
    // Owned by an earlier StatefulSet of the same name (another uid): left alone too.
    let Generated::Create(old) = plan_generated(
        workload(&sts(serde_json::to_value(&wants.annotations).unwrap(), "u0")),
        None,
    ) else {
        panic!("create")
    };
    assert_eq!(
        plan_generated(workload(&sts(json!({}), "u1")), Some(&old)),
        Generated::Keep
    );
}
