//! WorkloadSpread status and pod deletion cost. The pod webhook assigns subsets at admission and books
//! them in the status (`creatingPods`, `deletingPods`, `missingReplicas`); this controller recounts each
//! subset from the pods and expires bookings the cluster never confirmed:
//!
//! - pods created before the WorkloadSpread are adopted (`adopt`) into the subset that fits their node
//!   best, and patched with the matched annotation and the subset patch's metadata; pods that are not
//!   scheduled, or fit no subset, are in no subset (and are scaled down first);
//! - `missingReplicas` starts at `maxReplicas` scaled to the workload (rounded up; −1 when unlimited);
//!   every active pod of the subset takes one (floored at 0);
//! - a `deletingPods` record of a still-active pod is kept for 15s ([`DELETE_POD_TIMEOUT`]) and gives
//!   the replica back meanwhile; a `creatingPods` record no pod has shown up for is kept for 30s
//!   ([`CREATE_POD_TIMEOUT`]) and holds a replica meanwhile;
//! - the same is done per pod version (`versionedSubsetStatuses`), keeping versions that still book
//!   something;
//! - for CloneSet, Deployment and ReplicaSet targets, `controller.kubernetes.io/pod-deletion-cost` makes
//!   the workload scale down the last subsets (and the excess of over-full subsets) first;
//! - with Adaptive rescheduling (`reschedule`), pods stuck unschedulable in a subset (but the last) are
//!   deleted and the subset is `Schedulable=False` for five minutes, so the webhook places their
//!   replacements elsewhere.

use kruise_api::PodRecord;
use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
    time::Duration,
};

use futures::StreamExt as _;
use k8s_openapi::{
    api::{
        apps::v1::{Deployment, ReplicaSet},
        batch::v1::Job,
        core::v1::Node,
    },
    apimachinery::pkg::apis::meta::v1::Time,
    jiff::{SignedDuration, Timestamp},
};
use kruise_api::apps_v1beta1::{
    CloneSet, MATCHED_WORKLOADSPREAD_ANNOTATION, WorkloadSpread, WorkloadSpreadStatus,
    WorkloadSpreadSubsetStatus,
};
use kruise_webhooks::{StatusWrite, WriteTarget};
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
use serde_json::{Value, json};

use super::{
    Context, ERROR_REQUEUE, Error, pods,
    pub_status::scaled_value,
    sightings::{CACHE_RECHECK, PodSightings},
    workloads,
};
use crate::cluster::status_writes::{self, WriteError};

/// How long a webhook's creatingPods record waits for its pod.
pub const CREATE_POD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a webhook's deletingPods record waits for its pod to go.
pub const DELETE_POD_TIMEOUT: Duration = Duration::from_secs(15);
/// Pods matching no subset of the spec.
pub const FAKE_SUBSET: &str = "kruise.io/workloadspread-fake-subset-name";
/// The version of pods whose workload has no versioned status.
pub const VERSION_IGNORED: &str = "versionIgnored";
pub const DELETION_COST_ANNOTATION: &str = "controller.kubernetes.io/pod-deletion-cost";
/// Safety net: every WorkloadSpread is recounted at least this often.
pub const RESYNC: Duration = Duration::from_secs(60);

/// The matched-workloadspread annotation.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct Injected {
    pub name: String,
    pub subset: String,
    #[serde(default)]
    pub uid: String,
}

pub fn injected(pod: &PodRecord) -> Option<Injected> {
    serde_json::from_str(pods::annotation(pod, MATCHED_WORKLOADSPREAD_ANNOTATION)?).ok()
}

