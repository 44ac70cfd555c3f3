//! Kruise Rollout objects (`rollouts.kruise.io`, `v1alpha1` and `v1beta1`) read as JSON, and the
//! decisions `rollout approve|pause|resume|undo` take on them: each answers the merge patch to send
//! (to the object or to its status subresource) or, in kruise-tools' words, why not.
//!
//! Where kruise-tools dereferences a missing status or strategy (and panics), these answer an error.

use serde_json::{Value, json};

/// `status.canaryStatus.currentStepState` while a step waits for `rollout approve`.
pub const STEP_PAUSED: &str = "StepPaused";
/// The state `rollout approve` sets.
pub const STEP_READY: &str = "StepReady";
/// The label the rollout controller puts on the pods of each batch.
pub const BATCH_ID_LABEL: &str = "rollouts.kruise.io/rollout-batch-id";

/// Whether the object was read as `rollouts.kruise.io/v1alpha1`.
pub fn is_v1alpha1(rollout: &Value) -> bool {
    rollout.get("apiVersion").and_then(Value::as_str) == Some("rollouts.kruise.io/v1alpha1")
}

fn present<'a>(rollout: &'a Value, pointer: &str) -> Option<&'a Value> {
    rollout.pointer(pointer).filter(|v| v.is_object())
}

/// How a v1beta1 Rollout rolls: `spec.strategy.blueGreen` makes it blue-green, else canary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Canary,
    BlueGreen,
}

impl Style {
    /// The strategy in `spec.strategy` (none: no release strategy at all).
    pub fn of(rollout: &Value) -> Option<Style> {
        if !is_v1alpha1(rollout) && present(rollout, "/spec/strategy/blueGreen").is_some() {
            Some(Style::BlueGreen)
        } else if present(rollout, "/spec/strategy/canary").is_some() {
            Some(Style::Canary)
        } else {
            None
        }
    }

    /// `canary` / `blueGreen`: the key of the strategy in `spec.strategy`.
    pub fn strategy_key(self) -> &'static str {
        match self {
            Style::Canary => "canary",
            Style::BlueGreen => "blueGreen",
        }
    }

    /// `canaryStatus` / `blueGreenStatus`: the key of its progress in `status`.
    pub fn status_key(self) -> &'static str {
        match self {
            Style::Canary => "canaryStatus",
            Style::BlueGreen => "blueGreenStatus",
        }
    }
}

/// The status patch of `rollout approve`: the paused step becomes ready.
pub fn approve_patch(rollout: &Value) -> Result<Value, String> {
    let state = |key: &str| {
        present(rollout, &format!("/status/{key}")).map(|s| {
            s.get("currentStepState")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        })
    };
    // v1alpha1 knows only canaries: no progress at all is "not StepPaused" there.
    let (key, what) = if is_v1alpha1(rollout) || state("canaryStatus").is_some() {
        ("canaryStatus", "canary")
    } else if state("blueGreenStatus").is_some() {
        ("blueGreenStatus", "blue-green")
    } else {
        return Err("no need to approve: not in canary or blue-green progress".into());
    };
    if state(key).as_deref() != Some(STEP_PAUSED) {
        return Err(format!(
            "does not allow to approve, because current {what} state is not '{STEP_PAUSED}'"
        ));
    }
    Ok(json!({"status": {key: {"currentStepState": STEP_READY}}}))
}

/// The patch of `rollout pause` (`pause`) or `rollout resume`: `spec.strategy.paused` of a v1beta1
/// Rollout.
pub fn pause_patch(rollout: &Value, pause: bool) -> Result<Value, String> {
    if is_v1alpha1(rollout) {
        return Err(if pause {
            "pausing is not supported"
        } else {
            "resuming is not supported"
        }
        .into());
    }
    let paused = rollout
        .pointer("/spec/strategy/paused")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    match (pause, paused) {
        (true, true) => Err("is already paused".into()),
        (false, false) => Err("is not paused".into()),
        _ => Ok(json!({"spec": {"strategy": {"paused": pause}}})),
    }
}

/// An int-or-percent scaled against 100, rounding up, as apimachinery's
/// `GetScaledValueFromIntOrPercent(v, 100, true)`; what it cannot read counts 0 (as kruise-tools,
/// which ignores the error).
pub fn scaled(value: Option<&Value>) -> i64 {
    match value {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(Value::String(s)) => s
            .strip_suffix('%')
            .and_then(|p| p.parse::<i64>().ok())
            .unwrap_or(0),
        _ => 0,
    }
}

/// Whether a step sends traffic to the new version (`traffic` above 0 %; v1alpha1: `weight`).
fn has_traffic(step: &Value) -> bool {
    match (step.get("traffic"), step.get("weight")) {
        (Some(traffic), _) => scaled(Some(traffic)) != 0,
        (None, Some(weight)) => weight.as_i64().unwrap_or(0) != 0,
        (None, None) => false,
    }
}

