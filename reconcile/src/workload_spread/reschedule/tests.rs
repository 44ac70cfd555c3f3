use super::*;
use serde_json::json;

fn t(s: &str) -> Timestamp {
    s.parse().unwrap()
}

const NOW: &str = "2026-01-01T00:10:00Z";

fn cond(status: &str, reason: &str, at: &str) -> Condition {
    Condition {
        last_transition_time: Time(t(at)),
        ..condition(status, reason, t(NOW))
    }
}

fn pending(created: &str, node: Option<&str>, phase: &str, reason: &str) -> PodRecord {
    serde_json::from_value(json!({
        "metadata": {"name": "p", "namespace": "ns", "creationTimestamp": created},
        "spec": {"nodeName": node, "containers": [{"name": "main"}]},
        "status": {"phase": phase, "conditions": [{"type": "PodScheduled", "status": "False", "reason": reason}]},
    }))
    .unwrap()
}

#[test]
fn only_adaptive_spreads_with_positive_critical_seconds_reschedule() {
    let ws = |strategy: serde_json::Value| -> WorkloadSpread {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
            "metadata": {"name": "ws", "namespace": "ns"},
            "spec": {"subsets": [], "scheduleStrategy": strategy},
        }))
        .unwrap()
    };
    let adaptive = |s: i64| json!({"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": s}});
    assert_eq!(
        critical_duration(&ws(adaptive(30))),
        Some(Duration::from_secs(30))
    );
    assert_eq!(critical_duration(&ws(adaptive(0))), None);
    assert_eq!(critical_duration(&ws(json!({"type": "Adaptive"}))), None);
    assert_eq!(critical_duration(&ws(json!({"type": "Fixed"}))), None);
}

#[test]
fn a_pod_times_out_when_pending_unschedulable_longer_than_the_critical_duration() {
    let critical = Duration::from_secs(60);
    let now = t(NOW);
    // Created 2 minutes ago, unschedulable: timed out.
    assert_eq!(
        pending_timed_out(
            &pending("2026-01-01T00:08:00Z", None, "Pending", "Unschedulable"),
            critical,
            now
        ),
        Ok(true)
    );
    // Created 30s ago: times out 30s from now.
    assert_eq!(
        pending_timed_out(
            &pending("2026-01-01T00:09:30Z", None, "Pending", "Unschedulable"),
            critical,
            now
        ),
        Err(t("2026-01-01T00:10:30Z"))
    );
    // Scheduled, running, or pending for another reason: never.
    for pod in [
        pending("2026-01-01T00:00:00Z", Some("n1"), "Pending", "Unschedulable"),
        pending("2026-01-01T00:00:00Z", None, "Running", "Unschedulable"),
        pending("2026-01-01T00:00:00Z", None, "Pending", "SchedulerError"),
    ] {
        assert_eq!(pending_timed_out(&pod, critical, now), Ok(false));
    }
    let mut deleting = pending("2026-01-01T00:00:00Z", None, "Pending", "Unschedulable");
    deleting.metadata.deletion_timestamp = Some(Time(now));
    assert_eq!(pending_timed_out(&deleting, critical, now), Ok(false));
}

#[test]
fn a_subset_becomes_unschedulable_and_recovers_after_five_minutes() {
    let now = t(NOW);
    // No previous condition.
    assert_eq!(
        rescheduled(&[], false, now).conditions,
        vec![cond("True", "Sufficient", NOW)]
    );
    assert_eq!(
        rescheduled(&[], true, now).conditions,
        vec![cond("False", "PodUnschedulable", NOW)]
    );
    // Schedulable → unschedulable.
    let was_fine = [cond("True", "Sufficient", "2026-01-01T00:00:00Z")];
    assert_eq!(
        rescheduled(&was_fine, true, now).conditions,
        vec![cond("False", "PodUnschedulable", NOW)]
    );
    assert_eq!(
        rescheduled(&was_fine, false, now),
        Outcome {
            conditions: was_fine.to_vec(),
            ..Outcome::default()
        }
    );
    // Still unschedulable: the transition time stays (the five minutes run from the first failure).
    let failed_at_8 = [cond("False", "PodUnschedulable", "2026-01-01T00:08:00Z")];
    assert_eq!(
        rescheduled(&failed_at_8, true, now).conditions,
        failed_at_8.to_vec()
    );
    // No stuck pod any more, but within five minutes: stays False, recheck at the end.
    assert_eq!(
        rescheduled(&failed_at_8, false, now),
        Outcome {
            conditions: failed_at_8.to_vec(),
            recheck_at: Some(t("2026-01-01T00:13:00Z")),
            recovered: false,
        }
    );
    // After five minutes: recovers.
    let failed_at_4 = [cond("False", "PodUnschedulable", "2026-01-01T00:04:00Z")];
    assert_eq!(
        rescheduled(&failed_at_4, false, now),
        Outcome {
            conditions: vec![cond("True", "Sufficient", NOW)],
            recheck_at: None,
            recovered: true,
        }
    );
}

#[test]
fn the_last_subset_is_always_schedulable() {
    let now = t(NOW);
    assert_eq!(last_subset(&[], now), vec![cond("True", "Sufficient", NOW)]);
    let failed = [cond("False", "PodUnschedulable", "2026-01-01T00:09:00Z")];
    assert_eq!(last_subset(&failed, now), vec![cond("True", "Sufficient", NOW)]);
    // Same status, other reason: the reason changes, the transition time stays.
    let other = [cond("True", "Other", "2026-01-01T00:01:00Z")];
    assert_eq!(
        last_subset(&other, now),
        vec![cond("True", "Sufficient", "2026-01-01T00:01:00Z")]
    );
}
