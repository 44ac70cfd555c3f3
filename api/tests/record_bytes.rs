//! What a pod costs in the cache: the heap bytes a decoded [`PodRecord`] keeps, counted by dhat's
//! allocator (benches/README.md, "Where a cached pod's bytes go"). The pod is one our playground ran
//! for a CloneSet: 5 labels, 1 annotation, 6 conditions, 1 container. Each copy gets its own name, uid,
//! resourceVersion and instance-id label, as the pods of one CloneSet do; the other labels and the
//! annotation are the same in every copy, so their interned texts are shared.

use std::sync::Arc;

use kruise_api::PodRecord;
use serde_json::{Value, json};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Copy `i` of the playground pod: what differs between the pods of one CloneSet made unique.
fn copy(pod: &Value, i: u64) -> Value {
    let mut pod = pod.clone();
    let meta = &mut pod["metadata"];
    meta["name"] = json!(format!("app-1-{i:05}"));
    meta["uid"] = json!(format!("26b78b27-61bd-4854-a8db-e2bcc{i:07}"));
    meta["resourceVersion"] = json!(format!("{}", 100_000 + i));
    meta["labels"]["apps.kruise.io/cloneset-instance-id"] = json!(format!("{i:05}"));
    pod
}

/// The heap bytes a record of the playground pod keeps, its `Arc` included (the cache holds it so).
fn bytes_per_record() -> u64 {
    let pod: Value =
        serde_json::from_str(include_str!("data/playground-pod.json")).expect("the fixture is JSON");
    const N: u64 = 1000;
    let copies: Vec<Value> = (0..N).map(|i| copy(&pod, i)).collect();
    let mut kept: Vec<Arc<PodRecord>> = Vec::with_capacity(N as usize);
    let before = dhat::HeapStats::get().curr_bytes as u64;
    for copy in &copies {
        kept.push(Arc::new(
            serde_json::from_value(copy.clone()).expect("the fixture decodes"),
        ));
    }
    let after = dhat::HeapStats::get().curr_bytes as u64;
    (after - before) / N
}

#[test]
fn a_running_pod_keeps_at_most_its_budget_of_heap() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let bytes = bytes_per_record();
    println!("a playground pod's record keeps {bytes} B");
    // 2,528 B when labels and annotations were interned (3,544 B before); 4,172 B before conditions,
    // states and lifecycles were made compact.
    assert!(
        bytes <= 2_600,
        "a playground pod's record keeps {bytes} B (budget 2,600 B)"
    );
}
