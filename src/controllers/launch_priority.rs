//! Container launch priority: the pod webhook gives every container env `KRUISE_CONTAINER_BARRIER` from
//! key `p_<priority>` of ConfigMap `<pod>-barrier`. Until that key exists kubelet cannot start the
//! container, which is the barrier. This controller creates the ConfigMap (owned by the pod, so it goes
//! away with it) and adds the key of the highest pending priority, one level at a time, as the
//! containers of higher priorities become ready; then it marks the pod
//! `apps.kruise.io/container-launch-priority-completed: "true"`.

use k8s_openapi::{api::core::v1::ConfigMap, apimachinery::pkg::apis::meta::v1::OwnerReference};
use kruise_api::{PodRecord, pod::ContainerRecord};
use kube::api::ObjectMeta;

/// The env var the webhook injects.
pub use kruise_core::names::CONTAINER_BARRIER_ENV as BARRIER_ENV;
/// Pod annotation set once every priority has been released.
pub const COMPLETED_ANNOTATION: &str = "apps.kruise.io/container-launch-priority-completed";

/// The barrier ConfigMap of a pod.
pub fn barrier_name(pod_name: &str) -> String {
    format!("{pod_name}-barrier")
}

/// The ConfigMap key of a priority.
pub fn key(priority: i64) -> String {
    format!("p_{priority}")
}

/// A container's launch priority, from its barrier env key (`p_<n>`); `None` without the env. A key
/// that does not parse counts as 0, as in OpenKruise.
pub fn container_priority(container: &ContainerRecord) -> Option<i64> {
    let env = container.env.as_ref()?.iter().find(|e| e.name == BARRIER_ENV)?;
    let key = env
        .value_from
        .as_ref()
        .and_then(|v| v.config_map_key_ref.as_ref())
        .map(|r| r.key.as_str())
        .unwrap_or("");
    Some(key.get(2..).and_then(|p| p.parse().ok()).unwrap_or(0))
}

/// The priorities of the containers that are not ready yet, ascending.
pub fn next_priorities(pod: &PodRecord) -> Vec<i64> {
    let ready: Vec<&str> = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .map(|all| all.iter().filter(|c| c.ready).map(|c| c.name.as_str()).collect())
        .unwrap_or_default();
    let mut priorities: Vec<i64> = pod
        .containers()
        .iter()
        .filter(|c| !ready.contains(&c.name.as_str()))
        .filter_map(container_priority)
        .collect();
    priorities.sort_unstable();
    priorities
}

fn containers_ready(pod: &PodRecord) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| {
            c.iter()
                .any(|c| c.type_ == "ContainersReady" && c.status == "True")
        })
}

/// Whether the pod needs the controller at all (no API read needed to decide).
pub fn wanted(pod: &PodRecord) -> bool {
    let completed = pod.metadata.annotations.get(COMPLETED_ANNOTATION) == Some("true");
    !completed && !containers_ready(pod) && !next_priorities(pod).is_empty()
}

/// One write.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Create the (empty) barrier ConfigMap, owned by the pod.
    CreateBarrier(Box<ConfigMap>),
    /// Add `key: "true"` to the barrier.
    AddKey(String),
    /// Annotate the pod as completed.
    MarkCompleted,
}

fn has_key(barrier: &ConfigMap, priority: i64) -> bool {
    barrier
        .data
        .as_ref()
        .is_some_and(|d| d.contains_key(&key(priority)))
}

