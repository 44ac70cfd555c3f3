use super::*;
use crate::cloneset::testing::{self, cloneset};
use crate::pods::fixtures::{labelled, pod, unready};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kruise_api::apps_v1beta1::{CloneSet, RollingUpdateCloneSetStrategy};
use kruise_api::common::{UpdatePriorityOrderTerm, UpdatePriorityWeightTerm, UpdateScatterTerm};

fn ctx<'a>(cs: &'a CloneSet, pods: &[&'a PodRecord]) -> Ctx<'a> {
    testing::ctx(cs, pods.to_vec())
}

fn with_strategy(ru: RollingUpdateCloneSetStrategy) -> CloneSet {
    let mut cs = cloneset(1);
    cs.spec.update_strategy.rolling_update = Some(ru);
    cs
}

fn names(pods: &[&PodRecord]) -> Vec<String> {
    pods.iter().map(|p| pods::name(p).to_owned()).collect()
}

#[test]
fn integer_suffix() {
    for (v, want) in [
        ("sts-10", 10),
        ("7", 7),
        ("abc", 0),
        ("", 0),
        ("v1-2x", 0),
        ("a-007", 7),
    ] {
        assert_eq!(int_suffix(v), want, "{v}");
    }
}

#[test]
fn update_order() {
    let sel = |k: &str, v: &str| LabelSelector {
        match_labels: Some([(k.to_string(), v.to_string())].into()),
        ..Default::default()
    };
    let weights = RollingUpdateCloneSetStrategy {
        priority_strategy: Some(UpdatePriorityStrategy {
            weight_priority: Some(vec![
                UpdatePriorityWeightTerm {
                    weight: 50,
                    match_selector: sel("zone", "a"),
                },
                UpdatePriorityWeightTerm {
                    weight: 30,
                    match_selector: sel("canary", "true"),
                },
            ]),
            order_priority: None,
        }),
        ..Default::default()
    };
    let orders = RollingUpdateCloneSetStrategy {
        priority_strategy: Some(UpdatePriorityStrategy {
            order_priority: Some(vec![UpdatePriorityOrderTerm {
                ordered_key: "order".into(),
            }]),
            weight_priority: None,
        }),
        ..Default::default()
    };
    let scatter = RollingUpdateCloneSetStrategy {
        scatter_strategy: Some(vec![UpdateScatterTerm {
            key: "zone".into(),
            value: "a".into(),
        }]),
        ..Default::default()
    };
    let p = |name: &str, labels: &[(&str, &str)]| {
        labels
            .iter()
            .fold(pod(name, "demo-1"), |p, (k, v)| labelled(p, k, v))
    };
    type Row = (
        &'static str,
        RollingUpdateCloneSetStrategy,
        Vec<PodRecord>,
        Vec<&'static str>,
    );
    let rows: Vec<Row> = vec![
        (
            "unready pods go first by default",
            Default::default(),
            vec![p("a", &[]), unready(p("b", &[]))],
            vec!["b", "a"],
        ),
        (
            "PreparingUpdate pods go before everything",
            Default::default(),
            vec![
                unready(p("a", &[])),
                p("b", &[("lifecycle.apps.kruise.io/state", "PreparingUpdate")]),
            ],
            vec!["b", "a"],
        ),
        (
            "higher summed weight first",
            weights,
            vec![
                p("a", &[("canary", "true")]),
                p("b", &[("zone", "a"), ("canary", "true")]),
                p("c", &[("zone", "a")]),
            ],
            vec!["b", "c", "a"],
        ),
        (
            "higher order value first; pods without the key sort before (OpenKruise quirk)",
            orders,
            vec![
                p("a", &[("order", "sts-1")]),
                p("b", &[("order", "sts-10")]),
                p("c", &[]),
            ],
            vec!["c", "b", "a"],
        ),
        (
            "scatter spreads matching pods among the others (OpenKruise's grouping)",
            scatter,
            vec![
                p("a1", &[("zone", "a")]),
                p("a2", &[("zone", "a")]),
                p("b1", &[]),
                p("b2", &[]),
                p("b3", &[]),
                p("b4", &[]),
            ],
            vec!["a1", "b1", "b2", "b3", "b4", "a2"],
        ),
    ];
    for (name, ru, pods, want) in rows {
        let cs = with_strategy(ru);
        let refs: Vec<&PodRecord> = pods.iter().collect();
        let c = ctx(&cs, &refs);
        let mut order = refs.clone();
        sort_candidates(&c, &mut order);
        assert_eq!(names(&order), want, "{name}");
    }
}

#[test]
fn the_unavailability_budget_limits_the_pods_updated() {
    let cs = cloneset(4);
    let old: Vec<PodRecord> = (0..4).map(|i| pod(&format!("o{i}"), "demo-1")).collect();
    let updating_new = unready(pod("n0", "demo-2"));
    let d = |update_num, update_max_unavailable| Diffs {
        update_num,
        update_max_unavailable,
        ..Diffs::default()
    };
    let rows: Vec<(&str, Vec<&PodRecord>, Diffs, usize)> = vec![
        ("budget 1, all available: one", old.iter().collect(), d(4, 1), 1),
        ("budget 2: two", old.iter().collect(), d(4, 2), 2),
        ("update num caps the budget", old.iter().collect(), d(1, 3), 1),
        (
            "an unavailable pod at the target uses the budget",
            old.iter().chain(std::iter::once(&updating_new)).collect(),
            d(3, 1),
            0,
        ),
    ];
    for (name, pods, diffs, want) in rows {
        let c = ctx(&cs, &pods);
        let candidates: Vec<&PodRecord> = pods
            .iter()
            .copied()
            .filter(|p| pods::is_at_revision(p, "demo-1"))
            .collect();
        assert_eq!(limit(&c, &diffs, candidates, "demo-2").len(), want, "{name}");
    }
    let mut with_unready_old: Vec<PodRecord> = old.clone();
    with_unready_old[3] = unready(with_unready_old[3].clone());
    let pods: Vec<&PodRecord> = with_unready_old.iter().collect();
    let c = ctx(&cs, &pods);
    let mut candidates = pods.clone();
    sort_candidates(&c, &mut candidates);
    let chosen = limit(&c, &d(4, 2), candidates, "demo-2");
    assert_eq!(
        names(&chosen),
        vec!["o3", "o0"],
        "updating an already unavailable pod costs nothing extra"
    );
}
