//! The four allocators on OpenKruise's examples (allocator code comments and e2e sequences).

use std::collections::BTreeMap;

use kruise_api::apps_v1beta1::UnitedDeploymentSpec;
use serde_json::{Value, json};

use crate::uniteddeployment::{AllocError, Allocator, SubsetState, allocate};

fn spec(replicas: Option<i32>, subsets: Value, strategy: Value) -> UnitedDeploymentSpec {
    serde_json::from_value(json!({
        "replicas": replicas,
        "selector": {"matchLabels": {"app": "x"}},
        "topology": {"subsets": subsets, "scheduleStrategy": strategy},
    }))
    .unwrap()
}

/// Subset name → (spec replicas, ready, unschedulable, reserved pods).
fn states(list: &[(&str, i32, i32, bool, i32)]) -> BTreeMap<String, SubsetState> {
    list.iter()
        .map(
            |&(name, spec_replicas, ready_replicas, unschedulable, reserved_pods)| {
                let state = SubsetState {
                    spec_replicas,
                    ready_replicas,
                    unschedulable,
                    marked_unschedulable: false,
                    reserved_pods,
                };
                (name.to_string(), state)
            },
        )
        .collect()
}

fn got(spec: &UnitedDeploymentSpec, existing: &BTreeMap<String, SubsetState>) -> Vec<i32> {
    let out = allocate(spec, existing).unwrap();
    spec.topology.subsets.iter().map(|s| out[&s.name]).collect()
}

#[test]
fn specific_fixed_shares_and_an_even_rest() {
    let none = BTreeMap::new();
    // replicas 10; a: 2, b: 50%, c and d share the rest 3: the later name gets the extra pod.
    let s = spec(
        Some(10),
        json!([{"name": "a", "replicas": 2}, {"name": "b", "replicas": "50%"}, {"name": "c"}, {"name": "d"}]),
        json!({}),
    );
    assert_eq!(Allocator::of(&s), Allocator::Specific);
    assert_eq!(got(&s, &none), [2, 5, 1, 2]);
    // The subset already larger keeps the extra pod: c runs 2 already.
    assert_eq!(
        got(&s, &states(&[("c", 2, 2, false, 0), ("d", 1, 1, false, 0)])),
        [2, 5, 2, 1]
    );
    // e2e: a 25%, b 25%, c; replicas 3, 4, 1.
    let subsets = json!([{"name": "a", "replicas": "25%"}, {"name": "b", "replicas": "25%"}, {"name": "c"}]);
    let cases: &[(i32, [i32; 3])] = &[(3, [1, 1, 1]), (4, [1, 1, 2]), (1, [0, 0, 1])];
    for (replicas, want) in cases {
        assert_eq!(
            got(&spec(Some(*replicas), subsets.clone(), json!({})), &none),
            want,
            "replicas {replicas}"
        );
    }
    // Without spec.replicas every subset must be specified, and is used as is.
    let s = spec(
        None,
        json!([{"name": "a", "replicas": 1}, {"name": "b", "replicas": 4}]),
        json!({}),
    );
    assert_eq!(got(&s, &none), [1, 4]);
}

#[test]
fn specific_refuses_inconsistent_shares() {
    let none = BTreeMap::new();
    let cases: &[(Option<i32>, Value, AllocError)] = &[
        (
            Some(3),
            json!([{"name": "a", "replicas": 2}, {"name": "b", "replicas": 2}]),
            AllocError::TooMany {
                specified: 4,
                replicas: 3,
            },
        ),
        (
            Some(5),
            json!([{"name": "a", "replicas": 2}, {"name": "b", "replicas": 2}]),
            AllocError::TooFew {
                specified: 4,
                replicas: 5,
            },
        ),
        (
            None,
            json!([{"name": "a", "replicas": 2}, {"name": "b"}]),
            AllocError::Unspecified,
        ),
        // A percentage without spec.replicas cannot be read: the subset counts as unspecified.
        (
            None,
            json!([{"name": "a", "replicas": "50%"}]),
            AllocError::Unspecified,
        ),
    ];
    for (replicas, subsets, want) in cases {
        let s = spec(*replicas, subsets.clone(), json!({}));
        assert_eq!(allocate(&s, &none).as_ref(), Err(want), "{subsets}");
    }
    assert_eq!(
        AllocError::TooMany {
            specified: 4,
            replicas: 3
        }
        .to_string(),
        "specified subsets' replica (4) is greater than UnitedDeployment replica (3)"
    );
}

#[test]
fn min_max_fills_earlier_subsets_first() {
    let none = BTreeMap::new();
    let s = spec(
        Some(5),
        json!([{"name": "a", "minReplicas": 2, "maxReplicas": 4}, {"name": "b", "minReplicas": 2}]),
        json!({}),
    );
    assert_eq!(Allocator::of(&s), Allocator::MinMax);
    assert_eq!(got(&s, &none), [3, 2]);
    // e2e: a{1,2}, b{1,2}, c{1,-}.
    let subsets = json!([
        {"name": "a", "minReplicas": 1, "maxReplicas": 2},
        {"name": "b", "minReplicas": 1, "maxReplicas": 2},
        {"name": "c", "minReplicas": 1},
    ]);
    let cases: &[(i32, [i32; 3])] = &[(3, [1, 1, 1]), (7, [2, 2, 3]), (1, [1, 0, 0]), (0, [0, 0, 0])];
    for (replicas, want) in cases {
        assert_eq!(
            got(&spec(Some(*replicas), subsets.clone(), json!({})), &none),
            want,
            "replicas {replicas}"
        );
    }
    // Percentages of spec.replicas; absent spec.replicas counts 0.
    let s = spec(
        Some(10),
        json!([{"name": "a", "maxReplicas": "30%"}, {"name": "b"}]),
        json!({}),
    );
    assert_eq!(got(&s, &none), [3, 7]);
    let s = spec(
        None,
        json!([{"name": "a", "minReplicas": 2}, {"name": "b"}]),
        json!({}),
    );
    assert_eq!(got(&s, &none), [0, 0]);
    let bad = spec(
        Some(3),
        json!([{"name": "a", "minReplicas": 3, "maxReplicas": 2}, {"name": "b"}]),
        json!({}),
    );
    assert_eq!(
        allocate(&bad, &none),
        Err(AllocError::MinAboveMax {
            index: 0,
            min: 3,
            max: 2
        })
    );
}