/// The version a pod is counted under: the pod-template-hash for pods of ReplicaSets (and so
/// Deployments), the short controller-revision-hash label otherwise when present, else
/// [`VERSION_IGNORED`]; only pods of Deployment/ReplicaSet workloads are versioned (OpenKruise's default
/// `--ws-enabled-versioned-status`).
pub fn pod_version(pod: &PodRecord) -> String {
    let versioned = pods::controller_of(pod.metadata.owner_references.as_ref())
        .is_some_and(|o| matches!(o.kind.to_lowercase().as_str(), "deployment" | "replicaset"));
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    if !versioned {
        return VERSION_IGNORED.into();
    }
    if let Some(hash) = labels.get("pod-template-hash") {
        return hash.clone();
    }
    if let Some(hash) = labels.get("controller-revision-hash") {
        return hash.rsplit('-').next().unwrap_or(hash).to_string();
    }
    VERSION_IGNORED.into()
}

/// Whether deletion cost is managed for this target kind.
pub fn manages_deletion_cost(kind: &str) -> bool {
    matches!(kind, "ReplicaSet" | "Deployment" | "CloneSet")
}

/// The outcome of one pass.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    pub status: WorkloadSpreadStatus,
    /// Whether `status` differs from the WorkloadSpread's.
    pub changed: bool,
    /// Deletion-cost annotations to write: (pod, value).
    pub deletion_costs: Vec<(String, String)>,
    /// When the earliest kept record expires.
    pub recheck_after: Option<Duration>,
    /// Events, `Reason: message` (warnings `CreatePodFailed`, `DeletePodFailed`; `RecoverSchedulable`).
    pub events: Vec<String>,
    /// Pods to delete: pending unschedulable for longer than `rescheduleCriticalSeconds` in a subset that is
    /// not the last one (Adaptive rescheduling); deleted after the status is written.
    pub unschedulable: Vec<String>,
    /// Pods created before the WorkloadSpread, adopted into a subset: (pod, merge patch of the matched
    /// annotation and the subset patch's metadata).
    pub adoptions: Vec<(String, Value)>,
}

/// Inputs of [`plan`] besides the WorkloadSpread.
pub struct Observed<'a> {
    /// The workload's pods (active or not), before `targetFilter`.
    pub pods: &'a [Arc<PodRecord>],
    /// The workload's desired replicas.
    pub replicas: i32,
    /// The version of the workload's current template; `None` when not known.
    pub latest_version: Option<&'a str>,
    /// The nodes of the pods (pods on other nodes are not adopted).
    pub nodes: &'a BTreeMap<String, Arc<Node>>,
    pub now: Timestamp,
}

type PodsBySubset = BTreeMap<String, Vec<Arc<PodRecord>>>;

pub(crate) fn after(time: &Time, delay: Duration) -> Timestamp {
    time.0 + SignedDuration::try_from(delay).unwrap_or_default()
}

fn until(at: Timestamp, now: Timestamp) -> Duration {
    Duration::try_from(at.duration_since(now)).unwrap_or_default()
}

struct SubsetPass<'a> {
    now: Timestamp,
    recheck: &'a mut Option<Duration>,
    events: &'a mut Vec<String>,
    /// Pods that stayed unschedulable too long in an Adaptive subset.
    unschedulable: Vec<String>,
}

