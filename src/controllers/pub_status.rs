//! PodUnavailableBudget status. The admission webhook spends the budget (decrements `unavailableAllowed`
//! and records the pod in `disruptedPods`/`unavailablePods`); this controller recounts it from the pods
//! and prunes records the cluster has caught up with:
//!
//! - `desiredAvailable`: `max(expected − maxUnavailable, 0)` (percent rounded up), or `minAvailable`;
//! - a `disruptedPods` record lives 20s ([`DELETION_TIMEOUT`]) while its pod is still there, an
//!   `unavailablePods` record 10s ([`UPDATED_DELAY_CHECK`]); records of pods that are gone disappear;
//! - `currentAvailable`: active pods outside both maps that are consistent and Running+Ready without an
//!   `unavailable-pod.kruise.io/` label;
//! - `unavailableAllowed = max(currentAvailable − desiredAvailable, 0)`, `totalReplicas = expected`.

use kruise_api::PodRecord;
use std::{collections::BTreeMap, sync::Arc, time::Duration};

use futures::StreamExt as _;
use k8s_openapi::{
    api::apps::v1::{Deployment, StatefulSet},
    apimachinery::pkg::{apis::meta::v1::Time, util::intstr::IntOrString},
    jiff::{SignedDuration, Timestamp},
};
use kruise_api::{
    apps_v1beta1::CloneSet,
    policy_v1beta1::{
        DEPRECATED_POD_RELATED_PUB_ANNOTATION, POD_RELATED_PUB_ANNOTATION, PodUnavailableBudget,
        PodUnavailableBudgetStatus,
    },
};
use kruise_webhooks::{StatusWrite, WriteTarget, pod_validate::pod_state};
use kube::{
    Api, Resource as _, ResourceExt as _,
    api::{Patch, PatchParams},
    runtime::{
        Controller,
        controller::Action,
        reflector::{ObjectRef, Store},
        watcher,
    },
};
use serde_json::json;

use super::{
    Context, ERROR_REQUEUE, Error, pods,
    sightings::{CACHE_RECHECK, PodSightings},
    workloads,
};
use crate::cluster::status_writes::{self, WriteError};

/// How long a disruption admitted by the webhook may take to show (the pod deleted or evicted).
pub const DELETION_TIMEOUT: Duration = Duration::from_secs(20);
/// How long an in-place update admitted by the webhook counts the pod unavailable.
pub const UPDATED_DELAY_CHECK: Duration = Duration::from_secs(10);
/// Conflict retries of one reconcile (re-read from the API server each time), then requeue.
pub const CONFLICT_RETRIES: usize = 4;
/// Safety net: every budget is recounted at least this often.
pub const RESYNC: Duration = Duration::from_secs(60);

/// `intstr.GetScaledValueFromIntOrPercent`: an int as is, or `"<n>%"` of `total`, rounded up or down.
pub fn scaled_value(value: &IntOrString, total: i32, round_up: bool) -> Result<i32, String> {
    use kruise_core::intstr::{Round, scaled};
    let scaled = scaled(value, i64::from(total), Round::up_if(round_up)).map_err(|e| e.to_string())?;
    i32::try_from(scaled).map_err(|_| match value {
        IntOrString::Int(i) => format!("{i} of {total} out of range"),
        IntOrString::String(s) => format!("{s} of {total} out of range"),
    })
}

/// The pods a budget must keep available.
pub fn desired_available(budget: &PodUnavailableBudget, expected: i32) -> Result<i32, String> {
    if let Some(max_unavailable) = &budget.spec.max_unavailable {
        let max = scaled_value(max_unavailable, expected, true)?;
        Ok((expected - max).max(0))
    } else if let Some(min_available) = &budget.spec.min_available {
        scaled_value(min_available, expected, true)
    } else {
        Ok(0)
    }
}

/// Running, Ready and not marked unavailable by label: the webhook's rule (one copy of it).
pub fn is_pod_ready(pod: &PodRecord) -> bool {
    pod_state::is_ready(pod)
}

/// Whether kubelet runs what the spec says: the webhook's rule (one copy of it).
pub fn is_consistent(pod: &PodRecord) -> bool {
    pod_state::is_state_consistent(pod)
}

/// The outcome of one pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub status: PodUnavailableBudgetStatus,
    /// Whether `status` differs from the budget's.
    pub changed: bool,
    /// When the earliest kept record expires.
    pub recheck_at: Option<Timestamp>,
    /// Pods whose admitted disruption never happened (event `NotDeleted`).
    pub not_deleted: Vec<String>,
}

fn after(time: &Time, delay: Duration) -> Timestamp {
    time.0 + SignedDuration::try_from(delay).unwrap_or_default()
}

