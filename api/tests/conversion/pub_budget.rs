//! PodUnavailableBudget conversion cases and annotation errors.

use super::*;

#[test]
fn podunavailablebudget_cases() {
    run(&[
        Case {
            name: "annotations become spec fields (annotations kept)",
            from: r#"
apiVersion: policy.kruise.io/v1alpha1
kind: PodUnavailableBudget
metadata:
  name: web-server-pub
  namespace: web
  annotations:
    kruise.io/pub-protect-operations: "DELETE, EVICT"
    pub.kruise.io/protect-total-replicas: "10"
spec:
  targetRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: web-server}
  maxUnavailable: 2
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: policy.kruise.io/v1beta1
kind: PodUnavailableBudget
metadata:
  name: web-server-pub
  namespace: web
  annotations:
    kruise.io/pub-protect-operations: "DELETE, EVICT"
    pub.kruise.io/protect-total-replicas: "10"
spec:
  targetRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: web-server}
  maxUnavailable: 2
  protectOperations: [DELETE, EVICT]
  protectTotalReplicas: 10
"#,
            round_trips: false, // "DELETE, EVICT" comes back as "DELETE,EVICT"
        },
        Case {
            name: "selector PUB without annotations round-trips",
            from: r#"
apiVersion: policy.kruise.io/v1alpha1
kind: PodUnavailableBudget
metadata: {name: pub, namespace: web}
spec:
  selector: {matchLabels: {app: web-server}}
  minAvailable: 80%
status: {observedGeneration: 1, unavailableAllowed: 1, currentAvailable: 5, desiredAvailable: 4, totalReplicas: 5}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: policy.kruise.io/v1beta1
kind: PodUnavailableBudget
metadata: {name: pub, namespace: web}
spec:
  selector: {matchLabels: {app: web-server}}
  minAvailable: 80%
status: {observedGeneration: 1, unavailableAllowed: 1, currentAvailable: 5, desiredAvailable: 4, totalReplicas: 5}
"#,
            round_trips: true,
        },
        Case {
            name: "v1beta1 fields become annotations; ignoredPodSelector is dropped; stale annotations removed",
            from: r#"
apiVersion: policy.kruise.io/v1beta1
kind: PodUnavailableBudget
metadata:
  name: pub
  annotations: {pub.kruise.io/protect-total-replicas: "3"}
spec:
  selector: {matchLabels: {app: x}}
  maxUnavailable: 25%
  protectOperations: [DELETE, RESIZE]
  ignoredPodSelector: {matchLabels: {skip: "true"}}
"#,
            to_version: "v1alpha1",
            expected: r#"
apiVersion: policy.kruise.io/v1alpha1
kind: PodUnavailableBudget
metadata:
  name: pub
  annotations: {kruise.io/pub-protect-operations: "DELETE,RESIZE"}
spec:
  selector: {matchLabels: {app: x}}
  maxUnavailable: 25%
"#,
            round_trips: false,
        },
        Case {
            name: "v1beta1 with fields only round-trips through the annotations",
            from: r#"
apiVersion: policy.kruise.io/v1beta1
kind: PodUnavailableBudget
metadata:
  name: pub
  annotations: {kruise.io/pub-protect-operations: "UPDATE", pub.kruise.io/protect-total-replicas: "7"}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: d}
  maxUnavailable: 1
  protectOperations: [UPDATE]
  protectTotalReplicas: 7
"#,
            to_version: "v1alpha1",
            expected: r#"
apiVersion: policy.kruise.io/v1alpha1
kind: PodUnavailableBudget
metadata:
  name: pub
  annotations: {kruise.io/pub-protect-operations: "UPDATE", pub.kruise.io/protect-total-replicas: "7"}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: d}
  maxUnavailable: 1
"#,
            round_trips: true,
        },
    ]);
}

#[test]
fn invalid_pub_annotations_are_errors() {
    let bad_op = yaml(
        r#"
apiVersion: policy.kruise.io/v1alpha1
kind: PodUnavailableBudget
metadata: {name: p, annotations: {kruise.io/pub-protect-operations: "DELETE,KILL"}}
spec: {maxUnavailable: 1}
"#,
    );
    let err = convert_object(&bad_op, "policy.kruise.io/v1beta1").unwrap_err();
    assert!(
        err.to_string()
            .contains(r#"invalid kruise.io/pub-protect-operations value "KILL""#),
        "{err}"
    );

    let bad_total = yaml(
        r#"
apiVersion: policy.kruise.io/v1alpha1
kind: PodUnavailableBudget
metadata: {name: p, annotations: {pub.kruise.io/protect-total-replicas: "ten"}}
spec: {maxUnavailable: 1}
"#,
    );
    let err = convert_object(&bad_total, "policy.kruise.io/v1beta1").unwrap_err();
    match err {
        ConversionError::Decode { path, message, .. } => {
            assert_eq!(
                path.as_deref(),
                Some("metadata.annotations[pub.kruise.io/protect-total-replicas]")
            );
            assert!(
                message.starts_with("failed to parse pub.kruise.io/protect-total-replicas"),
                "{message}"
            );
        }
        other => panic!("unexpected {other:?}"),
    }
}
