//! The PodUnavailableBudget status controller: the planner is [`kruise_reconcile::pub_status`]; this
//! gathers a budget's pods, annotates the ones created before it, and writes the planned status.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::{
    api::apps::v1::{Deployment, StatefulSet},
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use kruise_api::{
    PodRecord,
    apps_v1beta1::CloneSet,
    policy_v1beta1::{
        DEPRECATED_POD_RELATED_PUB_ANNOTATION, POD_RELATED_PUB_ANNOTATION, PodUnavailableBudget,
    },
};
use kruise_reconcile::pub_status::{self, plan};
use kube::{
    Api, Resource, ResourceExt as _,
    api::{Patch, PatchParams},
    runtime::reflector::ObjectRef,
};
use serde_json::json;

use super::{
    Context, ControllerView, Error,
    control_loop::{self, Known, Next, Pass, Reconciler, Triggers},
    pods, workloads,
};

/// Safety net: every budget is recounted at least this often.
pub const RESYNC: Duration = Duration::from_secs(60);

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
        .filter(|p| kruise_core::pod_state::is_active(p))
        .filter(|p| pods::selects(selector, &p.metadata.labels))
        .collect();
    let expected = match protect {
        Some(p) => p,
        None => workloads::expected_scale_for_pods(context, &namespace, &matched).await?,
    };
    Ok((matched, expected))
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

/// The budgets covering `pod`: the one its annotation names, and those whose targetRef names its
/// workload (its controller, or the Deployment above its ReplicaSet) or whose selector matches it.
fn budgets_of_pod(
    pod: &PodRecord,
    known: &Known<PodUnavailableBudget>,
) -> Vec<ObjectRef<PodUnavailableBudget>> {
    let namespace = pod.namespace().unwrap_or_default();
    let named = pods::annotation(pod, POD_RELATED_PUB_ANNOTATION)
        .filter(|n| !n.is_empty())
        .map(|name| ObjectRef::new(name).within(&namespace));
    let workload = kruise_core::kind::controller_ref(&pod.metadata).map(|o| {
        let deployment = (o.kind == "ReplicaSet")
            .then(|| known.view().replica_set(&namespace, &o.name))
            .flatten()
            .and_then(|rs| {
                kruise_core::kind::controller_ref(&rs.metadata)
                    .filter(|d| d.kind == "Deployment")
                    .map(|d| d.name.clone())
            });
        match deployment {
            Some(name) => ("Deployment".to_string(), name),
            None => (o.kind.clone(), o.name.clone()),
        }
    });
    let labels = &pod.metadata.labels;
    let workload = workload.as_ref().map(|(k, n)| (k.as_str(), n.as_str()));
    named
        .into_iter()
        .chain(known.refs(|b| pub_status::covers(b, &namespace, labels, workload)))
        .collect()
}

/// The budgets covering the pods of workload `W` (by targetRef, or by selector on its template labels).
fn budgets_of_workload<W: Resource>(
    kind: &'static str,
    template_labels: impl Fn(&W) -> Option<&BTreeMap<String, String>> + Send + Sync + 'static,
) -> impl Fn(&W, &Known<PodUnavailableBudget>) -> Vec<ObjectRef<PodUnavailableBudget>> + Send + Sync + 'static
{
    move |w, known| {
        let namespace = w.meta().namespace.clone().unwrap_or_default();
        let name = w.meta().name.clone().unwrap_or_default();
        let labels = template_labels(w).cloned().unwrap_or_default();
        known.refs(|b| pub_status::covers(b, &namespace, &labels, Some((kind, &name))))
    }
}

fn labels(template: &Option<ObjectMeta>) -> Option<&BTreeMap<String, String>> {
    template.as_ref()?.labels.as_ref()
}

struct BudgetStatus;

impl Reconciler for BudgetStatus {
    type Object = PodUnavailableBudget;
    type Memory = ();
    const DEBOUNCE: Duration = Duration::from_millis(500);
    const RESYNC: Duration = RESYNC;

    fn triggers(&self, triggers: Triggers<PodUnavailableBudget>) -> Triggers<PodUnavailableBudget> {
        triggers
            .pods(budgets_of_pod)
            .watch(budgets_of_workload("Deployment", |d: &Deployment| {
                labels(&d.spec.template.metadata)
            }))
            .watch(budgets_of_workload("StatefulSet", |s: &StatefulSet| {
                labels(&s.spec.template.metadata)
            }))
            .watch(budgets_of_workload("CloneSet", |c: &CloneSet| {
                labels(&c.spec.template.metadata)
            }))
    }

    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<PodUnavailableBudget>> {
        view.pod_unavailable_budgets(namespace)
            .into_iter()
            .find(|b| b.metadata.name.as_deref() == Some(name))
    }

    async fn pass(
        self: Arc<Self>,
        budget: Arc<PodUnavailableBudget>,
        pass: Pass<PodUnavailableBudget, ()>,
    ) -> Result<Next, Error> {
        let (namespace, name) = (budget.namespace().unwrap_or_default(), budget.name_any());
        let (pods, expected) = pods_for_budget(&pass.context, &budget).await?;
        backfill_related_pub(&pass.context, &name, &pods).await?;
        let now = k8s_openapi::jiff::Timestamp::now();
        let plan = plan(&budget, &pods, expected, now).map_err(|e| Error::Invalid {
            what: "PodUnavailableBudget",
            message: e.to_string(),
        })?;
        for pod in &plan.not_deleted {
            tracing::warn!(%namespace, pod, budget = %name, "NotDeleted: pod was expected by the PUB to be deleted but it wasn't");
        }
        if plan.changed {
            pass.write_status(&budget, &plan.status).await?;
            tracing::info!(%namespace, budget = %name, allowed = plan.status.unavailable_allowed,
                current = plan.status.current_available, desired = plan.status.desired_available,
                "PUB status updated");
        }
        Ok(Next::after(plan.requeue_after(now)))
    }
}

/// Runs the PUB status controller until aborted.
pub async fn run(context: Context) {
    control_loop::run(context, BudgetStatus).await;
}
