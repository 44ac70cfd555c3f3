//! The SidecarSet controller: the planner is [`kruise_reconcile::sidecarset`]; this gathers the pods of
//! the namespaces a SidecarSet selects from the cluster cache, carries out the in-place upgrades
//! (one pod patch and at most one `pods/status` patch per pod), records the events and writes the
//! status, after registering the latest ControllerRevision (in kruise-rs's namespace, where
//! injection looks for pinned revisions). Pod changes trigger the SidecarSets named in the pod's `kruise.io/sidecarset-injected-list`.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::Pod},
    jiff::Timestamp,
};
use kruise_api::{PodRecord, apps_v1beta1::SidecarSet};
use kruise_core::names::SIDECARSET_INJECTED_LIST_ANNOTATION as SIDECARSET_INJECTED_LIST;
use kruise_core::pub_protection::{self, Outcome, PodOperation};
use kruise_core::selector::selects;
use kruise_reconcile::sidecarset::{
    self, FactsCache, InFlight, Input, PodFacts, PodRef, Refusal,
    revision::{self, RevisionWrite, Revisions},
};
use kube::{
    Api, Resource as _, ResourceExt as _,
    api::{DeleteParams, Patch, PatchParams, PostParams},
    runtime::{
        events::{Event, EventType, Recorder, Reporter},
        reflector::ObjectRef,
    },
};

use crate::server::metrics::SidecarSetLabels;

use super::{
    Context, ControllerView, Error,
    control_loop::{self, Known, Next, Pass, Reconciler, Triggers},
    pods,
};

/// Safety net: every SidecarSet is re-planned at least this often.
pub const RESYNC: Duration = Duration::from_secs(60);

/// The event reporter (`reportingController` / `reportingInstance`).
fn reporter() -> Reporter {
    Reporter {
        controller: "kruise-manager".into(),
        instance: Some("sidecarset-controller".into()),
    }
}

struct SidecarSets {
    recorder: Recorder,
}

/// Kept per SidecarSet between passes (dropped with it): the upgrades in flight and the facts of its pods,
/// derived again only for pods whose resourceVersion moved (docs/sidecarset-controller.md, "Facts per
/// pod version"). Passes of one SidecarSet never overlap, so the lock is never contended.
#[derive(Clone, Default)]
struct SetMemory {
    in_flight: InFlight,
    facts: Arc<Mutex<FactsCache>>,
}

impl SetMemory {
    /// The facts of `pods` for `set`, from the cache.
    fn facts(&self, set: &SidecarSet, pods: &[&PodRecord]) -> Vec<Arc<PodFacts>> {
        let mut cache = self.facts.lock().unwrap_or_else(|p| p.into_inner());
        let facts = cache.refresh(set, pods);
        tracing::trace!(sidecarset = %set.name_any(), pods = pods.len(), derived = cache.derived(), "pod facts");
        facts
    }
}

/// The pods of the namespaces the SidecarSet selects: every namespace without `namespaceSelector`;
/// with one, the namespaces whose labels it selects (`kubernetes.io/metadata.name` is always known).
fn candidate_pods(view: &dyn ControllerView, set: &SidecarSet) -> Vec<Arc<PodRecord>> {
    let Some(selector) = &set.spec.namespace_selector else {
        return view.kinds().pods.list(None);
    };
    let mut out = Vec::new();
    for namespace in view.kinds().namespaces.list(None) {
        let name = namespace.metadata.name.clone().unwrap_or_default();
        let mut labels = namespace.metadata.labels.clone().unwrap_or_default();
        labels.insert("kubernetes.io/metadata.name".into(), name.clone());
        if selects(Some(selector), &labels).unwrap_or(false) {
            out.extend(view.pods(&name));
        }
    }
    out
}

/// The SidecarSets a pod names in its injected list.
fn sidecar_sets_of_pod(pod: &PodRecord, known: &Known<SidecarSet>) -> Vec<ObjectRef<SidecarSet>> {
    let Some(list) = pods::annotation(pod, SIDECARSET_INJECTED_LIST) else {
        return Vec::new();
    };
    let names: Vec<&str> = list.split(',').filter(|n| !n.is_empty()).collect();
    known.refs(|s| s.metadata.name.as_deref().is_some_and(|n| names.contains(&n)))
}

impl SidecarSets {
    async fn publish(&self, set: &SidecarSet, warning: bool, reason: &str, note: String) {
        let event = Event {
            type_: if warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: reason.into(),
            note: Some(note),
            action: "Update".into(),
            secondary: None,
        };
        if let Err(e) = self.recorder.publish(&event, &set.object_ref(&())).await {
            tracing::debug!(error = %e, reason, "could not record event");
        }
    }
}

