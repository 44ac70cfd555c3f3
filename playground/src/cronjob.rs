//! The batch/v1 CronJob controller, after `pkg/controller/cronjob` in k8s.io/kubernetes:
//!
//! - the most recent scheduled time after `status.lastScheduleTime` (else the creation time), and
//!   not older than `startingDeadlineSeconds`, starts a Job `<cronjob>-<minutes since the epoch>`
//!   from `jobTemplate`, owned by the CronJob, annotated
//!   `batch.kubernetes.io/cronjob-scheduled-timestamp`; missed earlier times are skipped;
//! - `concurrencyPolicy`: `Allow`; `Forbid` waits while a Job is active; `Replace` deletes the
//!   active Jobs first; `suspend` starts nothing;
//! - status: `active` (references to unfinished Jobs), `lastScheduleTime`, `lastSuccessfulTime`;
//! - finished Jobs beyond `successfulJobsHistoryLimit` (3) / `failedJobsHistoryLimit` (1) are
//!   deleted, oldest first.
//!
//! "Now" is the playground's [`crate::clock::Clock`] (a manual clock moves schedules forward).
//! Schedules are read by the `cron` module, in UTC: a CronJob with another `timeZone` (or a
//! `CRON_TZ=`/`TZ=` prefix) starts nothing here.

use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::api::Api;
use crate::cron::Schedule;
use crate::job::is_done;
use crate::meta;
use crate::resources::ResourceDef;
use crate::store::ResKey;
use crate::workload::{self, has_condition};

/// The annotation with a Job's scheduled time (RFC 3339).
pub const SCHEDULED_TIMESTAMP: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

/// One pass over every CronJob.
pub async fn sync(api: &Api) {
    let (cronjobs, _) = api.store.list_shared(&ResKey::new("batch", "cronjobs"), None);
    if cronjobs.is_empty() {
        return;
    }
    let (Some(cdef), Some(jdef)) = (
        api.registry.find("batch", "v1", "cronjobs"),
        api.registry.find("batch", "v1", "jobs"),
    ) else {
        return;
    };
    let (jobs, _) = api.store.list_shared(&ResKey::new("batch", "jobs"), None);
    let owned = workload::by_controller(&jobs);
    for cj in cronjobs.iter().filter(|c| !meta::is_deleting(c)) {
        let mine = owned.get(meta::uid_of(cj)).cloned().unwrap_or_default();
        sync_cronjob(api, &cdef, &jdef, cj, &mine).await;
    }
}

/// The latest scheduled time in `(earliest, now]`.
pub fn most_recent(
    schedule: &Schedule,
    earliest: OffsetDateTime,
    now: OffsetDateTime,
) -> Option<OffsetDateTime> {
    let mut last = None;
    let mut t = earliest;
    // Bounded: a minutely schedule missed for 69 days still answers in a few milliseconds.
    for _ in 0..100_000 {
        match schedule.next_after(t) {
            Some(next) if next <= now => {
                last = Some(next);
                t = next;
            }
            _ => break,
        }
    }
    last
}

fn job_ref(job: &Value) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job", "name": meta::name(job),
           "namespace": meta::namespace(job), "uid": meta::uid_of(job),
           "resourceVersion": meta::resource_version(job)})
}

fn utc_only(cj: &Value) -> bool {
    let zone_ok = cj["spec"]["timeZone"]
        .as_str()
        .is_none_or(|z| matches!(z, "UTC" | "Etc/UTC"));
    let schedule = cj["spec"]["schedule"].as_str().unwrap_or_default();
    zone_ok && !schedule.starts_with("CRON_TZ=") && !schedule.starts_with("TZ=")
}

