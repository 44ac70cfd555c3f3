//! ContainerRecreateRequest conversion cases: the v1beta1 snapshot and drain condition ↔ v1alpha1
//! annotations; unparsable annotations are dropped on the way to v1beta1.

use super::*;

#[test]
fn containerrecreaterequest_cases() {
    run(&[
        Case {
            name: "v1alpha1 annotations become the snapshot and the PreRecreateGrace condition",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: ContainerRecreateRequest
metadata:
  name: r
  namespace: default
  annotations:
    crr.apps.kruise.io/sync-container-statuses: '[{"name":"app","ready":true,"restartCount":1,"containerID":"containerd://b"}]'
    crr.apps.kruise.io/unready-acquired: "2026-01-02T03:04:05Z"
spec:
  podName: web-0
  containers: [{name: app, statusContext: {containerID: "containerd://a", restartCount: 0}}]
  strategy: {failurePolicy: Fail, unreadyGracePeriodSeconds: 3}
status: {phase: Recreating}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: ContainerRecreateRequest
metadata:
  name: r
  namespace: default
  annotations:
    crr.apps.kruise.io/sync-container-statuses: '[{"name":"app","ready":true,"restartCount":1,"containerID":"containerd://b"}]'
    crr.apps.kruise.io/unready-acquired: "2026-01-02T03:04:05Z"
spec:
  podName: web-0
  containers: [{name: app, statusContext: {containerID: "containerd://a", restartCount: 0}}]
  strategy: {failurePolicy: Fail, unreadyGracePeriodSeconds: 3}
status:
  phase: Recreating
  containerStatusSnapshot: [{name: app, ready: true, restartCount: 1, containerID: "containerd://b"}]
  conditions:
    - type: PreRecreateGrace
      status: "True"
      lastTransitionTime: "2026-01-02T03:04:05Z"
      reason: PreRecreateGrace
      message: Pod has been forced to not-ready for unreadyGracePeriodSeconds drain
"#,
            round_trips: false,
        },
        Case {
            name: "unparsable annotations are dropped",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: ContainerRecreateRequest
metadata:
  name: r
  annotations: {crr.apps.kruise.io/sync-container-statuses: "not json", crr.apps.kruise.io/unready-acquired: yesterday}
spec: {podName: p, containers: [{name: app}]}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: ContainerRecreateRequest
metadata:
  name: r
  annotations: {crr.apps.kruise.io/sync-container-statuses: "not json", crr.apps.kruise.io/unready-acquired: yesterday}
spec: {podName: p, containers: [{name: app}]}
"#,
            round_trips: true,
        },
        Case {
            name: "v1beta1 snapshot and condition become annotations",
            from: r#"
apiVersion: apps.kruise.io/v1beta1
kind: ContainerRecreateRequest
metadata: {name: r}
spec: {podName: p, containers: [{name: app}]}
status:
  phase: Completed
  containerRecreateStates: [{name: app, phase: Succeeded, isKilled: true}]
  containerStatusSnapshot: [{name: app, ready: false, restartCount: 2}]
  conditions: [{type: PreRecreateGrace, status: "True", lastTransitionTime: "2026-01-02T03:04:05Z", reason: PreRecreateGrace, message: m}]
"#,
            to_version: "v1alpha1",
            expected: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: ContainerRecreateRequest
metadata:
  name: r
  annotations:
    crr.apps.kruise.io/sync-container-statuses: '[{"name":"app","ready":false,"restartCount":2}]'
    crr.apps.kruise.io/unready-acquired: "2026-01-02T03:04:05Z"
spec: {podName: p, containers: [{name: app}]}
status:
  phase: Completed
  containerRecreateStates: [{name: app, phase: Succeeded, isKilled: true}]
"#,
            round_trips: false,
        },
    ]);
}
