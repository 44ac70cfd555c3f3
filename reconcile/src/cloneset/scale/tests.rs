use super::*;
use crate::cloneset::arithmetic::Params;
use crate::cloneset::pod_template::seeded_ids;
use crate::cloneset::testing::{self, cloneset};
use crate::pods::fixtures::{pod, unready};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps_v1beta1::CloneSet;

fn ctx<'a>(cs: &'a CloneSet, pods: &[&'a PodRecord]) -> Ctx<'a> {
    Ctx {
        params: Params::resolve(cs, false, false).unwrap(),
        current_template: cs.spec.template.clone(),
        update_template: cs.spec.template.clone(),
        ..testing::ctx(cs, pods.to_vec())
    }
}

fn deleted(out: &ScaleOutcome) -> Vec<String> {
    out.actions
        .iter()
        .filter_map(|a| match a {
            Action::DeletePod { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

fn on_node(mut p: PodRecord, node: Option<&str>) -> PodRecord {
    p.spec.as_mut().unwrap().node_name = node.map(String::from);
    p
}

fn with_cost(mut p: PodRecord, cost: &str) -> PodRecord {
    p.metadata
        .annotations
        .insert(POD_DELETION_COST.into(), cost.into());
    p
}

fn restarted(mut p: PodRecord, n: i32) -> PodRecord {
    p.status.as_mut().unwrap().container_statuses = Some(vec![kruise_api::pod::ContainerStatusRecord {
        name: "app".into(),
        restart_count: n,
        ..Default::default()
    }]);
    p
}

#[test]
fn scale_down_order() {
    type Row = (&'static str, Vec<PodRecord>, &'static str);
    let rows: Vec<Row> = vec![
        (
            "unscheduled before scheduled",
            vec![pod("a", "demo-2"), on_node(pod("b", "demo-2"), None)],
            "b",
        ),
        (
            "not ready before ready",
            vec![pod("a", "demo-2"), unready(pod("b", "demo-2"))],
            "b",
        ),
        (
            "lower deletion cost first",
            vec![
                with_cost(pod("a", "demo-2"), "10"),
                with_cost(pod("b", "demo-2"), "-5"),
            ],
            "b",
        ),
        (
            "a pod doubled up on a node first",
            vec![
                on_node(pod("a", "demo-2"), Some("n1")),
                on_node(pod("b", "demo-2"), Some("n2")),
                on_node(pod("c", "demo-2"), Some("n2")),
            ],
            "b",
        ),
        (
            "more restarts first",
            vec![pod("a", "demo-2"), restarted(pod("b", "demo-2"), 3)],
            "b",
        ),
        (
            "old revision before new",
            vec![unready(pod("a", "demo-2")), pod("b", "demo-1")],
            "b",
        ),
    ];
    for (name, pods, want) in rows {
        let mut cs = cloneset(pods.len() as i32 - 1);
        cs.spec.update_strategy.rolling_update =
            Some(kruise_api::apps_v1beta1::RollingUpdateCloneSetStrategy {
                max_unavailable: Some(IntOrString::String("100%".into())),
                ..Default::default()
            });
        let refs: Vec<&PodRecord> = pods.iter().collect();
        let out = scale(&ctx(&cs, &refs), &mut seeded_ids(1));
        assert_eq!(deleted(&out), vec![want.to_string()], "{name}");
    }
}

#[test]
fn ready_pods_are_deleted_only_within_the_budget() {
    let mut cs = cloneset(1);
    cs.spec.update_strategy.rolling_update = Some(kruise_api::apps_v1beta1::RollingUpdateCloneSetStrategy {
        max_unavailable: Some(IntOrString::Int(0)),
        ..Default::default()
    });
    let pods: Vec<PodRecord> = (0..4).map(|i| pod(&format!("p{i}"), "demo-2")).collect();
    let refs: Vec<&PodRecord> = pods.iter().collect();
    let out = scale(&ctx(&cs, &refs), &mut seeded_ids(1));
    assert_eq!(out.diffs.unwrap().delete_ready_limit, 3);
    assert_eq!(deleted(&out).len(), 3);
}

#[test]
fn a_scale_up_limited_by_scale_max_unavailable_says_so() {
    let mut cs = cloneset(5);
    cs.spec.scale_strategy.max_unavailable = Some(IntOrString::Int(2));
    let pods = [unready(pod("p0", "demo-2"))];
    let refs: Vec<&PodRecord> = pods.iter().collect();
    let out = scale(&ctx(&cs, &refs), &mut seeded_ids(1));
    let creates = out
        .actions
        .iter()
        .filter(|a| matches!(a, Action::CreatePod(_)))
        .count();
    assert_eq!(creates, 1);
    assert!(matches!(
        &out.actions[0],
        Action::Event {
            reason: "ScaleUpLimited",
            ..
        }
    ));
    assert!(out.scaling());
}
