//! NodeImage / ImagePullJob conversion cases: only a NodeImage's secret `mode` is lost going down.

use super::*;

#[test]
fn nodeimage_and_imagepulljob_cases() {
    run(&[
        Case {
            name: "v1beta1 NodeImage loses the secret mode on the way to v1alpha1",
            from: r#"
apiVersion: apps.kruise.io/v1beta1
kind: NodeImage
metadata: {name: node-a}
spec:
  images:
    demo:
      pullSecrets: [{namespace: kruise-daemon-config, name: reg-abc123, mode: batch}]
      tags: [{tag: v2, version: 1}]
status: {desired: 1, succeeded: 0, failed: 0, pulling: 1, waiting: 0}
"#,
            to_version: "v1alpha1",
            expected: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: NodeImage
metadata: {name: node-a}
spec:
  images:
    demo:
      pullSecrets: [{namespace: kruise-daemon-config, name: reg-abc123}]
      tags: [{tag: v2, version: 1}]
status: {desired: 1, succeeded: 0, failed: 0, pulling: 1, waiting: 0}
"#,
            round_trips: false,
        },
        Case {
            name: "v1alpha1 NodeImage converts up unchanged",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: NodeImage
metadata: {name: node-a}
spec:
  images:
    demo: {tags: [{tag: v2}]}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: NodeImage
metadata: {name: node-a}
spec:
  images:
    demo: {tags: [{tag: v2}]}
"#,
            round_trips: true,
        },
        Case {
            name: "ImagePullJob has the same shape in both versions",
            from: r#"
apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata: {name: pull, namespace: default}
spec:
  image: 127.0.0.1:5000/demo:v2
  parallelism: 2
  selector: {names: [node-a, node-b]}
  completionPolicy: {type: Always, activeDeadlineSeconds: 1200}
"#,
            to_version: "v1beta1",
            expected: r#"
apiVersion: apps.kruise.io/v1beta1
kind: ImagePullJob
metadata: {name: pull, namespace: default}
spec:
  image: 127.0.0.1:5000/demo:v2
  parallelism: 2
  selector: {names: [node-a, node-b]}
  completionPolicy: {type: Always, activeDeadlineSeconds: 1200}
"#,
            round_trips: true,
        },
    ]);
}

#[test]
fn a_pull_job_decodes_with_its_inline_template() {
    let job = kruise_api::imagepulljob_to_v1beta1(&yaml(
        r#"
apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata: {name: pull, namespace: default}
spec:
  image: demo:v2
  selector: {matchLabels: {pool: a}}
  completionPolicy: {type: Never}
"#,
    ))
    .expect("decodes");
    assert_eq!(job.spec.image, "demo:v2");
    let selector = job.spec.template.selector.expect("selector");
    assert_eq!(
        selector
            .label_selector
            .match_labels
            .unwrap_or_default()
            .get("pool")
            .map(String::as_str),
        Some("a")
    );
}