/// Recounts `budget` over `pods` (its pods; inactive ones are ignored) with `expected` replicas.
pub fn plan(
    budget: &PodUnavailableBudget,
    pods: &[Arc<PodRecord>],
    expected: i32,
    now: Timestamp,
) -> Result<Plan, String> {
    let desired = desired_available(budget, expected)?;
    let old = budget.status.clone().unwrap_or_default();
    let old_disrupted = old.disrupted_pods.clone().unwrap_or_default();
    let old_unavailable = old.unavailable_pods.clone().unwrap_or_default();
    let mut disrupted = BTreeMap::new();
    let mut unavailable = BTreeMap::new();
    let mut recheck_at: Option<Timestamp> = None;
    let mut not_deleted = Vec::new();
    let mut recheck = |at: Timestamp| recheck_at = Some(recheck_at.map_or(at, |r| r.min(at)));
    for pod in pods.iter().filter(|p| pods::is_active(p)) {
        let name = pod.name_any();
        if let Some(at) = old_disrupted.get(&name) {
            let expiry = after(at, DELETION_TIMEOUT);
            if expiry < now {
                not_deleted.push(name.clone());
            } else {
                disrupted.insert(name.clone(), at.clone());
                recheck(expiry);
            }
        }
        if let Some(at) = old_unavailable.get(&name) {
            let expiry = after(at, UPDATED_DELAY_CHECK);
            if expiry >= now {
                unavailable.insert(name.clone(), at.clone());
                recheck(expiry);
            }
        }
    }
    let current = pods
        .iter()
        .filter(|p| pods::is_active(p))
        .filter(|p| {
            let name = p.name_any();
            !disrupted.contains_key(&name) && !unavailable.contains_key(&name)
        })
        .filter(|p| is_consistent(p) && is_pod_ready(p))
        .count() as i32;
    let status = PodUnavailableBudgetStatus {
        observed_generation: budget.metadata.generation.unwrap_or(0),
        disrupted_pods: Some(disrupted).filter(|m| !m.is_empty()),
        unavailable_pods: Some(unavailable).filter(|m| !m.is_empty()),
        unavailable_allowed: (current - desired).max(0),
        current_available: current,
        desired_available: desired,
        total_replicas: expected,
    };
    let normalized_old = PodUnavailableBudgetStatus {
        disrupted_pods: old.disrupted_pods.clone().filter(|m| !m.is_empty()),
        unavailable_pods: old.unavailable_pods.clone().filter(|m| !m.is_empty()),
        ..old
    };
    Ok(Plan {
        changed: status != normalized_old,
        status,
        recheck_at,
        not_deleted,
    })
}

/// The budget's pods and expected count (`GetPodsForPub`): by targetRef (wins), else by selector.
pub async fn pods_for_budget(
    context: &Context,
    budget: &PodUnavailableBudget,
) -> Result<(Vec<Arc<PodRecord>>, i32), Error> {
    let namespace = budget.namespace().unwrap_or_default();
    let protect = budget.spec.protect_total_replicas;
    if let Some(target) = &budget.spec.target_reference {
        let (pods, expected) = workloads::pods_for_ref(
            context,
            target.api_version.as_deref().unwrap_or(""),
            target.kind.as_deref().unwrap_or(""),
            &namespace,
            target.name.as_deref().unwrap_or(""),
            true,
        )
        .await?;
        return Ok((pods, protect.unwrap_or(expected)));
    }
    let Some(selector) = &budget.spec.selector else {
        return Ok((Vec::new(), 0));
    };
    let matched: Vec<Arc<PodRecord>> = context
        .view
        .pods(&namespace)
        .into_iter()
        .filter(|p| pods::is_active(p))
        .filter(|p| pods::selects(selector, p.metadata.labels.as_ref().unwrap_or(&BTreeMap::new())))
        .collect();
    let expected = match protect {
        Some(p) => p,
        None => workloads::expected_scale_for_pods(context, &namespace, &matched).await?,
    };
    Ok((matched, expected))
}

