//! What recording one pod costs, by how much is already recorded: a WorkloadSpread subset booking
//! (`/mutate-pod` of a Deployment's pod under a WorkloadSpread whose subset takes every pod) and a
//! PodUnavailableBudget spend (`/validate-pod` of a deletion), each decided and applied to the in-memory
//! view as standalone `kruise serve` does, with 0, 1,000 and 50,000 bookings outstanding (budgets: 0,
//! 1,000 and 1,999 — a budget refuses every request past 2,000 records). The same decision in dry run
//! (nothing recorded) is the reference. Run with `cargo bench -p kruise-webhooks --bench booking`;
//! numbers in benches/README.md.

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use kruise_api::{apps_v1beta1::WorkloadSpread, policy_v1beta1::PodUnavailableBudget};
use kruise_core::{MemoryView, Registered, documents};
use kruise_webhooks::{Settings, Webhook, review::Review};
use serde_json::{Map, Value, json};

// The same allocator as the `kruise` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The view is rebuilt (untimed) after this many recordings, so the outstanding count stays put.
const RESET_EVERY: u64 = 1_000;
const STAMP: &str = "2026-11-29T10:00:00Z";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The perf review's Deployment, ReplicaSet and namespace (benches/make_state.py), and `extra`.
fn view_with(extra: &[Value]) -> MemoryView {
    let dir = repo().join("target/bench-state");
    if !dir.join("workloads.json").exists() {
        let status = std::process::Command::new("python3")
            .arg(repo().join("benches/make_state.py"))
            .arg(&dir)
            .status()
            .expect("python3 runs benches/make_state.py");
        assert!(status.success(), "benches/make_state.py failed");
    }
    let text = std::fs::read_to_string(dir.join("workloads.json")).expect("bench state");
    let mut view = MemoryView::default();
    let objects = documents::parse(&text).expect("bench state parses");
    for object in objects.into_iter().chain(extra.iter().cloned()) {
        view.add(object).expect("bench object decodes");
    }
    view
}

fn stamps(prefix: &str, n: usize) -> Map<String, Value> {
    (0..n)
        .map(|i| (format!("{prefix}-{i:06}"), json!(STAMP)))
        .collect()
}

/// A WorkloadSpread over the perf Deployment whose first subset takes every pod, `outstanding` pods
/// already booked in it.
fn booking_spread(outstanding: usize) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
        "metadata": {"name": "checkout-zones", "namespace": "shop", "resourceVersion": "1201"},
        "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "checkout-api"},
                 "subsets": [{"name": "zone-a", "maxReplicas": 10_000_000,
                              "patch": {"metadata": {"labels": {"topology.kruise.io/zone": "a"}}}},
                             {"name": "zone-b"}]},
        "status": {"versionedSubsetStatuses": {"7d9f8c6b5d": [
            {"name": "zone-a", "missingReplicas": 10_000_000 - outstanding as i64,
             "creatingPods": stamps("booked", outstanding)},
            {"name": "zone-b", "missingReplicas": -1}]}}})
}

/// A budget over the perf Deployment with room for every deletion, `outstanding` pods already recorded.
fn roomy_budget(outstanding: usize) -> Value {
    json!({"apiVersion": "policy.kruise.io/v1beta1", "kind": "PodUnavailableBudget",
        "metadata": {"name": "checkout-pub", "namespace": "shop", "resourceVersion": "88"},
        "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "checkout-api"},
                 "maxUnavailable": "25%"},
        "status": {"unavailableAllowed": 10_000_000, "desiredAvailable": 5, "currentAvailable": 6,
                   "totalReplicas": 6, "disruptedPods": stamps("spent", outstanding)}})
}

/// A copy of `base` whose object `K shop/name` is its own (so the first write does not copy it).
fn own_copy<K: Registered + Clone>(base: &MemoryView, name: &str) -> MemoryView {
    let mut view = base.clone();
    K::store_mut(&mut view.kinds).update("shop", name, |_| ());
    view
}

/// Times `decide` + applying its writes, `iters` times, each on a fresh request from `vary(i)`.
fn time_recordings<K: Registered + Clone>(
    base: &MemoryView,
    name: &str,
    iters: u64,
    mut one: impl FnMut(u64, &mut MemoryView),
) -> Duration {
    let mut total = Duration::ZERO;
    let mut view = own_copy::<K>(base, name);
    for i in 0..iters {
        if i > 0 && i % RESET_EVERY == 0 {
            view = own_copy::<K>(base, name);
        }
        let start = Instant::now();
        one(i, &mut view);
        total += start.elapsed();
    }
    total
}

fn workload_spread_booking(c: &mut Criterion) {
    let settings = Settings::default();
    let body = std::fs::read(repo().join("benches/data/pod-create-review.json")).expect("perf review");
    let review = Review::parse(&body).expect("perf review parses");
    let mut group = c.benchmark_group("booking/workloadspread (mutate-pod decide + record)");
    for outstanding in [0, 1_000, 50_000] {
        let base = view_with(&[booking_spread(outstanding)]);
        let mut request = review.request.clone();
        let first = Webhook::MutatePod.handle(&request, &base, &settings);
        assert!(
            first.allowed() && first.writes.len() == 1,
            "the pod is booked: {first:?}"
        );
        group.bench_with_input(BenchmarkId::new("recorded", outstanding), &outstanding, |b, _| {
            b.iter_custom(|iters| {
                time_recordings::<WorkloadSpread>(&base, "checkout-zones", iters, |i, view| {
                    // A pod with only `generateName` is booked under a uid derived from the request's.
                    request.uid = format!("bench-{i}");
                    let decision = Webhook::MutatePod.handle_mut(&mut request, view, &settings);
                    for write in &decision.writes {
                        view.apply_status(write).expect("the booking applies");
                    }
                })
            })
        });
        let mut dry = review.request.clone();
        dry.dry_run = Some(true);
        group.bench_with_input(BenchmarkId::new("dry run", outstanding), &outstanding, |b, _| {
            b.iter(|| Webhook::MutatePod.handle_mut(&mut dry, &base, &settings))
        });
    }
    group.finish();
}

fn budget_spend(c: &mut Criterion) {
    let settings = Settings::default();
    let body = std::fs::read(repo().join("benches/data/pod-delete-review.json")).expect("delete review");
    let review = Review::parse(&body).expect("delete review parses");
    let mut group = c.benchmark_group("booking/pub (validate-pod decide + record)");
    for outstanding in [0, 1_000, 1_999] {
        let base = view_with(&[roomy_budget(outstanding)]);
        let mut request = review.request.clone();
        let first = Webhook::ValidatePod.handle(&request, &base, &settings);
        assert!(
            first.allowed() && first.writes.len() == 1,
            "the budget is spent: {first:?}"
        );
        group.bench_with_input(BenchmarkId::new("recorded", outstanding), &outstanding, |b, _| {
            b.iter_custom(|iters| {
                time_recordings::<PodUnavailableBudget>(&base, "checkout-pub", iters, |i, view| {
                    let name = format!("checkout-api-7d9f8c6b5d-{i}");
                    request.old_object.as_mut().expect("old object")["metadata"]["name"] = json!(name);
                    let decision = Webhook::ValidatePod.handle_mut(&mut request, view, &settings);
                    for write in &decision.writes {
                        view.apply_status(write).expect("the spend applies");
                    }
                })
            })
        });
    }
    group.finish();
}

criterion_group!(booking_benches, workload_spread_booking, budget_spend);
criterion_main!(booking_benches);
