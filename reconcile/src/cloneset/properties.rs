//! Property tests over random CloneSets and pod sets: one plan never creates more than
//! `replicas + maxSurge` pods, and never takes more available pods down than the unavailability
//! budget allows.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::PodReadinessGate;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{
    CloneSetPodUpdateStrategyType as Policy, CloneSetStatus, RollingUpdateCloneSetStrategy,
};
use kruise_api::common::{IN_PLACE_UPDATE_READY, LIFECYCLE_STATE_KEY};
use kruise_api::pod::{ContainerRecord, ContainerStatusRecord};
use proptest::prelude::*;

use crate::Expectations;
use crate::action::Action;
use crate::cloneset::arithmetic::Params;
use crate::cloneset::pod_template::seeded_ids;
use crate::cloneset::testing::cloneset;
use crate::cloneset::{Input, Options, plan, revision};
use crate::pods::fixtures::{labelled, now, pod, unready};
use crate::pods::{self, SPECIFIED_DELETE};

#[derive(Debug, Clone)]
struct PodSpec {
    new: bool,
    ready: bool,
    state: &'static str,
    specified_delete: bool,
}

fn pod_spec() -> impl Strategy<Value = PodSpec> {
    (
        any::<bool>(),
        prop::bool::weighted(0.8),
        prop_oneof![
            8 => prop::sample::select(vec!["", "Normal"]),
            1 => prop::sample::select(vec!["PreparingNormal", "PreparingDelete", "Updating"]),
        ],
        prop::bool::weighted(0.15),
    )
        .prop_map(|(new, ready, state, specified_delete)| PodSpec {
            new,
            ready,
            state,
            specified_delete,
        })
}

fn int_or_percent(max: i32) -> impl Strategy<Value = IntOrString> {
    prop_oneof![
        (0..=max).prop_map(IntOrString::Int),
        prop::sample::select(vec![0, 10, 20, 25, 34, 50, 100])
            .prop_map(|p| IntOrString::String(format!("{p}%"))),
    ]
}

#[derive(Debug, Clone)]
struct Case {
    replicas: i32,
    partition: IntOrString,
    max_surge: IntOrString,
    max_unavailable: IntOrString,
    policy: Policy,
    paused: bool,
    pods: Vec<PodSpec>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        0..9i32,
        int_or_percent(9),
        int_or_percent(3),
        int_or_percent(4),
        prop::sample::select(vec![
            Policy::ReCreate,
            Policy::InPlaceIfPossible,
            Policy::InPlaceOnly,
        ]),
        prop::bool::weighted(0.1),
        prop::collection::vec(pod_spec(), 0..12),
    )
        .prop_map(
            |(replicas, partition, max_surge, max_unavailable, policy, paused, pods)| Case {
                replicas,
                partition,
                max_surge,
                max_unavailable,
                policy,
                paused,
                pods,
            },
        )
}

fn build_pod(i: usize, s: &PodSpec, revision: &str, image: &str) -> PodRecord {
    let mut p = pod(&format!("demo-p{i:04}"), revision);
    if !s.ready {
        p = unready(p);
    }
    if !s.state.is_empty() {
        p = labelled(p, LIFECYCLE_STATE_KEY, s.state);
    }
    if s.specified_delete {
        p = labelled(p, SPECIFIED_DELETE, "true");
    }
    let spec = p.spec.as_mut().unwrap();
    spec.containers = vec![ContainerRecord {
        name: "app".into(),
        image: Some(image.into()),
        ..Default::default()
    }];
    spec.readiness_gates = Some(vec![PodReadinessGate {
        condition_type: IN_PLACE_UPDATE_READY.into(),
    }]);
    let status = p.status.as_mut().unwrap();
    status.container_statuses = Some(vec![ContainerStatusRecord {
        name: "app".into(),
        image: image.into(),
        image_id: format!("id-{image}"),
        ready: s.ready,
        ..Default::default()
    }]);
    status
        .conditions
        .as_mut()
        .unwrap()
        .push(kruise_api::pod::PodConditionRecord {
            type_: IN_PLACE_UPDATE_READY.into(),
            status: "True".into(),
            ..Default::default()
        });
    p
}

