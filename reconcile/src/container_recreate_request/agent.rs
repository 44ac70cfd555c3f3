//! The node agent's side of a ContainerRecreateRequest, as pure decisions (OpenKruise's
//! `pkg/daemon/containerrecreate`; docs/containerrecreaterequest.md#the-agent). The agent
//! (`src/daemon/recreate.rs`) gathers the pod's containers from the runtime and carries out the
//! [`Step`] chosen here, one per sync:
//!
//! - [`order`]: Completed first, then Recreating, then Pending, then new ones, each group oldest first;
//! - [`pick`]: requests on disjoint containers run together; one naming a container of an earlier
//!   unfinished request is marked Pending with a message naming it, and waits;
//! - [`container_states`]: each container's phase from the runtime (the table of C.5 in the docs);
//! - [`next`]: write changed states, or stop one container (at most one per sync), or complete.

use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::apps_v1beta1::{
    ContainerRecreateRequest, ContainerRecreateRequestContainerRecreateState as State,
    ContainerRecreateRequestPhase as Phase,
};

/// Message of a container the runtime does not show.
pub const NOT_FOUND: &str = "not found container on Node";

/// One container as the runtime shows it: the newest of that name in the pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeContainer {
    /// Container name (kubelet's label).
    pub name: String,
    /// `<runtime>://<id>`, as the pod status writes it.
    pub id: String,
    /// The run number (kubelet's `restartCount` annotation).
    pub restart_count: i32,
    /// It has exited (and not been started again yet).
    pub exited: bool,
    /// When it started, if it runs.
    pub started_at: Option<Timestamp>,
}

/// Sort weight of a request's phase: finished first, then the one at work, then waiting ones.
fn weight(phase: &Phase) -> u8 {
    match phase {
        Phase::Completed => 0,
        Phase::Recreating => 1,
        Phase::Pending => 2,
        _ => 3,
    }
}

/// The pod's requests in the order they are served.
pub fn order(requests: &mut [ContainerRecreateRequest]) {
    requests.sort_by(|a, b| {
        let phase = |c: &ContainerRecreateRequest| weight(&c.status.clone().unwrap_or_default().phase);
        let created = |c: &ContainerRecreateRequest| c.metadata.creation_timestamp.as_ref().map(|t| t.0);
        (phase(a), created(a), a.metadata.name.as_deref()).cmp(&(
            phase(b),
            created(b),
            b.metadata.name.as_deref(),
        ))
    });
}

/// What a sync does with the pod's ordered requests.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pick {
    /// The requests to work on now (indices): no two name the same container.
    pub work: Vec<usize>,
    /// The requests to mark Pending with this message (only where phase or message differ).
    pub wait: Vec<(usize, String)>,
}

/// The message of a request waiting for `by`, which also recreates `container`.
pub fn waiting_message(by: &str, container: &str) -> String {
    format!("waiting for ContainerRecreateRequest {by}, which also recreates container {container}")
}

/// Which requests to work on and which to mark Pending. Unlike OpenKruise (one request per pod at a
/// time), requests on disjoint containers proceed together; a request naming a container of an
/// earlier unfinished one waits for it. A Recreating request keeps its turn (it is never demoted).
pub fn pick(requests: &[ContainerRecreateRequest]) -> Pick {
    let mut out = Pick::default();
    // Container name → the request holding (or first waiting for) it.
    let mut claimed: Vec<(&str, &str)> = Vec::new();
    for (i, crr) in requests.iter().enumerate() {
        let status = crr.status.clone().unwrap_or_default();
        if status.phase == Phase::Completed || crr.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let name = crr.metadata.name.as_deref().unwrap_or_default();
        let blocker = crr
            .spec
            .containers
            .iter()
            .find_map(|c| claimed.iter().find(|(held, _)| *held == c.name));
        match blocker {
            None => out.work.push(i),
            Some(_) if status.phase == Phase::Recreating => {}
            Some((container, by)) => {
                let message = waiting_message(by, container);
                if status.phase != Phase::Pending || status.message != message {
                    out.wait.push((i, message));
                }
            }
        }
        claimed.extend(crr.spec.containers.iter().map(|c| (c.name.as_str(), name)));
    }
    out
}

/// Why the request's containers cannot be matched with this agent's runtime (OpenKruise's messages).
pub fn runtime_mismatch(crr: &ContainerRecreateRequest, runtime: &str) -> Option<String> {
    let mut seen: Option<&str> = None;
    for c in &crr.spec.containers {
        let id = c
            .status_context
            .as_ref()
            .map(|s| s.container_id.as_str())
            .unwrap_or_default();
        let Some((kind, _)) = id.split_once("://").filter(|_| !id.is_empty()) else {
            return Some(format!(
                "no statusContext or empty containerID in {} container",
                c.name
            ));
        };
        match seen {
            Some(other) if other != kind => {
                return Some(format!("has different runtime types {other}, {kind} in Pod"));
            }
            _ => seen = Some(kind),
        }
    }
    match seen {
        Some(kind) if kind != runtime => Some(format!("not found runtime service for {kind} in daemon")),
        _ => None,
    }
}

