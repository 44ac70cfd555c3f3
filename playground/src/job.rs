//! The batch/v1 Job controller, after `pkg/controller/job` in k8s.io/kubernetes (NonIndexed
//! completion mode):
//!
//! - `min(parallelism, completions - succeeded)` active pods (`generateName: <job>-`, owned by
//!   the Job, with the labels the API server put on the template); without `completions`, pods run
//!   until one succeeds; `suspend` deletes the active pods;
//! - failures: failed pods, plus container restarts with `restartPolicy: OnFailure`; more than
//!   `backoffLimit` (default 6) → conditions `FailureTarget` then `Failed`, reason
//!   `BackoffLimitExceeded`, active pods deleted; past `activeDeadlineSeconds` (on the playground clock) → reason
//!   `DeadlineExceeded`;
//! - `completions` pods succeeded (or, without completions, one succeeded and none active) →
//!   conditions `SuccessCriteriaMet` then `Complete` (reason `CompletionsReached`) and
//!   `completionTime`;
//! - status: startTime, active, ready, terminating, succeeded, failed (counted from the pods, never
//!   decreasing), uncountedTerminatedPods, conditions. Finished Jobs are not looked at again.
//!
//! Not simulated: `Indexed` completion mode, `podFailurePolicy`, `successPolicy`,
//! `backoffLimitPerIndex`, the `batch.kubernetes.io/job-tracking` finalizer,
//! `ttlSecondsAfterFinished` (the TTL-after-finished controller), pod-failure backoff delays.

use serde_json::{Value, json};

use crate::api::Api;
use crate::meta;
use crate::resources::ResourceDef;
use crate::store::ResKey;
use crate::workload::{self, has_condition, is_finished, is_ready};

/// A finished Job: its `Complete` or `Failed` condition is True.
pub fn is_done(job: &Value) -> bool {
    has_condition(job, "Complete") || has_condition(job, "Failed")
}

/// One pass over every unfinished Job.
pub async fn sync(api: &Api) {
    let (jobs, _) = api.store.list_shared(&ResKey::new("batch", "jobs"), None);
    let open: Vec<&Value> = jobs
        .iter()
        .map(|j| &**j)
        .filter(|j| !meta::is_deleting(j) && !is_done(j))
        .collect();
    if open.is_empty() {
        return;
    }
    let (Some(jdef), Some(pdef)) = (
        api.registry.find("batch", "v1", "jobs"),
        api.registry.find("", "v1", "pods"),
    ) else {
        return;
    };
    let (pods, _) = api.store.list_shared(&ResKey::new("", "pods"), None);
    let owned = workload::by_controller(&pods);
    for job in open {
        let mine = owned.get(meta::uid_of(job)).cloned().unwrap_or_default();
        sync_job(api, &jdef, &pdef, job, &mine).await;
    }
}

fn condition(kind: &str, reason: &str, message: &str, now: &str) -> Value {
    json!({"type": kind, "status": "True", "reason": reason, "message": message,
           "lastProbeTime": now, "lastTransitionTime": now})
}

