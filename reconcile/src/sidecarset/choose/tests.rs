//! The choice of pods through the planner: maxUnavailable, partition, the update selector, priorities.

use kruise_api::PodRecord;
use serde_json::json;

use super::super::tests::{apply, chosen, pod, progress, restarted, run, set};
use crate::sidecarset::InFlight;

#[test]
fn max_unavailable_rounds_up_and_counts_updated_pods_not_yet_ready() {
    let pods: Vec<PodRecord> = (0..5).map(pod).collect();
    let cases = [
        (json!({}), vec!["p4"]),
        (json!({"maxUnavailable": "30%"}), vec!["p4", "p3"]), // 1.5 → 2
        (json!({"maxUnavailable": 3}), vec!["p4", "p3", "p2"]),
        (
            json!({"maxUnavailable": "100%"}),
            vec!["p4", "p3", "p2", "p1", "p0"],
        ),
    ];
    for (strategy, expected) in cases {
        let plan = run(&set(strategy.clone()), &pods, &InFlight::default());
        assert_eq!(chosen(&plan), expected, "{strategy}");
    }
    // Two pods upgraded and restarting hold a budget of 2: nothing more, and the condition names them.
    let mut pods = pods;
    for i in [3, 4] {
        let patch = run(
            &set(json!({})),
            std::slice::from_ref(&pods[i]),
            &InFlight::default(),
        )
        .upgrades[0]
            .patch
            .clone();
        pods[i] = restarted(&apply(&pods[i], &patch), false);
    }
    let plan = run(&set(json!({"maxUnavailable": 2})), &pods, &InFlight::default());
    assert!(plan.upgrades.is_empty());
    assert_eq!(
        progress(&plan),
        (
            "True",
            "MaxUnavailableReached",
            "waiting for 2 pod(s) to become ready (maxUnavailable 2): p3, p4"
        )
    );
    // One of them ready again: one more pod.
    pods[4] = restarted(&pods[4], true);
    pods[4].status.as_mut().unwrap().conditions.as_mut().unwrap()[0].status = "True".into();
    let plan = run(&set(json!({"maxUnavailable": 2})), &pods, &InFlight::default());
    assert_eq!(chosen(&plan), ["p2"]);
}

#[test]
fn not_ready_candidates_are_taken_free_but_spend_the_budget_they_already_hold() {
    let mut pods: Vec<PodRecord> = (0..3).map(pod).collect();
    pods[0].status.as_mut().unwrap().conditions.as_mut().unwrap()[0].status = "False".into();
    // p0 (not ready) is unavailable already: it is taken, and it fills maxUnavailable 1.
    let plan = run(&set(json!({})), &pods, &InFlight::default());
    assert_eq!(chosen(&plan), ["p0"]);
    // With maxUnavailable 2 one ready pod follows.
    let plan = run(&set(json!({"maxUnavailable": 2})), &pods, &InFlight::default());
    assert_eq!(chosen(&plan), ["p0", "p2"]);
    // A ready pod ordered first (priority) waits; the not-ready one after it is still taken.
    let mut weighted = pods.clone();
    weighted[2].metadata.labels.insert("first".into(), "yes".into());
    let strategy = json!({"priorityStrategy": {"weightPriority": [
        {"weight": 10, "matchSelector": {"matchLabels": {"first": "yes"}}}]}});
    let plan = run(&set(strategy), &weighted, &InFlight::default());
    assert_eq!(chosen(&plan), ["p0"]);
}

#[test]
fn pods_stuck_on_a_bad_image_take_the_fixed_one_without_upgrading_ready_pods() {
    // 4 pods, maxUnavailable 2: p2 and p3 were upgraded to an image that never starts (not ready).
    let mut pods: Vec<PodRecord> = (0..4).map(pod).collect();
    for i in [2, 3] {
        let patch = run(
            &set(json!({})),
            std::slice::from_ref(&pods[i]),
            &InFlight::default(),
        )
        .upgrades[0]
            .patch
            .clone();
        pods[i] = restarted(&apply(&pods[i], &patch), false);
    }
    let plan = run(&set(json!({"maxUnavailable": 2})), &pods, &InFlight::default());
    assert!(plan.upgrades.is_empty(), "the bad image holds the budget");
    // A fixed image (a new hash): the two stuck pods are candidates again and taken; the ready ones
    // wait, or 4 pods would be unavailable at once.
    let mut fixed = set(json!({"maxUnavailable": 2}));
    fixed
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert("kruise.io/sidecarset-hash".into(), "h3".into());
    let plan = run(&fixed, &pods, &InFlight::default());
    let mut names = chosen(&plan);
    names.sort();
    assert_eq!(names, ["p2", "p3"]);
}

#[test]
fn a_zero_max_unavailable_is_reported_instead_of_blocking_silently() {
    let pods: Vec<PodRecord> = (0..3).map(pod).collect();
    for value in [json!(0), json!("0%")] {
        let plan = run(
            &set(json!({"maxUnavailable": value})),
            &pods,
            &InFlight::default(),
        );
        assert!(plan.upgrades.is_empty());
        let (status, reason, message) = progress(&plan);
        assert_eq!((status, reason), ("False", "MaxUnavailableZero"));
        assert!(message.contains("of 3 matched pod(s) is 0"), "{message}");
    }
}

#[test]
fn the_update_selector_limits_the_rollout() {
    let mut pods: Vec<PodRecord> = (0..3).map(pod).collect();
    pods[1].metadata.labels.insert("canary".into(), "true".into());
    let strategy = json!({"selector": {"matchLabels": {"canary": "true"}}, "maxUnavailable": 3});
    let plan = run(&set(strategy.clone()), &pods, &InFlight::default());
    assert_eq!(chosen(&plan), ["p1"]);
    pods[1] = restarted(&apply(&pods[1], &plan.upgrades[0].patch), true);
    let plan = run(&set(strategy), &pods, &InFlight::default());
    assert!(plan.upgrades.is_empty());
    assert_eq!(progress(&plan).1, "SelectorReached");
}

#[test]
fn priority_weights_order_the_candidates() {
    let mut pods: Vec<PodRecord> = (0..3).map(pod).collect();
    pods[0].metadata.labels.insert("tier".into(), "low".into());
    let strategy = json!({"maxUnavailable": 1, "priorityStrategy": {"weightPriority": [
        {"weight": 50, "matchSelector": {"matchLabels": {"tier": "low"}}}]}});
    assert_eq!(chosen(&run(&set(strategy), &pods, &InFlight::default())), ["p0"]);
}

#[test]
fn scatter_spreads_the_pods_of_a_term_over_the_round() {
    // ActivePods order is p5 … p0 (most recently ready first); p5, p4, p3 are in zone a.
    let mut pods: Vec<PodRecord> = (0..6).map(pod).collect();
    for p in &mut pods[3..] {
        p.metadata.labels.insert("zone".into(), "a".into());
    }
    let plain = json!({"maxUnavailable": 3});
    assert_eq!(
        chosen(&run(&set(plain), &pods, &InFlight::default())),
        ["p5", "p4", "p3"]
    );
    // One zone-a pod, then two others, in turn; the last zone-a pod goes last.
    let scattered = json!({"maxUnavailable": 3, "scatterStrategy": [{"key": "zone", "value": "a"}]});
    assert_eq!(
        chosen(&run(&set(scattered), &pods, &InFlight::default())),
        ["p5", "p2", "p1"]
    );
}
