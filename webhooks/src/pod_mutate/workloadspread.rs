//! Step 2 of `/mutate-pod`: WorkloadSpread (docs/workloadspread.md#admission).
//!
//! 1. **Match.** An active pod whose controller is a supported workload (Deployment, ReplicaSet, Job,
//!    StatefulSet of `apps` or `apps.kruise.io`, CloneSet; API group and kind, version ignored) is
//!    matched against the WorkloadSpreads of its namespace in list order: the WS `targetRef` must name
//!    the owner or, walking controller references through the view, the owner's owner (pod → ReplicaSet
//!    → Deployment), and its `targetFilter` must select the pod. A missing object on that walk rejects
//!    the pod (500, as OpenKruise); the denial names the object ([`Denial::missing`]) so that the
//!    cluster IO layer can read it once from the API server and decide again.
//! 2. **Choose a subset.** One subset without `maxReplicas` → it. StatefulSet targets → by ordinal
//!    against cumulative `maxReplicas`. Otherwise from `status.versionedSubsetStatuses[<pod version>]`
//!    (initialised from spec when missing): a pod already recorded keeps its subset, else the first
//!    schedulable subset with missing replicas; a limited subset records the pod in `creatingPods`
//!    (keyed by its name, or by a generated uid when it has only `generateName`) and decrements
//!    `missingReplicas` — returned as a [`StatusWrite`] of that one record ([`SubsetRecord`]) at the
//!    WorkloadSpread's resourceVersion.
//! 3. **Inject.** Tolerations, node affinity, the subset `patch` (strategic merge, see
//!    [`strategic_merge`]) and annotation `apps.kruise.io/matched-workloadspread`.
//!
//! Dry-run creates are skipped entirely, as OpenKruise skips them (no injection, nothing recorded).
//! A pod that already carries the annotation of the WorkloadSpread that matches it is left alone, so
//! running the webhook on its own output adds nothing.

pub(crate) mod ids;
mod inject;
pub mod strategic_merge;

use inject::inject;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kruise_api::apps_v1beta1::{TargetReference, WorkloadSpread, WorkloadSpreadSubsetStatus};
use kruise_core::{
    StatusChange, intstr,
    pod_state::is_active_json,
    workload_spread::{self, SubsetEvent, SubsetRecord},
};
use serde_json::Value;

use super::{PodContext, StepOutput, StepResult};
use crate::{
    Denial, MissingObject, StatusWrite, WriteTarget,
    owner::{self, ObjectRef, OwnedRef},
    selector,
    view::ClusterView,
};

/// Pod annotation naming the WorkloadSpread and subset the pod was assigned to.
pub use kruise_api::apps_v1beta1::MATCHED_WORKLOADSPREAD_ANNOTATION as MATCHED_ANNOTATION;

/// OpenKruise's feature gate `WorkloadSpread` (default on).
const GATE_ENABLED: bool = true;
/// Bound on the owner walk (pod → ReplicaSet → Deployment is 2); guards against reference cycles.
const MAX_OWNER_DEPTH: usize = 8;

