//! The workload a subset runs (OpenKruise's adapters, `ApplySubsetTemplate`; docs/uniteddeployment.md,
//! "Subset workloads"): the template's kind and spec, named `<ud>-<subset>-` + a random suffix, labelled
//! with the subset and the revision, selecting the UD's pods of that subset, with the allocated replicas,
//! the partition, the subset's node requirements and tolerations, and last the subset's
//! strategic-merge patch of the pod template.

use kruise_api::apps_v1beta1::{
    REVISION_LABEL, SUBSET_NAME_LABEL, SUBSET_PATCH_ANNOTATION, Subset, SubsetKind, UnitedDeployment,
};
use kruise_core::selector::is_dns_subdomain;
use kruise_core::strategic_merge::{MergeError, Schema, merge};
use serde_json::{Map, Value, json};

/// Why a subset workload cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WorkloadError {
    #[error("no workload template is set")]
    NoTemplate,
    #[error("fail to find subset config {0}")]
    NoSubset(String),
    #[error("the UnitedDeployment has no selector")]
    NoSelector,
    #[error("{kind} {name} is already controlled by {owner}")]
    OtherController {
        kind: String,
        name: String,
        owner: String,
    },
    #[error("subset {subset}: the patch does not apply: {error}")]
    Patch { subset: String, error: MergeError },
    #[error("subset {subset}: the template's {field} is not an object")]
    NotAnObject { subset: String, field: &'static str },
}

/// `generateName` of a subset's workload: `<ud>-<subset>-`, or `<ud>-` when that is not a valid name
/// prefix.
pub fn name_prefix(ud: &str, subset: &str) -> String {
    let prefix = format!("{ud}-{subset}-");
    // A prefix is checked as a name with its trailing dash masked (apimachinery `maskTrailingDash`).
    let masked = format!("{}a", &prefix[..prefix.len() - 1]);
    if is_dns_subdomain(&masked) {
        prefix
    } else {
        format!("{ud}-")
    }
}

/// What the subset's workload should hold.
#[derive(Clone, Copy, Debug)]
pub struct Desired<'a> {
    pub subset: &'a str,
    /// The UD's update revision (name of its ControllerRevision).
    pub revision: &'a str,
    pub replicas: i32,
    pub partition: i32,
}