impl SubsetPass<'_> {
    fn recheck(&mut self, at: Timestamp) {
        let wait = until(at, self.now);
        *self.recheck = Some(self.recheck.map_or(wait, |r| r.min(wait)));
    }

    /// One subset's status from its pods and its previous status.
    fn subset(
        &mut self,
        ws: &WorkloadSpread,
        index: usize,
        pods: &[Arc<PodRecord>],
        old: Option<&WorkloadSpreadSubsetStatus>,
        replicas: i32,
    ) -> Result<WorkloadSpreadSubsetStatus, String> {
        let subset = &ws.spec.subsets[index];
        let max = match &subset.max_replicas {
            None => -1,
            Some(m) => {
                let max = scaled_value(m, replicas, true)?;
                if max < 0 {
                    return Err(format!("subset {}: negative maxReplicas", subset.name));
                }
                max
            }
        };
        let mut missing = max;
        let mut creating = old.and_then(|o| o.creating_pods.clone()).unwrap_or_default();
        let old_deleting = old.and_then(|o| o.deleting_pods.clone()).unwrap_or_default();
        let mut deleting = BTreeMap::new();
        let mut active = 0;
        for pod in pods {
            match injected(pod).filter(|i| !i.uid.is_empty()) {
                Some(i) => creating.remove(&i.uid),
                None => creating.remove(&pod.name_any()),
            };
            if !pods::is_active(pod) {
                continue;
            }
            active += 1;
            if missing > 0 {
                missing -= 1;
            }
            if let Some(at) = old_deleting.get(&pod.name_any()) {
                let expiry = after(at, DELETE_POD_TIMEOUT);
                if expiry < self.now {
                    self.events.push(format!(
                        "DeletePodFailed: Pod {}/{} was expected to be deleted but it wasn't",
                        ws.namespace().unwrap_or_default(),
                        pod.name_any()
                    ));
                } else {
                    deleting.insert(pod.name_any(), at.clone());
                    if missing < max {
                        missing += 1;
                    }
                    self.recheck(expiry);
                }
            }
        }
        let mut kept_creating = BTreeMap::new();
        for (id, at) in creating {
            let expiry = after(&at, CREATE_POD_TIMEOUT);
            if expiry < self.now {
                self.events.push(format!(
                    "CreatePodFailed: Pod {}/{id} was expected to be created but it wasn't",
                    ws.namespace().unwrap_or_default()
                ));
            } else {
                if missing > 0 {
                    missing -= 1;
                }
                kept_creating.insert(id, at);
                self.recheck(expiry);
            }
        }
        let old_conditions = old.and_then(|o| o.conditions.clone()).unwrap_or_default();
        let conditions = match reschedule::critical_duration(ws) {
            None => Vec::new(),
            Some(_) if index + 1 == ws.spec.subsets.len() => {
                reschedule::last_subset(&old_conditions, self.now)
            }
            Some(critical) => {
                let mut stuck = Vec::new();
                for pod in pods {
                    match reschedule::pending_timed_out(pod, critical, self.now) {
                        Ok(true) => stuck.push(pod.name_any()),
                        Ok(false) => {}
                        Err(at) => self.recheck(at),
                    }
                }
                let outcome = reschedule::rescheduled(&old_conditions, !stuck.is_empty(), self.now);
                if let Some(at) = outcome.recheck_at {
                    self.recheck(at);
                }
                if outcome.recovered {
                    self.events.push(format!(
                        "RecoverSchedulable: Subset {} of WorkloadSpread {}/{} is recovered from unschedulable \
                         to schedulable",
                        subset.name,
                        ws.namespace().unwrap_or_default(),
                        ws.name_any()
                    ));
                }
                self.unschedulable.extend(stuck);
                outcome.conditions
            }
        };
        Ok(WorkloadSpreadSubsetStatus {
            name: subset.name.clone(),
            replicas: active,
            conditions: Some(conditions).filter(|c| !c.is_empty()),
            missing_replicas: missing,
            creating_pods: Some(kept_creating).filter(|m| !m.is_empty()),
            deleting_pods: Some(deleting).filter(|m| !m.is_empty()),
        })
    }

    fn subsets(
        &mut self,
        ws: &WorkloadSpread,
        old: Option<&Vec<WorkloadSpreadSubsetStatus>>,
        by_subset: &PodsBySubset,
        replicas: i32,
    ) -> Result<Vec<WorkloadSpreadSubsetStatus>, String> {
        (0..ws.spec.subsets.len())
            .map(|i| {
                let name = &ws.spec.subsets[i].name;
                let previous = old.and_then(|o| o.iter().find(|s| &s.name == name));
                let pods = by_subset.get(name).map(Vec::as_slice).unwrap_or_default();
                self.subset(ws, i, pods, previous, replicas)
            })
            .collect()
    }
}

fn books_nothing(statuses: &[WorkloadSpreadSubsetStatus]) -> bool {
    statuses.iter().all(|s| {
        s.replicas == 0
            && s.creating_pods.as_ref().is_none_or(BTreeMap::is_empty)
            && s.deleting_pods.as_ref().is_none_or(BTreeMap::is_empty)
    })
}

