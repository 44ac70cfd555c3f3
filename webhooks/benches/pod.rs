//! The `/mutate-pod` and `/validate-pod` decisions alone, against the benchmark cluster state in memory:
//! what the pure crate does per review, without parsing, encoding or transport (those are in the
//! workspace's `benches/admission.rs`). Run with `cargo bench -p kruise-webhooks --bench pod`; numbers
//! and the callgrind command in benches/README.md.

use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use kruise_core::{MemoryView, documents};
use kruise_webhooks::{Settings, Webhook, review::Review};

// The same allocator as the `kruise` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The benchmark cluster state (benches/make_state.py): 1,000 SidecarSets of which 2 select the perf
/// review's pod, a WorkloadSpread and a PUB over its Deployment.
fn bench_view() -> MemoryView {
    let dir = repo().join("target/bench-state");
    if !dir.join("sidecarsets.json").exists() {
        let status = std::process::Command::new("python3")
            .arg(repo().join("benches/make_state.py"))
            .arg(&dir)
            .status()
            .expect("python3 runs benches/make_state.py");
        assert!(status.success(), "benches/make_state.py failed");
    }
    let mut view = MemoryView::default();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("bench state")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("bench state file");
        for object in documents::parse(&text).expect("bench state parses") {
            view.add(object).expect("bench state object decodes");
        }
    }
    view
}

fn mutate_pod(c: &mut Criterion) {
    let view = bench_view();
    let settings = Settings::default();
    let body = std::fs::read(repo().join("benches/data/pod-create-review.json")).expect("perf review");
    let mut review = Review::parse(&body).expect("perf review parses");
    let decision = Webhook::MutatePod.handle(&review.request, &view, &settings);
    assert!(
        decision.allowed() && decision.patch.len() > 8,
        "the perf pod is injected, spread and annotated"
    );
    c.bench_function("mutate-pod/decide (1000 SidecarSets, WorkloadSpread, PUB)", |b| {
        // As the server decides: on the request's own pod, patched and restored in place.
        b.iter(|| Webhook::MutatePod.handle_mut(&mut review.request, &view, &settings))
    });
}

/// The perf pod deleted once admitted (benches/data/pod-delete-review.json: named, ready, recorded against
/// the PUB): `/validate-pod` decodes the old object, does the WorkloadSpread accounting and the PUB check.
fn validate_pod(c: &mut Criterion) {
    let view = bench_view();
    let settings = Settings::default();
    let body = std::fs::read(repo().join("benches/data/pod-delete-review.json")).expect("delete review");
    let parsed = Review::parse(&body).expect("delete review parses");
    assert!(
        Webhook::ValidatePod
            .handle(&parsed.request, &view, &settings)
            .allowed()
    );
    c.bench_function("validate-pod/decide (DELETE of the perf pod)", |b| {
        b.iter(|| Webhook::ValidatePod.handle(&parsed.request, &view, &settings))
    });
}

criterion_group!(pod_benches, mutate_pod, validate_pod);
criterion_main!(pod_benches);
