//! One ResourceDistribution pass over 1,000 namespaces, target ≤ 1 ms. The distribution selects
//! `env=prod`, which 500 namespaces carry: in the steady pass 480 of their copies are in sync, 10 were
//! edited by hand (updates) and 10 deleted (creates); the other 500 namespaces hold nothing. The first
//! pass creates all 500 copies. Runs on mimalloc, the allocator of the `kruise` binary.
//!
//! For instruction counts, `RESOURCE_DISTRIBUTION_PLAN_ITERS=<n>` skips criterion: the binary runs `n`
//! steady passes after the setup and exits (as `statefulset_plan.rs`).

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Namespace;
use kruise_api::apps_v1beta1::ResourceDistribution;
use kruise_reconcile::resource_distribution::{Step, plan};
use serde_json::{Value, json};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn distribution() -> ResourceDistribution {
    serde_json::from_value(
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "ResourceDistribution",
        "metadata": {"name": "settings", "uid": "rd-uid", "generation": 1},
        "spec": {"resource": {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "settings", "labels": {"team": "platform"}},
                "data": {"log-level": "info", "endpoint": "https://example.com", "retries": "3"}},
            "targets": {"namespaceSelector": {"matchLabels": {"env": "prod"}},
                "excludedNamespaces": {"list": [{"name": "sandbox"}]}}}}),
    )
    .unwrap()
}

fn namespaces() -> Vec<Namespace> {
    (0..1000)
        .map(|i| {
            let env = if i % 2 == 0 { "prod" } else { "dev" };
            serde_json::from_value(json!({"metadata": {"name": format!("ns-{i:04}"),
                "labels": {"env": env, "kubernetes.io/metadata.name": format!("ns-{i:04}")}}}))
            .unwrap()
        })
        .collect()
}

/// The copies as the API server returns them after the first pass, 10 edited and 10 deleted.
fn steady_copies(rd: &ResourceDistribution, namespaces: &[Namespace]) -> Vec<Value> {
    let first = plan(rd, namespaces, &[]).unwrap();
    let mut copies: Vec<Value> = first
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Create { body, .. } => Some(body.clone()),
            _ => None,
        })
        .collect();
    for (i, copy) in copies.iter_mut().enumerate() {
        copy["metadata"]["uid"] = json!(format!("copy-{i}"));
        copy["metadata"]["resourceVersion"] = json!("100");
        copy["metadata"]["creationTimestamp"] = json!("2026-01-01T00:00:00Z");
        if i % 50 == 0 {
            copy["data"]["log-level"] = json!("debug");
        }
    }
    let mut i = 0;
    copies.retain(|_| {
        i += 1;
        i % 50 != 25
    });
    copies
}

fn bench(c: &mut Criterion) {
    let rd = distribution();
    let namespaces = namespaces();
    let copies = steady_copies(&rd, &namespaces);
    let steady = plan(&rd, &namespaces, &copies).unwrap();
    let counts = |p: &kruise_reconcile::resource_distribution::Plan| {
        let creates = p
            .steps
            .iter()
            .filter(|s| matches!(s, Step::Create { .. }))
            .count();
        (p.desired.len(), creates, p.steps.len() - creates)
    };
    assert_eq!(counts(&steady), (500, 10, 10));
    if let Some(n) = std::env::var("RESOURCE_DISTRIBUTION_PLAN_ITERS")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        for _ in 0..n {
            std::hint::black_box(plan(std::hint::black_box(&rd), &namespaces, &copies).unwrap());
        }
        return;
    }
    c.bench_function("resource_distribution/1000-namespaces-steady", |b| {
        b.iter(|| plan(std::hint::black_box(&rd), &namespaces, &copies).unwrap())
    });
    c.bench_function("resource_distribution/1000-namespaces-first", |b| {
        b.iter(|| plan(std::hint::black_box(&rd), &namespaces, &[]).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