fn normalized(status: &WorkloadSpreadStatus) -> WorkloadSpreadStatus {
    let clean = |s: &WorkloadSpreadSubsetStatus| WorkloadSpreadSubsetStatus {
        conditions: s.conditions.clone().filter(|c| !c.is_empty()),
        creating_pods: s.creating_pods.clone().filter(|m| !m.is_empty()),
        deleting_pods: s.deleting_pods.clone().filter(|m| !m.is_empty()),
        ..s.clone()
    };
    WorkloadSpreadStatus {
        observed_generation: status.observed_generation,
        subset_statuses: status
            .subset_statuses
            .as_ref()
            .map(|v| v.iter().map(clean).collect::<Vec<_>>())
            .filter(|v| !v.is_empty()),
        versioned_subset_statuses: status
            .versioned_subset_statuses
            .as_ref()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.iter().map(clean).collect()))
                    .collect::<BTreeMap<_, _>>()
            })
            .filter(|m| !m.is_empty()),
    }
}

/// Recounts `ws` from what was observed.
pub fn plan(ws: &WorkloadSpread, observed: &Observed<'_>) -> Result<Plan, String> {
    let name = ws.name_any();
    let subset_names: BTreeSet<&str> = ws.spec.subsets.iter().map(|s| s.name.as_str()).collect();
    let filter = ws.spec.target_filter.as_ref().and_then(|f| f.selector.as_ref());
    let empty = BTreeMap::new();
    // Group by version, then by subset; pods of no subset of this WorkloadSpread are adopted by version,
    // each version's subsets taking its pods up to their maxReplicas first.
    let mut by_version: BTreeMap<String, Vec<&Arc<PodRecord>>> = BTreeMap::new();
    for pod in observed.pods {
        if filter.is_some_and(|f| !pods::selects(f, pod.metadata.labels.as_ref().unwrap_or(&empty))) {
            continue;
        }
        by_version.entry(pod_version(pod)).or_default().push(pod);
    }
    let mut versioned: BTreeMap<String, PodsBySubset> = BTreeMap::new();
    let mut all: PodsBySubset = BTreeMap::new();
    let mut adoptions = Vec::new();
    for (version, version_pods) in by_version {
        let mut missing = BTreeMap::new();
        for subset in &ws.spec.subsets {
            let max = match &subset.max_replicas {
                None => i64::from(i32::MAX),
                Some(m) => i64::from(scaled_value(m, observed.replicas, true)?),
            };
            missing.insert(subset.name.clone(), max);
        }
        for pod in &version_pods {
            if let Some(m) = injected(pod)
                .filter(|i| i.name == name)
                .and_then(|i| missing.get_mut(&i.subset))
            {
                *m -= 1;
            }
        }
        for pod in version_pods {
            let subset = match injected(pod).filter(|i| i.name == name) {
                Some(i) if subset_names.contains(i.subset.as_str()) => i.subset,
                Some(_) => FAKE_SUBSET.to_string(),
                None => {
                    let node = pod
                        .spec
                        .as_ref()
                        .and_then(|s| s.node_name.as_deref())
                        .filter(|n| !n.is_empty())
                        .and_then(|n| observed.nodes.get(n));
                    match node.and_then(|node| adopt::choose(ws, pod, node, &missing)) {
                        Some(i) => {
                            let subset = &ws.spec.subsets[i];
                            adoptions.push((pod.name_any(), adopt::adoption_patch(ws, subset)));
                            if let Some(m) = missing.get_mut(&subset.name) {
                                *m -= 1;
                            }
                            subset.name.clone()
                        }
                        None => FAKE_SUBSET.to_string(),
                    }
                }
            };
            versioned
                .entry(version.clone())
                .or_default()
                .entry(subset.clone())
                .or_default()
                .push(pod.clone());
            all.entry(subset).or_default().push(pod.clone());
        }
    }

    let mut deletion = Vec::new();
    if ws
        .spec
        .target_reference
        .as_ref()
        .is_some_and(|t| manages_deletion_cost(&t.kind))
    {
        for (version, by_subset) in &versioned {
            let reverse = observed.latest_version != Some(version.as_str());
            deletion.extend(deletion_cost::deletion_costs(
                ws,
                by_subset,
                observed.replicas,
                reverse,
            )?);
        }
    }

    let old = ws.status.clone().unwrap_or_default();
    let mut recheck = None;
    let mut events = Vec::new();
    let mut pass = SubsetPass {
        now: observed.now,
        recheck: &mut recheck,
        events: &mut events,
        unschedulable: Vec::new(),
    };
    let subset_statuses = pass.subsets(ws, old.subset_statuses.as_ref(), &all, observed.replicas)?;
    // Only the overall pass deletes: the versioned passes see the same pods.
    let unschedulable = std::mem::take(&mut pass.unschedulable);
    let old_versioned = old.versioned_subset_statuses.clone().unwrap_or_default();
    let mut versioned_statuses = BTreeMap::new();
    for (version, by_subset) in &versioned {
        let statuses = pass.subsets(ws, old_versioned.get(version), by_subset, observed.replicas)?;
        versioned_statuses.insert(version.clone(), statuses);
    }
    // Versions without pods (yet) stay while they book something: the webhook may have admitted a pod
    // the cache has not shown yet.
    for (version, statuses) in &old_versioned {
        if versioned.contains_key(version) {
            continue;
        }
        let statuses = pass.subsets(ws, Some(statuses), &BTreeMap::new(), observed.replicas)?;
        if !books_nothing(&statuses) {
            versioned_statuses.insert(version.clone(), statuses);
        }
    }
    let status = normalized(&WorkloadSpreadStatus {
        observed_generation: ws.metadata.generation.unwrap_or(0),
        subset_statuses: Some(subset_statuses),
        versioned_subset_statuses: Some(versioned_statuses),
    });
    Ok(Plan {
        changed: status != normalized(&old),
        status,
        deletion_costs: deletion,
        recheck_after: recheck,
        events,
        unschedulable,
        adoptions,
    })
}

