//! The hot path of one review without the transport: decode, decide against the in-memory state,
//! encode. Run with `cargo bench --bench admission`; numbers in benches/README.md.

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use futures::executor::block_on;
use kruise_rs::{admission::Admission, server::load_view};
use kruise_webhooks::{Settings, Webhook, review::Review};

// The same allocator as the `kruise` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(repo().join(path)).expect("bench fixture")
}

/// The benchmark cluster state (benches/make_state.py): 1,000 SidecarSets of which 2 select the perf
/// review's pod, a WorkloadSpread and a PUB over its Deployment.
fn bench_state() -> PathBuf {
    let dir = repo().join("target/bench-state");
    if !dir.join("sidecarsets.json").exists() {
        let status = std::process::Command::new("python3")
            .arg(repo().join("benches/make_state.py"))
            .arg(&dir)
            .status()
            .expect("python3 runs benches/make_state.py");
        assert!(status.success(), "benches/make_state.py failed");
    }
    dir
}

fn mutate_pod(c: &mut Criterion) {
    let view = load_view(&[bench_state()]).expect("bench state loads");
    let settings = Settings::default();
    let body = read("benches/data/pod-create-review.json");
    let review = Review::parse(&body).expect("perf review parses");
    let decision = Webhook::MutatePod.handle(&review.request, &view, &settings);
    assert!(
        decision.allowed() && decision.patch.len() > 8,
        "the perf pod is injected, spread and annotated"
    );
    // The decision alone is benched in its own crate: `cargo bench -p kruise-webhooks --bench pod`.
    // The whole answer, transport excepted: parse, decide, encode (dry run, so the WorkloadSpread
    // booking is not written and every iteration does the same work).
    let mut dry: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
    dry["request"]["dryRun"] = serde_json::Value::Bool(true);
    let dry = serde_json::to_vec(&dry).expect("JSON");
    let admission = Admission::in_memory(view.clone(), Settings::default());
    c.bench_function("mutate-pod/answer (parse + decide + encode)", |b| {
        b.iter(|| {
            let answer = block_on(admission.answer(Webhook::MutatePod, &dry)).expect("answers");
            serde_json::to_vec(&answer.review).expect("encodes")
        })
    });
}

fn benches(c: &mut Criterion) {
    let view = load_view(&[repo().join("examples/cluster")]).expect("examples/cluster loads");
    let admission = Admission::in_memory(view, Settings::default());
    let pod_review = read("benches/data/pod-create-review.json");
    let delete_ns = read("examples/reviews/delete-namespace-shop.json");
    let bad_label = read("examples/reviews/create-deployment-bad-label.json");

    c.bench_function("parse/pod-create-6KB", |b| {
        b.iter(|| Review::parse(&pod_review).expect("parses"))
    });
    c.bench_function("answer/validate-namespace-cascading", |b| {
        b.iter(|| {
            let answer = block_on(admission.answer(Webhook::ValidateNamespace, &delete_ns)).expect("answers");
            serde_json::to_vec(&answer.review).expect("encodes")
        })
    });
    c.bench_function("answer/validate-deployment-label", |b| {
        b.iter(|| {
            let answer =
                block_on(admission.answer(Webhook::ValidateDeployment, &bad_label)).expect("answers");
            serde_json::to_vec(&answer.review).expect("encodes")
        })
    });
    let conversion = serde_json::to_vec(&serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "b", "desiredAPIVersion": "apps.kruise.io/v1beta1", "objects": [{
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "web", "image": "nginx"}]}},
                     "updateStrategy": {"type": "InPlaceIfPossible", "partition": 1}}}]}
    }))
    .expect("static JSON");
    c.bench_function("convert/cloneset-v1alpha1-to-v1beta1", |b| {
        b.iter(|| kruise_webhooks::convert::convert_review(&conversion).expect("converts"))
    });
}

/// The perf pod deleted once admitted (benches/data/pod-delete-review.json: named, ready, recorded against
/// the PUB): `/validate-pod` decodes the old object, does the WorkloadSpread accounting and the PUB check.
fn validate_pod(c: &mut Criterion) {
    let view = load_view(&[bench_state()]).expect("bench state loads");
    let body = read("benches/data/pod-delete-review.json");
    let admission = Admission::in_memory(view, Settings::default());
    c.bench_function("validate-pod/answer (parse + decide + encode)", |b| {
        b.iter(|| {
            let answer = block_on(admission.answer(Webhook::ValidatePod, &body)).expect("answers");
            serde_json::to_vec(&answer.review).expect("encodes")
        })
    });
}

criterion_group!(admission_benches, benches, mutate_pod, validate_pod);
criterion_main!(admission_benches);
