//! Injecting the chosen subset into the pod: tolerations, node affinity, the subset's strategic-merge
//! `patch` and the matched-WorkloadSpread annotation, as JSON-patch operations against the raw pod.

use kruise_api::apps_v1beta1::WorkloadSpreadSubset;
use serde_json::{Map, Value, json};

use super::{MATCHED_ANNOTATION, strategic_merge};
use crate::patch;

/// The operations injecting `subset` of WorkloadSpread `ws_name` into the pod.
pub(super) fn inject(
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
    ops.extend(crate::pod_mutate::pub_annotation::set_annotations(
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