/// Sum of the integers at `paths` (dotted, e.g. `spec.replicas`) of a workload object.
fn replicas_from_paths(object: &Value, paths: &[String]) -> i32 {
    paths
        .iter()
        .map(|path| {
            path.split('.')
                .filter(|s| !s.is_empty())
                .try_fold(object, |v, key| v.get(key))
                .and_then(Value::as_i64)
                .unwrap_or(0) as i32
        })
        .sum()
}

/// The pods and replicas of the WorkloadSpread's target, and the target's latest version.
async fn observe(
    context: &Context,
    ws: &WorkloadSpread,
) -> Result<(Vec<Arc<PodRecord>>, i32, Option<String>), Error> {
    let Some(target) = &ws.spec.target_reference else {
        return Ok((Vec::new(), 0, None));
    };
    let namespace = ws.namespace().unwrap_or_default();
    let (pods, mut replicas) = if target.kind == "Job" && workloads::group_of(&target.api_version) == "batch"
    {
        match context.view.job(&namespace, &target.name) {
            None => (Vec::new(), 0),
            Some(job) => {
                let uid = job.metadata.uid.clone().unwrap_or_default();
                let selector = job
                    .spec
                    .as_ref()
                    .and_then(|s| s.selector.clone())
                    .unwrap_or_default();
                let pods = context
                    .view
                    .pods(&namespace)
                    .into_iter()
                    .filter(|p| {
                        pods::controller_of(p.metadata.owner_references.as_ref())
                            .is_some_and(|o| o.uid == uid)
                    })
                    .filter(|p| {
                        pods::selects(&selector, p.metadata.labels.as_ref().unwrap_or(&BTreeMap::new()))
                    })
                    .collect();
                (pods, job.spec.as_ref().and_then(|s| s.parallelism).unwrap_or(1))
            }
        }
    } else {
        workloads::pods_for_ref(
            context,
            &target.api_version,
            &target.kind,
            &namespace,
            &target.name,
            false,
        )
        .await?
    };
    if let Some(paths) = ws
        .spec
        .target_filter
        .as_ref()
        .and_then(|f| f.replicas_path_list.as_ref())
        .filter(|p| !p.is_empty())
    {
        let object = match target.kind.as_str() {
            "Deployment" => context
                .view
                .deployment(&namespace, &target.name)
                .map(|o| serde_json::to_value(&*o)),
            "ReplicaSet" => context
                .view
                .replica_set(&namespace, &target.name)
                .map(|o| serde_json::to_value(&*o)),
            "StatefulSet" => context
                .view
                .stateful_set(&namespace, &target.name)
                .map(|o| serde_json::to_value(&*o)),
            "CloneSet" => context
                .view
                .clone_set(&namespace, &target.name)
                .map(|o| serde_json::to_value(&*o)),
            "Job" => context
                .view
                .job(&namespace, &target.name)
                .map(|o| serde_json::to_value(&*o)),
            _ => None,
        };
        if let Some(Ok(object)) = object {
            replicas = replicas_from_paths(&object, paths);
        }
    }
    let latest = match target.kind.as_str() {
        "ReplicaSet" => context
            .view
            .replica_set(&namespace, &target.name)
            .and_then(|rs| rs.metadata.labels.as_ref()?.get("pod-template-hash").cloned()),
        "Deployment" => latest_deployment_version(context, &namespace, &target.name, &pods),
        _ => Some(VERSION_IGNORED.to_string()),
    };
    Ok((pods, replicas, latest))
}

