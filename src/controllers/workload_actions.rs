//! Carrying out one workload plan (CloneSet, Advanced StatefulSet, Advanced DaemonSet, BroadcastJob):
//! each action as an API call in order, its event, its expectation, and the resourceVersion
//! precondition chained from an earlier patch of the same pod in the same pass.

use std::{collections::HashMap, sync::Arc, time::Duration};

use k8s_openapi::{
    api::{
        apps::v1::ControllerRevision,
        core::v1::{ObjectReference, PersistentVolumeClaim, Pod},
    },
    jiff::Timestamp,
};
use kruise_api::PodRecord;
use kruise_reconcile::{Action as Step, Expectations, broadcastjob::NodeExpectations};
use kube::{
    Api, ResourceExt as _,
    api::{DeleteParams, Patch, PatchParams, PostParams, Preconditions},
    runtime::events::{Event, EventType},
};
use serde_json::json;

use kube::runtime::events::Recorder;

use super::{ERROR_REQUEUE, Error, control_loop::Next};

/// Who carries a plan out: the client, the event recorder and the workload the plan is for.
pub struct Owner<'a, K> {
    /// API client.
    pub client: &'a kube::Client,
    /// Event recorder.
    pub recorder: &'a Recorder,
    /// The workload.
    pub object: &'a K,
}

/// The workload kinds whose plans are carried out here.
pub trait Workload:
    kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
    + Clone
    + serde::de::DeserializeOwned
    + std::fmt::Debug
{
}

impl<K> Workload for K where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
{
}

fn reference<K: Workload>(object: &K) -> ObjectReference {
    object.object_ref(&())
}

async fn publish<K: Workload>(
    owner: &Owner<'_, K>,
    type_: EventType,
    reason: &str,
    note: String,
    action: &str,
) {
    let event = Event {
        type_,
        reason: reason.into(),
        note: Some(note),
        action: action.into(),
        secondary: None,
    };
    if let Err(e) = owner.recorder.publish(&event, &reference(owner.object)).await {
        tracing::debug!(error = %e, reason, "could not record event");
    }
}

/// Executes one action; `Ok(Some(rv))` carries the resourceVersion a pod patch returned.
pub async fn execute<K: Workload>(owner: &Owner<'_, K>, step: &Step) -> Result<Option<String>, kube::Error> {
    let cs = owner.object;
    let client = owner.client.clone();
    let namespace = cs.namespace().unwrap_or_default();
    let pods_api: Api<Pod> = Api::namespaced(client.clone(), &namespace);
    let pvcs_api: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &namespace);
    let revisions_api: Api<ControllerRevision> = Api::namespaced(client.clone(), &namespace);
    let pp = PostParams::default();
    let patch_params = PatchParams::default();
    match step {
        Step::CreateRevision(r) => {
            revisions_api.create(&pp, r).await?;
        }
        Step::UpdateRevision(r) => {
            revisions_api.replace(&r.name_any(), &pp, r).await?;
        }
        Step::DeleteRevision { name } => match revisions_api.delete(name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            Err(e) => return Err(e),
        },
        Step::CreatePvc(p) => {
            pvcs_api.create(&pp, p).await?;
        }
        Step::CreatePod(p) => {
            pods_api.create(&pp, p).await?;
        }
        Step::CreatePodOnNode { template, node } => {
            pods_api.create(&pp, &Step::pod_on_node(template, node)).await?;
        }
        Step::DeletePod { name, uid } => {
            let dp = DeleteParams {
                preconditions: uid.clone().map(|uid| Preconditions {
                    uid: Some(uid),
                    resource_version: None,
                }),
                ..DeleteParams::default()
            };
            // Already gone: what the delete wanted (the cache will show it absent).
            match pods_api.delete(name, &dp).await {
                Err(kube::Error::Api(s)) if s.is_not_found() => {}
                other => _ = other?,
            }
        }
        Step::DeletePvc { name } => match pvcs_api.delete(name, &DeleteParams::default()).await {
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            other => _ = other?,
        },
        Step::PatchPvc { name, patch } => {
            pvcs_api
                .patch(name, &patch_params, &Patch::Strategic(patch))
                .await?;
        }
        Step::PatchPod { name, patch, .. } => {
            let stored = pods_api
                .patch(name, &patch_params, &Patch::Strategic(patch))
                .await?;
            return Ok(stored.metadata.resource_version);
        }
        Step::PatchPodStatus { name, patch } => {
            let stored = pods_api
                .patch_status(name, &patch_params, &Patch::Strategic(&**patch))
                .await?;
            return Ok(stored.metadata.resource_version);
        }
        Step::SetPodsToDelete(names) => {
            let api: Api<K> = Api::namespaced(client, &namespace);
            let patch = json!({
                "metadata": {"resourceVersion": cs.meta().resource_version},
                "spec": {"scaleStrategy": {"podsToDelete": names}},
            });
            api.patch(&cs.name_any(), &patch_params, &Patch::Merge(&patch))
                .await?;
        }
        Step::Event {
            type_,
            reason,
            message,
        } => {
            let type_ = if *type_ == "Warning" {
                EventType::Warning
            } else {
                EventType::Normal
            };
            publish(owner, type_, reason, message.clone(), reason).await;
        }
    }
    Ok(None)
}