/// The empty barrier of `pod`, owned by it.
pub fn barrier_for(pod: &PodRecord) -> ConfigMap {
    let name = pod.metadata.name.clone().unwrap_or_default();
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(barrier_name(&name)),
            namespace: pod.metadata.namespace.clone(),
            owner_references: Some(vec![OwnerReference {
                api_version: "v1".into(),
                kind: "Pod".into(),
                name,
                uid: pod.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: None,
            }]),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// What to write for `pod`, given its barrier ConfigMap (`None`: not found). With no barrier the only
/// step is creating it; the next pass continues from the created one.
pub fn plan(pod: &PodRecord, barrier: Option<&ConfigMap>) -> Vec<Step> {
    if !wanted(pod) {
        return Vec::new();
    }
    let Some(barrier) = barrier else {
        return vec![Step::CreateBarrier(Box::new(barrier_for(pod)))];
    };
    let next = next_priorities(pod);
    let (Some(&lowest), Some(&highest)) = (next.first(), next.last()) else {
        return vec![Step::MarkCompleted];
    };
    if has_key(barrier, lowest) {
        return vec![Step::MarkCompleted];
    }
    let mut steps = Vec::new();
    if !has_key(barrier, highest) {
        steps.push(Step::AddKey(key(highest)));
    }
    if highest == lowest {
        steps.push(Step::MarkCompleted);
    }
    steps
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn container(name: &str, priority: Option<i64>) -> Value {
        match priority {
            Some(p) => json!({"name": name, "env": [{"name": BARRIER_ENV, "valueFrom":
                {"configMapKeyRef": {"name": "web-0-barrier", "key": key(p)}}}]}),
            None => json!({"name": name}),
        }
    }

    fn pod(containers: &[(&str, Option<i64>, bool)]) -> PodRecord {
        serde_json::from_value(json!({
            "metadata": {"name": "web-0", "namespace": "ns", "uid": "u-1"},
            "spec": {"containers": containers.iter().map(|(n, p, _)| container(n, *p)).collect::<Vec<_>>()},
            "status": {"containerStatuses": containers.iter()
                .map(|(n, _, ready)| json!({"name": n, "ready": ready, "image": "x", "imageID": "",
                    "restartCount": 0}))
                .collect::<Vec<_>>()},
        }))
        .unwrap()
    }

    fn barrier(keys: &[&str]) -> ConfigMap {
        ConfigMap {
            data: Some(keys.iter().map(|k| (k.to_string(), "true".to_string())).collect()),
            ..ConfigMap::default()
        }
    }

    #[test]
    fn next_priorities_skip_ready_containers_and_containers_without_env() {
        let p = pod(&[
            ("a", Some(3), false),
            ("b", Some(5), true),
            ("c", Some(0), false),
            ("d", None, false),
            ("e", Some(-1), false),
            ("f", Some(4), false),
        ]);
        assert_eq!(next_priorities(&p), vec![-1, 0, 3, 4]);
    }

    #[test]
    fn the_barrier_opens_one_level_at_a_time() {
        // The timeline of docs/launch-priority.md#timeline: A has priority 0, B priority 10.
        let both_waiting = pod(&[("a", Some(0), false), ("b", Some(10), false)]);
        let b_ready = pod(&[("a", Some(0), false), ("b", Some(10), true)]);
        let cases: Vec<(&str, &PodRecord, Option<ConfigMap>, Vec<Step>)> = vec![
            (
                "no barrier yet: create it empty, owned by the pod",
                &both_waiting,
                None,
                vec![Step::CreateBarrier(Box::new(barrier_for(&both_waiting)))],
            ),
            (
                "empty barrier: release the highest priority",
                &both_waiting,
                Some(barrier(&[])),
                vec![Step::AddKey("p_10".into())],
            ),
            (
                "p_10 released, B not ready yet: wait",
                &both_waiting,
                Some(barrier(&["p_10"])),
                vec![],
            ),
            (
                "B ready: release p_0, the last level, and complete",
                &b_ready,
                Some(barrier(&["p_10"])),
                vec![Step::AddKey("p_0".into()), Step::MarkCompleted],
            ),
            (
                "lowest already released: complete",
                &both_waiting,
                Some(barrier(&["p_0"])),
                vec![Step::MarkCompleted],
            ),
        ];
        for (name, pod, barrier, expected) in cases {
            assert_eq!(plan(pod, barrier.as_ref()), expected, "{name}");
        }
    }

    #[test]
    fn the_barrier_is_owned_by_the_pod() {
        let cm = barrier_for(&pod(&[("a", Some(0), false), ("b", Some(1), false)]));
        assert_eq!(cm.metadata.name.as_deref(), Some("web-0-barrier"));
        assert_eq!(cm.metadata.namespace.as_deref(), Some("ns"));
        let owner = &cm.metadata.owner_references.unwrap()[0];
        assert_eq!(
            (
                owner.kind.as_str(),
                owner.name.as_str(),
                owner.uid.as_str(),
                owner.controller
            ),
            ("Pod", "web-0", "u-1", Some(true))
        );
    }

    #[test]
    fn completed_or_ready_pods_are_left_alone() {
        let mut done = pod(&[("a", Some(0), false), ("b", Some(1), false)]);
        done.metadata.annotations = [(COMPLETED_ANNOTATION, "true")].into_iter().collect();
        assert!(plan(&done, None).is_empty());
        let all_ready = pod(&[("a", Some(0), true), ("b", Some(1), true)]);
        assert!(plan(&all_ready, None).is_empty());
        let plain = pod(&[("a", None, false)]);
        assert!(plan(&plain, None).is_empty());
    }
}
