//! One BroadcastJob pass over 5,000 nodes (target ≤ 2 ms): the template selects `pool=batch` nodes
//! and tolerates `dedicated`; 4,500 nodes are in the pool (every tenth tainted `dedicated`, every
//! 25th cordoned and so not eligible), 2,500 ran their pod, 1,000 run one now, parallelism 1,500 so
//! 500 pods are created in this pass. Runs on mimalloc, the allocator of the `kruise` binary.
//!
//! For instruction counts, `BROADCASTJOB_PLAN_ITERS=<n>` skips criterion: the binary runs `n` plans
//! after the setup and exits.

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1alpha1::BroadcastJob;
use kruise_reconcile::broadcastjob::{Input, NodeExpectations, plan};
use serde_json::json;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn node(i: usize) -> Node {
    let pool = if i % 10 == 9 { "web" } else { "batch" };
    let mut spec = json!({});
    if i % 10 == 3 {
        spec["taints"] = json!([{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]);
    }
    if i % 25 == 7 {
        spec["unschedulable"] = json!(true);
    }
    serde_json::from_value(json!({"metadata": {"name": format!("node-{i:05}"),
        "labels": {"pool": pool, "kubernetes.io/hostname": format!("node-{i:05}")}}, "spec": spec}))
    .unwrap()
}

fn pod(i: usize, phase: &str) -> PodRecord {
    serde_json::from_value(json!({
        "metadata": {"name": format!("job-{i:05}"), "namespace": "ops", "uid": format!("uid-{i}"),
            "labels": {"broadcastjob-name": "job", "broadcastjob-controller-uid": "uid-job"}},
        "spec": {"nodeName": format!("node-{i:05}"), "restartPolicy": "Never",
            "containers": [{"name": "work", "image": "busybox"}]},
        "status": {"phase": phase, "containerStatuses": [
            {"name": "work", "image": "busybox", "imageID": "", "ready": phase == "Running", "restartCount": 0}]},
    }))
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let job: BroadcastJob = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "BroadcastJob",
        "metadata": {"name": "job", "namespace": "ops", "uid": "uid-job"},
        "spec": {"parallelism": 1500, "completionPolicy": {"type": "Always"},
            "failurePolicy": {"type": "Continue"},
            "template": {"metadata": {"labels": {"app": "job"}}, "spec": {"restartPolicy": "Never",
                "nodeSelector": {"pool": "batch"},
                "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
                "containers": [{"name": "work", "image": "busybox", "command": ["true"]}]}}},
        "status": {"phase": "running", "startTime": "2026-01-01T00:00:00Z"},
    }))
    .unwrap();
    let nodes: Vec<Node> = (0..5000).map(node).collect();
    let in_pool = |i: &usize| i % 10 != 9 && i % 25 != 7;
    let pods: Vec<PodRecord> = (0..5000)
        .filter(in_pool)
        .take(3500)
        .enumerate()
        .map(|(k, i)| pod(i, if k < 2500 { "Succeeded" } else { "Running" }))
        .collect();
    let now: Timestamp = "2026-01-01T00:10:00Z".parse().unwrap();
    let input = Input {
        job: &job,
        pods: &pods,
        nodes: &nodes,
        now,
    };
    let expectations = NodeExpectations::default();
    let first = plan(&input, &expectations);
    let creates = first
        .actions
        .iter()
        .filter(|a| matches!(a, kruise_reconcile::Action::CreatePodOnNode { .. }))
        .count();
    assert_eq!(creates, 500, "parallelism 1,500 with 1,000 active");
    if let Some(n) = std::env::var("BROADCASTJOB_PLAN_ITERS")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        for _ in 0..n {
            std::hint::black_box(plan(std::hint::black_box(&input), &expectations));
        }
        return;
    }
    c.bench_function("broadcastjob plan/5000 nodes", |b| {
        b.iter(|| plan(std::hint::black_box(&input), &expectations))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
