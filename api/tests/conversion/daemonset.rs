//! Advanced DaemonSet conversion cases.

use super::*;

#[test]
fn daemonset_cases() {
    run(&[
        Case {
            name: "progressive annotation becomes partitionedScaling, daemonSetHash becomes updateRevision",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: DaemonSet
metadata:
  name: agent
  namespace: ns
  annotations: {daemonset.kruise.io/progressive-create-pod: "true"}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {rollingUpdateType: InPlaceIfPossible, partition: 2}}
status: {currentNumberScheduled: 1, numberMisscheduled: 0, desiredNumberScheduled: 3, numberReady: 1, updatedNumberScheduled: 1, daemonSetHash: abc}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: DaemonSet
metadata:
  name: agent
  namespace: ns
  annotations: {daemonset.kruise.io/progressive-create-pod: "true"}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {rollingUpdateType: InPlaceIfPossible, partition: 2}}
  scaleStrategy: {partitionedScaling: true}
status: {currentNumberScheduled: 1, numberMisscheduled: 0, desiredNumberScheduled: 3, numberReady: 1, updatedNumberScheduled: 1, updateRevision: abc}
"#,
            round_trips: true,
        },
        Case {
            name: "an annotation other than \"true\" leaves partitionedScaling off",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: DaemonSet
metadata: {name: agent, annotations: {daemonset.kruise.io/progressive-create-pod: "yes"}}
spec: {selector: {matchLabels: {app: agent}}}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: DaemonSet
metadata: {name: agent, annotations: {daemonset.kruise.io/progressive-create-pod: "yes"}}
spec: {selector: {matchLabels: {app: agent}}}
"#,
            round_trips: false, // going down the annotation mirrors the (false) field: removed
        },
        Case {
            name: "Surging becomes Standard with maxSurge 1 and maxUnavailable 0",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: DaemonSet
metadata: {name: agent}
spec: {updateStrategy: {type: RollingUpdate, rollingUpdate: {rollingUpdateType: Surging}}}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: DaemonSet
metadata: {name: agent}
spec: {updateStrategy: {type: RollingUpdate, rollingUpdate: {rollingUpdateType: Standard, maxSurge: 1, maxUnavailable: 0}}}
"#,
            round_trips: false,
        },
        Case {
            name: "Surging keeps an explicit maxSurge",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: DaemonSet
metadata: {name: agent}
spec: {updateStrategy: {rollingUpdate: {rollingUpdateType: Surging, maxSurge: 30%}}}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: DaemonSet
metadata: {name: agent}
spec: {updateStrategy: {rollingUpdate: {rollingUpdateType: Standard, maxSurge: 30%, maxUnavailable: 0}}}
"#,
            round_trips: false,
        },
        Case {
            name: "partitionedScaling becomes the annotation going down",
            from: r#"
apiVersion: apps.kruise.io/v1beta1
kind: DaemonSet
metadata: {name: agent}
spec: {scaleStrategy: {partitionedScaling: true}}
status: {currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0, updatedNumberScheduled: 0, updateRevision: h1}
"#,
            to_version: "v1alpha1",
            expected: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: DaemonSet
metadata: {name: agent, annotations: {daemonset.kruise.io/progressive-create-pod: "true"}}
spec: {}
status: {currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0, updatedNumberScheduled: 0, daemonSetHash: h1}
"#,
            round_trips: false, // the annotation stays on the v1beta1 object, as in OpenKruise
        },
    ]);
}
