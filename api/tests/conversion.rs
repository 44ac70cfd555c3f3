//! Table tests for v1alpha1 <-> v1beta1 conversion, written as the YAML users apply.

use kruise_api::{ConversionError, convert_object};
use serde_json::{Value, json};

fn yaml(s: &str) -> Value {
    serde_saphyr::from_str(s).expect("test YAML parses")
}

fn convert(object: &Value, to: &str) -> Value {
    convert_object(object, to).unwrap_or_else(|e| panic!("conversion to {to} failed: {e}"))
}

struct Case {
    name: &'static str,
    from: &'static str,
    to_version: &'static str,
    expected: &'static str,
    /// Whether converting `expected` back gives `from` exactly.
    round_trips: bool,
}

fn run(cases: &[Case]) {
    for case in cases {
        let from = yaml(case.from);
        let expected = yaml(case.expected);
        let group = from["apiVersion"]
            .as_str()
            .unwrap()
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let got = convert(&from, &format!("{group}/{}", case.to_version));
        assert_eq!(got, expected, "case {:?}: forward conversion", case.name);
        if case.round_trips {
            let back_version = from["apiVersion"].as_str().unwrap();
            let back = convert(&got, back_version);
            assert_eq!(back, from, "case {:?}: round trip", case.name);
        }
    }
}

#[test]
fn sidecarset_cases() {
    run(&[
        Case {
            name: "namespace becomes a metadata.name namespace selector",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: test-sidecarset}
spec:
  namespace: ns-1
  selector: {matchLabels: {app: nginx}}
  containers:
  - name: sidecar1
    image: centos:6.7
    command: ["sleep", "999d"]
    podInjectPolicy: BeforeAppContainer
    shareVolumePolicy: {type: disabled}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: SidecarSet
metadata: {name: test-sidecarset}
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ns-1}}
  selector: {matchLabels: {app: nginx}}
  containers:
  - name: sidecar1
    image: centos:6.7
    command: ["sleep", "999d"]
    podInjectPolicy: BeforeAppContainer
    shareVolumePolicy: {type: disabled}
"#,
            round_trips: false,
        },
        Case {
            name: "namespace wins over namespaceSelector",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: s}
spec:
  namespace: ns-1
  namespaceSelector: {matchLabels: {team: a}}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: SidecarSet
metadata: {name: s}
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ns-1}}
"#,
            round_trips: false,
        },
        Case {
            name: "namespaceSelector and custom-version label",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: s
  labels: {apps.kruise.io/sidecarset-custom-version: v2, team: a}
spec:
  namespaceSelector: {matchExpressions: [{key: env, operator: In, values: [prod]}]}
  injectionStrategy: {revision: {customVersion: v1, policy: Always}}
  updateStrategy: {type: RollingUpdate, partition: 50%, maxUnavailable: 2, scatterStrategy: [{key: zone, value: a}]}
status: {matchedPods: 3, updatedPods: 1, readyPods: 3, latestRevision: s-abc}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: SidecarSet
metadata:
  name: s
  labels: {team: a}
spec:
  customVersion: v2
  namespaceSelector: {matchExpressions: [{key: env, operator: In, values: [prod]}]}
  injectionStrategy: {revision: {customVersion: v1, policy: Always}}
  updateStrategy: {type: RollingUpdate, partition: 50%, maxUnavailable: 2, scatterStrategy: [{key: zone, value: a}]}
status: {matchedPods: 3, updatedPods: 1, readyPods: 3, latestRevision: s-abc}
"#,
            round_trips: true,
        },
        Case {
            name: "v1beta1 customVersion becomes the label (only label)",
            from: r#"
apiVersion: apps.kruise.io/v1beta1
kind: SidecarSet
metadata: {name: s}
spec: {customVersion: v3, selector: {matchLabels: {app: x}}}
"#,
            to_version: "v1alpha1",
            expected: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: s
  labels: {apps.kruise.io/sidecarset-custom-version: v3}
spec: {selector: {matchLabels: {app: x}}}
"#,
            round_trips: true,
        },
    ]);
}

