//! PersistentPodState conversion cases: `nodeTopologyKeys` ↔ `keys` in every topology term.

use super::*;

#[test]
fn persistentpodstate_cases() {
    run(&[Case {
        name: "nodeTopologyKeys becomes keys in the required and every preferred term",
        from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: PersistentPodState
metadata: {name: web, namespace: default}
spec:
  targetRef: {apiVersion: apps/v1, kind: StatefulSet, name: web}
  requiredPersistentTopology: {nodeTopologyKeys: [topology.kubernetes.io/zone]}
  preferredPersistentTopology:
    - {weight: 100, preference: {nodeTopologyKeys: [kubernetes.io/hostname]}}
    - {weight: 10, preference: {nodeTopologyKeys: [rack]}}
  persistentPodAnnotations: [{key: ip}]
  persistentPodStateRetentionPolicy: WhenDeleted
status:
  observedGeneration: 2
  podStates:
    web-0: {nodeName: n1, nodeTopologyLabels: {topology.kubernetes.io/zone: a}}
"#,
        to_version: "v1beta1",
        expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: PersistentPodState
metadata: {name: web, namespace: default}
spec:
  targetRef: {apiVersion: apps/v1, kind: StatefulSet, name: web}
  requiredPersistentTopology: {keys: [topology.kubernetes.io/zone]}
  preferredPersistentTopology:
    - {weight: 100, preference: {keys: [kubernetes.io/hostname]}}
    - {weight: 10, preference: {keys: [rack]}}
  persistentPodAnnotations: [{key: ip}]
  persistentPodStateRetentionPolicy: WhenDeleted
status:
  observedGeneration: 2
  podStates:
    web-0: {nodeName: n1, nodeTopologyLabels: {topology.kubernetes.io/zone: a}}
"#,
        round_trips: true,
    }]);
}

#[test]
fn a_v1alpha1_pps_reads_as_v1beta1_and_back() {
    let alpha = yaml(
        "apiVersion: apps.kruise.io/v1alpha1\nkind: PersistentPodState\nmetadata: {name: p, namespace: d}\n\
         spec: {targetRef: {apiVersion: apps.kruise.io/v1beta1, kind: StatefulSet, name: s}, \
         requiredPersistentTopology: {nodeTopologyKeys: [zone, rack]}}\n",
    );
    let beta = kruise_api::persistentpodstate_to_v1beta1(&alpha).unwrap();
    let required = beta.spec.required_persistent_topology.unwrap();
    assert_eq!(required.keys, ["zone", "rack"]);
    let back =
        kruise_api::persistentpodstate_to_v1alpha1(&convert(&alpha, "apps.kruise.io/v1beta1")).unwrap();
    assert_eq!(
        back.spec.required_persistent_topology.unwrap().node_topology_keys,
        ["zone", "rack"]
    );
}

#[test]
fn a_malformed_preferred_list_is_a_decode_error() {
    let bad = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "PersistentPodState",
        "metadata": {"name": "p"}, "spec": {"preferredPersistentTopology": {"weight": 1}}});
    let err = convert_object(&bad, "apps.kruise.io/v1beta1").unwrap_err();
    assert!(
        matches!(&err, ConversionError::Decode { path: Some(p), .. } if p == "spec.preferredPersistentTopology"),
        "{err}"
    );
}
