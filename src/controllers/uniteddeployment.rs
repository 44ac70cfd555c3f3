//! The UnitedDeployment controller: the planner is [`kruise_reconcile::uniteddeployment`]; this gathers
//! the UD's revisions, subset workloads and pods from the cluster cache, carries out the revision and
//! subset writes, records events and writes the status.
//!
//! Triggers: the UD itself and the workloads it controls or may adopt (apps/v1 StatefulSets and
//! Deployments, Advanced StatefulSets, CloneSets); pods are not watched (their workload's status
//! changes when they do). An update reads the workload fresh from the API server and re-applies the subset template to
//! it, so fields kruise-rs does not model are kept.

use std::{sync::Arc, time::Duration};

use k8s_openapi::api::apps::v1::{ControllerRevision, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{
    CONDITION_SUBSET_PROVISIONED, CONDITION_SUBSET_UPDATED, CloneSet, RESERVED_POD_LABEL,
    StatefulSet as AdvancedStatefulSet, SubsetKind, UnitedDeployment,
};
use kruise_reconcile::uniteddeployment::{
    Claim, Desired, Input, Plan, PodLabel, RevisionWrite, SubsetWrite, apply_subset_template, claim, claimed,
    failed, kind_of, plan, set_max_unavailable,
};
use kube::{
    Api, Resource as _, ResourceExt as _,
    api::{ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams, PropagationPolicy},
    runtime::events::{Event, EventType, Recorder, Reporter},
    runtime::reflector::ObjectRef,
};
use serde_json::{Value, json};

use super::{
    Context, ControllerView, Error,
    control_loop::{self, Known, Next, Pass, Reconciler, Triggers},
    pods,
    slow_start::slow_start,
};

/// Safety net: every UD is passed at least this often.
pub const RESYNC: Duration = Duration::from_secs(300);

/// The event reporter.
pub fn reporter() -> Reporter {
    Reporter {
        controller: "kruise-manager".into(),
        instance: Some("uniteddeployment-controller".into()),
    }
}

struct UnitedDeployments {
    context: Context,
    recorder: Recorder,
}

/// The UD controlling a workload; for an orphan, the UDs of its namespace whose selector matches it
/// (they may adopt it).
fn owner<K: kube::Resource>(object: &K, known: &Known<UnitedDeployment>) -> Vec<ObjectRef<UnitedDeployment>> {
    let meta = object.meta();
    if kruise_core::kind::controller_ref(meta).is_some() {
        return pods::kruise_controller::<UnitedDeployment, _>(object)
            .into_iter()
            .collect();
    }
    let labels = meta.labels.clone().unwrap_or_default();
    known.refs(|ud| {
        ud.metadata.namespace == meta.namespace
            && kruise_core::selector::selects_non_empty(ud.spec.selector.as_ref(), &labels).unwrap_or(false)
    })
}

fn api_resource(kind: SubsetKind) -> ApiResource {
    match kind {
        SubsetKind::StatefulSet => ApiResource::erase::<StatefulSet>(&()),
        SubsetKind::Deployment => ApiResource::erase::<Deployment>(&()),
        SubsetKind::AdvancedStatefulSet => ApiResource::erase::<AdvancedStatefulSet>(&()),
        SubsetKind::CloneSet => ApiResource::erase::<CloneSet>(&()),
    }
}

/// The UD's revisions, the workloads it controls or could adopt (as JSON: those without a controller)
/// and its selected pods, from the cache.
fn gather(
    view: &dyn ControllerView,
    ud: &UnitedDeployment,
) -> (Vec<ControllerRevision>, Vec<Value>, Vec<Arc<PodRecord>>) {
    let namespace = ud.namespace().unwrap_or_default();
    let uid = ud.metadata.uid.clone().unwrap_or_default();
    let ours = |meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
        kruise_core::kind::controller_ref(meta).is_some_and(|o| o.uid == uid)
    };
    let revisions = view
        .controller_revisions(&namespace)
        .into_iter()
        .filter(|r| ours(&r.metadata))
        .map(|r| (*r).clone())
        .collect();
    let claimable = |meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
        kruise_core::kind::controller_ref(meta).is_none_or(|o| o.uid == uid)
    };
    let kinds = view.kinds();
    let mut workloads = Vec::new();
    fn push<K: kube::Resource + serde::Serialize>(
        out: &mut Vec<Value>,
        items: Vec<Arc<K>>,
        keep: &dyn Fn(&k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> bool,
        api_version: &str,
        kind: &str,
    ) {
        for item in items.into_iter().filter(|i| keep(i.meta())) {
            if let Ok(mut v) = serde_json::to_value(&*item) {
                v["apiVersion"] = api_version.into();
                v["kind"] = kind.into();
                out.push(v);
            }
        }
    }
    push(
        &mut workloads,
        kinds.stateful_sets.list(Some(&namespace)),
        &claimable,
        "apps/v1",
        "StatefulSet",
    );
    push(
        &mut workloads,
        kinds.deployments.list(Some(&namespace)),
        &claimable,
        "apps/v1",
        "Deployment",
    );
    push(
        &mut workloads,
        kinds.advanced_stateful_sets.list(Some(&namespace)),
        &claimable,
        "apps.kruise.io/v1beta1",
        "StatefulSet",
    );
    push(
        &mut workloads,
        kinds.clone_sets.list(Some(&namespace)),
        &claimable,
        "apps.kruise.io/v1beta1",
        "CloneSet",
    );
    let pod_list = match &ud.spec.selector {
        Some(selector) if selector != &Default::default() => view
            .pods(&namespace)
            .into_iter()
            .filter(|p| pods::selects(selector, &p.metadata.labels))
            .collect(),
        _ => Vec::new(),
    };
    (revisions, workloads, pod_list)
}