#[test]
fn cloneset_cases() {
    run(&[
        Case {
            name: "InPlaceIfPossible with partition, maxUnavailable, maxSurge",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: sample, labels: {app: sample}}
spec:
  replicas: 5
  selector: {matchLabels: {app: sample}}
  template:
    metadata: {labels: {app: sample}}
    spec: {containers: [{name: nginx, image: nginx:alpine}]}
  updateStrategy:
    type: InPlaceIfPossible
    partition: 3
    maxUnavailable: 20%
    maxSurge: 1
    paused: true
    inPlaceUpdateStrategy: {gracePeriodSeconds: 10}
    priorityStrategy: {weightPriority: [{weight: 50, matchSelector: {matchLabels: {k: v}}}]}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata: {name: sample, labels: {app: sample}}
spec:
  replicas: 5
  selector: {matchLabels: {app: sample}}
  template:
    metadata: {labels: {app: sample}}
    spec: {containers: [{name: nginx, image: nginx:alpine}]}
  scaleStrategy: {enablePVCReuse: true}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      partition: 3
      maxUnavailable: 20%
      maxSurge: 1
      podUpdatePolicy: InPlaceIfPossible
      paused: true
      inPlaceUpdateStrategy: {gracePeriodSeconds: 10}
      priorityStrategy: {weightPriority: [{weight: 50, matchSelector: {matchLabels: {k: v}}}]}
"#,
            round_trips: true,
        },
        Case {
            name: "OnDelete drops the rolling fields; disablePVCReuse inverts",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: c}
spec:
  scaleStrategy: {disablePVCReuse: true, podsToDelete: [c-abcde]}
  updateStrategy: {type: OnDelete, partition: 2}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata: {name: c}
spec:
  scaleStrategy: {podsToDelete: [c-abcde]}
  updateStrategy: {type: OnDelete}
"#,
            round_trips: false,
        },
        Case {
            name: "unset type means ReCreate; exclude label and pre-download annotations",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: c
  labels: {apps.kruise.io/cloneset-scaling-exclude-preparing-delete: "true"}
  annotations:
    apps.kruise.io/image-predownload-parallelism: "5"
    apps.kruise.io/image-predownload-timeout-seconds: "600"
    apps.kruise.io/image-predownload-min-updated-ready-pods: "x"
spec:
  updateStrategy: {maxUnavailable: 1}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata:
  name: c
  labels: {apps.kruise.io/cloneset-scaling-exclude-preparing-delete: "true"}
  annotations:
    apps.kruise.io/image-predownload-parallelism: "5"
    apps.kruise.io/image-predownload-timeout-seconds: "600"
    apps.kruise.io/image-predownload-min-updated-ready-pods: "x"
spec:
  scaleStrategy: {enablePVCReuse: true, excludePreparingDelete: true}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 1
      podUpdatePolicy: ReCreate
      inPlaceUpdateStrategy: {imagePreDownloadParallelism: 5, imagePreDownloadTimeoutSeconds: 600}
"#,
            round_trips: false,
        },
        Case {
            name: "pre-download annotations without an inPlaceUpdateStrategy round-trip (no `{}` appears)",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: c
  annotations: {apps.kruise.io/image-predownload-parallelism: "5", apps.kruise.io/image-predownload-min-updated-ready-pods: "0"}
spec:
  updateStrategy: {type: InPlaceIfPossible, partition: 1}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata:
  name: c
  annotations: {apps.kruise.io/image-predownload-parallelism: "5", apps.kruise.io/image-predownload-min-updated-ready-pods: "0"}
spec:
  scaleStrategy: {enablePVCReuse: true}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      partition: 1
      podUpdatePolicy: InPlaceIfPossible
      inPlaceUpdateStrategy: {imagePreDownloadParallelism: 5, imagePreDownloadMinUpdatedReadyPods: 0}
"#,
            round_trips: true,
        },
        Case {
            name: "an inPlaceUpdateStrategy with nothing set is dropped going to v1beta1",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: c}
spec:
  updateStrategy: {type: InPlaceOnly, inPlaceUpdateStrategy: {gracePeriodSeconds: 0}}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata: {name: c}
spec:
  scaleStrategy: {enablePVCReuse: true}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {podUpdatePolicy: InPlaceOnly}}
