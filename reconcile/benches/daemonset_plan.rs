//! One plan over an Advanced DaemonSet on 5,000 nodes in the middle of a rollout (2,000 nodes at the
//! new revision, 3,000 to go, maxUnavailable 10% so 500 pods are replaced in this pass; 50 nodes
//! tainted `NoSchedule` and tolerated), target ≤ 2 ms. Runs on mimalloc, the allocator of the `kruise`
//! binary that hosts the controller.
//!
//! For instruction counts, `DAEMONSET_PLAN_ITERS=<n>` skips criterion: the binary runs `n` plans after
//! the setup and exits (as `statefulset_plan.rs`).

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::{Container, Node, NodeSpec, PodSpec, PodTemplateSpec, Taint, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{DaemonSet, DaemonSetSpec, RollingUpdateDaemonSet};
use kruise_api::pod::PodConditionRecord;
use kruise_api::pod::{PodRecordSpec, PodRecordStatus};
use kruise_reconcile::Expectations;
use kruise_reconcile::daemonset::{Input, plan, revision};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const NODES: usize = 5000;

fn daemon_set(image: &str) -> DaemonSet {
    let labels = [("app".to_string(), "agent".to_string())];
    let mut ds = DaemonSet::new(
        "agent",
        DaemonSetSpec {
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
                        name: "agent".into(),
                        image: Some(image.into()),
                        ..Default::default()
                    }],
                    tolerations: Some(vec![Toleration {
                        key: Some("dedicated".into()),
                        operator: Some("Exists".into()),
                        ..Default::default()
                    }]),
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
    );
    ds.metadata.namespace = Some("ns".into());
    ds.metadata.uid = Some("uid".into());
    ds.spec.update_strategy.rolling_update = Some(RollingUpdateDaemonSet {
        max_unavailable: Some(IntOrString::String("10%".into())),
        ..Default::default()
    });
    ds
}

fn node(i: usize) -> Node {
    let mut n = Node::default();
    n.metadata.name = Some(format!("node-{i:05}"));
    n.metadata.labels = Some([("kubernetes.io/hostname".to_string(), format!("node-{i:05}"))].into());
    if i.is_multiple_of(100) {
        n.spec = Some(NodeSpec {
            taints: Some(vec![Taint {
                key: "dedicated".into(),
                effect: "NoSchedule".into(),
                ..Default::default()
            }]),
            ..Default::default()
        });
    }
    n
}

fn pod(i: usize, hash: &str, now: Timestamp) -> PodRecord {
    let mut p = PodRecord::default();
    p.metadata.name = Some(format!("agent-{i:05}"));
    p.metadata.namespace = Some("ns".into());
    p.metadata.uid = Some(format!("uid-{i}"));
    let since = Time(now.checked_sub(SignedDuration::from_secs(3600)).unwrap());
    p.metadata.creation_timestamp = Some(since.clone());
    p.metadata.labels = kruise_api::pod::InternedMap::from(Some(
        [
            ("app".to_string(), "agent".to_string()),
            ("controller-revision-hash".to_string(), hash.to_string()),
        ]
        .into(),
    ));
    p.spec = Some(PodRecordSpec {
        node_name: Some(format!("node-{i:05}")),
        ..Default::default()
    });
    p.status = Some(PodRecordStatus {
        phase: Some("Running".into()),
        conditions: Some(vec![PodConditionRecord {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(since),
            ..Default::default()
        }]),
        ..Default::default()
    });
    p
}

fn bench(c: &mut Criterion) {
    let now: Timestamp = "2026-01-01T12:00:00Z".parse().unwrap();
    let v1 = revision::new_revision(&daemon_set("agent:1"), 1, None);
    let ds = daemon_set("agent:2");
    let v2 = revision::new_revision(&ds, 2, None);
    let (h1, h2) = (
        revision::hash_of(&v1).to_owned(),
        revision::hash_of(&v2).to_owned(),
    );
    let nodes: Vec<Node> = (0..NODES).map(node).collect();
    // The highest names are updated first.
    let pods: Vec<PodRecord> = (0..NODES)
        .map(|i| pod(i, if i >= 3000 { &h2 } else { &h1 }, now))
        .collect();
    let revisions = vec![v1, v2];
    let input = Input {
        ds: &ds,
        nodes: &nodes,
        pods: &pods,
        revisions: &revisions,
        now,
        env_from_metadata: false,
    };
    let expectations = Expectations::default();
    let first = plan(&input, &expectations).unwrap();
    let deletes = first
        .actions
        .iter()
        .filter(|a| matches!(a, kruise_reconcile::Action::DeletePod { .. }))
        .count();
    assert_eq!(deletes, 500, "mid-rollout: 10% of 5,000 nodes replaced");
    if let Some(n) = std::env::var("DAEMONSET_PLAN_ITERS")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        for _ in 0..n {
            std::hint::black_box(plan(std::hint::black_box(&input), &expectations).unwrap());
        }
        return;
    }
    c.bench_function("daemonset plan/5000 nodes mid-rollout", |b| {
        b.iter(|| plan(std::hint::black_box(&input), &expectations).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
