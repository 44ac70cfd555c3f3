//! UnitedDeployment: the spec is the same in both versions. v1alpha1's status keeps the per-subset
//! allocation in `subsetReplicas` (name → replicas) and the update in `updateStatus`
//! (`updatedRevision`, `currentPartitions`: name → partition); v1beta1 has `updatedRevision` and puts
//! both numbers in `subsetStatuses[]` (`replicas`, `partition`), which v1alpha1 also carries.

use serde_json::{Map, Value};

use super::ConversionError;
use super::json::{Ctx, object_mut, take_object, take_str};

pub(super) fn to_v1beta1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    let Some(status) = object_mut(ctx, obj, "status", "status")? else {
        return Ok(());
    };
    let replicas = take_object(ctx, status, "subsetReplicas", "status.subsetReplicas")?;
    let update = take_object(ctx, status, "updateStatus", "status.updateStatus")?;
    let mut statuses = take_statuses(ctx, status)?;
    if let Some(replicas) = replicas {
        set_each(ctx, &mut statuses, &replicas, "replicas", "status.subsetReplicas")?;
    }
    let mut revision = None;
    if let Some(mut update) = update {
        revision = take_str(
            ctx,
            &mut update,
            "updatedRevision",
            "status.updateStatus.updatedRevision",
        )?;
        let path = "status.updateStatus.currentPartitions";
        if let Some(partitions) = take_object(ctx, &mut update, "currentPartitions", path)? {
            set_each(ctx, &mut statuses, &partitions, "partition", path)?;
        }
    }
    status.remove("updatedRevision");
    if let Some(revision) = revision.filter(|r| !r.is_empty()) {
        status.insert("updatedRevision".into(), Value::String(revision));
    }
    if !statuses.is_empty() {
        status.insert("subsetStatuses".into(), Value::Array(statuses));
    }
    Ok(())
}

pub(super) fn to_v1alpha1(ctx: &Ctx, obj: &mut Map<String, Value>) -> Result<(), ConversionError> {
    let Some(status) = object_mut(ctx, obj, "status", "status")? else {
        return Ok(());
    };
    let revision = take_str(ctx, status, "updatedRevision", "status.updatedRevision")?.unwrap_or_default();
    status.remove("subsetReplicas");
    status.remove("updateStatus");
    let statuses = take_statuses(ctx, status)?;
    let mut replicas = Map::new();
    let mut partitions = Map::new();
    for (i, entry) in statuses.iter().enumerate() {
        let Some(entry) = entry.as_object() else {
            return Err(ctx.error(format!("status.subsetStatuses[{i}]"), "expected an object"));
        };
        let name = entry.get("name").and_then(Value::as_str).unwrap_or_default();
        if name.is_empty() {
            continue;
        }
        let number = |key: &str| entry.get(key).cloned().unwrap_or(Value::from(0));
        replicas.insert(name.to_string(), number("replicas"));
        partitions.insert(name.to_string(), number("partition"));
    }
    if !replicas.is_empty() {
        status.insert("subsetReplicas".into(), Value::Object(replicas));
    }
    if !revision.is_empty() || !statuses.is_empty() {
        let mut update = Map::new();
        if !revision.is_empty() {
            update.insert("updatedRevision".into(), Value::String(revision));
        }
        if !partitions.is_empty() {
            update.insert("currentPartitions".into(), Value::Object(partitions));
        }
        status.insert("updateStatus".into(), Value::Object(update));
    }
    if !statuses.is_empty() {
        status.insert("subsetStatuses".into(), Value::Array(statuses));
    }
    Ok(())
}

/// Removes `status.subsetStatuses` and returns its entries (absent or null → none).
fn take_statuses(ctx: &Ctx, status: &mut Map<String, Value>) -> Result<Vec<Value>, ConversionError> {
    match status.remove("subsetStatuses") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(ctx.error("status.subsetStatuses", "expected an array")),
    }
}

/// Sets `key` of the entry named after each key of `values` (appending missing entries, in name
/// order); a zero is written as an absent field, as Go's `omitempty` does.
fn set_each(
    ctx: &Ctx,
    statuses: &mut Vec<Value>,
    values: &Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<(), ConversionError> {
    let mut names: Vec<&String> = values.keys().collect();
    names.sort();
    for name in names {
        let value = &values[name.as_str()];
        if !value.is_i64() {
            return Err(ctx.error(format!("{path}[{name}]"), "expected an integer"));
        }
        let position = statuses
            .iter()
            .position(|s| s.get("name").and_then(Value::as_str) == Some(name.as_str()));
        let index = match position {
            Some(i) => i,
            None => {
                statuses.push(Value::Object(Map::from_iter([(
                    "name".to_string(),
                    Value::String(name.clone()),
                )])));
                statuses.len() - 1
            }
        };
        let Some(entry) = statuses[index].as_object_mut() else {
            return Err(ctx.error(format!("status.subsetStatuses[{index}]"), "expected an object"));
        };
        if value.as_i64() == Some(0) {
            entry.remove(key);
        } else {
            entry.insert(key.to_string(), value.clone());
        }
    }
    Ok(())
}
