//! The SidecarSet controller's costs, 10,000 matched pods in the middle of a sidecar image rollout
//! (2,000 pods updated, 8,000 to go, maxUnavailable 1 %, so 100 pods get their patch in a pass):
//! - `sidecarset_plan_10000_pods`: one planner pass with the pods' facts ready, target ≤ 2 ms;
//! - `sidecarset_facts_one_pod`: deriving one pod's facts, what a pod event costs;
//! - `sidecarset_facts_cache_10000_pods`: the loop's cache lookup of 10,000 unchanged pods.
//!
//! Runs on mimalloc, the allocator of the `kruise` binary that hosts the controller.

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::SidecarSet;
use kruise_reconcile::sidecarset::derived::Deriver;
use kruise_reconcile::sidecarset::{FactsCache, InFlight, Input, plan, seen};
use serde_json::json;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const PODS: usize = 10_000;
const UPDATED: usize = 2_000;

fn records(hash: &str) -> String {
    json!({"log-agent": {"updateTimestamp": "2026-01-01T00:00:00Z", "hash": hash, "sidecarSetName": "log-agent",
        "sidecarList": ["log-agent"], "controllerRevision": "log-agent-1"}})
    .to_string()
}

fn pod(i: usize) -> PodRecord {
    let (hash, sidecar_image, sidecar_id) = if i < UPDATED {
        ("h2", "agent:v2", "id-agent-v2")
    } else {
        ("h1", "agent:v1", "id-agent-v1")
    };
    serde_json::from_value(json!({
        "metadata": {"name": format!("web-{i}"), "namespace": format!("ns-{}", i % 20), "uid": format!("uid-{i}"),
            "resourceVersion": format!("{}", 1000 + i), "labels": {"app": "web", "zone": format!("z{}", i % 3)},
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "annotations": {"kruise.io/sidecarset-injected-list": "log-agent",
                "kruise.io/sidecarset-hash": records(hash),
                "kruise.io/sidecarset-hash-without-image": records("w1")}},
        "spec": {"nodeName": format!("node-{}", i % 50), "containers": [
            {"name": "app", "image": "web:v1"}, {"name": "log-agent", "image": sidecar_image}]},
        "status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "True",
                "lastTransitionTime": format!("2026-01-01T{:02}:{:02}:00Z", (i / 60) % 24, i % 60)}],
            "containerStatuses": [
                {"name": "app", "image": "web:v1", "imageID": "id-web-v1", "ready": true, "restartCount": 0},
                {"name": "log-agent", "image": sidecar_image, "imageID": sidecar_id, "ready": true, "restartCount": 1}]},
    }))
    .expect("a pod")
}

fn sidecar_set() -> SidecarSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": "log-agent", "generation": 3, "resourceVersion": "77",
            "annotations": {"kruise.io/sidecarset-hash": "h2", "kruise.io/sidecarset-hash-without-image": "w1"}},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
            "containers": [{"name": "log-agent", "image": "agent:v2"}],
            "updateStrategy": {"type": "RollingUpdate", "maxUnavailable": "1%"}},
    }))
    .expect("a SidecarSet")
}

fn bench(c: &mut Criterion) {
    let pods: Vec<PodRecord> = (0..PODS).map(pod).collect();
    let refs: Vec<&PodRecord> = pods.iter().collect();
    let set = sidecar_set();
    let in_flight = InFlight::default();
    let now: Timestamp = "2026-01-02T00:00:00Z".parse().expect("a time");
    let mut cache = FactsCache::default();
    let facts = cache.refresh(&set, &refs);
    let pods_seen = seen(&refs, &facts);
    let input = Input {
        sidecar_set: &set,
        pods: &pods_seen,
        latest_revision: Some("log-agent-2"),
        collision_count: 0,
        in_flight: &in_flight,
        now,
        budget: None,
    };
    let first = plan(&input).expect("a plan");
    assert_eq!(first.status.matched_pods, PODS as i32);
    assert_eq!(first.upgrades.len(), PODS / 100);
    c.bench_function("sidecarset_plan_10000_pods", |b| b.iter(|| plan(&input)));

    let deriver = Deriver::new(&set);
    let one = &pods[PODS - 1];
    assert!(deriver.pod(one).matched);
    c.bench_function("sidecarset_facts_one_pod", |b| b.iter(|| deriver.pod(one)));

    c.bench_function("sidecarset_facts_cache_10000_pods", |b| {
        b.iter(|| {
            let facts = cache.refresh(&set, &refs);
            assert_eq!(cache.derived(), 0);
            facts
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
