//! One plan over a 1,000-replica Advanced StatefulSet in the middle of a Parallel in-place rollout
//! (400 pods updated and carrying their in-place state, 600 to go, maxUnavailable 20% so 200 pods
//! are updated in this pass, 50 nodes), target ≤ 1 ms. Runs on mimalloc, the allocator of the
//! `kruise` binary that hosts the controller.
//!
//! For instruction counts, `STATEFULSET_PLAN_ITERS=<n>` skips criterion: the binary runs `n` plans
//! after the setup and exits (as `cloneset_plan.rs`).

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::{Container, PodReadinessGate, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{
    PodManagementPolicyType, PodUpdateStrategyType, RollingUpdateStatefulSetStrategy, StatefulSet,
    StatefulSetSpec, StatefulSetStatus,
};
use kruise_api::common::{IN_PLACE_UPDATE_STATE_KEY, LIFECYCLE_STATE_KEY};
use kruise_api::pod::PodConditionRecord;
use kruise_api::pod::{ContainerRecord, ContainerStatusRecord, PodRecordSpec, PodRecordStatus};
use kruise_reconcile::Expectations;
use kruise_reconcile::statefulset::{Input, plan, revision};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn set(image: &str) -> StatefulSet {
    let labels = [("app".to_string(), "demo".to_string())];
    let mut s = StatefulSet::new(
        "demo",
        StatefulSetSpec {
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
            pod_management_policy: Some(PodManagementPolicyType::Parallel),
            ..Default::default()
        },
    );
    s.metadata.namespace = Some("ns".into());
    s.metadata.uid = Some("uid".into());
    s.spec.update_strategy.rolling_update = Some(RollingUpdateStatefulSetStrategy {
        pod_update_policy: Some(PodUpdateStrategyType::InPlaceIfPossible),
        max_unavailable: Some(IntOrString::String("20%".into())),
        ..Default::default()
    });
    s
}

fn pod(i: usize, revision: &str, image: &str, now: Timestamp) -> PodRecord {
    let mut p = PodRecord::default();
    let name = format!("demo-{i}");
    p.metadata.name = Some(name.clone());
    p.metadata.uid = Some(format!("uid-{i}"));
    p.metadata.labels = [
        ("app", "demo"),
        ("controller-revision-hash", revision),
        ("statefulset.kubernetes.io/pod-name", &name),
        ("apps.kubernetes.io/pod-index", &i.to_string()),
        (LIFECYCLE_STATE_KEY, "Normal"),
    ]
    .into_iter()
    .collect();
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
        conditions: Some(vec![cond("Ready"), cond("InPlaceUpdateReady")]),
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
    let v1 = revision::new_revision(&set("app:1"), 1, Some(0));
    let mut s = set("app:2");
    let v2 = revision::new_revision(&s, 2, Some(0));
    let (n1, n2) = (
        v1.metadata.name.clone().unwrap(),
        v2.metadata.name.clone().unwrap(),
    );
    s.status = Some(StatefulSetStatus {
        current_revision: Some(n1.clone()),
        collision_count: Some(0),
        ..Default::default()
    });
    let state = format!(
        r#"{{"revision":"{n2}","updateTimestamp":"2026-01-01T11:50:00Z","lastContainerStatuses":{{"app":{{"imageID":"id-app:1"}}}},"updateImages":true,"containerBatchesRecord":[{{"timestamp":"2026-01-01T11:50:00Z","containers":["app"]}}]}}"#
    );
    // The highest ordinals are updated first.
    let pods: Vec<PodRecord> = (0..1000)
        .map(|i| {
            if i >= 600 {
                let mut p = pod(i, &n2, "app:2", now);
                p.metadata.annotations = [(IN_PLACE_UPDATE_STATE_KEY, state.as_str())]
                    .into_iter()
                    .collect();
                p
            } else {
                pod(i, &n1, "app:1", now)
            }
        })
        .collect();
    let revisions = vec![v1, v2];
    let input = Input {
        set: &s,
        pods: &pods,
        revisions: &revisions,
        pvcs: &[],
        now,
        env_from_metadata: true,
    };
    let expectations = Expectations::default();
    let first = plan(&input, &expectations).unwrap();
    assert!(!first.actions.is_empty(), "mid-rollout: the plan updates pods");
    if let Some(n) = std::env::var("STATEFULSET_PLAN_ITERS")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        for _ in 0..n {
            std::hint::black_box(plan(std::hint::black_box(&input), &expectations).unwrap());
        }
        return;
    }
    c.bench_function("statefulset plan/1000 pods mid-rollout", |b| {
        b.iter(|| plan(std::hint::black_box(&input), &expectations).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
