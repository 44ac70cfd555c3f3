//! Step 2 of `/mutate-pod`: WorkloadSpread (docs/workloadspread.md#admission).
//!
//! 1. **Match.** An active pod whose controller is a supported workload (Deployment, ReplicaSet, Job,
//!    StatefulSet of `apps` or `apps.kruise.io`, CloneSet; API group and kind, version ignored) is
//!    matched against the WorkloadSpreads of its namespace in list order: the WS `targetRef` must name
//!    the owner or, walking controller references through the view, the owner's owner (pod → ReplicaSet
//!    → Deployment), and its `targetFilter` must select the pod. A missing object on that walk rejects
//!    the pod (500, as OpenKruise).
//! 2. **Choose a subset.** One subset without `maxReplicas` → it. StatefulSet targets → by ordinal
//!    against cumulative `maxReplicas`. Otherwise from `status.versionedSubsetStatuses[<pod version>]`
//!    (initialised from spec when missing): a pod already recorded keeps its subset, else the first
//!    schedulable subset with missing replicas; a limited subset records the pod in `creatingPods`
//!    (keyed by its name, or by a generated uid when it has only `generateName`) and decrements
//!    `missingReplicas` — returned as a [`StatusWrite`] at the WorkloadSpread's resourceVersion.
//! 3. **Inject.** Tolerations, node affinity, the subset `patch` (strategic merge, see
//!    [`strategic_merge`]) and annotation `apps.kruise.io/matched-workloadspread`.
//!
//! Dry-run creates are skipped entirely, as OpenKruise skips them (no injection, nothing recorded).
//! A pod that already carries the annotation of the WorkloadSpread that matches it is left alone, so
//! running the webhook on its own output adds nothing.

pub(crate) mod ids;
pub mod strategic_merge;

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kruise_api::apps_v1beta1::{
    TargetReference, WorkloadSpread, WorkloadSpreadStatus, WorkloadSpreadSubset, WorkloadSpreadSubsetStatus,
};
use kruise_core::{
    intstr::{self, Round},
    pod_state::is_active_json,
    workload_spread,
};
use serde_json::{Map, Value, json};

