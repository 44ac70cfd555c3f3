//! WorkloadSpread conversion cases.

use super::*;

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
