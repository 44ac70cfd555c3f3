//! UnitedDeployment conversion cases: v1alpha1's `subsetReplicas` / `updateStatus` against v1beta1's
//! `updatedRevision` / `subsetStatuses[]`.

use super::*;

#[test]
fn uniteddeployment_cases() {
    run(&[
        Case {
            name: "v1beta1 subset statuses give v1alpha1 subsetReplicas and updateStatus",
            from: r#"
apiVersion: apps.kruise.io/v1beta1
kind: UnitedDeployment
metadata: {name: ud}
spec:
  replicas: 3
  selector: {matchLabels: {app: x}}
  topology: {subsets: [{name: a, replicas: 1}, {name: b}]}
status:
  replicas: 3
  updatedReplicas: 3
  currentRevision: ud-1
  updatedRevision: ud-2
  subsetStatuses:
    - {name: a, replicas: 1, partition: 1}
    - {name: b, replicas: 2, readyReplicas: 2}
"#,
            to_version: "v1alpha1",
            expected: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: UnitedDeployment
metadata: {name: ud}
spec:
  replicas: 3
  selector: {matchLabels: {app: x}}
  topology: {subsets: [{name: a, replicas: 1}, {name: b}]}
status:
  replicas: 3
  updatedReplicas: 3
  currentRevision: ud-1
  subsetReplicas: {a: 1, b: 2}
  updateStatus:
    updatedRevision: ud-2
    currentPartitions: {a: 1, b: 0}
  subsetStatuses:
    - {name: a, replicas: 1, partition: 1}
    - {name: b, replicas: 2, readyReplicas: 2}
"#,
            round_trips: true,
        },
        Case {
            name: "a v1alpha1 status without subsetStatuses gets them",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: UnitedDeployment
metadata: {name: ud}
spec: {selector: {matchLabels: {app: x}}}
status:
  replicas: 4
  currentRevision: ud-1
  subsetReplicas: {b: 3, a: 1}
  updateStatus: {updatedRevision: ud-2, currentPartitions: {a: 1}}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: UnitedDeployment
metadata: {name: ud}
spec: {selector: {matchLabels: {app: x}}}
status:
  replicas: 4
  currentRevision: ud-1
  updatedRevision: ud-2
  subsetStatuses:
    - {name: a, replicas: 1, partition: 1}
    - {name: b, replicas: 3}
"#,
            round_trips: false,
        },
    ]);
}

#[test]
fn a_v1alpha1_uniteddeployment_reads_as_v1beta1() {
    let alpha = yaml(
        "apiVersion: apps.kruise.io/v1alpha1\nkind: UnitedDeployment\nmetadata: {name: d, namespace: prod}\n\
         spec: {replicas: 2, selector: {matchLabels: {app: x}}, template: {cloneSetTemplate: {spec: {}}}}\n\
         status: {subsetReplicas: {a: 2}, updateStatus: {updatedRevision: d-1}}\n",
    );
    let beta = kruise_api::uniteddeployment_to_v1beta1(&alpha).unwrap();
    assert_eq!(beta.spec.replicas, Some(2));
    assert!(beta.spec.template.clone_set_template.is_some());
    let status = beta.status.unwrap();
    assert_eq!(status.updated_revision, "d-1");
    assert_eq!(status.subset_statuses[0].name, "a");
    assert_eq!(status.subset_statuses[0].replicas, 2);
}