"#,
            round_trips: false,
        },
        Case {
            name: "v1beta1 to v1alpha1: policy folds into type, pre-download into annotations",
            from: r#"
apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata: {name: c, annotations: {a: b}}
spec:
  scaleStrategy: {enablePVCReuse: true, maxUnavailable: 10%}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      partition: 50%
      maxSurge: 0
      podUpdatePolicy: InPlaceOnly
      scatterStrategy: [{key: zone, value: z1}]
      inPlaceUpdateStrategy: {gracePeriodSeconds: 5, imagePreDownloadParallelism: 20%, imagePreDownloadMinUpdatedReadyPods: 2}
status: {replicas: 3, readyReplicas: 3, availableReplicas: 3, updatedReplicas: 1, updatedReadyReplicas: 1, labelSelector: app=c}
"#,
            to_version: "v1alpha1",
            expected: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: c
  annotations:
    a: b
    apps.kruise.io/image-predownload-parallelism: 20%
    apps.kruise.io/image-predownload-min-updated-ready-pods: "2"
spec:
  scaleStrategy: {maxUnavailable: 10%}
  updateStrategy:
    type: InPlaceOnly
    partition: 50%
    maxSurge: 0
    scatterStrategy: [{key: zone, value: z1}]
    inPlaceUpdateStrategy: {gracePeriodSeconds: 5}
status: {replicas: 3, readyReplicas: 3, availableReplicas: 3, updatedReplicas: 1, updatedReadyReplicas: 1, labelSelector: app=c}
"#,
            round_trips: false, // the annotations stay in v1beta1 metadata, as in OpenKruise
        },
        Case {
            name: "v1beta1 without PVC reuse and with an empty inPlaceUpdateStrategy",
            from: r#"
apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata: {name: c}
spec:
  scaleStrategy: {excludePreparingDelete: true}
  updateStrategy: {type: OnDelete, rollingUpdate: {partition: 1, inPlaceUpdateStrategy: {}}}
"#,
            to_version: "v1alpha1",
            expected: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: c}
spec:
  scaleStrategy: {disablePVCReuse: true}
  updateStrategy: {type: OnDelete, partition: 1}
"#,
            round_trips: false,
        },
    ]);
}

#[test]
fn cloneset_round_trips_where_openkruise_is_lossless() {
    let alpha = yaml(
        r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: c, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: c}}
  template: {metadata: {labels: {app: c}}, spec: {containers: [{name: main, image: nginx}]}}
  scaleStrategy: {disablePVCReuse: true}
  updateStrategy: {type: InPlaceIfPossible, partition: 1, maxUnavailable: 50%, maxSurge: 1}
  lifecycle: {preDelete: {finalizersHandler: [example.com/hook]}}
"#,
    );
    let beta = convert(&alpha, "apps.kruise.io/v1beta1");
    assert_eq!(convert(&beta, "apps.kruise.io/v1alpha1"), alpha);
    let again = convert(
        &convert(&beta, "apps.kruise.io/v1alpha1"),
        "apps.kruise.io/v1beta1",
    );
    assert_eq!(again, beta);
}

#[test]
fn workloadspread_cases() {
    run(&[
        Case {
            name: "subset selector fields are renamed; patch stays raw",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: WorkloadSpread
metadata: {name: ws, namespace: default}
spec:
  targetRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: workload-xxx}
  subsets:
  - name: subset-a
    requiredNodeSelectorTerm:
      matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}]
    preferredNodeSelectorTerms:
    - weight: 1
      preference: {matchExpressions: [{key: another-node-label-key, operator: In, values: [another-node-label-value]}]}
    maxReplicas: 3
    tolerations: [{key: node-taint, operator: Equal, value: node-taint-value, effect: NoSchedule}]
    patch:
      metadata: {labels: {xxx-specific-label: xxx}}
      spec: {containers: [{name: main, resources: {limits: {cpu: "2"}}}], unknownField: {kept: true}}
  - name: subset-b
    requiredNodeSelectorTerm: {matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-b]}]}
    maxReplicas: 50%
  scheduleStrategy: {type: Adaptive, adaptive: {rescheduleCriticalSeconds: 30, disableSimulationSchedule: false}}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: WorkloadSpread
