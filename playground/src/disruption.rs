//! policy/v1 PodDisruptionBudgets: the eviction subresource's check (kube-apiserver's
//! `pkg/registry/core/pod/storage/eviction.go`) and the status the disruption controller
//! (`pkg/controller/disruption` of kube-controller-manager) keeps.
//!
//! Simplification: the expected pod count is the number of selected pods that are not being
//! deleted (kube reads the replicas of the pods' controllers for `maxUnavailable` and percentage
//! budgets; in a steady state they agree).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::api::{Api, UpdateMode};
use crate::error::{ApiError, GroupResource};
use crate::meta;
use crate::resources::ResourceDef;
use crate::selectors::LabelSelector;
use crate::store::ResKey;

/// How long an eviction's entry in `status.disruptedPods` is kept (kube: `DeletionTimeout`, 2 min).
const DISRUPTED_POD_TIMEOUT: Duration = Duration::from_secs(120);

fn pdb_def(api: &Api) -> Option<ResourceDef> {
    api.registry.find("policy", "v1", "poddisruptionbudgets")
}

fn selects(pdb: &Value, pod: &Value) -> bool {
    // policy/v1: an empty selector selects every pod of the namespace, a missing one none.
    let Some(selector) = pdb["spec"].get("selector").filter(|s| !s.is_null()) else {
        return false;
    };
    LabelSelector::from_object(Some(selector)).is_ok_and(|s| s.matches(&meta::labels(pod)))
}

fn is_ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// `intstr.GetScaledValueFromIntOrPercent`: an int, or a percentage of `total` (rounded up).
fn scaled(v: &Value, total: i64) -> i64 {
    match v {
        Value::String(s) => {
            let pct: i64 = s.trim_end_matches('%').parse().unwrap_or(0);
            (pct * total + 99) / 100
        }
        other => other.as_i64().unwrap_or(0),
    }
}

/// 429 `Cannot evict pod as it would violate the pod's disruption budget.` with its cause.
fn too_many(retry_after: u64, cause: String) -> ApiError {
    ApiError {
        code: 429,
        reason: "TooManyRequests",
        message: "Cannot evict pod as it would violate the pod's disruption budget.".into(),
        details: Some(
            json!({"causes": [{"reason": "DisruptionBudget", "message": cause}],
            "retryAfterSeconds": retry_after}),
        ),
    }
}

/// The eviction's budget check (`EvictionREST.Create`): terminal, pending and deleting pods
/// are evicted without one; more than one budget is a 500; a budget not yet observed, or with
/// no disruption allowed, is a 429; otherwise one disruption is spent (the pod recorded in
/// `status.disruptedPods`, unless `dry_run`).
pub async fn check_eviction(api: &Api, pod: &Value, dry_run: bool) -> Result<(), ApiError> {
    let phase = pod["status"]["phase"].as_str().unwrap_or_default();
    if matches!(phase, "Succeeded" | "Failed" | "Pending") || meta::is_deleting(pod) {
        return Ok(());
    }
    let Some(def) = pdb_def(api) else { return Ok(()) };
    let ns = meta::namespace(pod);
    let key = ResKey::new("policy", "poddisruptionbudgets");
    for _ in 0..5 {
        let budgets: Vec<Value> = api
            .store
            .list(&key, Some(ns))
            .0
            .into_iter()
            .filter(|b| selects(b, pod))
            .collect();
        let pdb = match budgets.as_slice() {
            [] => return Ok(()),
            [one] => one,
            _ => {
                return Err(ApiError::internal(
                    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                ));
            }
        };
        let name = meta::name(pdb);
        let status = &pdb["status"];
        let generation = pdb["metadata"]["generation"].as_i64().unwrap_or(0);
        if status["observedGeneration"].as_i64().unwrap_or(0) < generation {
            let cause = format!("The disruption budget {name} is still being processed by the server.");
            return Err(too_many(10, cause));
        }
        let allowed = status["disruptionsAllowed"].as_i64().unwrap_or(0);
        if allowed < 0 {
            let gr = GroupResource::new("policy", "poddisruptionbudget");
            return Err(ApiError::forbidden(
                &gr,
                name,
                "pdb disruptions allowed is negative",
            ));
        }
        if allowed == 0 {
            let cause = format!(
                "The disruption budget {name} needs {} healthy pods and has {} currently",
                status["desiredHealthy"].as_i64().unwrap_or(0),
                status["currentHealthy"].as_i64().unwrap_or(0)
            );
            return Err(too_many(0, cause));
        }
        if dry_run {
            return Ok(());
        }
        let mut next = pdb.clone();
        next["status"]["disruptionsAllowed"] = json!(allowed - 1);
        if !next["status"]["disruptedPods"].is_object() {
            next["status"]["disruptedPods"] = json!({});
        }
        next["status"]["disruptedPods"][meta::name(pod)] = json!(meta::now());
        match api.update(&def, ns, name, next, UpdateMode::Status, false).await {
            Err(e) if e.code == 409 => continue,
            other => return other.map(|_| ()),
        }
    }
    Err(too_many(0, "the disruption budget changed while evicting".into()))
}

