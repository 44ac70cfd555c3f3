//! Deletion: preconditions, propagation policy finalizers, graceful pod deletion, finalizers and
//! the namespace's `Terminating` phase.
//!
//! Simplification for pods: a pod bound to a node (`spec.nodeName`) with a positive grace period
//! gets `deletionTimestamp` + `deletionGracePeriodSeconds` and stays; the simulated kubelet (the
//! [`crate::gc`] task) removes it once its containers are "stopped" — right away by default, or
//! after `PlaygroundOptions::pod_termination_delay`. A delete with `gracePeriodSeconds=0` removes
//! it at once, as the kubelet's final delete does. Unscheduled or finished pods go at once.

use serde_json::{Value, json};

use crate::api::admission::{Attributes, Operation};
use crate::api::{Api, key};
use crate::error::ApiError;
use crate::meta;
use crate::resources::ResourceDef;
use crate::store::StoreError;

/// The finalizer of an Orphan deletion.
pub const ORPHAN: &str = "orphan";
/// The finalizer of a Foreground deletion.
pub const FOREGROUND: &str = "foregroundDeletion";

/// `meta/v1 DeleteOptions`, from the body or the query.
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    /// `gracePeriodSeconds`.
    pub grace_period_seconds: Option<i64>,
    /// `propagationPolicy`: Orphan, Background, Foreground.
    pub propagation_policy: Option<String>,
    /// `preconditions.uid`.
    pub precondition_uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub precondition_rv: Option<String>,
    /// `dryRun: [All]`.
    pub dry_run: bool,
}

impl DeleteOptions {
    /// Reads a DeleteOptions body, then lets query parameters fill what it lacks.
    pub fn parse(body: Option<&Value>, query: &std::collections::HashMap<String, String>) -> Self {
        let empty = json!({});
        let b = body.unwrap_or(&empty);
        let mut policy = b["propagationPolicy"].as_str().map(String::from);
        if policy.is_none() {
            policy = match b["orphanDependents"].as_bool() {
                Some(true) => Some("Orphan".into()),
                Some(false) => Some("Background".into()),
                None => None,
            };
        }
        DeleteOptions {
            grace_period_seconds: b["gracePeriodSeconds"]
                .as_i64()
                .or_else(|| query.get("gracePeriodSeconds").and_then(|s| s.parse().ok())),
            propagation_policy: policy.or_else(|| query.get("propagationPolicy").cloned()),
            precondition_uid: b["preconditions"]["uid"].as_str().map(String::from),
            precondition_rv: b["preconditions"]["resourceVersion"].as_str().map(String::from),
            dry_run: b["dryRun"].as_array().is_some_and(|a| !a.is_empty()) || query.contains_key("dryRun"),
        }
    }
}

/// The result of a delete: the object is gone, or it is still there (finalizers, grace period).
#[derive(Debug, Clone)]
pub enum Deleted {
    /// Removed from the store; its last state.
    Removed(Value),
    /// Still stored, now with a deletionTimestamp.
    Pending(Value),
}

/// Whether a deleting object can leave the store: no finalizers, no pending pod grace period, no
/// namespace finalizers.
pub fn ready_to_remove(def: &ResourceDef, obj: &Value) -> bool {
    meta::is_deleting(obj)
        && meta::finalizers(obj).is_empty()
        && obj["metadata"]["deletionGracePeriodSeconds"]
            .as_i64()
            .unwrap_or(0)
            == 0
        && !(def.plural == "namespaces"
            && obj["spec"]["finalizers"]
                .as_array()
                .is_some_and(|f| !f.is_empty()))
}

fn pod_grace(obj: &Value, requested: Option<i64>) -> i64 {
    let unscheduled = obj["spec"]["nodeName"].as_str().is_none_or(str::is_empty);
    let finished = matches!(obj["status"]["phase"].as_str(), Some("Succeeded" | "Failed"));
    if unscheduled || finished {
        return 0;
    }
    requested
        .or_else(|| obj["spec"]["terminationGracePeriodSeconds"].as_i64())
        .unwrap_or(30)
        .max(0)
}