/// The pod-template-hash of the Deployment's ReplicaSet whose template is the Deployment's, among the
/// ReplicaSets its pods belong to.
fn latest_deployment_version(
    context: &Context,
    namespace: &str,
    name: &str,
    pods: &[Arc<PodRecord>],
) -> Option<String> {
    let deployment = context.view.deployment(namespace, name)?;
    let strip = |template: &k8s_openapi::api::core::v1::PodTemplateSpec| {
        let mut t = template.clone();
        if let Some(labels) = t.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
            labels.remove("pod-template-hash");
        }
        t
    };
    let wanted = strip(&deployment.spec.template);
    let owners: BTreeSet<String> = pods
        .iter()
        .filter_map(|p| pods::controller_of(p.metadata.owner_references.as_ref()))
        .filter(|o| o.kind == "ReplicaSet")
        .map(|o| o.name.clone())
        .collect();
    owners.into_iter().find_map(|rs_name| {
        let rs = context.view.replica_set(namespace, &rs_name)?;
        let owned = pods::controller_of(rs.metadata.owner_references.as_ref())
            .is_some_and(|o| Some(&o.uid) == deployment.metadata.uid.as_ref());
        let template = rs.spec.template.as_ref()?;
        (owned && rs.metadata.deletion_timestamp.is_none() && strip(template) == wanted)
            .then(|| rs.metadata.labels.as_ref()?.get("pod-template-hash").cloned())
            .flatten()
    })
}