metadata: {name: ws, namespace: default}
spec:
  targetRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: workload-xxx}
  subsets:
  - name: subset-a
    requiredNodeSelector:
      matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}]
    preferredNodeSelector:
    - weight: 1
      preference: {matchExpressions: [{key: another-node-label-key, operator: In, values: [another-node-label-value]}]}
    maxReplicas: 3
    tolerations: [{key: node-taint, operator: Equal, value: node-taint-value, effect: NoSchedule}]
    patch:
      metadata: {labels: {xxx-specific-label: xxx}}
      spec: {containers: [{name: main, resources: {limits: {cpu: "2"}}}], unknownField: {kept: true}}
  - name: subset-b
    requiredNodeSelector: {matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-b]}]}
    maxReplicas: 50%
  scheduleStrategy: {type: Adaptive, adaptive: {rescheduleCriticalSeconds: 30, disableSimulationSchedule: false}}
"#,
            round_trips: true,
        },
        Case {
            name: "conditions gain a reason and a message",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: WorkloadSpread
metadata: {name: ws}
spec: {targetRef: {apiVersion: apps/v1, kind: Deployment, name: d}, subsets: [{name: a}]}
status:
  observedGeneration: 2
  subsetStatuses:
  - name: a
    replicas: 1
    missingReplicas: -1
    conditions: [{type: Schedulable, status: "False", lastTransitionTime: "2024-01-01T00:00:00Z"}]
    creatingPods: {p1: "2024-01-01T00:00:00Z"}
  versionedSubsetStatuses:
    abc:
    - name: a
      replicas: 1
      missingReplicas: 0
      conditions: [{type: Schedulable, status: "True", reason: Fine, message: ok}]
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: WorkloadSpread
metadata: {name: ws}
spec: {targetRef: {apiVersion: apps/v1, kind: Deployment, name: d}, subsets: [{name: a}]}
status:
  observedGeneration: 2
  subsetStatuses:
  - name: a
    replicas: 1
    missingReplicas: -1
    conditions: [{type: Schedulable, status: "False", lastTransitionTime: "2024-01-01T00:00:00Z", reason: Unknown, message: ""}]
    creatingPods: {p1: "2024-01-01T00:00:00Z"}
  versionedSubsetStatuses:
    abc:
    - name: a
      replicas: 1
      missingReplicas: 0
      conditions: [{type: Schedulable, status: "True", reason: Fine, message: ok}]
"#,
            round_trips: false,
        },
        Case {
            name: "v1beta1 conditions lose observedGeneration and empty message",
            from: r#"
apiVersion: apps.kruise.io/v1beta1
kind: WorkloadSpread
metadata: {name: ws}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: d}
  subsets: [{name: a, requiredNodeSelector: {matchFields: [{key: metadata.name, operator: In, values: [n1]}]}}]
status:
  subsetStatuses:
  - {name: a, replicas: 0, missingReplicas: 2, conditions: [{type: Schedulable, status: "True", reason: R, message: "", observedGeneration: 4, lastTransitionTime: "2024-01-01T00:00:00Z"}]}
"#,
            to_version: "v1alpha1",
            expected: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: WorkloadSpread
metadata: {name: ws}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: d}
  subsets: [{name: a, requiredNodeSelectorTerm: {matchFields: [{key: metadata.name, operator: In, values: [n1]}]}}]
status:
  subsetStatuses:
  - {name: a, replicas: 0, missingReplicas: 2, conditions: [{type: Schedulable, status: "True", reason: R, lastTransitionTime: "2024-01-01T00:00:00Z"}]}
"#,
            round_trips: false,
        },
    ]);
}

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

#[test]
fn same_version_is_returned_unchanged() {
    let obj = json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet", "spec": {"weird": [1, 2]}, "x": null});
    assert_eq!(convert(&obj, "apps.kruise.io/v1beta1"), obj);
    assert_eq!(convert(&obj, "v1beta1"), obj);
}

