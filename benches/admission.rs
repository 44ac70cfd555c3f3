//! The hot path of one review without the transport: decode, decide against the in-memory state,
//! encode. Run with `cargo bench --bench admission`; numbers in benches/README.md.

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use futures::executor::block_on;
use kruise_rs::{admission::Admission, server::load_view};
use kruise_webhooks::{Settings, Webhook, review::Review};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(repo().join(path)).expect("bench fixture")
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

criterion_group!(admission_benches, benches);
criterion_main!(admission_benches);