/// Each container's state from the runtime, the previous states and the manager's snapshot.
pub fn container_states(
    crr: &ContainerRecreateRequest,
    runtime: &[RuntimeContainer],
    now: Timestamp,
) -> Vec<State> {
    let status = crr.status.clone().unwrap_or_default();
    let strategy = crr.spec.strategy.clone().unwrap_or_default();
    let min_started = SignedDuration::from_secs(i64::from(strategy.min_started_seconds));
    crr.spec
        .containers
        .iter()
        .map(|c| {
            let previous = status.container_recreate_states.iter().find(|s| s.name == c.name);
            let was_killed = previous.is_some_and(|p| p.is_killed);
            let state = |phase: Phase, message: &str, is_killed: bool| State {
                name: c.name.clone(),
                phase,
                message: message.into(),
                is_killed,
            };
            if let Some(p) = previous.filter(|p| matches!(p.phase, Phase::Succeeded | Phase::Failed)) {
                return p.clone();
            }
            let Some(rc) = runtime.iter().find(|r| r.name == c.name) else {
                return state(Phase::Pending, NOT_FOUND, was_killed);
            };
            if rc.exited {
                return state(Phase::Recreating, "", was_killed);
            }
            if strategy.force_recreate && !was_killed {
                return state(Phase::Pending, "", false);
            }
            let context = c.status_context.clone().unwrap_or_default();
            if rc.id != context.container_id || rc.restart_count > context.restart_count {
                let settled = status
                    .container_status_snapshot
                    .iter()
                    .any(|s| s.name == c.name && s.container_id == rc.id && s.ready)
                    && rc
                        .started_at
                        .and_then(|t| t.checked_add(min_started).ok())
                        .is_some_and(|t| t < now);
                let phase = if settled {
                    Phase::Succeeded
                } else {
                    Phase::Recreating
                };
                return state(phase, "", was_killed);
            }
            state(Phase::Pending, "", was_killed)
        })
        .collect()
}

/// What the agent does next for the picked request.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Write these container states (and the phase Recreating).
    States(Vec<State>),
    /// Stop container `index` of the spec (runtime id `id`), then write `states`, where it is
    /// Recreating and killed (or, when the stop fails, [`kill_failed`]'s).
    Kill {
        /// Index in `spec.containers`.
        index: usize,
        /// `<runtime>://<id>` of the container to stop.
        id: String,
        /// The states to write once it is stopped.
        states: Vec<State>,
    },
    /// Complete the request with these states and message.
    Complete(Vec<State>, String),
    /// Nothing to write; look again after this long (`None`: on the next change).
    Wait(Option<Duration>),
}

/// The walk over the containers in spec order (C.4 step 8 in the docs).
pub fn next(crr: &ContainerRecreateRequest, runtime: &[RuntimeContainer], now: Timestamp) -> Step {
    let status = crr.status.clone().unwrap_or_default();
    let strategy = crr.spec.strategy.clone().unwrap_or_default();
    let mut states = container_states(crr, runtime, now);
    if states != status.container_recreate_states {
        return Step::States(states);
    }
    let fail_fast = strategy.failure_policy.as_str() != "Ignore";
    let mut finished = 0;
    for (i, s) in states.clone().iter().enumerate() {
        match s.phase {
            Phase::Succeeded => finished += 1,
            Phase::Failed => {
                finished += 1;
                if fail_fast {
                    let message = format!("container {} failed: {}", s.name, s.message);
                    return Step::Complete(states, message);
                }
            }
            Phase::Recreating => {
                states[i].is_killed = true;
                if strategy.ordered_recreate {
                    break;
                }
            }
            _ => {
                let Some(rc) = runtime.iter().find(|r| r.name == s.name) else {
                    break;
                };
                states[i].phase = Phase::Recreating;
                states[i].is_killed = true;
                states[i].message.clear();
                return Step::Kill {
                    index: i,
                    id: rc.id.clone(),
                    states,
                };
            }
        }
    }
    if states != status.container_recreate_states {
        return Step::States(states);
    }
    if finished == states.len() {
        return Step::Complete(states, String::new());
    }
    let min_started = strategy.min_started_seconds;
    Step::Wait((min_started > 0).then(|| Duration::from_secs(min_started.unsigned_abs().into())))
}

/// The states after the stop of container `index` failed with `error`: that container is Failed.
/// Under `Ignore` the agent writes them and goes on; under `Fail` it completes the request with them.
pub fn kill_failed(mut states: Vec<State>, index: usize, error: &str) -> Vec<State> {
    if let Some(s) = states.get_mut(index) {
        s.phase = Phase::Failed;
        s.is_killed = false;
        s.message = format!("kill container error: {error}");
    }
    states
}

/// How long the unready drain still holds the stop, or `None` when it is over (or not asked for);
/// `Some(None)` while the manager has not acquired it yet.
pub fn drain_left(crr: &ContainerRecreateRequest, now: Timestamp) -> Option<Option<Duration>> {
    let grace = crr.spec.strategy.as_ref()?.unready_grace_period_seconds?;
    let status = crr.status.clone().unwrap_or_default();
    let Some(cond) = super::grace_acquired(&status) else {
        return Some(None);
    };
    let end = cond
        .last_transition_time
        .0
        .checked_add(SignedDuration::from_secs(grace))
        .ok()?;
    let left = Duration::try_from(end.duration_since(now))
        .ok()
        .filter(|d| !d.is_zero())?;
    Some(Some(left + Duration::from_millis(100)))
}

#[cfg(test)]
mod tests;
