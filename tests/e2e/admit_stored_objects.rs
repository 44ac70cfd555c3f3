//! `kruise admit --objects` accepts what Kubernetes stores (objects missing fields Go's decoder leaves
//! at their zero value) and reports every object it cannot decode at once.

use crate::common;

use std::{path::Path, process::Output};

/// `kruise admit` on `/validate-namespace` with the objects of `objects`.
fn admit(objects: &Path, stdin: &[u8]) -> Output {
    let objects = objects.to_str().expect("a UTF-8 temporary path");
    common::admit::admit(&["--webhook", "/validate-namespace", "--objects", objects], stdin)
}

#[test]
fn a_clone_set_with_an_old_status_and_no_template_is_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("old.yaml");
    std::fs::write(
        &file,
        "apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata: {name: web, namespace: shop}\n\
         spec: {replicas: 2, selector: {matchLabels: {app: web}}}\n\
         status: {replicas: 2, readyReplicas: 2, updatedReplicas: 2, updatedReadyReplicas: 2}\n\
         ---\napiVersion: policy.kruise.io/v1alpha1\nkind: PodUnavailableBudget\n\
         metadata: {name: web, namespace: shop}\nspec: {maxUnavailable: 1}\n\
         status: {unavailableAllowed: 1, desiredAvailable: 1, totalReplicas: 2}\n",
    )
    .unwrap();
    let out = admit(&file, &common::review("delete-namespace-default.json"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_object_that_cannot_be_decoded_is_reported_and_nothing_starts() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: fine}\n---\n\
         apiVersion: apps.kruise.io/v1beta1\nkind: CloneSet\nmetadata: {name: web, namespace: shop}\n\
         spec: {replicas: three}\n---\n\
         apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: shop}\nspec: {containers: nginx}\n",
    )
    .unwrap();
    let out = admit(&file, b"");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("2 object(s) cannot be decoded"), "{stderr}");
    assert!(
        stderr.contains("bad.yaml document 2: CloneSet web is not a valid CloneSet: at spec.replicas"),
        "{stderr}"
    );
    assert!(
        stderr.contains("bad.yaml document 3: Pod p is not a valid Pod: at spec.containers"),
        "{stderr}"
    );
}