impl UnitedDeployments {
    async fn publish(&self, ud: &UnitedDeployment, warning: bool, reason: &str, note: String) {
        let event = Event {
            type_: if warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: reason.into(),
            note: Some(note),
            action: "Reconcile".into(),
            secondary: None,
        };
        if let Err(e) = self.recorder.publish(&event, &ud.object_ref(&())).await {
            tracing::debug!(error = %e, reason, "could not record event");
        }
    }

    /// Carries out the claims on the workloads found (adopt matching orphans, release ours that left
    /// the selector) and returns the workloads the UD controls. A failed claim write is logged and the
    /// workload left out of this pass; the next pass tries again.
    async fn claim_workloads(&self, ud: &UnitedDeployment, candidates: Vec<Value>) -> Vec<Value> {
        let mut ours = Vec::with_capacity(candidates.len());
        for workload in candidates {
            match claim(ud, &workload) {
                Claim::Keep => ours.push(workload),
                Claim::Ignore => {}
                how => {
                    let body = claimed(ud, &workload, how);
                    match self.replace_workload(ud, &body).await {
                        Ok(written) if how == Claim::Adopt => ours.push(written),
                        Ok(_) => {}
                        Err(e) => tracing::warn!(uniteddeployment = %ud.name_any(),
                            workload = %workload["metadata"]["name"], error = %e, claim = ?how,
                            "could not claim a workload"),
                    }
                }
            }
        }
        ours
    }

    /// PUT a workload (its resourceVersion guards against a concurrent write); the object written.
    async fn replace_workload(&self, ud: &UnitedDeployment, body: &Value) -> Result<Value, String> {
        let kind = kind_of(body).ok_or("not a subset workload kind")?;
        let api = Api::<DynamicObject>::namespaced_with(
            self.context.client.clone(),
            &ud.namespace().unwrap_or_default(),
            &api_resource(kind),
        );
        let object: DynamicObject = serde_json::from_value(body.clone()).map_err(|e| e.to_string())?;
        let name = object.metadata.name.clone().unwrap_or_default();
        let written = api
            .replace(&name, &PostParams::default(), &object)
            .await
            .map_err(|e| e.to_string())?;
        let mut value = serde_json::to_value(&written).map_err(|e| e.to_string())?;
        value["apiVersion"] = body["apiVersion"].clone();
        value["kind"] = body["kind"].clone();
        Ok(value)
    }