/// The subset workload: `existing` (the object as read, for an update) or a new object, with every
/// field the UD decides overwritten; everything else of `existing` (status, other labels) is kept.
pub fn apply_subset_template(
    ud: &UnitedDeployment,
    desired: Desired<'_>,
    existing: Option<&Value>,
) -> Result<Value, WorkloadError> {
    let (kind, template) = ud.spec.template.first().ok_or(WorkloadError::NoTemplate)?;
    let subset = ud
        .spec
        .topology
        .subsets
        .iter()
        .find(|s| s.name == desired.subset)
        .ok_or_else(|| WorkloadError::NoSubset(desired.subset.to_string()))?;
    let selector = ud.spec.selector.as_ref().ok_or(WorkloadError::NoSelector)?;
    let ud_name = ud.metadata.name.as_deref().unwrap_or_default();
    let mut obj = match existing {
        Some(Value::Object(o)) => o.clone(),
        _ => Map::from_iter([
            ("apiVersion".to_string(), json!(kind.api_version())),
            ("kind".to_string(), json!(kind.kind())),
        ]),
    };
    let meta = object_at(&mut obj, "metadata");
    meta.insert(
        "namespace".into(),
        json!(ud.metadata.namespace.as_deref().unwrap_or_default()),
    );
    meta.insert("generateName".into(), json!(name_prefix(ud_name, desired.subset)));
    let labels = object_at(meta, "labels");
    for (k, v) in template.metadata.labels.iter().flatten() {
        labels.insert(k.clone(), json!(v));
    }
    for (k, v) in selector.match_labels.iter().flatten() {
        labels.insert(k.clone(), json!(v));
    }
    labels.insert(REVISION_LABEL.into(), json!(desired.revision));
    labels.insert(SUBSET_NAME_LABEL.into(), json!(desired.subset));
    let annotations = object_at(meta, "annotations");
    for (k, v) in template.metadata.annotations.iter().flatten() {
        annotations.insert(k.clone(), json!(v));
    }
    let patch_text = subset.patch.as_ref().map(Value::to_string).unwrap_or_default();
    annotations.insert(SUBSET_PATCH_ANNOTATION.into(), json!(patch_text));
    set_controller(meta, ud, kind)?;

    let not_object = |field| WorkloadError::NotAnObject {
        subset: desired.subset.to_string(),
        field,
    };
    let mut spec = match &template.spec {
        Value::Object(s) => s.clone(),
        Value::Null => Map::new(),
        _ => return Err(not_object("spec")),
    };
    let mut workload_selector = serde_json::to_value(selector).unwrap_or_else(|_| json!({}));
    workload_selector["matchLabels"][SUBSET_NAME_LABEL] = json!(desired.subset);
    spec.insert("selector".into(), workload_selector);
    spec.insert("replicas".into(), json!(desired.replicas));
    set_partition(&mut spec, kind, desired.partition);
    let pod_template = object_at(&mut spec, "template");
    let pod_labels = object_at(object_at(pod_template, "metadata"), "labels");
    pod_labels.insert(SUBSET_NAME_LABEL.into(), json!(desired.subset));
    pod_labels.insert(REVISION_LABEL.into(), json!(desired.revision));
    let pod_spec = object_at(pod_template, "spec");
    attach_node_affinity(pod_spec, subset);
    attach_tolerations(pod_spec, subset);
    if let Some(patch) = &subset.patch {
        let Value::Object(patch) = patch else {
            return Err(not_object("patch"));
        };
        let mut patched = Value::Object(std::mem::take(pod_template));
        merge(&mut patched, patch, Schema::Pod).map_err(|error| WorkloadError::Patch {
            subset: desired.subset.to_string(),
            error,
        })?;
        spec.insert("template".into(), patched);
    }
    obj.insert("spec".into(), Value::Object(spec));
    Ok(Value::Object(obj))
}

/// The object at `map[key]`, made an empty object when absent or not an object.
fn object_at<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let slot = map.entry(key.to_string()).or_insert_with(|| json!({}));
    if !slot.is_object() {
        *slot = json!({});
    }
    match slot {
        Value::Object(m) => m,
        _ => unreachable!("just made an object"),
    }
}

/// Makes the UD the workload's controller (`SetControllerReference`): refused when another object
/// already is.
fn set_controller(
    meta: &mut Map<String, Value>,
    ud: &UnitedDeployment,
    kind: SubsetKind,
) -> Result<(), WorkloadError> {
    let uid = ud.metadata.uid.as_deref().unwrap_or_default();
    let ours = json!(super::claim::controller_reference(ud));
    let name = meta_name(meta);
    let refs = meta.entry("ownerReferences").or_insert_with(|| json!([]));
    if !refs.is_array() {
        *refs = json!([]);
    }
    let Value::Array(refs) = refs else {
        unreachable!("just made an array")
    };
    if let Some(other) = refs
        .iter()
        .find(|r| r["controller"] == json!(true) && r["uid"].as_str() != Some(uid))
    {
        return Err(WorkloadError::OtherController {
            kind: kind.kind().to_string(),
            name,
            owner: format!(
                "{}/{}",
                other["kind"].as_str().unwrap_or(""),
                other["name"].as_str().unwrap_or("")
            ),
        });
    }
    match refs.iter_mut().find(|r| r["uid"].as_str() == Some(uid)) {
        Some(r) => *r = ours,
        None => refs.push(ours),
    }
    Ok(())
}

