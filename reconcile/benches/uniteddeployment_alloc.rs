//! UnitedDeployment replica allocation over 100 subsets, target ≤ 1 ms per allocation. Four cases, one
//! per allocator: specific (every other subset has a fixed share, one in four of them a percentage;
//! the rest of 1,000 replicas is spread over the others by their current size), min/max (every subset
//! has a min and a max, the last none), adaptive (the min/max spec with every tenth subset
//! unschedulable) and reservation (the same, those subsets holding reserved pods). Runs on mimalloc.
//!
//! For instruction counts, `UNITEDDEPLOYMENT_ALLOC_ITERS=<n>` skips criterion: the binary runs `n`
//! rounds of the four allocations and exits (benches/README.md).

use std::collections::BTreeMap;

use criterion::{Criterion, criterion_group, criterion_main};
use kruise_api::apps_v1beta1::UnitedDeploymentSpec;
use kruise_reconcile::uniteddeployment::{SubsetState, allocate};
use serde_json::{Value, json};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SUBSETS: usize = 100;

fn spec(subsets: Vec<Value>, strategy: Value) -> UnitedDeploymentSpec {
    serde_json::from_value(
        json!({"replicas": 1000, "selector": {"matchLabels": {"app": "x"}},
        "topology": {"subsets": subsets, "scheduleStrategy": strategy}}),
    )
    .unwrap()
}

fn specific() -> UnitedDeploymentSpec {
    let subsets = (0..SUBSETS)
        .map(|i| match i % 4 {
            0 => json!({"name": format!("subset-{i:03}"), "replicas": 6}),
            2 => json!({"name": format!("subset-{i:03}"), "replicas": "1%"}),
            _ => json!({"name": format!("subset-{i:03}")}),
        })
        .collect();
    spec(subsets, json!({}))
}

fn min_max(strategy: Value) -> UnitedDeploymentSpec {
    let subsets = (0..SUBSETS)
        .map(|i| {
            if i == SUBSETS - 1 {
                json!({"name": format!("subset-{i:03}")})
            } else {
                json!({"name": format!("subset-{i:03}"), "minReplicas": 2, "maxReplicas": 12})
            }
        })
        .collect();
    spec(subsets, strategy)
}

fn existing(reserved: bool) -> BTreeMap<String, SubsetState> {
    (0..SUBSETS)
        .map(|i| {
            let unschedulable = i % 10 == 3;
            let state = SubsetState {
                spec_replicas: 10,
                ready_replicas: if unschedulable { 4 } else { 10 },
                unschedulable,
                marked_unschedulable: false,
                reserved_pods: if reserved && unschedulable { 6 } else { 0 },
            };
            (format!("subset-{i:03}"), state)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let cases = [
        ("specific", specific(), existing(false)),
        ("min-max", min_max(json!({})), existing(false)),
        ("adaptive", min_max(json!({"type": "Adaptive"})), existing(false)),
        (
            "reservation",
            min_max(json!({"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": true}})),
            existing(true),
        ),
    ];
    for (name, spec, existing) in &cases {
        let out = allocate(spec, existing).unwrap();
        assert_eq!(out.len(), SUBSETS, "{name}");
        assert!(out.values().map(|n| i64::from(*n)).sum::<i64>() >= 1000, "{name}");
    }
    if let Some(n) = std::env::var("UNITEDDEPLOYMENT_ALLOC_ITERS")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        for _ in 0..n {
            for (_, spec, existing) in &cases {
                std::hint::black_box(allocate(std::hint::black_box(spec), existing).unwrap());
            }
        }
        return;
    }
    for (name, spec, existing) in &cases {
        c.bench_function(&format!("uniteddeployment_alloc/100-subsets-{name}"), |b| {
            b.iter(|| allocate(std::hint::black_box(spec), existing).unwrap())
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