/// Available pods a plan takes down: deleted, or moved into a non-available lifecycle state or an
/// in-place update.
fn taken_down(actions: &[Action], available: &BTreeSet<String>) -> usize {
    let mut down = BTreeSet::new();
    for a in actions {
        let name = match a {
            Action::DeletePod { name, .. } => name,
            Action::PatchPod {
                name,
                reason: "inPlaceUpdate",
                ..
            } => name,
            Action::PatchPod {
                name,
                reason: "lifecycle",
                patch,
            } => {
                let state = patch["metadata"]["labels"][LIFECYCLE_STATE_KEY]
                    .as_str()
                    .unwrap_or("Normal");
                if state == "Normal" {
                    continue;
                }
                name
            }
            Action::PatchPodStatus { name, patch }
                if patch["status"]["conditions"][0]["status"] == "False" =>
            {
                name
            }
            _ => continue,
        };
        if available.contains(name) {
            down.insert(name.clone());
        }
    }
    down.len()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn one_plan_respects_surge_and_unavailability(c in case()) {
        let old = cloneset(c.replicas);
        let v1 = revision::new_revision(&old, 1, None);
        let mut cs = old.clone();
        cs.spec.template.spec.as_mut().unwrap().containers[0].image = Some("app:2".into());
        cs.spec.update_strategy.rolling_update = Some(RollingUpdateCloneSetStrategy {
            partition: Some(c.partition.clone()),
            max_surge: Some(c.max_surge.clone()),
            max_unavailable: Some(c.max_unavailable.clone()),
            pod_update_policy: Some(c.policy.clone()),
            paused: c.paused,
            ..Default::default()
        });
        let v2 = revision::new_revision(&cs, 2, None);
        let (n1, n2) = (v1.metadata.name.clone().unwrap(), v2.metadata.name.clone().unwrap());
        cs.status = Some(CloneSetStatus { current_revision: Some(n1.clone()), ..Default::default() });
        let params = Params::resolve(&cs, false, false).unwrap();
        // What validation rejects.
        prop_assume!(c.replicas == 0 || params.max_unavailable >= 1 || params.max_surge >= 1);
        prop_assume!(!(c.policy == Policy::InPlaceOnly && params.max_surge > 0));

        let pods: Vec<PodRecord> = c.pods.iter().enumerate().map(|(i, s)| {
            if s.new { build_pod(i, s, &n2, "app:2") } else { build_pod(i, s, &n1, "app:1") }
        }).collect();
        let revisions = vec![v1, v2];
        let input = Input { cloneset: &cs, pods: &pods, revisions: &revisions, pvcs: &[], now: now(), options: Options::default() };
        let p = plan(&input, &Expectations::default(), &mut seeded_ids(9)).unwrap();

        let n = pods.len() as i64;
        let created = p.actions.iter().filter(|a| matches!(a, Action::CreatePod(_))).count() as i64;
        prop_assert!(created == 0 || n + created <= params.replicas + params.max_surge,
            "created {created} with {n} pods, replicas {}, maxSurge {}", params.replicas, params.max_surge);

        let available: BTreeSet<String> =
            pods.iter().filter(|p| pods::is_available(p, 0, now())).map(|p| pods::name(p).to_owned()).collect();
        let down = taken_down(&p.actions, &available) as i64;
        let budget = (params.max_unavailable + n - params.replicas).max(0);
        prop_assert!(down <= budget, "took {down} available pods down, budget {budget}: {:?}", p.actions);
        if down > 0 && !c.pods.iter().any(|s| s.specified_delete) {
            let floor = params.replicas - params.max_unavailable;
            prop_assert!(available.len() as i64 - down >= floor,
                "availability fell to {} below replicas - maxUnavailable = {floor}", available.len() as i64 - down);
        }
        prop_assert!(!(p.scaled && p.actions.iter().any(|a| matches!(a, Action::PatchPod { reason: "inPlaceUpdate" | "specifiedDelete", .. }))),
            "scale and update in the same pass");
    }
}
