//! CloneSet conversion cases and round trips.

use super::*;

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