async fn sync_cronjob(api: &Api, cdef: &ResourceDef, jdef: &ResourceDef, cj: &Value, jobs: &[&Value]) {
    let spec = &cj["spec"];
    let now = api.clock.now();
    let mut active: Vec<&Value> = jobs
        .iter()
        .copied()
        .filter(|j| !is_done(j) && !meta::is_deleting(j))
        .collect();
    let last_success = jobs
        .iter()
        .filter(|j| has_condition(j, "Complete"))
        .filter_map(|j| j["status"]["completionTime"].as_str())
        .max()
        .map(String::from);
    let mut last_schedule = cj["status"]["lastScheduleTime"].as_str().map(String::from);
    let schedule = spec["schedule"].as_str().and_then(Schedule::parse);
    let earliest = last_schedule
        .as_deref()
        .or(cj["metadata"]["creationTimestamp"].as_str())
        .and_then(meta::parse_time);
    let due = match (&schedule, earliest) {
        (Some(s), Some(e)) if spec["suspend"] != true && utc_only(cj) => {
            let e = match spec["startingDeadlineSeconds"].as_i64() {
                Some(d) => e.max(now - time::Duration::seconds(d)),
                None => e,
            };
            most_recent(s, e, now)
        }
        _ => None,
    };
    if let Some(t) = due {
        let policy = spec["concurrencyPolicy"].as_str().unwrap_or("Allow");
        let name = format!("{}-{}", meta::name(cj), t.unix_timestamp() / 60);
        let exists = jobs.iter().any(|j| meta::name(j) == name);
        let forbidden = policy == "Forbid" && !active.is_empty();
        if !exists && !forbidden {
            if policy == "Replace" {
                for job in active.drain(..) {
                    workload::delete(api, jdef, job).await;
                }
            }
            let stamp = meta::timestamp(t);
            let mut metadata = spec["jobTemplate"]["metadata"].clone();
            if !metadata.is_object() {
                metadata = json!({});
            }
            metadata["name"] = json!(name);
            metadata["namespace"] = json!(meta::namespace(cj));
            metadata["ownerReferences"] = json!([workload::owner_ref(cj, "batch/v1", "CronJob")]);
            if !metadata["annotations"].is_object() {
                metadata["annotations"] = json!({});
            }
            metadata["annotations"][SCHEDULED_TIMESTAMP] = json!(stamp);
            let job = json!({"metadata": metadata, "spec": spec["jobTemplate"]["spec"].clone()});
            match api.create(jdef, meta::namespace(cj), job, false).await {
                Ok(created) => {
                    last_schedule = Some(stamp);
                    write_status(
                        api,
                        cdef,
                        cj,
                        &active,
                        Some(&created),
                        last_schedule,
                        last_success,
                    )
                    .await;
                    return;
                }
                Err(e) => tracing::debug!(error = %e, "cronjob job create failed"),
            }
        } else if exists {
            last_schedule = Some(meta::timestamp(t));
        }
    }
    prune_history(api, jdef, cj, jobs).await;
    write_status(api, cdef, cj, &active, None, last_schedule, last_success).await;
}

async fn write_status(
    api: &Api,
    cdef: &ResourceDef,
    cj: &Value,
    active: &[&Value],
    created: Option<&Value>,
    last_schedule: Option<String>,
    last_success: Option<String>,
) {
    let mut refs: Vec<Value> = active.iter().map(|j| job_ref(j)).collect();
    refs.extend(created.map(job_ref));
    // Same jobs, same references: a new resourceVersion of a Job is not a status change.
    let same = |a: &Value, b: &Value| a["uid"] == b["uid"];
    let old: Vec<Value> = cj["status"]["active"].as_array().cloned().unwrap_or_default();
    if old.len() == refs.len() && old.iter().zip(&refs).all(|(a, b)| same(a, b)) {
        refs = old;
    }
    let status = json!({
        "active": if refs.is_empty() { Value::Null } else { json!(refs) },
        "lastScheduleTime": last_schedule,
        "lastSuccessfulTime": last_success.or_else(|| cj["status"]["lastSuccessfulTime"].as_str().map(String::from)),
    });
    workload::set_status(api, cdef, cj, status).await;
}

/// Deletes the oldest finished Jobs beyond the history limits.
async fn prune_history(api: &Api, jdef: &ResourceDef, cj: &Value, jobs: &[&Value]) {
    for (condition, field, default) in [
        ("Complete", "successfulJobsHistoryLimit", 3),
        ("Failed", "failedJobsHistoryLimit", 1),
    ] {
        let limit = cj["spec"][field].as_i64().unwrap_or(default).max(0) as usize;
        let mut done: Vec<&Value> = jobs
            .iter()
            .copied()
            .filter(|j| has_condition(j, condition) && !meta::is_deleting(j))
            .collect();
        done.sort_by_key(|j| j["status"]["startTime"].as_str().unwrap_or_default().to_string());
        for job in done.iter().take(done.len().saturating_sub(limit)) {
            workload::delete(api, jdef, job).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn the_most_recent_missed_time_is_started() {
        let s = Schedule::parse("*/5 * * * *").unwrap();
        let now = datetime!(2026-11-25 16:17:29 UTC);
        assert_eq!(
            most_recent(&s, now - time::Duration::hours(2), now),
            Some(datetime!(2026-11-25 16:15 UTC))
        );
        assert_eq!(
            most_recent(&s, datetime!(2026-11-25 16:15 UTC), now),
            None,
            "already started"
        );
    }
}
