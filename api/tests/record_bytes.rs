//! What a pod costs in the cache: the heap bytes a decoded [`PodRecord`] keeps, counted by dhat's
//! allocator (benches/README.md, "Where a cached pod's bytes go"). The pod is one our playground ran
//! for a CloneSet: 5 labels, 1 annotation, 6 conditions, 1 container.

use std::sync::Arc;

use kruise_api::PodRecord;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// The heap bytes a record of the playground pod keeps, its `Arc` included (the cache holds it so).
fn bytes_per_record() -> u64 {
    let pod: serde_json::Value =
        serde_json::from_str(include_str!("data/playground-pod.json")).expect("the fixture is JSON");
    const N: u64 = 1000;
    let mut kept: Vec<Arc<PodRecord>> = Vec::with_capacity(N as usize);
    let before = dhat::HeapStats::get().curr_bytes as u64;
    for _ in 0..N {
        kept.push(Arc::new(
            serde_json::from_value(pod.clone()).expect("the fixture decodes"),
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
    // 3,540 B when written; 4,172 B before conditions, states and lifecycles were made compact.
    assert!(
        bytes <= 3_600,
        "a playground pod's record keeps {bytes} B (budget 3,600 B)"
    );
}