/// Step of `/mutate-pod`.
pub fn mutate(context: &PodContext<'_, impl ClusterView>, pod: &Value) -> StepResult {
    if !GATE_ENABLED
        || !super::pub_annotation::is_pods_resource(context.request)
        || context.request.is_dry_run()
    {
        return Ok(StepOutput::default());
    }
    if !is_active_json(pod) {
        return Ok(StepOutput::default());
    }
    let Some(owner) = owner::controller_of(pod) else {
        return Ok(StepOutput::default());
    };
    if !is_supported_workload(owner) {
        return Ok(StepOutput::default());
    }
    let spreads = context.view.workload_spreads(context.namespace);
    if spreads.is_empty() {
        return Ok(StepOutput::default());
    }
    let labels = selector::raw_labels(pod);
    let mut matched = None;
    for ws in &spreads {
        let Some(target) = ws.spec.target_reference.as_ref() else {
            continue;
        };
        if ws.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let equal = match reference_equal(context.view, context.namespace, target, owner.to_owned_ref(), 0) {
            Ok(equal) => equal,
            Err(Walk::Skip) => continue,
            Err(Walk::NotFound(message, missing)) => {
                return Err(Denial::new(500, "", message).for_missing(missing));
            }
        };
        let selected = match ws.spec.target_filter.as_ref() {
            None => true,
            Some(filter) => match selector::selects(filter.selector.as_ref(), &labels) {
                Ok(selected) => selected,
                Err(_) => continue,
            },
        };
        if equal && selected {
            matched = Some(ws);
            break;
        }
    }
    let Some(ws) = matched else {
        return Ok(StepOutput::default());
    };
    if already_injected(pod, ws) {
        return Ok(StepOutput::default());
    }
    let choice = choose_subset(context, ws, pod, owner)?;
    let Some(subset_name) = choice.subset else {
        return Ok(StepOutput::default());
    };
    let mut output = StepOutput {
        writes: choice.write.into_iter().collect(),
        ..StepOutput::default()
    };
    let Some(subset) = ws.spec.subsets.iter().find(|s| s.name == subset_name) else {
        // A status entry without a spec subset: recorded, nothing to inject (as OpenKruise).
        return Ok(output);
    };
    let ws_name = ws.metadata.name.as_deref().unwrap_or("");
    output.patch = inject(pod, ws_name, subset, choice.uid.as_deref()).map_err(|e| {
        Denial::new(
            500,
            "",
            format!("WorkloadSpread {ws_name} subset {subset_name}: cannot apply its patch to the pod: {e}"),
        )
    })?;
    Ok(output)
}

/// The workload kinds a WorkloadSpread can target (group and kind; version ignored).
fn is_supported_workload(r: ObjectRef<'_>) -> bool {
    matches!(
        (r.group(), r.kind),
        (Ok("apps"), "Deployment" | "ReplicaSet" | "StatefulSet")
            | (Ok("apps.kruise.io"), "CloneSet" | "StatefulSet")
            | (Ok("batch"), "Job")
    )
}

/// Why the owner walk stopped without an answer.
enum Walk {
    /// Skip this WorkloadSpread (a malformed apiVersion).
    Skip,
    /// An object on the walk is not in the view: the pod is rejected with this message.
    NotFound(String, MissingObject),
}

/// OpenKruise's `isReferenceEqual`: the target names `owner` (group, kind, name), or — when `owner` is a
/// supported workload — the controller of the owner object, recursively.
fn reference_equal(
    view: &impl ClusterView,
    namespace: &str,
    target: &TargetReference,
    owner: OwnedRef,
    depth: usize,
) -> Result<bool, Walk> {
    let target_group = owner::api_group(&target.api_version).map_err(|_| Walk::Skip)?;
    let owner_group = owner::api_group(&owner.api_version).map_err(|_| Walk::Skip)?;
    if target_group == owner_group && target.kind == owner.kind && target.name == owner.name {
        return Ok(true);
    }
    if !is_supported_workload(owner.as_ref()) || depth >= MAX_OWNER_DEPTH {
        return Ok(false);
    }
    let Some(object) = owner::fetch_workload(view, owner_group, &owner.kind, namespace, &owner.name) else {
        let missing = MissingObject {
            group: owner_group.to_string(),
            kind: owner.kind.clone(),
            namespace: namespace.to_string(),
            name: owner.name.clone(),
        };
        return Err(Walk::NotFound(
            format!(
                "{} {:?} not found",
                owner::resource_of(owner_group, &owner.kind),
                owner.name
            ),
            missing,
        ));
    };
    match object.controller() {
        None => Ok(false),
        Some(next) => reference_equal(view, namespace, target, next.to_owned_ref(), depth + 1),
    }
}

/// True when the pod already names `ws` and one of its subsets in the matched annotation (our own
/// output, or a reinvocation).
fn already_injected(pod: &Value, ws: &WorkloadSpread) -> bool {
    let Some(raw) = crate::patch::get(pod, &["metadata", "annotations"])
        .and_then(|a| a.get(MATCHED_ANNOTATION))
        .and_then(Value::as_str)
    else {
        return false;
    };
    let Ok(Value::Object(injected)) = serde_json::from_str::<Value>(raw) else {
        return false;
    };
    injected.get("name").and_then(Value::as_str) == ws.metadata.name.as_deref()
        && injected
            .get("subset")
            .and_then(Value::as_str)
            .is_some_and(|s| ws.spec.subsets.iter().any(|sub| sub.name == s))
}

