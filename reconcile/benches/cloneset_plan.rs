//! One plan over a 1,000-pod CloneSet in the middle of an in-place rollout (400 pods updated and
//! carrying their in-place state, 600 to go, maxUnavailable 20% so 200 pods are updated in this pass,
//! a weight priority, 50 nodes), target ≤ 1 ms. Runs on mimalloc, the allocator of the
//! `kruise` binary that will host the controller.
//!
//! For instruction counts, `CLONESET_PLAN_ITERS=<n>` skips criterion: the binary runs `n` plans after
//! the setup and exits. Instructions per plan = (Ir with `n` − Ir with 0) / `n`, both counted by
//! `valgrind --tool=callgrind <bench binary> --bench`.

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::{Container, PodReadinessGate, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{
    CloneSet, CloneSetPodUpdateStrategyType, CloneSetSpec, CloneSetStatus, RollingUpdateCloneSetStrategy,
};
use kruise_api::common::{IN_PLACE_UPDATE_STATE_KEY, UpdatePriorityStrategy, UpdatePriorityWeightTerm};
use kruise_api::pod::PodConditionRecord;
use kruise_api::pod::{ContainerRecord, ContainerStatusRecord, PodRecordSpec, PodRecordStatus};
use kruise_reconcile::Expectations;
use kruise_reconcile::cloneset::pod_template::seeded_ids;
use kruise_reconcile::cloneset::{Input, Options, plan, revision};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn cloneset(image: &str) -> CloneSet {
    let labels = [("app".to_string(), "demo".to_string())];
    let mut cs = CloneSet::new(
        "demo",
        CloneSetSpec {
            replicas: Some(1000),
            selector: Some(LabelSelector {
                match_labels: Some(labels.clone().into()),
                ..Default::default()
            }),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels.into()),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "app".into(),
                        image: Some(image.into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
    );
    cs.metadata.namespace = Some("ns".into());
    cs.metadata.uid = Some("uid".into());
    cs.spec.update_strategy.rolling_update = Some(RollingUpdateCloneSetStrategy {
        pod_update_policy: Some(CloneSetPodUpdateStrategyType::InPlaceIfPossible),
        max_unavailable: Some(IntOrString::String("20%".into())),
        priority_strategy: Some(UpdatePriorityStrategy {
            weight_priority: Some(vec![UpdatePriorityWeightTerm {
                weight: 50,
                match_selector: LabelSelector {
                    match_labels: Some([("zone".to_string(), "a".to_string())].into()),
                    ..Default::default()
                },
            }]),
            order_priority: None,
        }),
        ..Default::default()
    });
    cs
}

fn pod(i: usize, revision: &str, image: &str, now: Timestamp) -> PodRecord {
    let mut p = PodRecord::default();
    p.metadata.name = Some(format!("demo-{i:05}"));
    p.metadata.uid = Some(format!("uid-{i}"));
    p.metadata.labels = kruise_api::pod::InternedMap::from(Some(
        [
            ("app", "demo"),
            ("controller-revision-hash", revision),
            ("pod-template-hash", revision.rsplit('-').next().unwrap()),
            ("apps.kruise.io/cloneset-instance-id", &format!("{i:05}")),
            ("zone", if i.is_multiple_of(3) { "a" } else { "b" }),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
    ));
    let ready_since = Time(
        now.checked_sub(SignedDuration::from_secs(600 + i as i64))
            .unwrap(),
    );
    p.spec = Some(PodRecordSpec {
        containers: vec![ContainerRecord {
            name: "app".into(),
            image: Some(image.into()),
            ..Default::default()
        }],
        node_name: Some(format!("node-{}", i % 50)),
        readiness_gates: Some(vec![PodReadinessGate {
            condition_type: "InPlaceUpdateReady".into(),
        }]),
        volumes: None,
        restart_policy: None,
        pinned_node: None,
        ..Default::default()
    });
    let cond = |t: &str| PodConditionRecord {
        type_: t.into(),
        status: "True".into(),
        last_transition_time: Some(ready_since.clone()),
        ..Default::default()
    };
    p.status = Some(PodRecordStatus {
        phase: Some("Running".into()),
        conditions: Some(vec![
            cond("Ready"),
            cond("InPlaceUpdateReady"),
            cond("PodScheduled"),
        ]),
        container_statuses: Some(vec![ContainerStatusRecord {
            name: "app".into(),
            image: image.into(),
            image_id: format!("id-{image}"),
            ready: true,
            ..Default::default()
        }]),
        ..Default::default()
    });
    p
}

fn bench(c: &mut Criterion) {
    let now: Timestamp = "2026-01-01T12:00:00Z".parse().unwrap();
    let v1 = revision::new_revision(&cloneset("app:1"), 1, None);
    let mut cs = cloneset("app:2");
    let v2 = revision::new_revision(&cs, 2, None);
    let (n1, n2) = (
        v1.metadata.name.clone().unwrap(),
        v2.metadata.name.clone().unwrap(),
    );
    cs.status = Some(CloneSetStatus {
        current_revision: Some(n1.clone()),
        ..Default::default()
    });
    // The updated pods carry the state of their (completed) in-place update.
    let state = format!(
        r#"{{"revision":"{n2}","updateTimestamp":"2026-01-01T11:50:00Z","lastContainerStatuses":{{"app":{{"imageID":"id-app:1"}}}},"updateImages":true,"containerBatchesRecord":[{{"timestamp":"2026-01-01T11:50:00Z","containers":["app"]}}]}}"#
    );
    let pods: Vec<PodRecord> = (0..1000)
        .map(|i| {
            if i < 400 {
                let mut p = pod(i, &n2, "app:2", now);
                p.metadata.annotations = kruise_api::pod::InternedMap::from(Some(
                    [(IN_PLACE_UPDATE_STATE_KEY.to_string(), state.clone())].into(),
                ));
                p
            } else {
                pod(i, &n1, "app:1", now)
            }
        })
        .collect();
    let revisions = vec![v1, v2];
    let input = Input {
        cloneset: &cs,
        pods: &pods,
        revisions: &revisions,
        pvcs: &[],
        now,
        options: Options::default(),
    };
    let expectations = Expectations::default();
    let first = plan(&input, &expectations, &mut seeded_ids(1)).unwrap();
    assert!(!first.actions.is_empty(), "mid-rollout: the plan updates pods");
    if let Some(n) = std::env::var("CLONESET_PLAN_ITERS")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        for _ in 0..n {
            std::hint::black_box(
                plan(std::hint::black_box(&input), &expectations, &mut seeded_ids(1)).unwrap(),
            );
        }
        return;
    }
    c.bench_function("plan/1000 pods mid-rollout", |b| {
        b.iter(|| plan(std::hint::black_box(&input), &expectations, &mut seeded_ids(1)).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