impl SidecarSets {
    /// An event on a pod (the hot-upgrade flips, as OpenKruise records them).
    async fn publish_on_pod(&self, pod: &PodRef, warning: bool, reason: &str, note: String) {
        let event = Event {
            type_: if warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: reason.into(),
            note: Some(note),
            action: "Update".into(),
            secondary: None,
        };
        let reference = k8s_openapi::api::core::v1::ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Pod".into()),
            name: Some(pod.name.clone()),
            namespace: Some(pod.namespace.clone()),
            uid: Some(pod.uid.clone()),
            ..Default::default()
        };
        if let Err(e) = self.recorder.publish(&event, &reference).await {
            tracing::debug!(error = %e, reason, "could not record event");
        }
    }
}

fn pod_api(context: &Context, pod: &PodRef) -> Api<Pod> {
    Api::namespaced(context.client.clone(), &pod.namespace)
}

/// Patches a pod (or its status) and hands the stored pod to the cache, so the next plan sees it.
async fn patch_pod(
    context: &Context,
    pod: &PodRef,
    patch: &serde_json::Value,
    status: bool,
) -> Result<(), kube::Error> {
    let api = pod_api(context, pod);
    let params = PatchParams::default();
    let stored = if status {
        api.patch_status(&pod.name, &params, &Patch::Strategic(patch))
            .await?
    } else {
        api.patch(&pod.name, &params, &Patch::Strategic(patch)).await?
    };
    context
        .view
        .remember(&serde_json::to_value(&stored).unwrap_or_default());
    Ok(())
}

/// The pod webhook's PodUnavailableBudget rule for a pod UPDATE, run dry on the cache: `Some` when a budget
/// would refuse updating `pod` now.
fn budget_refusal(view: &dyn ControllerView, pod: &PodRecord, now: Timestamp) -> Option<Refusal> {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    match pub_protection::check(pod, namespace, PodOperation::Update, true, view, now) {
        Ok(Outcome::Denied { pub_name, message }) => Some(Refusal {
            budget: format!("{namespace}/{pub_name}"),
            message,
        }),
        Ok(_) => None,
        Err(e) => {
            tracing::debug!(pod = %pod.metadata.name.as_deref().unwrap_or_default(), error = %e, "PodUnavailableBudget check failed; the webhook decides");
            None
        }
    }
}