/// The chosen subset, the uid generated for a pod without a name, and the status to record.
struct Choice {
    subset: Option<String>,
    uid: Option<String>,
    write: Option<StatusWrite>,
}

impl Choice {
    fn of(subset: Option<&str>) -> Self {
        Choice {
            subset: subset.map(str::to_string),
            uid: None,
            write: None,
        }
    }
}

fn choose_subset(
    context: &PodContext<'_, impl ClusterView>,
    ws: &WorkloadSpread,
    pod: &Value,
    owner: ObjectRef<'_>,
) -> Result<Choice, Denial> {
    let subsets = &ws.spec.subsets;
    if subsets.len() == 1 && subsets[0].max_replicas.is_none() {
        return Ok(Choice::of(Some(&subsets[0].name)));
    }
    let pod_name = crate::patch::get(pod, &["metadata", "name"])
        .and_then(Value::as_str)
        .unwrap_or("");
    let target_kind = ws.spec.target_reference.as_ref().map_or("", |t| t.kind.as_str());
    if target_kind == "StatefulSet" {
        return Ok(Choice::of(by_ordinal(ws, pod_name)));
    }

    let labels = selector::raw_labels(pod);
    let version = workload_spread::pod_version(Some(owner.kind), &labels);
    let recorded = ws
        .status
        .as_ref()
        .and_then(|s| s.versioned_subset_statuses.as_ref())
        .and_then(|v| v.get(version))
        .filter(|list| !list.is_empty());
    // Only read: what is recorded stays where it is, so the choice costs the same whatever it holds.
    let initial = match recorded {
        Some(_) => None,
        None => Some(initial_statuses(context, ws)?),
    };
    let statuses = recorded.or(initial.as_ref()).map_or(&[][..], Vec::as_slice);
    if !pod_name.is_empty()
        && let Some(s) = statuses.iter().find(|s| {
            s.creating_pods.as_ref().is_some_and(|m| m.contains_key(pod_name))
                || s.deleting_pods.as_ref().is_some_and(|m| m.contains_key(pod_name))
        })
    {
        return Ok(Choice::of(Some(&s.name)));
    }
    let Some(chosen) = statuses
        .iter()
        .find(|s| !unschedulable(s) && (s.missing_replicas > 0 || s.missing_replicas == -1))
    else {
        return Ok(Choice::of(None));
    };
    if chosen.missing_replicas == -1 {
        return Ok(Choice::of(Some(&chosen.name)));
    }
    let (key, uid) = if pod_name.is_empty() {
        let uid = ids::uuid(context.request, "workloadspread");
        (uid.clone(), Some(uid))
    } else {
        (pod_name.to_string(), None)
    };
    let subset = chosen.name.clone();
    let write = StatusWrite {
        target: WriteTarget {
            api_version: "apps.kruise.io/v1beta1".into(),
            kind: "WorkloadSpread".into(),
            plural: "workloadspreads".into(),
            namespace: context.namespace.to_string(),
            name: ws.metadata.name.clone().unwrap_or_default(),
        },
        resource_version: ws.metadata.resource_version.clone(),
        change: StatusChange::RecordInSubset(Box::new(SubsetRecord {
            version: version.to_string(),
            initial,
            subset: subset.clone(),
            pod: key,
            event: SubsetEvent::Creating,
            at: Time(k8s_openapi::jiff::Timestamp::now()),
        })),
    };
    Ok(Choice {
        subset: Some(subset),
        uid,
        write: (!context.request.is_dry_run()).then_some(write),
    })
}

/// `Schedulable=False` among the subset's conditions.
fn unschedulable(status: &WorkloadSpreadSubsetStatus) -> bool {
    status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == "Schedulable" && c.status == "False")
}