fn version_of(ws: &WorkloadSpread) -> u64 {
    ws.metadata
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

async fn reconcile(
    trigger: Arc<WorkloadSpread>,
    context: Arc<Context>,
    sightings: Arc<PodSightings>,
) -> Result<Action, Error> {
    if trigger.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let namespace = trigger.namespace().unwrap_or_default();
    let name = trigger.name_any();
    // Subset counts from a cache older than the triggering pod change would stay wrong.
    if !sightings.caught_up(&namespace, &name, context.view.as_ref()) {
        return Ok(Action::requeue(CACHE_RECHECK));
    }
    let uid = trigger.metadata.uid.clone();
    let ws = context
        .view
        .workload_spreads(&namespace)
        .into_iter()
        .filter(|w| w.metadata.name.as_deref() == Some(name.as_str()) && w.metadata.uid == uid)
        .fold(trigger, |best, w| {
            if version_of(&w) > version_of(&best) {
                w
            } else {
                best
            }
        });
    let (pods, replicas, latest) = observe(&context, &ws).await?;
    let nodes: BTreeMap<String, Arc<Node>> = pods
        .iter()
        .filter_map(|p| p.spec.as_ref()?.node_name.clone())
        .filter_map(|n| Some((n.clone(), context.view.node(&n)?)))
        .collect();
    let plan = plan(
        &ws,
        &Observed {
            pods: &pods,
            replicas,
            latest_version: latest.as_deref(),
            nodes: &nodes,
            now: Timestamp::now(),
        },
    )
    .map_err(|message| Error::Invalid {
        what: "WorkloadSpread",
        message,
    })?;
    let pods_api: Api<PodRecord> = Api::namespaced(context.client.clone(), &namespace);
    for (pod, patch) in &plan.adoptions {
        match pods_api
            .patch(pod, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(_) => tracing::info!(%namespace, workload_spread = %name, pod, "adopted a pre-existing pod"),
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => return Err(e.into()),
        }
    }
    for (pod, cost) in &plan.deletion_costs {
        let patch = json!({"metadata": {"annotations": {DELETION_COST_ANNOTATION: cost}}});
        match pods_api
            .patch(pod, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) | Err(kube::Error::Api(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    for event in &plan.events {
        tracing::warn!(%namespace, workload_spread = %name, "{event}");
    }
    if plan.changed {
        let write = StatusWrite {
            target: WriteTarget {
                api_version: WorkloadSpread::api_version(&()).into_owned(),
                kind: WorkloadSpread::kind(&()).into_owned(),
                plural: WorkloadSpread::plural(&()).into_owned(),
                namespace: namespace.clone(),
                name: name.clone(),
            },
            resource_version: ws.metadata.resource_version.clone(),
            status: serde_json::to_value(&plan.status).unwrap_or_default(),
        };
        match status_writes::write_status(&context.client, &write).await {
            Ok(stored) => {
                context.view.remember(&stored);
                tracing::info!(%namespace, workload_spread = %name, "WorkloadSpread status updated");
            }
            // The webhook booked something since we read: recount from the newer copy.
            Err(WriteError::Conflict { .. }) => {
                return Err(Error::Conflict {
                    kind: "WorkloadSpread",
                    namespace,
                    name,
                });
            }
            Err(e) => return Err(Error::Write(Box::new(e))),
        }
    }
    // Adaptive rescheduling: the workload recreates these pods and the webhook skips the subset now that
    // it is Schedulable=False.
    for pod in &plan.unschedulable {
        match pods_api.delete(pod, &Default::default()).await {
            Ok(_) => tracing::info!(%namespace, workload_spread = %name, pod, "deleted unschedulable pod"),
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => {
                tracing::warn!(%namespace, workload_spread = %name,
                    "DeletePodFailed: Failed to delete unschedulable Pod {namespace}/{pod}: {e}");
                return Err(e.into());
            }
        }
    }
    let wait = plan.recheck_after.map_or(RESYNC, |d| d.min(RESYNC));
    Ok(Action::requeue(wait.max(Duration::from_millis(100))))
}

fn error_policy(ws: Arc<WorkloadSpread>, error: &Error, context: Arc<Context>) -> Action {
    tracing::warn!(workload_spread = %ws.name_any(), namespace = ws.namespace().unwrap_or_default(), %error,
        "WorkloadSpread pass failed; retrying");
    if matches!(error, Error::Conflict { .. }) {
        // Re-read on the next pass: the cache may still hold the copy that lost.
        let client = context.client.clone();
        let view = context.view.clone();
        let (namespace, name) = (ws.namespace().unwrap_or_default(), ws.name_any());
        tokio::spawn(async move {
            let api: Api<WorkloadSpread> = Api::namespaced(client, &namespace);
            if let Ok(fresh) = api.get(&name).await {
                view.remember(&serde_json::to_value(&fresh).unwrap_or_default());
            }
        });
        return Action::requeue(Duration::from_millis(500));
    }
    Action::requeue(ERROR_REQUEUE)
}

fn spreads_for(
    store: &Store<WorkloadSpread>,
    namespace: &str,
    kind: &str,
    name: &str,
) -> Vec<ObjectRef<WorkloadSpread>> {
    store
        .state()
        .into_iter()
        .filter(|w| w.metadata.namespace.as_deref() == Some(namespace))
        .filter(|w| {
            w.spec
                .target_reference
                .as_ref()
                .is_some_and(|t| t.kind == kind && t.name == name)
        })
        .map(|w| ObjectRef::from_obj(&*w))
        .collect()
}

/// Runs the WorkloadSpread controller until aborted.
pub async fn run(context: Context) {
    let client = context.client.clone();
    let controller = Controller::new(
        Api::<WorkloadSpread>::all(client.clone()),
        watcher::Config::default().any_semantic(),
    );
    let store = controller.store();
    let sightings = Arc::new(PodSightings::default());
    let (seen, kept) = (sightings.clone(), store.clone());
    let (pod_store, deployments, replica_sets, clone_sets, jobs) =
        (store.clone(), store.clone(), store.clone(), store.clone(), store);
    let view = context.view.clone();
    let cfg = || watcher::Config::default().any_semantic();
    controller
        .with_config(
            kube::runtime::controller::Config::default()
                .concurrency(3)
                .debounce(Duration::from_millis(500)),
        )
        .watches(
            Api::<PodRecord>::all(client.clone()),
            cfg(),
            move |pod: PodRecord| {
                let namespace = pod.namespace().unwrap_or_default();
                let mut refs: Vec<ObjectRef<WorkloadSpread>> = injected(&pod)
                    .map(|i| ObjectRef::new(&i.name).within(&namespace))
                    .into_iter()
                    .collect();
                if let Some(owner) = pods::controller_of(pod.metadata.owner_references.as_ref()) {
                    refs.extend(spreads_for(&pod_store, &namespace, &owner.kind, &owner.name));
                    if owner.kind == "ReplicaSet"
                        && let Some(rs) = view.replica_set(&namespace, &owner.name)
                        && let Some(d) = pods::controller_of(rs.metadata.owner_references.as_ref())
                    {
                        refs.extend(spreads_for(&pod_store, &namespace, &d.kind, &d.name));
                    }
                }
                refs.dedup();
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
            cfg(),
            move |o: Deployment| {
                spreads_for(
                    &deployments,
                    &o.namespace().unwrap_or_default(),
                    "Deployment",
                    &o.name_any(),
                )
            },
        )
        .watches(
            Api::<ReplicaSet>::all(client.clone()),
            cfg(),
            move |o: ReplicaSet| {
                spreads_for(
                    &replica_sets,
                    &o.namespace().unwrap_or_default(),
                    "ReplicaSet",
                    &o.name_any(),
                )
            },
        )
        .watches(Api::<CloneSet>::all(client.clone()), cfg(), move |o: CloneSet| {
            spreads_for(
                &clone_sets,
                &o.namespace().unwrap_or_default(),
                "CloneSet",
                &o.name_any(),
            )
        })
        .watches(Api::<Job>::all(client), cfg(), move |o: Job| {
            spreads_for(&jobs, &o.namespace().unwrap_or_default(), "Job", &o.name_any())
        })
        .run(
            move |spread, context| reconcile(spread, context, sightings.clone()),
            error_policy,
            Arc::new(context),
        )
        .for_each(|result| async move {
            if let Err(e) = result {
                tracing::debug!(error = %e, "WorkloadSpread pass");
            }
        })
        .await;
}

mod adopt;
mod deletion_cost;
mod reschedule;

#[cfg(test)]
mod tests;