fn meta_name(meta: &Map<String, Value>) -> String {
    meta.get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The partition: `updateStrategy.rollingUpdate.partition` of StatefulSets whose update strategy is (or
/// defaults to) `RollingUpdate`, and of CloneSets (v1beta1); Deployments have none.
fn set_partition(spec: &mut Map<String, Value>, kind: SubsetKind, partition: i32) {
    let strategy_type = spec
        .get("updateStrategy")
        .and_then(|s| s.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let rolling = strategy_type.is_empty() || strategy_type == "RollingUpdate";
    match kind {
        SubsetKind::StatefulSet | SubsetKind::AdvancedStatefulSet if rolling => {
            let strategy = object_at(spec, "updateStrategy");
            if kind == SubsetKind::StatefulSet {
                strategy.insert("type".into(), json!("RollingUpdate"));
            }
            object_at(strategy, "rollingUpdate").insert("partition".into(), json!(partition));
        }
        SubsetKind::CloneSet => {
            let strategy = object_at(spec, "updateStrategy");
            object_at(strategy, "rollingUpdate").insert("partition".into(), json!(partition));
        }
        _ => {}
    }
}

/// The subset kind of a workload read as JSON (`apiVersion` group and `kind`).
pub fn kind_of(object: &Value) -> Option<SubsetKind> {
    let api_version = object["apiVersion"].as_str()?;
    let kind = object["kind"].as_str()?;
    SubsetKind::ALL
        .into_iter()
        .find(|k| k.kind() == kind && api_version.split('/').next() == k.api_version().split('/').next())
}

/// Reservation mode: overwrites the workload's `maxUnavailable` (`spec.strategy.rollingUpdate` of a
/// Deployment, `spec.updateStrategy.rollingUpdate` of the other kinds) with a number of pods.
pub fn set_max_unavailable(workload: &mut Value, kind: SubsetKind, pods: i32) {
    let Some(spec) = workload.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let strategy = match kind {
        SubsetKind::Deployment => object_at(spec, "strategy"),
        _ => object_at(spec, "updateStrategy"),
    };
    object_at(strategy, "rollingUpdate").insert("maxUnavailable".into(), json!(pods));
}

/// Appends the subset's `matchExpressions` to every required node-affinity term (creating one when
/// there is none); `matchFields` are not used, as in OpenKruise.
fn attach_node_affinity(pod_spec: &mut Map<String, Value>, subset: &Subset) {
    let expressions = subset
        .node_selector_term
        .as_ref()
        .and_then(|t| t.match_expressions.as_ref())
        .filter(|e| !e.is_empty());
    let Some(expressions) = expressions else { return };
    let expressions: Vec<Value> = expressions
        .iter()
        .map(|e| serde_json::to_value(e).unwrap_or_default())
        .collect();
    let affinity = object_at(pod_spec, "affinity");
    let node = object_at(affinity, "nodeAffinity");
    let required = object_at(node, "requiredDuringSchedulingIgnoredDuringExecution");
    let terms = required.entry("nodeSelectorTerms").or_insert_with(|| json!([]));
    if !terms.is_array() {
        *terms = json!([]);
    }
    let Value::Array(terms) = terms else {
        unreachable!("just made an array")
    };
    if terms.is_empty() {
        terms.push(json!({}));
    }
    for term in terms.iter_mut() {
        if !term.is_object() {
            *term = json!({});
        }
        let list = term
            .as_object_mut()
            .map(|t| t.entry("matchExpressions").or_insert_with(|| json!([])));
        if let Some(list) = list {
            if !list.is_array() {
                *list = json!([]);
            }
            if let Value::Array(list) = list {
                list.extend(expressions.iter().cloned());
            }
        }
    }
}

/// Appends the subset's tolerations to the pod's.
fn attach_tolerations(pod_spec: &mut Map<String, Value>, subset: &Subset) {
    if subset.tolerations.is_empty() {
        return;
    }
    let list = pod_spec.entry("tolerations").or_insert_with(|| json!([]));
    if !list.is_array() {
        *list = json!([]);
    }
    if let Value::Array(list) = list {
        list.extend(
            subset
                .tolerations
                .iter()
                .map(|t| serde_json::to_value(t).unwrap_or_default()),
        );
    }
}