/// The status the disruption controller computes for one budget from the namespace's pods.
pub fn status(pdb: &Value, pods: &[Arc<Value>], now: time::OffsetDateTime) -> Value {
    let selected: Vec<&Value> = pods
        .iter()
        .map(|p| p.as_ref())
        .filter(|p| selects(pdb, p) && !meta::is_deleting(p))
        .collect();
    let expected = selected.len() as i64;
    let mut disrupted = serde_json::Map::new();
    if let Some(m) = pdb["status"]["disruptedPods"].as_object() {
        for (pod, at) in m {
            let fresh = at
                .as_str()
                .and_then(meta::parse_time)
                .is_some_and(|t| now - t < DISRUPTED_POD_TIMEOUT);
            if fresh && selected.iter().any(|p| meta::name(p) == pod) {
                disrupted.insert(pod.clone(), at.clone());
            }
        }
    }
    let healthy = selected
        .iter()
        .filter(|p| is_ready(p) && !disrupted.contains_key(meta::name(p)))
        .count() as i64;
    let spec = &pdb["spec"];
    let desired = if let Some(max) = spec.get("maxUnavailable").filter(|v| !v.is_null()) {
        (expected - scaled(max, expected)).max(0)
    } else if let Some(min) = spec.get("minAvailable").filter(|v| !v.is_null()) {
        scaled(min, expected)
    } else {
        expected
    };
    let allowed = (healthy - desired).max(0);
    let (cond_status, reason, message) = if allowed > 0 {
        ("True", "SufficientPods", "")
    } else {
        ("False", "InsufficientPods", "")
    };
    let old_cond = pdb["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "DisruptionAllowed"));
    let since = match old_cond {
        Some(c) if c["status"] == cond_status => c["lastTransitionTime"].clone(),
        _ => json!(meta::timestamp(now)),
    };
    let mut out = json!({
        "observedGeneration": pdb["metadata"]["generation"],
        "disruptionsAllowed": allowed,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
        "conditions": [{"type": "DisruptionAllowed", "status": cond_status, "reason": reason,
            "message": message, "observedGeneration": pdb["metadata"]["generation"],
            "lastTransitionTime": since}],
    });
    if !disrupted.is_empty() {
        out["disruptedPods"] = Value::Object(disrupted);
    }
    out
}

/// Runs the disruption controller until aborted: on store changes (at most every 100 ms), every
/// budget's status is recomputed and written when it changed. Nothing is done without budgets.
pub async fn run(api: Arc<Api>) {
    let key = ResKey::new("policy", "poddisruptionbudgets");
    let pods_key = ResKey::new("", "pods");
    loop {
        let notified = api.store.changed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let (budgets, _) = api.store.list_shared(&key, None);
        if let (false, Some(def)) = (budgets.is_empty(), pdb_def(&api)) {
            let now = time::OffsetDateTime::now_utc();
            for pdb in budgets {
                let ns = meta::namespace(&pdb);
                let (pods, _) = api.store.list_shared(&pods_key, Some(ns));
                let status = status(&pdb, &pods, now);
                if pdb["status"] != status {
                    let mut next = Value::clone(&pdb);
                    next["status"] = status;
                    if let Err(e) = api
                        .update(&def, ns, meta::name(&pdb), next, UpdateMode::Status, false)
                        .await
                    {
                        tracing::debug!(error = %e, "disruption controller status write failed");
                    }
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        tokio::select! {
            _ = notified => {}
            _ = tokio::time::sleep(Duration::from_secs(5)) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, ready: bool) -> Arc<Value> {
        Arc::new(
            json!({"metadata": {"name": name, "namespace": "d", "labels": {"app": "web"}},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"}}]}}),
        )
    }

    #[test]
    fn budget_status_as_the_disruption_controller_computes_it() {
        let pdb = json!({"metadata": {"name": "web", "generation": 2},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}});
        let pods = [pod("a", true), pod("b", true), pod("c", false)];
        let s = status(&pdb, &pods, time::OffsetDateTime::now_utc());
        assert_eq!(
            (
                &s["disruptionsAllowed"],
                &s["currentHealthy"],
                &s["desiredHealthy"],
                &s["expectedPods"]
            ),
            (&json!(0), &json!(2), &json!(2), &json!(3))
        );
        assert_eq!(s["observedGeneration"], 2);
        let pdb = json!({"metadata": {"name": "web", "generation": 1},
            "spec": {"maxUnavailable": "50%", "selector": {"matchLabels": {"app": "web"}}}});
        let s = status(&pdb, &pods, time::OffsetDateTime::now_utc());
        // 50 % of 3 rounds up to 2 unavailable: 1 must stay healthy, 2 are.
        assert_eq!(
            (&s["desiredHealthy"], &s["disruptionsAllowed"]),
            (&json!(1), &json!(1))
        );
    }

    #[test]
    fn a_missing_selector_selects_nothing_an_empty_one_everything() {
        let p = pod("a", true);
        assert!(!selects(&json!({"spec": {}}), &p));
        assert!(selects(&json!({"spec": {"selector": {}}}), &p));
    }
}