impl Api {
    /// Deletes one object.
    pub async fn delete(
        &self,
        def: &ResourceDef,
        ns: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> Result<Deleted, ApiError> {
        self.delete_admitted(def, ns, name, opts, true).await
    }

    /// Deletes one object; `admit: false` skips the DELETE admission, as the eviction
    /// subresource's internal delete does (the eviction itself was admitted as a CREATE).
    pub async fn delete_admitted(
        &self,
        def: &ResourceDef,
        ns: &str,
        name: &str,
        opts: &DeleteOptions,
        admit: bool,
    ) -> Result<Deleted, ApiError> {
        let gr = def.group_resource();
        for _ in 0..16 {
            let current = self
                .store
                .get(&key(def), ns, name)
                .ok_or_else(|| ApiError::not_found(&gr, name))?;
            if let Some(uid) = &opts.precondition_uid
                && uid != meta::uid_of(&current)
            {
                let why = format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                    meta::uid_of(&current)
                );
                return Err(ApiError::conflict(&gr, name, &why));
            }
            if let Some(rv) = &opts.precondition_rv
                && rv != meta::resource_version(&current)
            {
                let why = format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                    meta::resource_version(&current)
                );
                return Err(ApiError::conflict(&gr, name, &why));
            }
            if admit {
                // Webhooks see a custom resource in the request's version (see `conversion`).
                let converted;
                let old = if def.crd.is_some() {
                    converted = self.present(def, current.clone()).await?;
                    &converted
                } else {
                    &current
                };
                let attrs = Attributes {
                    api: self,
                    operation: Operation::Delete,
                    resource: def,
                    subresource: None,
                    namespace: ns,
                    name,
                    object: None,
                    old_object: Some(old),
                    dry_run: opts.dry_run,
                };
                self.admit(attrs, None).await?;
            }
            let next = deleting_state(def, &current, opts);
            let remove_now = !meta::is_deleting(&next) || ready_to_remove(def, &next);
            if opts.dry_run {
                return Ok(if remove_now {
                    Deleted::Removed(current)
                } else {
                    Deleted::Pending(next)
                });
            }
            let rv = meta::resource_version(&current).to_string();
            let result = if remove_now {
                self.store.remove(&key(def), ns, name, &rv).map(Deleted::Removed)
            } else if next == current {
                Ok(Deleted::Pending(current))
            } else {
                self.store.update(&key(def), &rv, next).map(Deleted::Pending)
            };
            match result {
                Ok(Deleted::Removed(last)) => {
                    self.after_remove(def, &last);
                    return Ok(Deleted::Removed(last));
                }
                Ok(pending) => return Ok(pending),
                Err(StoreError::Conflict) => continue,
                Err(_) => return Err(ApiError::not_found(&gr, name)),
            }
        }
        Err(ApiError::stale(&gr, name))
    }
}

/// The object as a delete leaves it: policy finalizers, deletionTimestamp, grace period.
fn deleting_state(def: &ResourceDef, current: &Value, opts: &DeleteOptions) -> Value {
    let mut next = current.clone();
    let mut finalizers = meta::finalizers(&next);
    let already = meta::is_deleting(current);
    let has_dependents_policy = finalizers.iter().any(|f| f == ORPHAN || f == FOREGROUND);
    if !already || opts.propagation_policy.is_some() || !has_dependents_policy {
        match opts.propagation_policy.as_deref() {
            Some("Orphan") => {
                finalizers.retain(|f| f != FOREGROUND);
                if !finalizers.iter().any(|f| f == ORPHAN) {
                    finalizers.push(ORPHAN.into());
                }
            }
            Some("Foreground") => {
                finalizers.retain(|f| f != ORPHAN);
                if !finalizers.iter().any(|f| f == FOREGROUND) {
                    finalizers.push(FOREGROUND.into());
                }
            }
            Some(_) => finalizers.retain(|f| f != ORPHAN && f != FOREGROUND),
            None => {}
        }
    }
    meta::set_finalizers(&mut next, &finalizers);
    let grace = if def.plural == "pods" && def.group.is_empty() {
        pod_grace(current, opts.grace_period_seconds)
    } else {
        0
    };
    let current_grace = current["metadata"]["deletionGracePeriodSeconds"].as_i64();
    let pending = !finalizers.is_empty()
        || grace > 0
        || (def.plural == "namespaces"
            && current["spec"]["finalizers"]
                .as_array()
                .is_some_and(|f| !f.is_empty()));
    if !pending && !already {
        return next;
    }
    let now = time::OffsetDateTime::now_utc();
    let m = meta::metadata_mut(&mut next);
    if !already {
        m.insert(
            "deletionTimestamp".into(),
            json!(meta::timestamp(now + time::Duration::seconds(grace))),
        );
        m.insert("deletionGracePeriodSeconds".into(), json!(grace));
        if let Some(g) = m.get("generation").and_then(Value::as_i64) {
            m.insert("generation".into(), json!(g + 1));
        }
    } else if current_grace.is_some_and(|g| grace < g) {
        m.insert(
            "deletionTimestamp".into(),
            json!(meta::timestamp(now + time::Duration::seconds(grace))),
        );
        m.insert("deletionGracePeriodSeconds".into(), json!(grace));
    }
    if def.plural == "namespaces" {
        next["status"]["phase"] = json!("Terminating");
    }
    next
}