#[test]
fn errors_for_unknown_kinds_and_versions() {
    let cs = |api: &str, kind: &str| json!({"apiVersion": api, "kind": kind, "metadata": {"name": "x"}});
    assert_eq!(
        convert_object(
            &cs("apps.kruise.io/v1alpha1", "DaemonSet"),
            "apps.kruise.io/v1beta1"
        ),
        Err(ConversionError::UnknownKind {
            group: "apps.kruise.io".into(),
            kind: "DaemonSet".into()
        })
    );
    assert_eq!(
        convert_object(&cs("apps/v1", "CloneSet"), "apps.kruise.io/v1beta1"),
        Err(ConversionError::UnknownKind {
            group: "apps".into(),
            kind: "CloneSet".into()
        })
    );
    assert_eq!(
        convert_object(&cs("apps.kruise.io/v1", "CloneSet"), "apps.kruise.io/v1beta1"),
        Err(ConversionError::UnsupportedVersion {
            kind: "CloneSet".into(),
            api_version: "apps.kruise.io/v1".into()
        })
    );
    assert_eq!(
        convert_object(&cs("apps.kruise.io/v1beta1", "CloneSet"), "apps.kruise.io/v2"),
        Err(ConversionError::UnsupportedVersion {
            kind: "CloneSet".into(),
            api_version: "apps.kruise.io/v2".into()
        })
    );
    assert_eq!(
        convert_object(
            &cs("apps.kruise.io/v1beta1", "CloneSet"),
            "policy.kruise.io/v1alpha1"
        ),
        Err(ConversionError::UnsupportedVersion {
            kind: "CloneSet".into(),
            api_version: "policy.kruise.io/v1alpha1".into()
        })
    );
    assert!(matches!(
        convert_object(&json!([1]), "v1beta1"),
        Err(ConversionError::NotAnObject(_))
    ));
    assert!(matches!(
        convert_object(&json!({"kind": "CloneSet"}), "v1beta1"),
        Err(ConversionError::NotAnObject(_))
    ));
    let bad_shape =
        json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "spec": {"updateStrategy": 3}});
    match convert_object(&bad_shape, "apps.kruise.io/v1beta1") {
        Err(ConversionError::Decode { path, .. }) => assert_eq!(path.as_deref(), Some("spec.updateStrategy")),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn typed_helpers_accept_either_version_and_report_paths() {
    let alpha = yaml(
        r#"
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: s}
spec:
  namespace: demo
  selector: {matchLabels: {app: x}}
  containers:
  - name: sidecar
    image: busybox
    transferEnv: [{sourceContainerName: main, envName: TZ}]
"#,
    );
    let beta = kruise_api::sidecarset_to_v1beta1(&alpha).expect("typed v1beta1");
    let sel = beta
        .spec
        .namespace_selector
        .as_ref()
        .and_then(|s| s.match_labels.as_ref())
        .expect("selector");
    assert_eq!(
        sel.get("kubernetes.io/metadata.name").map(String::as_str),
        Some("demo")
    );
    let containers = beta.spec.containers.as_ref().expect("containers");
    assert_eq!(containers[0].name, "sidecar");
    assert_eq!(containers[0].image.as_deref(), Some("busybox"));
    let same = kruise_api::sidecarset_to_v1beta1(&serde_json::to_value(&beta).unwrap()).unwrap();
    assert_eq!(same, beta);
    let back = kruise_api::sidecarset_to_v1alpha1(&serde_json::to_value(&beta).unwrap()).unwrap();
    assert_eq!(back.spec.namespace, None);

    let bad = json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "metadata": {"name": "c"},
        "spec": {"replicas": "three", "selector": {}, "template": {}}
    });
    match kruise_api::cloneset_to_v1beta1(&bad) {
        Err(ConversionError::Decode { kind, path, .. }) => {
            assert_eq!(kind, "CloneSet");
            assert_eq!(path.as_deref(), Some("spec.replicas"));
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(matches!(
        kruise_api::workloadspread_to_v1beta1(&alpha),
        Err(ConversionError::WrongKind { .. })
    ));
}