/// The step `rollout undo --fast` goes back to from step `current` (1-based): among the earlier
/// steps that send no traffic, the one with the most replicas (the latest of equals).
pub fn fast_undo_step(steps: &[Value], current: i64) -> Result<i64, String> {
    if current > steps.len() as i64 {
        return Err(format!(
            "has {} steps, but current step is too large {current}",
            steps.len()
        ));
    }
    if current <= 1 {
        return Err("already at the first step".into());
    }
    let mut best = None;
    let mut most = 0;
    for number in (1..current).rev() {
        let step = &steps[(number - 1) as usize];
        if has_traffic(step) {
            continue;
        }
        let replicas = scaled(step.get("replicas"));
        if replicas > most {
            most = replicas;
            best = Some(number);
        }
    }
    best.ok_or_else(|| "no previous step with no traffic found".into())
}

/// The status patch of `rollout undo --fast`: `nextStepIndex` of the Rollout's progress set to the
/// step [`fast_undo_step`] picks. The current step is `status.currentStepIndex`, else the progress's.
pub fn fast_undo_patch(rollout: &Value) -> Result<Value, String> {
    if is_v1alpha1(rollout) {
        return Err("rollback is not supported on given object".into());
    }
    let style = Style::of(rollout).ok_or("not in canary or blue-green progress")?;
    let progress = present(rollout, &format!("/status/{}", style.status_key()))
        .ok_or("not in canary or blue-green progress")?;
    let steps = rollout
        .pointer(&format!("/spec/strategy/{}/steps", style.strategy_key()))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let step_index = |v: Option<&Value>| v.and_then(Value::as_i64).filter(|i| *i != 0);
    let current = step_index(rollout.pointer("/status/currentStepIndex"))
        .or_else(|| step_index(progress.get("currentStepIndex")))
        .unwrap_or(0);
    let target = fast_undo_step(steps, current)?;
    Ok(json!({"status": {style.status_key(): {"nextStepIndex": target}}}))
}

/// The workload a Rollout manages: `spec.workloadRef` (v1beta1) or `spec.objectRef.workloadRef`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
}

impl WorkloadRef {
    /// The API group (`apps`, `apps.kruise.io`).
    pub fn group(&self) -> &str {
        self.api_version.rsplit_once('/').map_or("", |(g, _)| g)
    }

    /// The version (`v1`, `v1alpha1`).
    pub fn version(&self) -> &str {
        self.api_version
            .rsplit_once('/')
            .map_or(&self.api_version, |(_, v)| v)
    }
}

