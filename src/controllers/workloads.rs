//! Workloads behind PUB and WorkloadSpread target references: their desired replicas and their pods
//! (OpenKruise's controller finder). Read from the cluster cache; an Advanced StatefulSet the cache does
//! not hold (yet) is read from the API server by name.

use kruise_api::PodRecord;
use std::{collections::BTreeSet, sync::Arc};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference};
use kruise_api::apps_v1beta1::StatefulSet as AdvancedStatefulSet;
use kube::Api;

use super::{Context, Error};

/// A resolved workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    pub replicas: i32,
    pub selector: Option<LabelSelector>,
    pub deleting: bool,
}

/// The API group of an `apiVersion` (`apps/v1` → `apps`, `v1` → ``).
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("")
}

fn uid_matches(expected: Option<&str>, uid: Option<&String>) -> bool {
    expected.is_none_or(|e| uid.map(String::as_str) == Some(e))
}

/// Finds the workload `kind` `name` of group `apiVersion` in `namespace` (and, when given, with `uid`).
/// A ReplicaSet controlled by a Deployment resolves to the Deployment when `follow_deployment`.
/// Kinds the cache does not know (ReplicationController, custom scale kinds) resolve to `None`.
pub async fn resolve(
    context: &Context,
    api_version: &str,
    kind: &str,
    namespace: &str,
    name: &str,
    uid: Option<&str>,
    follow_deployment: bool,
) -> Result<Option<Workload>, Error> {
    let view = &context.view;
    let group = group_of(api_version);
    let workload =
        |meta: &kube::api::ObjectMeta, replicas: Option<i32>, selector: Option<LabelSelector>| Workload {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            name: name.to_string(),
            uid: meta.uid.clone().unwrap_or_default(),
            replicas: replicas.unwrap_or(1),
            selector,
            deleting: meta.deletion_timestamp.is_some(),
        };
    Ok(match (group, kind) {
        ("apps", "Deployment") => view
            .deployment(namespace, name)
            .filter(|d| uid_matches(uid, d.metadata.uid.as_ref()))
            .map(|d| workload(&d.metadata, d.spec.replicas, Some(d.spec.selector.clone()))),
        ("apps", "ReplicaSet") => {
            let Some(rs) = view
                .replica_set(namespace, name)
                .filter(|r| uid_matches(uid, r.metadata.uid.as_ref()))
            else {
                return Ok(None);
            };
            if follow_deployment
                && let Some(owner) = kruise_core::kind::controller_ref(&rs.metadata)
                && owner.kind == "Deployment"
            {
                return Box::pin(resolve(
                    context,
                    &owner.api_version,
                    "Deployment",
                    namespace,
                    &owner.name,
                    Some(&owner.uid),
                    false,
                ))
                .await;
            }
            Some(workload(
                &rs.metadata,
                rs.spec.replicas,
                Some(rs.spec.selector.clone()),
            ))
        }
        ("apps", "StatefulSet") => view
            .stateful_set(namespace, name)
            .filter(|s| uid_matches(uid, s.metadata.uid.as_ref()))
            .map(|s| workload(&s.metadata, s.spec.replicas, Some(s.spec.selector.clone()))),
        ("apps.kruise.io", "CloneSet") => view
            .clone_set(namespace, name)
            .filter(|c| uid_matches(uid, c.metadata.uid.as_ref()))
            .map(|c| workload(&c.metadata, c.spec.replicas, c.spec.selector.clone())),
        ("apps.kruise.io", "StatefulSet") => {
            let object = advanced_stateful_set(context, namespace, name).await?;
            object
                .filter(|o| uid_matches(uid, o.metadata.uid.as_ref()))
                .map(|o| workload(&o.metadata, o.spec.replicas, o.spec.selector.clone()))
        }
        ("batch", "Job") => view
            .job(namespace, name)
            .filter(|j| uid_matches(uid, j.metadata.uid.as_ref()))
            .map(|j| {
                let spec = j.spec.as_ref();
                workload(
                    &j.metadata,
                    spec.and_then(|s| s.parallelism),
                    spec.and_then(|s| s.selector.clone()),
                )
            }),
        _ => None,
    })
}

async fn advanced_stateful_set(
    context: &Context,
    namespace: &str,
    name: &str,
) -> Result<Option<Arc<AdvancedStatefulSet>>, Error> {
    if let Some(set) = kruise_core::view::get(&*context.view, namespace, name) {
        return Ok(Some(set));
    }
    let api: Api<AdvancedStatefulSet> = Api::namespaced(context.client.clone(), namespace);
    Ok(api.get_opt(name).await?.map(Arc::new))
}

fn owned_by(pod: &PodRecord, uids: &BTreeSet<String>) -> bool {
    pod.metadata
        .owner_references
        .as_ref()
        .is_some_and(|owners| owners.iter().any(|o| uids.contains(&o.uid)))
}

/// The pods of a target reference and its desired replicas (`GetPodsForRef`). Replicas 0 or a missing
/// or deleting workload mean no pods. Deployments own their pods through ReplicaSets.
pub async fn pods_for_ref(
    context: &Context,
    api_version: &str,
    kind: &str,
    namespace: &str,
    name: &str,
    active_only: bool,
) -> Result<(Vec<Arc<PodRecord>>, i32), Error> {
    let Some(workload) = resolve(context, api_version, kind, namespace, name, None, false).await? else {
        return Ok((Vec::new(), 0));
    };
    if workload.deleting || workload.replicas == 0 {
        return Ok((Vec::new(), 0));
    }
    let all = context.view.pods(namespace);
    let mut uids = BTreeSet::from([workload.uid.clone()]);
    if kind == "Deployment" {
        // The ReplicaSets this Deployment controls, as named by the pods' owners.
        let mut replica_sets = BTreeSet::new();
        for pod in &all {
            if let Some(owner) = kruise_core::kind::controller_ref(&pod.metadata)
                && owner.kind == "ReplicaSet"
                && let Some(rs) = context.view.replica_set(namespace, &owner.name)
                && rs.metadata.deletion_timestamp.is_none()
                && kruise_core::kind::controller_ref(&rs.metadata).is_some_and(|o| o.uid == workload.uid)
            {
                replica_sets.insert(owner.uid.clone());
            }
        }
        if !replica_sets.is_empty() {
            uids = replica_sets;
        }
    }
    let matched = all
        .into_iter()
        .filter(|p| owned_by(p, &uids))
        .filter(|p| !active_only || kruise_core::pod_state::is_active(p))
        .collect();
    Ok((matched, workload.replicas))
}

/// The summed desired replicas of the distinct controllers of `pods` (`GetExpectedScaleForPods`): a
/// ReplicaSet controlled by a Deployment counts as the Deployment; pods without a controller, and
/// controllers that are gone or being deleted, add nothing.
pub async fn expected_scale_for_pods(
    context: &Context,
    namespace: &str,
    pods: &[Arc<PodRecord>],
) -> Result<i32, Error> {
    let mut seen_refs = BTreeSet::new();
    let mut workloads = std::collections::BTreeMap::new();
    for pod in pods {
        let Some(owner): Option<&OwnerReference> = kruise_core::kind::controller_ref(&pod.metadata) else {
            continue;
        };
        if !seen_refs.insert(owner.uid.clone()) {
            continue;
        }
        let found = resolve(
            context,
            &owner.api_version,
            &owner.kind,
            namespace,
            &owner.name,
            Some(&owner.uid),
            true,
        )
        .await?;
        if let Some(w) = found.filter(|w| !w.deleting) {
            workloads.insert(w.uid.clone(), w.replicas);
        }
    }
    Ok(workloads.values().sum())
}