/// Registers the latest ControllerRevision and truncates the history (OpenKruise's
/// `pkg/controller/sidecarset/sidecarset_processor.go`, `registerLatestRevision`); the stored revisions go
/// to the cache at once.
async fn register_revisions(
    context: &Context,
    set: &SidecarSet,
    pods: &[sidecarset::SeenPod<'_>],
) -> Result<Revisions, Error> {
    let view = context.view.as_ref();
    let namespace = view.own_namespace().to_string();
    let all = view.controller_revisions(&namespace);
    let matched: Vec<&PodRecord> = pods.iter().filter(|p| p.facts.matched).map(|p| p.pod).collect();
    let revisions = revision::plan_revisions(set, &revision::owned(set, &all), &matched, &namespace);
    let api: Api<ControllerRevision> = Api::namespaced(context.client.clone(), &namespace);
    for write in &revisions.writes {
        let stored = match write {
            RevisionWrite::Create(r) => Some(api.create(&PostParams::default(), r).await?),
            RevisionWrite::Update(r) => Some(api.replace(&r.name_any(), &PostParams::default(), r).await?),
            RevisionWrite::Delete(name) => match api.delete(name, &DeleteParams::default()).await {
                Err(kube::Error::Api(s)) if !s.is_not_found() => {
                    tracing::warn!(revision = %name, error = %s.message, "could not truncate the SidecarSet history");
                    None
                }
                _ => None,
            },
        };
        if let Some(stored) = stored {
            context
                .view
                .remember(&serde_json::to_value(&stored).unwrap_or_default());
        }
    }
    Ok(revisions)
}

impl Reconciler for SidecarSets {
    type Object = SidecarSet;
    type Memory = SetMemory;
    const DEBOUNCE: Duration = Duration::from_millis(200);
    const RESYNC: Duration = RESYNC;

    fn triggers(&self, triggers: Triggers<SidecarSet>) -> Triggers<SidecarSet> {
        triggers.pods(sidecar_sets_of_pod)
    }

    fn cached(view: &dyn ControllerView, _namespace: &str, name: &str) -> Option<Arc<SidecarSet>> {
        view.sidecar_sets()
            .into_iter()
            .find(|s| s.metadata.name.as_deref() == Some(name))
    }

    async fn pass(
        self: Arc<Self>,
        set: Arc<SidecarSet>,
        pass: Pass<SidecarSet, SetMemory>,
    ) -> Result<Next, Error> {
        let name = set.name_any();
        let candidates = candidate_pods(pass.context.view.as_ref(), &set);
        let refs: Vec<&PodRecord> = candidates.iter().map(|p| &**p).collect();
        let mut memory = pass.memory();
        let facts = memory.facts(&set, &refs);
        let seen = sidecarset::seen(&refs, &facts);
        let revisions = register_revisions(&pass.context, &set, &seen).await?;
        let in_flight = &memory.in_flight;
        let now = Timestamp::now();
        let view = pass.context.view.clone();
        let budget = move |pod: &PodRecord| budget_refusal(view.as_ref(), pod, now);
        let mut plan = sidecarset::plan(&Input {
            sidecar_set: &set,
            pods: &seen,
            latest_revision: revisions.latest.metadata.name.as_deref(),
            collision_count: revisions.collision_count,
            in_flight,
            now,
            budget: Some(&budget),
        })
        .map_err(|e| Error::Invalid {
            what: "SidecarSet",
            message: e.to_string(),
        })?;
        tracing::debug!(sidecarset = %name, candidates = refs.len(), matched = plan.status.matched_pods,
            updated = plan.status.updated_pods, upgrades = plan.upgrades.len(), "planned");

        for (pod, patch) in &plan.not_upgradable {
            patch_pod(&pass.context, pod, patch, true).await?;
        }
        for event in &plan.events {
            self.publish(&set, event.warning, &event.reason, event.message.clone())
                .await;
        }
        pass.context
            .uninjected_pods
            .get_or_create(&SidecarSetLabels {
                sidecarset: name.clone(),
            })
            .set(i64::from(plan.status.uninjected_pods));
        for (pod, patch) in &plan.replacements {
            patch_pod(&pass.context, pod, patch, false).await?;
            tracing::info!(sidecarset = %name, pod = %pod.name, namespace = %pod.namespace,
                "asked the CloneSet to replace an uninjected pod");
        }
        for (pod, patch) in &plan.flips {
            let result = patch_pod(&pass.context, pod, patch, false).await;
            let (warning, reason, note) = match &result {
                Ok(()) => (
                    false,
                    "ResetContainerSucceed",
                    "reset sidecar container image empty successfully".to_string(),
                ),
                Err(e) => (
                    true,
                    "ResetContainerFailed",
                    format!("reset sidecar container image empty failed: {e}"),
                ),
            };
            self.publish_on_pod(pod, warning, reason, note).await;
            result?;
        }
        let mut failure = None;
        for (i, upgrade) in plan.upgrades.iter().enumerate() {
            let result = match patch_pod(&pass.context, &upgrade.pod, &upgrade.patch, false).await {
                Ok(()) => match &upgrade.condition {
                    Some(condition) => patch_pod(&pass.context, &upgrade.pod, condition, true).await,
                    None => Ok(()),
                },
                Err(e) => Err(e),
            };
            match result {
                Ok(()) => {
                    tracing::info!(sidecarset = %name, pod = %upgrade.pod.name, namespace = %upgrade.pod.namespace,
                    "upgraded sidecars in place")
                }
                Err(e) => {
                    // This pod and the ones after it were not upgraded: nothing to wait for.
                    for later in &plan.upgrades[i..] {
                        plan.in_flight.pods.remove(&later.pod.uid);
                    }
                    // A PodUnavailableBudget (or anything else) refusing the update: say so on the SidecarSet.
                    if let kube::Error::Api(status) = &e
                        && (status.code == 403 || status.code == 429)
                    {
                        let note = format!(
                            "updating pod {}/{} was refused: {}",
                            upgrade.pod.namespace, upgrade.pod.name, status.message
                        );
                        self.publish(&set, true, "UpdatePodRefused", note).await;
                    }
                    failure = Some(e);
                    break;
                }
            }
        }
        memory.in_flight = plan.in_flight.clone();
        pass.keep(memory);
        if let Some(e) = failure {
            return Err(e.into());
        }
        if plan.status_changed {
            pass.write_status(&set, &plan.status).await?;
        }
        Ok(Next::after(plan.requeue_after))
    }
}

/// Runs the SidecarSet controller until aborted.
pub async fn run(context: Context) {
    let recorder = Recorder::new(context.client.clone(), reporter());
    control_loop::run(context, SidecarSets { recorder }).await;
}