#[test]
fn adaptive_moves_pending_pods_and_keeps_running_ones() {
    let subsets = json!([{"name": "a", "maxReplicas": 2}, {"name": "b", "maxReplicas": 2}, {"name": "c"}]);
    let adaptive = json!({"type": "Adaptive"});
    let s = |replicas| spec(Some(replicas), subsets.clone(), adaptive.clone());
    assert_eq!(Allocator::of(&s(3)), Allocator::Adaptive);
    // (replicas, existing subsets as (name, spec, ready, unschedulable, reserved), expected).
    type Step<'a> = (i32, &'a [(&'a str, i32, i32, bool, i32)], [i32; 3]);
    let steps: &[Step] = &[
        // Nothing exists yet: a fills to its max, b gets the rest.
        (3, &[], [2, 1, 0]),
        // b's pod stays pending past rescheduleCriticalSeconds: b is unschedulable, c takes it.
        (
            3,
            &[("a", 2, 2, false, 0), ("b", 1, 0, true, 0), ("c", 0, 0, false, 0)],
            [2, 0, 1],
        ),
        (
            5,
            &[("a", 2, 2, false, 0), ("b", 0, 0, true, 0), ("c", 1, 1, false, 0)],
            [2, 0, 3],
        ),
        (
            4,
            &[("a", 2, 2, false, 0), ("b", 0, 0, true, 0), ("c", 3, 3, false, 0)],
            [2, 0, 2],
        ),
        // b recovered (unschedulableDuration passed): it is tried again on scale-up ...
        (
            5,
            &[
                ("a", 2, 2, false, 0),
                ("b", 0, 0, false, 0),
                ("c", 2, 2, false, 0),
            ],
            [2, 1, 2],
        ),
        // ... and its pending pod goes first on scale-down; running pods are kept.
        (
            4,
            &[
                ("a", 2, 2, false, 0),
                ("b", 1, 0, false, 0),
                ("c", 2, 2, false, 0),
            ],
            [2, 0, 2],
        ),
        (
            3,
            &[
                ("a", 2, 2, false, 0),
                ("b", 0, 0, false, 0),
                ("c", 2, 2, false, 0),
            ],
            [2, 0, 1],
        ),
        // An unschedulable subset keeps its ready pods, never fewer than its min.
        (
            3,
            &[("a", 2, 1, true, 0), ("b", 0, 0, false, 0), ("c", 0, 0, false, 0)],
            [1, 2, 0],
        ),
    ];
    for (replicas, existing, want) in steps {
        assert_eq!(
            got(&s(*replicas), &states(existing)),
            want,
            "replicas {replicas}, {existing:?}"
        );
    }
}

#[test]
fn reservation_keeps_pending_pods_and_adds_temporary_ones() {
    let subsets = json!([{"name": "s0"}, {"name": "s1"}, {"name": "s2"}]);
    let strategy = json!({"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": true}});
    let s = |replicas| spec(Some(replicas), subsets.clone(), strategy.clone());
    assert_eq!(Allocator::of(&s(2)), Allocator::Reservation);
    type Step<'a> = (i32, &'a [(&'a str, i32, i32, bool, i32)], [i32; 3]);
    let steps: &[Step] = &[
        (2, &[], [2, 0, 0]),
        // s0's two pods are reserved: s1 gets two temporary pods.
        (2, &[("s0", 2, 0, true, 2)], [2, 2, 0]),
        // s1 cannot run them either: s2 gets two more; every workload holds 2, reserved (2,2,0).
        (2, &[("s0", 2, 0, true, 2), ("s1", 2, 0, true, 2)], [2, 2, 2]),
        (
            4,
            &[
                ("s0", 2, 0, true, 2),
                ("s1", 2, 0, true, 2),
                ("s2", 2, 2, false, 0),
            ],
            [2, 2, 4],
        ),
        // s0 recovered: it takes everything, the temporary pods go.
        (
            4,
            &[
                ("s0", 2, 2, false, 0),
                ("s1", 2, 0, true, 2),
                ("s2", 4, 4, false, 0),
            ],
            [4, 0, 0],
        ),
    ];
    for (replicas, existing, want) in steps {
        assert_eq!(
            got(&s(*replicas), &states(existing)),
            want,
            "replicas {replicas}, {existing:?}"
        );
    }
    // A subset marked unschedulable (just recovered and scaled up) only counts the pods it can run.
    let mut marked = states(&[("s0", 3, 1, false, 0)]);
    marked.get_mut("s0").unwrap().marked_unschedulable = true;
    assert_eq!(got(&s(3), &marked), [3, 0, 0]);
}
