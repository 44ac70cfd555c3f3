//! Operations that put what was built into the raw pod (docs/sidecarset-injection.md#applying), touching only
//! the lists
//! injection owns and writing nothing that is already there.

use foldhash::{HashMap, HashSet, HashSetExt};
use json_patch::PatchOperation;
use serde_json::{Map, Value};

use super::pod_containers::{name, str_field};
use crate::patch;

/// A container to put into a pod list.
pub(crate) struct Produced {
    pub(crate) name: String,
    pub(crate) container: Value,
    pub(crate) before: bool,
}

/// Operations adding `items` as `spec.<list>`, creating `spec` if needed.
fn add_list(pod: &Value, list: &str, items: Vec<Value>) -> PatchOperation {
    match pod.get("spec") {
        Some(Value::Object(_)) => patch::add(["spec", list], Value::Array(items)),
        _ => patch::add(
            ["spec"],
            Value::Object(Map::from_iter([(list.to_string(), Value::Array(items))])),
        ),
    }
}

/// Merges produced containers into `spec.<list>` as OpenKruise does: a name already in the pod is replaced in
/// place; the others go in front of the pod's containers (`BeforeAppContainer`, production order) or behind
/// them.
pub(crate) fn merge_containers(pod: &Value, list: &str, produced: Vec<Produced>) -> Vec<PatchOperation> {
    if produced.is_empty() {
        return Vec::new();
    }
    let existing = pod
        .get("spec")
        .and_then(|s| s.get(list))
        .and_then(Value::as_array);
    let Some(existing) = existing else {
        let (before, after): (Vec<Produced>, Vec<Produced>) = produced.into_iter().partition(|p| p.before);
        let items = before.into_iter().chain(after).map(|p| p.container).collect();
        return vec![add_list(pod, list, items)];
    };
    // The last element of a name wins, as OpenKruise's name → index map.
    let position: HashMap<&str, usize> = existing.iter().enumerate().map(|(i, c)| (name(c), i)).collect();
    let mut ops = Vec::new();
    let mut before = Vec::new();
    let mut after = Vec::new();
    for p in produced {
        match position.get(p.name.as_str()) {
            Some(&i) if existing[i] == p.container => {}
            Some(&i) => ops.push(patch::replace(["spec", list, &i.to_string()], p.container)),
            None if p.before => before.push(p.container),
            None => after.push(p.container),
        }
    }
    for (i, c) in before.into_iter().enumerate() {
        ops.push(patch::add(["spec", list, &i.to_string()], c));
    }
    for c in after {
        ops.push(patch::add(["spec", list, "-"], c));
    }
    ops
}

/// Appends SidecarSet volumes whose names the pod (or an earlier SidecarSet volume) does not use.
pub(crate) fn merge_volumes(pod: &Value, volumes: Vec<Value>) -> Vec<PatchOperation> {
    let existing = pod
        .get("spec")
        .and_then(|s| s.get("volumes"))
        .and_then(Value::as_array);
    let mut seen: HashSet<String> = existing
        .into_iter()
        .flatten()
        .map(|v| name(v).to_string())
        .collect();
    let new: Vec<Value> = volumes
        .into_iter()
        .filter(|v| seen.insert(name(v).to_string()))
        .collect();
    if new.is_empty() {
        return Vec::new();
    }
    match existing {
        Some(_) => new
            .into_iter()
            .map(|v| patch::add(["spec", "volumes", "-"], v))
            .collect(),
        None => vec![add_list(pod, "volumes", new)],
    }
}

/// The pod's pull secrets (duplicates dropped, as OpenKruise's merge does) followed by the SidecarSets'
/// whose names are new.
pub(crate) fn merge_secrets(pod: &Value, secrets: Vec<Value>) -> Vec<PatchOperation> {
    let existing = pod
        .get("spec")
        .and_then(|s| s.get("imagePullSecrets"))
        .and_then(Value::as_array);
    let secret_name = |s: &Value| str_field(s, "name").unwrap_or_default().to_string();
    let mut seen = HashSet::new();
    let mut kept = Vec::new();
    let mut duplicates = false;
    for s in existing.into_iter().flatten() {
        if seen.insert(secret_name(s)) {
            kept.push(s.clone());
        } else {
            duplicates = true;
        }
    }
    let new: Vec<Value> = secrets
        .into_iter()
        .filter(|s| seen.insert(secret_name(s)))
        .collect();
    match existing {
        Some(_) if duplicates => {
            kept.extend(new);
            vec![patch::replace(["spec", "imagePullSecrets"], Value::Array(kept))]
        }
        Some(_) => new
            .into_iter()
            .map(|s| patch::add(["spec", "imagePullSecrets", "-"], s))
            .collect(),
        None if new.is_empty() => Vec::new(),
        None => vec![add_list(pod, "imagePullSecrets", new)],
    }
}