async fn sync_job(api: &Api, jdef: &ResourceDef, pdef: &ResourceDef, job: &Value, pods: &[&Value]) {
    let spec = &job["spec"];
    let now = meta::timestamp(api.clock.now());
    let count = |phase: &str| pods.iter().filter(|p| p["status"]["phase"] == phase).count() as i64;
    let prior = |f: &str| job["status"][f].as_i64().unwrap_or(0);
    let succeeded = count("Succeeded").max(prior("succeeded"));
    let failed = count("Failed").max(prior("failed"));
    let active: Vec<&Value> = pods
        .iter()
        .copied()
        .filter(|p| !is_finished(p) && !meta::is_deleting(p))
        .collect();
    let terminating = pods
        .iter()
        .filter(|p| meta::is_deleting(p) && !is_finished(p))
        .count();
    let restarts: i64 = if spec["template"]["spec"]["restartPolicy"] == "OnFailure" {
        active
            .iter()
            .flat_map(|p| p["status"]["containerStatuses"].as_array().into_iter().flatten())
            .map(|c| c["restartCount"].as_i64().unwrap_or(0))
            .sum()
    } else {
        0
    };
    let suspended = spec["suspend"] == true;
    let start = job["status"]["startTime"]
        .as_str()
        .map(String::from)
        .or_else(|| (!suspended).then(|| now.clone()));
    let past_deadline = match (
        spec["activeDeadlineSeconds"].as_i64(),
        start.as_deref().and_then(meta::parse_time),
    ) {
        (Some(limit), Some(t)) if !suspended => (api.clock.now() - t).whole_seconds() >= limit,
        _ => false,
    };
    let backoff = spec["backoffLimit"].as_i64().unwrap_or(6);
    let completions = spec["completions"].as_i64();
    let parallelism = spec["parallelism"].as_i64().unwrap_or(1).max(0);
    let mut conditions: Vec<Value> = job["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let failure = if failed + restarts > backoff {
        Some((
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        ))
    } else if past_deadline {
        Some((
            "DeadlineExceeded",
            "Job was active longer than specified deadline",
        ))
    } else {
        None
    };
    let complete = match completions {
        Some(c) => succeeded >= c,
        None => succeeded > 0 && active.is_empty(),
    };
    let mut status = json!({
        "active": active.len(), "ready": active.iter().filter(|p| is_ready(p)).count(),
        "terminating": terminating, "succeeded": succeeded, "failed": failed,
        "uncountedTerminatedPods": {}, "startTime": start,
    });
    if let Some((reason, message)) = failure {
        for pod in &active {
            workload::delete(api, pdef, pod).await;
        }
        conditions.push(condition("FailureTarget", reason, message, &now));
        conditions.push(condition("Failed", reason, message, &now));
        status["active"] = json!(0);
        status["ready"] = json!(0);
    } else if complete {
        let message = "Reached expected number of succeeded pods";
        conditions.push(condition(
            "SuccessCriteriaMet",
            "CompletionsReached",
            message,
            &now,
        ));
        conditions.push(condition("Complete", "CompletionsReached", message, &now));
        status["completionTime"] = json!(now);
    } else {
        let want = if suspended {
            0
        } else {
            match completions {
                Some(c) => parallelism.min((c - succeeded).max(0)),
                None if succeeded > 0 => 0,
                None => parallelism,
            }
        };
        let have = active.len() as i64;
        for _ in have..want {
            create_pod(api, pdef, job).await;
        }
        // Not-ready pods go first (`activePodsForRemoval`).
        let mut extra = active.clone();
        extra.sort_by_key(|p| is_ready(p));
        for pod in extra.iter().take((have - want).max(0) as usize) {
            workload::delete(api, pdef, pod).await;
        }
    }
    if suspended && !has_condition(job, "Suspended") {
        conditions.retain(|c| c["type"] != "Suspended");
        conditions.push(condition("Suspended", "JobSuspended", "Job suspended", &now));
    } else if !suspended && has_condition(job, "Suspended") {
        conditions.retain(|c| c["type"] != "Suspended");
        let mut resumed = condition("Suspended", "JobResumed", "Job resumed", &now);
        resumed["status"] = json!("False");
        conditions.push(resumed);
    }
    if !conditions.is_empty() {
        status["conditions"] = json!(conditions);
    }
    workload::set_status(api, jdef, job, status).await;
}

async fn create_pod(api: &Api, pdef: &ResourceDef, job: &Value) {
    let ns = meta::namespace(job);
    let mut pod = workload::pod_from_template(
        &job["spec"]["template"],
        ns,
        workload::owner_ref(job, "batch/v1", "Job"),
    );
    pod["metadata"]["generateName"] = json!(format!("{}-", meta::name(job)));
    if let Err(e) = api.create(pdef, ns, pod, false).await {
        tracing::debug!(error = %e, "job pod create failed");
    }
}