/// StatefulSet targets: the first schedulable subset (by `status.subsetStatuses`) whose cumulative
/// `maxReplicas` exceeds the pod ordinal (`-1` for a name without `-<number>`).
fn by_ordinal<'a>(ws: &'a WorkloadSpread, pod_name: &str) -> Option<&'a str> {
    let ordinal = ordinal_of(pod_name);
    let overall = ws
        .status
        .as_ref()
        .and_then(|s| s.subset_statuses.as_deref())
        .unwrap_or_default();
    let mut threshold: i64 = 0;
    for subset in &ws.spec.subsets {
        if overall.iter().any(|s| s.name == subset.name && unschedulable(s)) {
            continue;
        }
        threshold += subset
            .max_replicas
            .as_ref()
            .map_or(i64::from(i32::MAX), intstr::int_value);
        if ordinal < threshold {
            return Some(&subset.name);
        }
    }
    None
}

/// The ordinal of a StatefulSet pod name (`(.*)-([0-9]+)$`), `-1` when there is none or it overflows
/// 32 bits.
fn ordinal_of(name: &str) -> i64 {
    match name.rsplit_once('-') {
        Some((_, digits)) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            digits.parse::<i32>().map_or(-1, i64::from)
        }
        _ => -1,
    }
}

/// Subset statuses initialised from spec against the workload's replicas.
fn initial_statuses(
    context: &PodContext<'_, impl ClusterView>,
    ws: &WorkloadSpread,
) -> Result<Vec<WorkloadSpreadSubsetStatus>, Denial> {
    let replicas = owner::workload_replicas(context.view, ws, context.namespace)
        .map_err(|e| Denial::new(500, "", e.to_string()))?;
    Ok(workload_spread::initial_subset_statuses(ws, replicas))
}

#[cfg(test)]
mod tests {
    use kruise_core::MemoryView;
    use serde_json::json;

    use super::*;
    use crate::{Settings, review::AdmissionRequest};

    fn create(owner: &str) -> AdmissionRequest {
        serde_json::from_value(json!({"uid": "u", "operation": "CREATE", "namespace": "ns",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "object": {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "namespace": "ns", "ownerReferences": [{"apiVersion": "apps/v1",
                    "kind": "ReplicaSet", "name": owner, "uid": "rs-uid", "controller": true}]},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}))
        .unwrap()
    }

    fn view() -> MemoryView {
        let mut view = MemoryView::default();
        view.add(
            json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
            "metadata": {"name": "ws", "namespace": "ns", "resourceVersion": "1"},
            "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "subsets": [{"name": "a"}]}}),
        )
        .unwrap();
        view
    }

    #[test]
    fn an_owner_missing_from_the_view_is_named_in_the_denial() {
        let decision = crate::pod_mutate::mutate(&create("web-1"), &view(), &Settings::default());
        let denial = decision.denial.as_ref().expect("denied");
        assert_eq!(
            (denial.code, denial.message.as_str()),
            (500, "replicasets.apps \"web-1\" not found")
        );
        let missing = decision.missing().expect("the missing owner, as data");
        assert_eq!(
            (
                missing.group.as_str(),
                missing.kind.as_str(),
                missing.namespace.as_str(),
                missing.name.as_str()
            ),
            ("apps", "ReplicaSet", "ns", "web-1")
        );
        assert_eq!(missing.to_string(), "replicasets.apps ns/web-1");
    }

    #[test]
    fn once_the_owner_is_in_the_view_the_pod_is_matched() {
        let mut view = view();
        view.add(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-1", "namespace": "ns", "uid": "rs-uid", "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d", "controller": true}]},
            "spec": {"selector": {}}}))
            .unwrap();
        let request = create("web-1");
        let decision = crate::pod_mutate::mutate(&request, &view, &Settings::default());
        assert!(decision.allowed() && decision.missing().is_none(), "{decision:?}");
        let mut pod = request.object.clone().unwrap();
        json_patch::patch(&mut pod, &decision.patch).unwrap();
        let matched = pod["metadata"]["annotations"][MATCHED_ANNOTATION]
            .as_str()
            .unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(matched).unwrap(),
            json!({"name": "ws", "subset": "a"})
        );
    }
}
