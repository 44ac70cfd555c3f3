//! ResourceDistribution conversion cases: two renamed keys, the embedded resource untouched.

use super::*;

#[test]
fn resourcedistribution_cases() {
    run(&[Case {
        name: "namespaceLabelSelector and failedNamespace are renamed",
        from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: ResourceDistribution
metadata: {name: settings}
spec:
  resource:
    apiVersion: v1
    kind: Secret
    metadata: {name: token, namespace: ignored}
    stringData: {namespaceSelector: kept}
  targets:
    allNamespaces: true
    excludedNamespaces: {list: [{name: a}]}
    namespaceLabelSelector: {matchLabels: {env: prod}}
status:
  desired: 2
  conditions:
    - {type: ConflictOccurred, status: "True", reason: conflict, failedNamespace: [b]}
    - {type: NamespaceNotExists, status: "False", reason: Succeeded}
"#,
        to_version: "v1beta1",
        expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: ResourceDistribution
metadata: {name: settings}
spec:
  resource:
    apiVersion: v1
    kind: Secret
    metadata: {name: token, namespace: ignored}
    stringData: {namespaceSelector: kept}
  targets:
    allNamespaces: true
    excludedNamespaces: {list: [{name: a}]}
    namespaceSelector: {matchLabels: {env: prod}}
status:
  desired: 2
  conditions:
    - {type: ConflictOccurred, status: "True", reason: conflict, failedNamespaces: [b]}
    - {type: NamespaceNotExists, status: "False", reason: Succeeded}
"#,
        round_trips: true,
    }]);
}

#[test]
fn a_v1alpha1_distribution_reads_as_v1beta1() {
    let alpha = yaml(
        "apiVersion: apps.kruise.io/v1alpha1\nkind: ResourceDistribution\nmetadata: {name: d}\n\
         spec: {resource: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}, \
         targets: {namespaceLabelSelector: {matchLabels: {env: prod}}}}\n",
    );
    let beta = kruise_api::resourcedistribution_to_v1beta1(&alpha).unwrap();
    assert_eq!(
        beta.spec.targets.namespace_selector.match_labels,
        Some([("env".to_string(), "prod".to_string())].into())
    );
    assert_eq!(beta.spec.resource["kind"], "ConfigMap");
}
