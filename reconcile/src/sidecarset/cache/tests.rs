//! The facts cache: kept while nothing moved, derived again when the pod or the SidecarSet did.

use std::sync::Arc;

use kruise_api::PodRecord;
use serde_json::json;

use super::*;
use crate::sidecarset::tests::{pod, pod_json, records, set, with};

fn refs(pods: &[PodRecord]) -> Vec<&PodRecord> {
    pods.iter().collect()
}

#[test]
fn unchanged_pods_keep_their_facts_and_a_new_resource_version_derives_them_again() {
    let s = set(json!({}));
    let mut pods: Vec<PodRecord> = (0..3).map(pod).collect();
    let mut cache = FactsCache::default();
    let first = cache.refresh(&s, &refs(&pods));
    assert_eq!((cache.derived(), cache.len()), (3, 3));
    assert!(first.iter().all(|f| f.matched && !f.updated));

    let again = cache.refresh(&s, &refs(&pods));
    assert_eq!(cache.derived(), 0);
    assert!(first.iter().zip(&again).all(|(a, b)| Arc::ptr_eq(a, b)));

    // Pod 1 now records the latest hash, at a new resourceVersion.
    let changed = with(
        pod_json(1, 1),
        &["metadata", "annotations", "kruise.io/sidecarset-hash"],
        json!(records("h2")),
    );
    pods[1] = serde_json::from_value(with(changed, &["metadata", "resourceVersion"], json!("900"))).unwrap();
    let next = cache.refresh(&s, &refs(&pods));
    assert_eq!(cache.derived(), 1);
    assert!(Arc::ptr_eq(&next[0], &first[0]) && Arc::ptr_eq(&next[2], &first[2]));
    assert!(next[1].updated);
    assert_eq!(next[1].resource_version, "900");
}

#[test]
fn the_same_resource_version_keeps_the_facts_even_if_the_copy_differs() {
    // The cache trusts the resourceVersion: the API server gives every change a new one.
    let s = set(json!({}));
    let mut cache = FactsCache::default();
    cache.refresh(&s, &[&pod(0)]);
    let relabelled: PodRecord =
        serde_json::from_value(with(pod_json(0, 0), &["metadata", "labels"], json!({"app": "x"}))).unwrap();
    let facts = cache.refresh(&s, &[&relabelled]);
    assert_eq!(cache.derived(), 0);
    assert!(facts[0].matched);
}

#[test]
fn pods_gone_are_dropped() {
    let s = set(json!({}));
    let pods: Vec<PodRecord> = (0..4).map(pod).collect();
    let mut cache = FactsCache::default();
    cache.refresh(&s, &refs(&pods));
    assert_eq!(cache.len(), 4);
    let facts = cache.refresh(&s, &refs(&pods[2..]));
    assert_eq!((cache.derived(), cache.len()), (0, 2));
    assert_eq!(facts[0].uid, "u2");
    cache.refresh(&s, &[]);
    assert!(cache.is_empty());
}

#[test]
fn a_new_generation_or_hash_of_the_sidecar_set_derives_every_pod_again() {
    let mut s = set(json!({}));
    let pods: Vec<PodRecord> = (0..2).map(pod).collect();
    let mut cache = FactsCache::default();
    assert!(cache.refresh(&s, &refs(&pods)).iter().all(|f| f.matched));

    // A spec change: the selector no longer selects the pods.
    s.metadata.generation = Some(3);
    s.spec.selector = Some(serde_json::from_value(json!({"matchLabels": {"app": "other"}})).unwrap());
    let facts = cache.refresh(&s, &refs(&pods));
    assert_eq!(cache.derived(), 2);
    assert!(facts.iter().all(|f| !f.matched && !f.injectable));

    // The webhook stamps a new hash: the pods' `updated` verdicts move with it.
    s.spec.selector = Some(serde_json::from_value(json!({"matchLabels": {"app": "demo"}})).unwrap());
    s.metadata.generation = Some(4);
    cache.refresh(&s, &refs(&pods));
    s.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert("kruise.io/sidecarset-hash".into(), "h1".into());
    let facts = cache.refresh(&s, &refs(&pods));
    assert_eq!(cache.derived(), 2);
    assert!(facts.iter().all(|f| f.matched && f.updated));
}

#[test]
fn pods_without_uid_or_resource_version_are_derived_every_time_and_not_kept() {
    let s = set(json!({}));
    let bare: PodRecord = serde_json::from_value(with(
        pod_json(0, 0),
        &["metadata", "resourceVersion"],
        json!(null),
    ))
    .unwrap();
    let mut cache = FactsCache::default();
    cache.refresh(&s, &[&bare, &pod(1)]);
    let facts = cache.refresh(&s, &[&bare, &pod(1)]);
    assert_eq!((cache.derived(), cache.len()), (1, 1));
    assert!(facts[0].matched);
}
