//! SidecarSet conversion cases.

use super::*;

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