/// The Rollout's workload reference.
pub fn workload_ref(rollout: &Value) -> Result<WorkloadRef, String> {
    let pointer = if is_v1alpha1(rollout) {
        "/spec/objectRef/workloadRef"
    } else {
        "/spec/workloadRef"
    };
    let field = |key: &str| {
        rollout
            .pointer(&format!("{pointer}/{key}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let reference = WorkloadRef {
        api_version: field("apiVersion"),
        kind: field("kind"),
        name: field("name"),
    };
    if reference.kind.is_empty() || reference.name.is_empty() {
        return Err("has no workload reference".into());
    }
    Ok(reference)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beta(spec: Value, status: Value) -> Value {
        json!({"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "spec": spec, "status": status})
    }

    fn steps(list: &[(Value, Option<&str>)]) -> Vec<Value> {
        list.iter()
            .map(|(replicas, traffic)| match traffic {
                Some(t) => json!({"replicas": replicas, "traffic": t}),
                None => json!({"replicas": replicas}),
            })
            .collect()
    }

    #[test]
    fn fast_undo_picks_the_earlier_step_with_no_traffic_and_the_most_replicas() {
        let list = steps(&[
            (json!(1), None),
            (json!("20%"), None),
            (json!("50%"), Some("10%")),
            (json!("40%"), Some("0%")),
            (json!("100%"), None),
        ]);
        // From step 5: steps 1..4; step 3 sends traffic; 40 % (step 4) beats 20 % and 1.
        assert_eq!(fast_undo_step(&list, 5), Ok(4));
        // From step 4: step 3 has traffic, 20 % beats 1.
        assert_eq!(fast_undo_step(&list, 4), Ok(2));
        assert_eq!(fast_undo_step(&list, 2), Ok(1));
        assert_eq!(fast_undo_step(&list, 1).unwrap_err(), "already at the first step");
        assert_eq!(fast_undo_step(&list, 0).unwrap_err(), "already at the first step");
        assert_eq!(
            fast_undo_step(&list, 6).unwrap_err(),
            "has 5 steps, but current step is too large 6"
        );
        // Equal replicas: the later step.
        let equal = steps(&[(json!("30%"), None), (json!("30%"), None), (json!(1), None)]);
        assert_eq!(fast_undo_step(&equal, 3), Ok(2));
        let all_traffic = steps(&[
            (json!("30%"), Some("5%")),
            (json!("60%"), Some("50%")),
            (json!(1), None),
        ]);
        assert_eq!(
            fast_undo_step(&all_traffic, 3).unwrap_err(),
            "no previous step with no traffic found"
        );
        // Zero replicas never count.
        let zero = steps(&[(json!(0), None), (json!(1), None)]);
        assert_eq!(
            fast_undo_step(&zero, 2).unwrap_err(),
            "no previous step with no traffic found"
        );
    }

    #[test]
    fn fast_undo_writes_next_step_index_of_the_progress_in_use() {
        let list = steps(&[
            (json!("20%"), None),
            (json!("50%"), Some("50%")),
            (json!("100%"), None),
        ]);
        let canary = beta(
            json!({"strategy": {"canary": {"steps": list}}}),
            json!({"currentStepIndex": 3, "canaryStatus": {"currentStepIndex": 3}}),
        );
        assert_eq!(
            fast_undo_patch(&canary).unwrap(),
            json!({"status": {"canaryStatus": {"nextStepIndex": 1}}})
        );
        // Without the top-level index, the progress's.
        let inner = beta(
            json!({"strategy": {"blueGreen": {"steps": list}}}),
            json!({"blueGreenStatus": {"currentStepIndex": 3}}),
        );
        assert_eq!(
            fast_undo_patch(&inner).unwrap(),
            json!({"status": {"blueGreenStatus": {"nextStepIndex": 1}}})
        );
        let idle = beta(json!({"strategy": {"canary": {"steps": list}}}), json!({}));
        assert_eq!(
            fast_undo_patch(&idle).unwrap_err(),
            "not in canary or blue-green progress"
        );
        let mut alpha = canary.clone();
        alpha["apiVersion"] = json!("rollouts.kruise.io/v1alpha1");
        assert_eq!(
            fast_undo_patch(&alpha).unwrap_err(),
            "rollback is not supported on given object"
        );
    }

    #[test]
    fn approve_moves_a_paused_step_to_ready_and_says_why_not_otherwise() {
        let paused = |key: &str| beta(json!({}), json!({key: {"currentStepState": "StepPaused"}}));
        assert_eq!(
            approve_patch(&paused("canaryStatus")).unwrap(),
            json!({"status": {"canaryStatus": {"currentStepState": "StepReady"}}})
        );
        assert_eq!(
            approve_patch(&paused("blueGreenStatus")).unwrap(),
            json!({"status": {"blueGreenStatus": {"currentStepState": "StepReady"}}})
        );
        let upgrading = beta(
            json!({}),
            json!({"canaryStatus": {"currentStepState": "StepUpgrade"}}),
        );
        assert_eq!(
            approve_patch(&upgrading).unwrap_err(),
            "does not allow to approve, because current canary state is not 'StepPaused'"
        );
        let blue = beta(
            json!({}),
            json!({"blueGreenStatus": {"currentStepState": "StepReady"}}),
        );
        assert_eq!(
            approve_patch(&blue).unwrap_err(),
            "does not allow to approve, because current blue-green state is not 'StepPaused'"
        );
        assert_eq!(
            approve_patch(&beta(json!({}), json!({"phase": "Healthy"}))).unwrap_err(),
            "no need to approve: not in canary or blue-green progress"
        );
        // v1alpha1: canary only; no progress at all is "not StepPaused".
        let mut alpha = paused("canaryStatus");
        alpha["apiVersion"] = json!("rollouts.kruise.io/v1alpha1");
        assert!(approve_patch(&alpha).is_ok());
        alpha["status"] = json!({});
        assert_eq!(
            approve_patch(&alpha).unwrap_err(),
            "does not allow to approve, because current canary state is not 'StepPaused'"
        );
    }

    #[test]
    fn pause_and_resume_flip_spec_strategy_paused_of_v1beta1_only() {
        let running = beta(json!({"strategy": {"canary": {}}}), json!({}));
        assert_eq!(
            pause_patch(&running, true).unwrap(),
            json!({"spec": {"strategy": {"paused": true}}})
        );
        assert_eq!(pause_patch(&running, false).unwrap_err(), "is not paused");
        let paused = beta(json!({"strategy": {"paused": true}}), json!({}));
        assert_eq!(pause_patch(&paused, true).unwrap_err(), "is already paused");
        assert_eq!(
            pause_patch(&paused, false).unwrap(),
            json!({"spec": {"strategy": {"paused": false}}})
        );
        let mut alpha = running.clone();
        alpha["apiVersion"] = json!("rollouts.kruise.io/v1alpha1");
        assert_eq!(pause_patch(&alpha, true).unwrap_err(), "pausing is not supported");
        assert_eq!(
            pause_patch(&alpha, false).unwrap_err(),
            "resuming is not supported"
        );
    }

    #[test]
    fn workload_references_of_both_versions() {
        let b = beta(
            json!({"workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}}),
            json!({}),
        );
        let r = workload_ref(&b).unwrap();
        assert_eq!(
            (r.group(), r.version(), r.kind.as_str()),
            ("apps.kruise.io", "v1alpha1", "CloneSet")
        );
        let a = json!({"apiVersion": "rollouts.kruise.io/v1alpha1",
                       "spec": {"objectRef": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "shop"}}}});
        let r = workload_ref(&a).unwrap();
        assert_eq!((r.group(), r.name.as_str()), ("apps", "shop"));
        assert!(workload_ref(&beta(json!({}), json!({}))).is_err());
    }
}