fn version_of(budget: &PodUnavailableBudget) -> u64 {
    budget
        .metadata
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The newest copy among the trigger's and the cache's (which holds what the webhook last wrote).
fn freshest(context: &Context, budget: Arc<PodUnavailableBudget>) -> Arc<PodUnavailableBudget> {
    let namespace = budget.namespace().unwrap_or_default();
    let (name, uid) = (budget.metadata.name.clone(), budget.metadata.uid.clone());
    context
        .view
        .pod_unavailable_budgets(&namespace)
        .into_iter()
        .filter(|b| b.metadata.name == name && b.metadata.uid == uid)
        .fold(budget, |best, b| {
            if version_of(&b) > version_of(&best) {
                b
            } else {
                best
            }
        })
}

/// Annotates pods that lack `pub.kruise.io/related-pub` (created before the budget).
async fn backfill_related_pub(context: &Context, budget: &str, pods: &[Arc<PodRecord>]) -> Result<(), Error> {
    for pod in pods {
        if pods::annotation(pod, POD_RELATED_PUB_ANNOTATION).is_some_and(|v| !v.is_empty())
            || pods::annotation(pod, DEPRECATED_POD_RELATED_PUB_ANNOTATION).is_some_and(|v| !v.is_empty())
        {
            continue;
        }
        let api: Api<PodRecord> =
            Api::namespaced(context.client.clone(), &pod.namespace().unwrap_or_default());
        let patch = json!({"metadata": {"annotations": {
            POD_RELATED_PUB_ANNOTATION: budget, DEPRECATED_POD_RELATED_PUB_ANNOTATION: budget}}});
        match api
            .patch(&pod.name_any(), &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) | Err(kube::Error::Api(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

fn write_target(budget: &PodUnavailableBudget) -> WriteTarget {
    WriteTarget {
        api_version: PodUnavailableBudget::api_version(&()).into_owned(),
        kind: PodUnavailableBudget::kind(&()).into_owned(),
        plural: PodUnavailableBudget::plural(&()).into_owned(),
        namespace: budget.namespace().unwrap_or_default(),
        name: budget.name_any(),
    }
}

async fn reconcile(
    trigger: Arc<PodUnavailableBudget>,
    context: Arc<Context>,
    sightings: Arc<PodSightings>,
) -> Result<Action, Error> {
    if trigger.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let mut budget = freshest(&context, trigger);
    let namespace = budget.namespace().unwrap_or_default();
    let name = budget.name_any();
    // Counted from a cache older than the pod change that triggered this pass, the status could allow
    // one disruption too many, and nothing would trigger a correction.
    if !sightings.caught_up(&namespace, &name, context.view.as_ref()) {
        return Ok(Action::requeue(CACHE_RECHECK));
    }
    let (pods, expected) = pods_for_budget(&context, &budget).await?;
    backfill_related_pub(&context, &name, &pods).await?;
    let api: Api<PodUnavailableBudget> = Api::namespaced(context.client.clone(), &namespace);
    for attempt in 0..CONFLICT_RETRIES {
        let now = Timestamp::now();
        let plan = plan(&budget, &pods, expected, now).map_err(|message| Error::Invalid {
            what: "PodUnavailableBudget",
            message,
        })?;
        for pod in &plan.not_deleted {
            tracing::warn!(%namespace, pod, budget = %name, "NotDeleted: pod was expected by the PUB to be deleted but it wasn't");
        }
        if plan.changed {
            let write = StatusWrite {
                target: write_target(&budget),
                resource_version: budget.metadata.resource_version.clone(),
                status: serde_json::to_value(&plan.status).unwrap_or_default(),
            };
            match status_writes::write_status(&context.client, &write).await {
                Ok(stored) => {
                    context.view.remember(&stored);
                    tracing::info!(%namespace, budget = %name, allowed = plan.status.unavailable_allowed,
                        current = plan.status.current_available, desired = plan.status.desired_available,
                        "PUB status updated");
                }
                Err(WriteError::Conflict { .. }) => {
                    // Someone (the webhook) wrote since we read: decide again from the API's copy.
                    if attempt + 1 < CONFLICT_RETRIES {
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        budget = Arc::new(api.get(&name).await?);
                        context
                            .view
                            .remember(&serde_json::to_value(&*budget).unwrap_or_default());
                    }
                    continue;
                }
                Err(e) => return Err(Error::Write(Box::new(e))),
            }
        }
        let wait = plan
            .recheck_at
            .map(|at| Duration::try_from(at.duration_since(now)).unwrap_or_default())
            .map_or(RESYNC, |d| d.min(RESYNC));
        return Ok(Action::requeue(wait.max(Duration::from_millis(100))));
    }
    Err(Error::Conflict {
        kind: "PodUnavailableBudget",
        namespace,
        name,
    })
}

fn error_policy(budget: Arc<PodUnavailableBudget>, error: &Error, _: Arc<Context>) -> Action {
    tracing::warn!(budget = %budget.name_any(), namespace = budget.namespace().unwrap_or_default(), %error,
        "PUB pass failed; retrying");
    Action::requeue(if matches!(error, Error::Conflict { .. }) {
        Duration::from_millis(500)
    } else {
        ERROR_REQUEUE
    })
}

/// The budgets in `namespace` that cover a pod with `labels` whose controller is `workload` (kind,
/// name).
fn budgets_for(
    store: &Store<PodUnavailableBudget>,
    namespace: &str,
    labels: &BTreeMap<String, String>,
    workload: Option<(&str, &str)>,
) -> Vec<ObjectRef<PodUnavailableBudget>> {
    store
        .state()
        .into_iter()
        .filter(|b| b.metadata.namespace.as_deref() == Some(namespace))
        .filter(|b| match (&b.spec.target_reference, &b.spec.selector) {
            (Some(t), _) => workload.is_some_and(|(kind, name)| {
                t.kind.as_deref() == Some(kind) && t.name.as_deref() == Some(name)
            }),
            (None, Some(selector)) => pods::selects(selector, labels),
            (None, None) => false,
        })
        .map(|b| ObjectRef::from_obj(&*b))
        .collect()
}

/// Runs the PUB status controller until aborted.
pub async fn run(context: Context) {
    let client = context.client.clone();
    let controller = Controller::new(
        Api::<PodUnavailableBudget>::all(client.clone()),
        watcher::Config::default().any_semantic(),
    );
    let store = controller.store();
    let view = context.view.clone();
    let pod_store = store.clone();
    let sightings = Arc::new(PodSightings::default());
    let seen = sightings.clone();
    let kept = store.clone();
    let workload_store = store.clone();
    let on_workload = move |namespace: Option<String>,
                            kind: &str,
                            name: String,
                            labels: Option<BTreeMap<String, String>>| {
        budgets_for(
            &workload_store,
            &namespace.unwrap_or_default(),
            &labels.unwrap_or_default(),
            Some((kind, &name)),
        )
    };
    let on_deployment = on_workload.clone();
    let on_stateful_set = on_workload.clone();
    let on_clone_set = on_workload;
    controller
        .with_config(
            kube::runtime::controller::Config::default()
                .concurrency(3)
                .debounce(Duration::from_millis(500)),
        )
        .watches(
            Api::<PodRecord>::all(client.clone()),
            watcher::Config::default().any_semantic(),
            move |pod: PodRecord| {
                let namespace = pod.namespace().unwrap_or_default();
                let mut refs = Vec::new();
                if let Some(name) =
                    pods::annotation(&pod, POD_RELATED_PUB_ANNOTATION).filter(|n| !n.is_empty())
                {
                    refs.push(ObjectRef::new(name).within(&namespace));
                }
                // The workload a targetRef names: the pod's controller, or the Deployment above its
                // ReplicaSet.
                let owner = pods::controller_of(pod.metadata.owner_references.as_ref()).map(|o| {
                    let deployment = (o.kind == "ReplicaSet")
                        .then(|| view.replica_set(&namespace, &o.name))
                        .flatten()
                        .and_then(|rs| {
                            pods::controller_of(rs.metadata.owner_references.as_ref())
                                .filter(|d| d.kind == "Deployment")
                                .map(|d| d.name.clone())
                        });
                    match deployment {
                        Some(name) => ("Deployment".to_string(), name),
                        None => (o.kind.clone(), o.name.clone()),
                    }
                });
                let labels = pod.metadata.labels.clone().unwrap_or_default();
                for r in budgets_for(
                    &pod_store,
                    &namespace,
                    &labels,
                    owner.as_ref().map(|(k, n)| (k.as_str(), n.as_str())),
                ) {
                    if !refs.contains(&r) {
                        refs.push(r);
                    }
                }
                for r in &refs {
                    seen.saw(&namespace, &r.name, &pod);
                }
                seen.retain_owners(|namespace, name| {
                    kept.get(&ObjectRef::new(name).within(namespace)).is_some()
                });
                refs
            },
        )
        .watches(
            Api::<Deployment>::all(client.clone()),
            watcher::Config::default().any_semantic(),
            move |d: Deployment| {
                let labels = d.spec.template.metadata.as_ref().and_then(|m| m.labels.clone());
                on_deployment(d.metadata.namespace.clone(), "Deployment", d.name_any(), labels)
            },
        )
        .watches(
            Api::<StatefulSet>::all(client.clone()),
            watcher::Config::default().any_semantic(),
            move |s: StatefulSet| {
                let labels = s.spec.template.metadata.as_ref().and_then(|m| m.labels.clone());
                on_stateful_set(s.metadata.namespace.clone(), "StatefulSet", s.name_any(), labels)
            },
        )
        .watches(
            Api::<CloneSet>::all(client),
            watcher::Config::default().any_semantic(),
            move |c: CloneSet| {
                let labels = c.spec.template.metadata.as_ref().and_then(|m| m.labels.clone());
                on_clone_set(c.metadata.namespace.clone(), "CloneSet", c.name_any(), labels)
            },
        )
        .run(
            move |budget, context| reconcile(budget, context, sightings.clone()),
            error_policy,
            Arc::new(context),
        )
        .for_each(|result| async move {
            if let Err(e) = result {
                tracing::debug!(error = %e, "PUB pass");
            }
        })
        .await;
}

#[cfg(test)]
mod tests;