use super::{PodContext, StepOutput, StepResult};
use crate::{
    Denial, StatusWrite, WriteTarget,
    owner::{self, ObjectRef, OwnedRef},
    patch, selector,
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
            Err(Walk::NotFound(message)) => return Err(Denial::new(500, "", message)),
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
    /// An object on the walk does not exist: the pod is rejected with this message.
    NotFound(String),
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
        return Err(Walk::NotFound(format!(
            "{} {:?} not found",
            owner::resource_of(owner_group, &owner.kind),
            owner.name
        )));
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
    let status = ws.status.as_ref();
    let recorded = status
        .and_then(|s| s.versioned_subset_statuses.as_ref())
        .and_then(|v| v.get(version))
        .filter(|list| !list.is_empty());
    let mut statuses = match recorded {
        Some(list) => list.clone(),
        None => initial_statuses(context, ws)?,
    };
    if !pod_name.is_empty()
        && let Some(s) = statuses.iter().find(|s| {
            s.creating_pods.as_ref().is_some_and(|m| m.contains_key(pod_name))
                || s.deleting_pods.as_ref().is_some_and(|m| m.contains_key(pod_name))
        })
    {
        return Ok(Choice::of(Some(&s.name)));
    }
    let Some(index) = statuses
        .iter()
        .position(|s| !unschedulable(s) && (s.missing_replicas > 0 || s.missing_replicas == -1))
    else {
        return Ok(Choice::of(None));
    };
    let chosen = &mut statuses[index];
    if chosen.missing_replicas == -1 {
        return Ok(Choice::of(Some(&chosen.name)));
    }
    let (key, uid) = if pod_name.is_empty() {
        let uid = ids::uuid(context.request, "workloadspread");
        (uid.clone(), Some(uid))
    } else {
        (pod_name.to_string(), None)
    };
    chosen
        .creating_pods
        .get_or_insert_with(BTreeMap::new)
        .insert(key, Time(k8s_openapi::jiff::Timestamp::now()));
    if chosen.missing_replicas > 0 {
        chosen.missing_replicas -= 1;
    }
    let subset = chosen.name.clone();
    let mut new_status: WorkloadSpreadStatus = status.cloned().unwrap_or_default();
    new_status
        .versioned_subset_statuses
        .get_or_insert_with(BTreeMap::new)
        .insert(version.to_string(), statuses);
    let write = StatusWrite {
        target: WriteTarget {
            api_version: "apps.kruise.io/v1beta1".into(),
            kind: "WorkloadSpread".into(),
            plural: "workloadspreads".into(),
            namespace: context.namespace.to_string(),
            name: ws.metadata.name.clone().unwrap_or_default(),
        },
        resource_version: ws.metadata.resource_version.clone(),
        status: serde_json::to_value(&new_status)
            .map_err(|e| Denial::new(500, "", format!("cannot encode WorkloadSpread status: {e}")))?,
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

/// Subset statuses initialised from spec: `missingReplicas` = `maxReplicas` scaled (round up) against
/// the workload's replicas, or `-1` when unlimited.
fn initial_statuses(
    context: &PodContext<'_, impl ClusterView>,
    ws: &WorkloadSpread,
) -> Result<Vec<WorkloadSpreadSubsetStatus>, Denial> {
    let replicas = owner::workload_replicas(context.view, ws, context.namespace)
        .map_err(|e| Denial::new(500, "", e.to_string()))?;
    Ok(ws
        .spec
        .subsets
        .iter()
        .map(|subset| WorkloadSpreadSubsetStatus {
            name: subset.name.clone(),
            missing_replicas: subset
                .max_replicas
                .as_ref()
                // OpenKruise ignores the error (the value counts 0) and narrows to int32.
                .map_or(-1, |max| {
                    intstr::scaled(max, i64::from(replicas), Round::Up).unwrap_or(0) as i32
                }),
            ..WorkloadSpreadSubsetStatus::default()
        })
        .collect())
}

/// The operations injecting `subset` of WorkloadSpread `ws_name` into the pod.
fn inject(
    pod: &Value,
    ws_name: &str,
    subset: &WorkloadSpreadSubset,
    uid: Option<&str>,
) -> Result<Vec<json_patch::PatchOperation>, strategic_merge::MergeError> {
    let mut ops = Vec::new();
    let spec = pod.get("spec").filter(|s| s.is_object());
    let spec_path: &[&str] = &["spec"];
    if spec.is_none() {
        ops.push(patch::add(["spec"], json!({})));
    }
    let spec = spec.unwrap_or(&Value::Null);

    // 1. Tolerations, appended without de-duplication.
    let tolerations = subset.tolerations.as_deref().unwrap_or_default();
    if !tolerations.is_empty() {
        let values: Vec<Value> = tolerations.iter().map(to_json).collect();
        append_list(&mut ops, spec, spec_path, "tolerations", values);
    }

    // 2. Node affinity (always present afterwards, even empty).
    let preferred: Vec<Value> = subset
        .preferred_node_selector
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(to_json)
        .collect();
    let required = subset.required_node_selector.as_ref().map(to_json);
    let affinity = spec.get("affinity").filter(|a| a.is_object());
    let node_affinity = affinity
        .and_then(|a| a.get("nodeAffinity"))
        .filter(|n| n.is_object());
    match (affinity, node_affinity) {
        (None, _) => {
            let node_affinity = fresh_node_affinity(preferred, required);
            ops.push(patch::add(
                ["spec", "affinity"],
                json!({ "nodeAffinity": node_affinity }),
            ));
        }
        (Some(_), None) => {
            let node_affinity = fresh_node_affinity(preferred, required);
            ops.push(patch::add(["spec", "affinity", "nodeAffinity"], node_affinity));
        }
        (Some(_), Some(na)) => {
            let na_path: &[&str] = &["spec", "affinity", "nodeAffinity"];
            if !preferred.is_empty() {
                append_list(&mut ops, na, na_path, PREFERRED, preferred);
            }
            if let Some(term) = required {
                and_required_term(&mut ops, na, na_path, term);
            }
        }
    }

    // 3. The subset patch, applied to the pod as steps 1–2 left it.
    let patch_map = subset.patch.as_ref().and_then(Value::as_object);
    let mut annotations_source = pod.get("metadata");
    let merged_metadata;
    if let Some(subset_patch) = patch_map {
        if subset_patch.contains_key("$patch") {
            return Err(strategic_merge::MergeError(
                "a subset patch may not replace or delete the whole pod".into(),
            ));
        }
        if cheap_patch(pod, subset_patch) {
            // Nothing the patch reaches was changed by steps 1–2: merge against the pod itself,
            // cloning only the subtrees the patch touches.
            strategic_merge::merge_to_ops(
                Some(pod),
                subset_patch,
                strategic_merge::Schema::Pod,
                &mut Vec::new(),
                &mut ops,
            )?;
            let spec_patch = subset_patch.get("spec").and_then(Value::as_object);
            if let Some(class) = spec_patch.and_then(|p| p.get("priorityClassName")) {
                let old = spec
                    .get("priorityClassName")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let has_priority = match spec_patch.and_then(|p| p.get("priority")) {
                    Some(p) => !p.is_null(),
                    None => spec.get("priority").is_some(),
                };
                if class.as_str().unwrap_or("") != old && has_priority {
                    ops.push(remove(&["spec", "priority"]));
                }
            }
            merged_metadata = subset_patch
                .get("metadata")
                .map(|m| metadata_after(pod.get("metadata"), m))
                .transpose()?;
        } else {
            let mut working = pod.clone();
            json_patch::patch(&mut working, &ops).map_err(|e| {
                strategic_merge::MergeError(format!("kruise-rs built a patch that does not apply: {e}"))
            })?;
            let mut after = working.clone();
            strategic_merge::merge(&mut after, subset_patch, strategic_merge::Schema::Pod)?;
            // A changed priorityClassName invalidates the priority the apiserver already resolved.
            let class = |pod: &Value| {
                crate::patch::get(pod, &["spec", "priorityClassName"])
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            if class(&after) != class(&working)
                && let Some(Value::Object(spec_after)) = after.get_mut("spec")
            {
                spec_after.remove("priority");
            }
            strategic_merge::diff(&working, &after, &mut Vec::new(), &mut ops);
            merged_metadata = after.get("metadata").cloned();
        }
        if merged_metadata.is_some() {
            annotations_source = merged_metadata.as_ref();
        }
    }

    // 4. The matched annotation: {"name":..,"subset":..[,"uid":..]} in this key order.
    let mut value = format!(
        "{{\"name\":{},\"subset\":{}",
        Value::String(ws_name.to_string()),
        Value::String(subset.name.clone())
    );
    if let Some(uid) = uid {
        value.push_str(&format!(",\"uid\":{}", Value::String(uid.to_string())));
    }
    value.push('}');
    let holder = json!({ "metadata": annotations_source.cloned_shallow() });
    ops.extend(super::pub_annotation::set_annotations(
        &holder,
        &[(MATCHED_ANNOTATION, &value)],
    ));
    Ok(ops)
}

/// True when the subset patch reaches nothing steps 1–2 changed (tolerations, affinity, a missing spec)
/// and carries no directive at the pod or spec level.
fn cheap_patch(pod: &Value, subset_patch: &Map<String, Value>) -> bool {
    if subset_patch.keys().any(|k| k.starts_with('$')) {
        return false;
    }
    match subset_patch.get("spec") {
        None => true,
        Some(Value::Object(spec_patch)) => {
            pod.get("spec").is_some_and(Value::is_object)
                && !spec_patch
                    .keys()
                    .any(|k| k.starts_with('$') || k == "tolerations" || k == "affinity")
        }
        Some(_) => false,
    }
}

/// The pod metadata after the subset patch's `metadata` part (only the annotations are kept: that is
/// all the annotation step reads).
fn metadata_after(before: Option<&Value>, patch: &Value) -> Result<Value, strategic_merge::MergeError> {
    let Value::Object(patch) = patch else {
        return Ok(patch.clone());
    };
    let mut after = Value::Object(Map::new());
    if let Some(annotations) = before.and_then(|m| m.get("annotations")) {
        after["annotations"] = annotations.clone();
    }
    let mut only_annotations = Map::new();
    if let Some(directive) = patch.get("$patch") {
        only_annotations.insert("$patch".into(), directive.clone());
    }
    if let Some(a) = patch.get("annotations") {
        only_annotations.insert("annotations".into(), a.clone());
    }
    strategic_merge::merge(&mut after, &only_annotations, strategic_merge::Schema::ObjectMeta)?;
    Ok(after)
}

fn remove(tokens: &[&str]) -> json_patch::PatchOperation {
    json_patch::PatchOperation::Remove(json_patch::RemoveOperation {
        path: patch::pointer(tokens.iter().copied()),
    })
}

const PREFERRED: &str = "preferredDuringSchedulingIgnoredDuringExecution";
const REQUIRED: &str = "requiredDuringSchedulingIgnoredDuringExecution";

fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn fresh_node_affinity(preferred: Vec<Value>, required: Option<Value>) -> Value {
    let mut na = Map::new();
    if !preferred.is_empty() {
        na.insert(PREFERRED.into(), Value::Array(preferred));
    }
    if let Some(term) = required {
        na.insert(REQUIRED.into(), json!({ "nodeSelectorTerms": [term] }));
    }
    Value::Object(na)
}

/// Appends `values` to the list `field` of `parent` (at `parent_path`), creating it when absent.
fn append_list(
    ops: &mut Vec<json_patch::PatchOperation>,
    parent: &Value,
    parent_path: &[&str],
    field: &str,
    values: Vec<Value>,
) {
    if parent.get(field).is_some_and(Value::is_array) {
        for value in values {
            ops.push(patch::add(parent_path.iter().copied().chain([field, "-"]), value));
        }
    } else {
        ops.push(patch::add(
            parent_path.iter().copied().chain([field]),
            Value::Array(values),
        ));
    }
}

/// Sets the required term when the pod has none, else ANDs its expressions and fields into every
/// existing term.
fn and_required_term(ops: &mut Vec<json_patch::PatchOperation>, na: &Value, na_path: &[&str], term: Value) {
    let required = na.get(REQUIRED).filter(|r| r.is_object());
    let terms = required
        .and_then(|r| r.get("nodeSelectorTerms"))
        .and_then(Value::as_array)
        .filter(|t| !t.is_empty());
    match (required, terms) {
        (None, _) => ops.push(patch::add(
            na_path.iter().copied().chain([REQUIRED]),
            json!({ "nodeSelectorTerms": [term] }),
        )),
        (Some(_), None) => ops.push(patch::add(
            na_path.iter().copied().chain([REQUIRED, "nodeSelectorTerms"]),
            json!([term]),
        )),
        (Some(_), Some(terms)) => {
            for (i, existing) in terms.iter().enumerate() {
                let index = i.to_string();
                let term_path: Vec<&str> = na_path
                    .iter()
                    .copied()
                    .chain([REQUIRED, "nodeSelectorTerms", index.as_str()])
                    .collect();
                for field in ["matchExpressions", "matchFields"] {
                    let items = term
                        .get(field)
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default();
                    if !items.is_empty() {
                        append_list(ops, existing, &term_path, field, items);
                    }
                }
            }
        }
    }
}

/// Only the annotations of a metadata object matter for the annotation operation; this keeps the
/// holder small.
trait ShallowMetadata {
    fn cloned_shallow(&self) -> Value;
}

impl ShallowMetadata for Option<&Value> {
    fn cloned_shallow(&self) -> Value {
        match self {
            Some(Value::Object(m)) => {
                let mut out = Map::new();
                if let Some(a) = m.get("annotations") {
                    out.insert("annotations".into(), a.clone());
                }
                Value::Object(out)
            }
            Some(other) => (*other).clone(),
            None => Value::Null,
        }
    }
}