/// What a loop remembers of the writes it sent until its cache shows them.
pub trait Expecting {
    /// Records the expectation of an action about to be sent.
    fn expect(&mut self, step: &Step, now: Timestamp);
    /// Drops the expectation of an action whose call failed.
    fn forget(&mut self, step: &Step);
    /// Records the resourceVersion a pod write of ours returned (the cache must reach it).
    fn expect_written(&mut self, pod: &str, resource_version: &str, now: Timestamp);
}

impl Expecting for Expectations {
    fn expect(&mut self, step: &Step, now: Timestamp) {
        Expectations::expect(self, step, now);
    }
    fn forget(&mut self, step: &Step) {
        Expectations::forget(self, step);
    }
    fn expect_written(&mut self, pod: &str, resource_version: &str, now: Timestamp) {
        self.expect_resource_version(pod, resource_version, now);
    }
}

impl Expecting for NodeExpectations {
    fn expect(&mut self, step: &Step, now: Timestamp) {
        NodeExpectations::expect(self, step, now);
    }
    fn forget(&mut self, step: &Step) {
        NodeExpectations::forget(self, step);
    }
    /// BroadcastJob pods are only created and deleted, never patched.
    fn expect_written(&mut self, _pod: &str, _resource_version: &str, _now: Timestamp) {}
}

/// Sends `actions` in order and stops at the first failure, which is returned with its index (its
/// expectation forgotten). `pods` are the pods the plan was made from: a pod written twice in one pass
/// gets its second precondition from the first write. A claim that already exists means the cache
/// was behind: that create is skipped and the pass goes on.
pub async fn carry_out<K: Workload, E: Expecting>(
    owner: &Owner<'_, K>,
    actions: &[Step],
    pods: &[PodRecord],
    expectations: &mut E,
    now: Timestamp,
) -> Option<(usize, kube::Error)> {
    // Pod → the resourceVersion the plan saw, and the one our own write of this pass returned.
    let mut ours: HashMap<String, (String, String)> = HashMap::new();
    for (index, step) in actions.iter().enumerate() {
        expectations.expect(step, now);
        let chained = chain_precondition(step, &ours);
        let step: &Step = &chained;
        let result = execute(owner, step).await;
        after_call(owner, step, &result).await;
        match result {
            Ok(rv) => {
                if let (Step::PatchPod { name, .. } | Step::PatchPodStatus { name, .. }, Some(rv)) =
                    (step, rv)
                {
                    expectations.expect_written(name, &rv, now);
                    let seen = pods
                        .iter()
                        .find(|p| p.metadata.name.as_deref() == Some(name.as_str()))
                        .and_then(|p| p.metadata.resource_version.clone())
                        .unwrap_or_default();
                    ours.insert(name.clone(), (seen, rv));
                }
            }
            Err(e) if is_conflict(&e) && matches!(step, Step::CreatePvc(_)) => {
                expectations.forget(step);
            }
            Err(e) => {
                expectations.forget(step);
                return Some((index, e));
            }
        }
    }
    None
}