    /// Deletes the pods a StatefulSet update left stuck (background propagation; a pod gone is fine).
    async fn delete_stuck_pods(&self, ud: &UnitedDeployment, names: &[String]) -> Result<(), String> {
        let api: Api<Pod> = Api::namespaced(self.context.client.clone(), &ud.namespace().unwrap_or_default());
        let params = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            ..DeleteParams::default()
        };
        for name in names {
            match api.delete(name, &params).await {
                Ok(_) => {
                    tracing::info!(uniteddeployment = %ud.name_any(), pod = %name, "deleted a pod stuck in a StatefulSet rolling update")
                }
                Err(kube::Error::Api(s)) if s.reason == "NotFound" => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(())
    }

    /// Reservation mode: the reserved label of each pod whose state changed (a pod gone meanwhile is
    /// skipped); an error stops the pass, as the allocation counted the new labels.
    async fn label_pods(&self, ud: &UnitedDeployment, labels: &[PodLabel]) -> Result<(), kube::Error> {
        let api: Api<Pod> = Api::namespaced(self.context.client.clone(), &ud.namespace().unwrap_or_default());
        for PodLabel { pod, reserved } in labels {
            let patch = json!({"metadata": {"labels": {RESERVED_POD_LABEL: reserved.to_string()}}});
            match api
                .patch(pod, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.reason == "NotFound" => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The revision writes; an error stops the pass (nothing is built on a revision that is not there).
    async fn write_revisions(&self, ud: &UnitedDeployment, plan: &Plan) -> Result<(), kube::Error> {
        let api: Api<ControllerRevision> =
            Api::namespaced(self.context.client.clone(), &ud.namespace().unwrap_or_default());
        for write in &plan.revisions.writes {
            let result = match write {
                RevisionWrite::Create(r) => match api.create(&PostParams::default(), r).await {
                    Err(kube::Error::Api(s)) if s.reason == "AlreadyExists" => Ok(()),
                    other => other.map(drop),
                },
                RevisionWrite::Update(r) => api
                    .replace(
                        r.metadata.name.as_deref().unwrap_or_default(),
                        &PostParams::default(),
                        r,
                    )
                    .await
                    .map(drop),
                RevisionWrite::Delete(name) => match api.delete(name, &DeleteParams::default()).await {
                    Err(kube::Error::Api(s)) if s.reason == "NotFound" => Ok(()),
                    other => other.map(drop),
                },
            };
            result?;
        }
        Ok(())
    }

    /// One subset write; the error message when it failed.
    async fn write_subset(
        &self,
        ud: &UnitedDeployment,
        plan: &Plan,
        write: &SubsetWrite,
    ) -> Result<(), String> {
        let namespace = ud.namespace().unwrap_or_default();
        let api = |kind| {
            Api::<DynamicObject>::namespaced_with(
                self.context.client.clone(),
                &namespace,
                &api_resource(kind),
            )
        };
        match write {
            SubsetWrite::Create { kind, body, .. } => {
                let object: DynamicObject =
                    serde_json::from_value(body.clone()).map_err(|e| e.to_string())?;
                api(*kind)
                    .create(&PostParams::default(), &object)
                    .await
                    .map(drop)
                    .map_err(|e| e.to_string())
            }
            SubsetWrite::Delete { kind, name, .. } => {
                let params = DeleteParams {
                    propagation_policy: Some(PropagationPolicy::Background),
                    ..DeleteParams::default()
                };
                match api(*kind).delete(name, &params).await {
                    Ok(_) => Ok(()),
                    Err(kube::Error::Api(s)) if s.reason == "NotFound" => Ok(()),
                    Err(e) => Err(e.to_string()),
                }
            }
            SubsetWrite::Update {
                subset,
                kind,
                name,
                max_unavailable,
                stuck_pods,
                ..
            } => {
                let api = api(*kind);
                let status = plan.status.subset_statuses.iter().find(|s| &s.name == subset);
                let desired = Desired {
                    subset,
                    revision: &plan.revisions.update,
                    replicas: status.map_or(0, |s| s.replicas),
                    partition: status.map_or(0, |s| s.partition),
                };
                let mut last = String::new();
                for _ in 0..5 {
                    let fresh = api.get(name).await.map_err(|e| e.to_string())?;
                    let fresh = serde_json::to_value(&fresh).map_err(|e| e.to_string())?;
                    let mut body =
                        apply_subset_template(ud, desired, Some(&fresh)).map_err(|e| e.to_string())?;
                    if let Some(pods) = max_unavailable {
                        set_max_unavailable(&mut body, *kind, *pods);
                    }
                    if body == fresh {
                        return self.delete_stuck_pods(ud, stuck_pods).await;
                    }
                    let object: DynamicObject = serde_json::from_value(body).map_err(|e| e.to_string())?;
                    match api.replace(name, &PostParams::default(), &object).await {
                        Ok(_) => return self.delete_stuck_pods(ud, stuck_pods).await,
                        Err(kube::Error::Api(s)) if s.reason == "Conflict" => last = s.message,
                        Err(e) => return Err(e.to_string()),
                    }
                }
                Err(last)
            }
        }
    }
}

impl Reconciler for UnitedDeployments {
    type Object = UnitedDeployment;
    type Memory = ();
    const DEBOUNCE: Duration = Duration::from_millis(100);
    const RESYNC: Duration = RESYNC;

    fn triggers(&self, triggers: Triggers<UnitedDeployment>) -> Triggers<UnitedDeployment> {
        triggers
            .watch(|w: &StatefulSet, k: &Known<UnitedDeployment>| owner(w, k))
            .watch(|w: &Deployment, k: &Known<UnitedDeployment>| owner(w, k))
            .watch(|w: &AdvancedStatefulSet, k: &Known<UnitedDeployment>| owner(w, k))
            .watch(|w: &CloneSet, k: &Known<UnitedDeployment>| owner(w, k))
    }

    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<UnitedDeployment>> {
        kruise_core::view::get(view, namespace, name)
    }

    async fn pass(
        self: Arc<Self>,
        ud: Arc<UnitedDeployment>,
        pass: Pass<UnitedDeployment, ()>,
    ) -> Result<Next, Error> {
        if ud.metadata.deletion_timestamp.is_some() {
            return Ok(Next::Idle);
        }
        let name = ud.name_any();
        let (revisions, candidates, pod_list) = gather(&*pass.context.view, &ud);
        let workloads = self.claim_workloads(&ud, candidates).await;
        let pod_refs: Vec<&PodRecord> = pod_list.iter().map(|p| &**p).collect();
        let now = Timestamp::now();
        let plan = plan(Input {
            ud: &ud,
            revisions: &revisions,
            workloads: &workloads,
            pods: &pod_refs,
            now,
        });
        if let Err(e) = self.write_revisions(&ud, &plan).await {
            self.publish(
                &ud,
                true,
                "FailedRevisionProvision",
                format!("Failed to provision revision: {e}"),
            )
            .await;
            return Err(e.into());
        }
        self.label_pods(&ud, &plan.pod_labels).await?;
        for event in &plan.events {
            self.publish(&ud, event.warning, event.reason, event.message.clone())
                .await;
        }
        let mut status = plan.status.clone();
        let mut errors = Vec::new();
        // Creates, then deletes, then updates (as OpenKruise), each in slow-start batches.
        let of = |pick: fn(&SubsetWrite) -> bool| plan.writes.iter().filter(|w| pick(w)).collect::<Vec<_>>();
        let groups = [
            of(|w| matches!(w, SubsetWrite::Create { .. })),
            of(|w| matches!(w, SubsetWrite::Delete { .. })),
            of(|w| matches!(w, SubsetWrite::Update { .. })),
        ];
        for group in &groups {
            let done = slow_start(group, |w| self.write_subset(&ud, &plan, w)).await;
            for (write, result) in done {
                let Err(e) = result else { continue };
                let condition = match write {
                    SubsetWrite::Update { .. } => CONDITION_SUBSET_UPDATED,
                    _ => CONDITION_SUBSET_PROVISIONED,
                };
                failed(&mut status, condition, &e, now);
                self.publish(&ud, true, "FailedUpdateSubset", e.clone()).await;
                errors.push(e);
            }
        }
        if ud.status.as_ref() != Some(&status) {
            pass.write_status(&ud, &status).await?;
            tracing::info!(uniteddeployment = %name, replicas = status.replicas, ready = status.ready_replicas,
                updated = status.updated_replicas, "UnitedDeployment status updated");
        }
        if let Err(e) = &plan.allocation {
            return Err(Error::Partial {
                what: "UnitedDeployment replicas not allocated",
                message: e.to_string(),
            });
        }
        if !errors.is_empty() || !plan.failures.is_empty() {
            let mut all = errors;
            all.extend(plan.failures.iter().map(|(s, e)| format!("{s}: {e}")));
            return Err(Error::Partial {
                what: "UnitedDeployment subset writes failed",
                message: all.join("; "),
            });
        }
        Ok(Next::after(plan.requeue_after))
    }
}

/// Runs the UnitedDeployment controller until aborted.
pub async fn run(context: Context) {
    let state = UnitedDeployments {
        recorder: Recorder::new(context.client.clone(), reporter()),
        context: context.clone(),
    };
    control_loop::run(context, state).await;
}