/// The events OpenKruise records after a call (the planner leaves them to the loop).
pub async fn after_call<K: Workload>(
    owner: &Owner<'_, K>,
    step: &Step,
    result: &Result<Option<String>, kube::Error>,
) {
    let (ok_reason, failed_reason, what) = match step {
        Step::CreatePod(p) => (
            "SuccessfulCreate",
            "FailedCreate",
            format!("pod: {}", p.name_any()),
        ),
        Step::CreatePodOnNode { template, .. } => (
            "SuccessfulCreate",
            "FailedCreate",
            format!("pod: {}", template.name_any()),
        ),
        Step::DeletePod { name, .. } => ("SuccessfulDelete", "FailedDelete", format!("pod: {name}")),
        Step::CreatePvc(p) => (
            "SuccessfulCreate",
            "FailedCreate",
            format!("pvc: {}", p.name_any()),
        ),
        Step::DeletePvc { name } => ("SuccessfulDelete", "FailedDelete", format!("pvc: {name}")),
        _ => {
            if let (
                Step::PatchPod {
                    reason: "inPlaceUpdate",
                    name,
                    ..
                },
                Err(e),
            ) = (step, result)
            {
                publish(
                    owner,
                    EventType::Warning,
                    "FailedUpdatePodInPlace",
                    format!("failed to update pod {name} in-place: {e}"),
                    "UpdatePod",
                )
                .await;
            }
            return;
        }
    };
    match result {
        Ok(_) => {
            let verb = if ok_reason == "SuccessfulCreate" {
                "create"
            } else {
                "delete"
            };
            publish(
                owner,
                EventType::Normal,
                ok_reason,
                format!("succeed to {verb} {what}"),
                ok_reason,
            )
            .await;
        }
        Err(e) => {
            let verb = if failed_reason == "FailedCreate" {
                "create"
            } else {
                "delete"
            };
            publish(
                owner,
                EventType::Warning,
                failed_reason,
                format!("failed to {verb} {what}: {e}"),
                failed_reason,
            )
            .await;
        }
    }
}

/// A conditional pod patch planned against the pod the cache showed, when this pass already wrote that
/// pod (the `InPlaceUpdateReady` condition before the in-place patch, as OpenKruise does): the only
/// change since is ours, so the precondition moves to the version our write returned. Any other
/// writer in between still makes the patch conflict.
pub fn chain_precondition<'a>(
    step: &'a Step,
    ours: &HashMap<String, (String, String)>,
) -> std::borrow::Cow<'a, Step> {
    let (name, patch) = match step {
        Step::PatchPod { name, patch, .. } => (name, patch),
        Step::PatchPodStatus { name, patch } => (name, &**patch),
        _ => return std::borrow::Cow::Borrowed(step),
    };
    let planned = patch
        .pointer("/metadata/resourceVersion")
        .and_then(|v| v.as_str());
    match (planned, ours.get(name)) {
        (Some(planned), Some((seen, written))) if planned == seen => {
            let mut step = step.clone();
            let patch = match &mut step {
                Step::PatchPod { patch, .. } => Some(patch),
                Step::PatchPodStatus { patch, .. } => Some(std::sync::Arc::make_mut(patch)),
                _ => None,
            };
            if let Some(patch) = patch {
                patch["metadata"]["resourceVersion"] = json!(written);
            }
            std::borrow::Cow::Owned(step)
        }
        _ => std::borrow::Cow::Borrowed(step),
    }
}

/// While a plan waits for the cache to show earlier writes, look again this soon (the cache and the
/// trigger watch are separate streams, so a trigger can come before the cache shows our write).
pub const EXPECTATION_RECHECK: Duration = Duration::from_millis(300);
/// A pass whose write conflicted plans again this soon.
pub const CONFLICT_REQUEUE: Duration = Duration::from_millis(200);

/// What follows a plan that waits for the cache to show earlier writes: a look again when they are due,
/// within [`EXPECTATION_RECHECK`]; unobserved past their timeout (`requeue_after` empty), a warning and
/// a slower look ([`ERROR_REQUEUE`]): OpenKruise keeps waiting too.
pub fn while_waiting(requeue_after: Option<Duration>, expectations: &impl std::fmt::Debug) -> Next {
    match requeue_after {
        Some(left) => {
            tracing::debug!("waiting for the cache to show earlier writes");
            Next::After(left.min(EXPECTATION_RECHECK))
        }
        None => {
            tracing::warn!(
                ?expectations,
                "expectations unobserved past their timeout; still waiting"
            );
            Next::After(ERROR_REQUEUE)
        }
    }
}

/// What follows adopting orphans: the next plan once the cache shows them owned (the expectations wait
/// for it); a conflict plans again soon.
pub fn after_adoption(adopted: Result<(), kube::Error>) -> Result<Next, Error> {
    match adopted {
        Ok(()) => Ok(Next::After(EXPECTATION_RECHECK)),
        Err(e) if is_conflict(&e) => Ok(Next::After(CONFLICT_REQUEUE)),
        Err(e) => Err(e.into()),
    }
}

/// 409: a precondition failed or the object already exists (the cache was behind); plan again soon.
pub fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

/// Makes `owner` the controller of `orphans` (a strategic merge of the ownerReference, conditional on the
/// resourceVersion seen) and records the resourceVersions the cache must show before the next plan.
pub async fn adopt<K: kube::Resource<DynamicType = ()>>(
    client: &kube::Client,
    owner: &K,
    orphans: &[Arc<PodRecord>],
    expectations: &mut Expectations,
    now: Timestamp,
) -> Result<(), kube::Error> {
    let api: Api<Pod> = Api::namespaced(client.clone(), &owner.namespace().unwrap_or_default());
    for pod in orphans {
        let patch = json!({"metadata": {
            "resourceVersion": pod.metadata.resource_version,
            "ownerReferences": [{"apiVersion": K::api_version(&()), "kind": K::kind(&()),
                "name": owner.name_any(), "uid": owner.meta().uid, "controller": true, "blockOwnerDeletion": true}],
        }});
        let stored = api
            .patch(
                &pod.name_any(),
                &PatchParams::default(),
                &Patch::Strategic(&patch),
            )
            .await?;
        tracing::info!(pod = %pod.name_any(), "adopted");
        if let Some(rv) = stored.metadata.resource_version {
            expectations.expect_resource_version(&pod.name_any(), &rv, now);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch_with(rv: &str) -> Step {
        Step::PatchPod {
            name: "web-a".into(),
            reason: "inPlaceUpdate",
            patch: json!({"metadata": {"resourceVersion": rv}, "spec": {}}),
        }
    }

    #[test]
    fn a_precondition_moves_only_past_our_own_write_of_the_pod() {
        let mut ours = HashMap::new();
        assert_eq!(*chain_precondition(&patch_with("7"), &ours), patch_with("7"));
        ours.insert("web-a".to_string(), ("7".to_string(), "9".to_string()));
        assert_eq!(*chain_precondition(&patch_with("7"), &ours), patch_with("9"));
        // Planned against another version: left alone (it will conflict if that is stale).
        assert_eq!(*chain_precondition(&patch_with("8"), &ours), patch_with("8"));
        let unconditional = Step::PatchPod {
            name: "web-a".into(),
            reason: "lifecycle",
            patch: json!({"metadata": {"labels": {"a": "b"}}}),
        };
        assert_eq!(*chain_precondition(&unconditional, &ours), unconditional);
    }
}
