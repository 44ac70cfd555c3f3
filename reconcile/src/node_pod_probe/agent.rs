//! The node agent's pure probe bookkeeping (OpenKruise's `pkg/daemon/podprobe`; docs/podprobemarker.md):
//! thresholds, the published result of each probe, the NodePodProbe status built from them, and the
//! events a write announces.
//!
//! Results are kept per (pod uid, probe name) — two probes on one container never share a slot,
//! which OpenKruise's per-container cache did — and an event is due only when a probe's published
//! state changes (OpenKruise emits one for every cached result on every write).

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Probe;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps_v1alpha1::{
    ContainerProbeState, NodePodProbeSpec, NodePodProbeStatus, PodProbeStatus, ProbeState,
};

/// Longest message kept from a probe's output.
pub const MAX_MESSAGE: usize = 1024;
/// Without a change, the status is still rewritten this often (fresh `lastProbeTime`s).
pub const REFRESH: Duration = Duration::from_secs(600);

/// A probe's timing with OpenKruise's floors: period, initial delay and timeout at least 1 s,
/// thresholds at least 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Between two runs.
    pub period: Duration,
    /// Container running time before the first run.
    pub initial_delay: Duration,
    /// Limit of one run.
    pub timeout: Duration,
    /// Consecutive successes that publish Succeeded.
    pub success_threshold: u32,
    /// Consecutive failures that publish Failed.
    pub failure_threshold: u32,
}

impl Timing {
    /// The timing of `probe`.
    pub fn of(probe: &Probe) -> Timing {
        let secs = |v: Option<i32>| Duration::from_secs(u64::try_from(v.unwrap_or(0).max(1)).unwrap_or(1));
        let count = |v: Option<i32>| u32::try_from(v.unwrap_or(0).max(1)).unwrap_or(1);
        Timing {
            period: secs(probe.period_seconds),
            initial_delay: secs(probe.initial_delay_seconds),
            timeout: secs(probe.timeout_seconds),
            success_threshold: count(probe.success_threshold),
            failure_threshold: count(probe.failure_threshold),
        }
    }
}

/// Consecutive equal results of one probe, and when they are enough to publish.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Streak {
    last: Option<bool>,
    run: u32,
}

impl Streak {
    /// Counts one result; the state to publish once the streak reaches its threshold (and on every
    /// further equal result).
    pub fn observe(&mut self, ok: bool, timing: &Timing) -> Option<ProbeState> {
        if self.last == Some(ok) {
            self.run = self.run.saturating_add(1);
        } else {
            self.last = Some(ok);
            self.run = 1;
        }
        let (needed, state) = if ok {
            (timing.success_threshold, ProbeState::Succeeded)
        } else {
            (timing.failure_threshold, ProbeState::Failed)
        };
        (self.run >= needed).then_some(state)
    }

    /// Forgets the streak (a new container).
    pub fn reset(&mut self) {
        *self = Streak::default();
    }
}

/// A probe: its pod's uid and its NodePodProbe name (`<marker>#<probe>`).
pub type ProbeKey = (String, String);

/// The published result of one probe.
#[derive(Clone, Debug, PartialEq)]
pub struct Published {
    /// The container the result is about.
    pub container_id: String,
    /// The state.
    pub state: ProbeState,
    /// The output (at most [`MAX_MESSAGE`] bytes).
    pub message: String,
    /// The latest run.
    pub last_probe_time: Timestamp,
    /// When the state last changed.
    pub last_transition_time: Timestamp,
}

/// A published state change, for an event.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    /// The probe.
    pub key: ProbeKey,
    /// The new state (Succeeded or Failed).
    pub state: ProbeState,
    /// Its message.
    pub message: String,
}

/// The published results of the agent's probes.
#[derive(Clone, Debug, Default)]
pub struct Results {
    entries: BTreeMap<ProbeKey, Published>,
    /// State changes not yet written.
    pending: Vec<Transition>,
    /// Something the status shows changed since the last write.
    dirty: bool,
}

/// `message` cut to at most [`MAX_MESSAGE`] bytes on a character boundary.
pub fn truncate(message: &str) -> String {
    let mut end = message.len().min(MAX_MESSAGE);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    message[..end].to_string()
}

impl Results {
    /// Records a result of `key` in container `container_id`. A new container starts from Unknown
    /// (no event); a changed state is a transition; a changed message only marks the status dirty.
    pub fn record(
        &mut self,
        key: &ProbeKey,
        container_id: &str,
        state: ProbeState,
        message: &str,
        now: Timestamp,
    ) {
        let message = truncate(message);
        let previous = self.entries.get(key).filter(|p| p.container_id == container_id);
        let changed = previous.is_none_or(|p| p.state != state);
        if previous.is_none_or(|p| p.state != state || p.message != message) {
            self.dirty = true;
        }
        if changed && matches!(state, ProbeState::Succeeded | ProbeState::Failed) {
            self.pending.retain(|t| &t.key != key);
            self.pending.push(Transition {
                key: key.clone(),
                state: state.clone(),
                message: message.clone(),
            });
        }
        let last_transition_time = match previous {
            Some(p) if !changed => p.last_transition_time,
            _ => now,
        };
        self.entries.insert(
            key.clone(),
            Published {
                container_id: container_id.to_string(),
                state,
                message,
                last_probe_time: now,
                last_transition_time,
            },
        );
    }

    /// Records that `key` now runs in a new container: its result is Unknown until probed.
    pub fn new_container(&mut self, key: &ProbeKey, container_id: &str, now: Timestamp) {
        if self
            .entries
            .get(key)
            .is_some_and(|p| p.container_id != container_id)
        {
            self.record(key, container_id, ProbeState::Unknown, "", now);
        }
    }

    /// Forgets the probes not in `spec`.
    pub fn retain(&mut self, spec: &NodePodProbeSpec) {
        let before = self.entries.len();
        self.entries.retain(|(uid, name), _| {
            spec.pod_probes
                .iter()
                .any(|p| &p.uid == uid && p.probes.iter().any(|c| &c.name == name))
        });
        self.pending.retain(|t| self.entries.contains_key(&t.key));
        if self.entries.len() != before {
            self.dirty = true;
        }
    }

    /// The result of one probe.
    pub fn get(&self, key: &ProbeKey) -> Option<&Published> {
        self.entries.get(key)
    }

    /// Whether a write is due: something changed, or `since_last_write` reached [`REFRESH`].
    pub fn write_due(&self, since_last_write: Duration) -> bool {
        self.dirty || since_last_write >= REFRESH
    }

    /// The status for `spec`: per pod of the spec (in its order) the results of its probes that
    /// have one, pods without any left out.
    pub fn status(&self, spec: &NodePodProbeSpec) -> NodePodProbeStatus {
        let time = |t: Timestamp| Some(Time(t));
        let pod_probe_statuses = spec
            .pod_probes
            .iter()
            .filter_map(|pod| {
                let probe_states: Vec<ContainerProbeState> = pod
                    .probes
                    .iter()
                    .filter_map(|probe| {
                        let p = self.entries.get(&(pod.uid.clone(), probe.name.clone()))?;
                        Some(ContainerProbeState {
                            name: probe.name.clone(),
                            state: p.state.clone(),
                            last_probe_time: time(p.last_probe_time),
                            last_transition_time: time(p.last_transition_time),
                            message: p.message.clone(),
                        })
                    })
                    .collect();
                (!probe_states.is_empty()).then(|| PodProbeStatus {
                    name: pod.name.clone(),
                    namespace: pod.namespace.clone(),
                    uid: pod.uid.clone(),
                    probe_states,
                })
            })
            .collect();
        NodePodProbeStatus { pod_probe_statuses }
    }

    /// Taken when a write starts: the transitions it announces (for events), and a clean slate.
    pub fn written(&mut self) -> Vec<Transition> {
        self.dirty = false;
        std::mem::take(&mut self.pending)
    }

    /// A write that failed: its transitions are pending again (unless a newer one replaced them)
    /// and the status is due.
    pub fn restore(&mut self, transitions: Vec<Transition>) {
        self.dirty = true;
        let newer = std::mem::take(&mut self.pending);
        let mut restored: Vec<Transition> = transitions
            .into_iter()
            .filter(|t| !newer.iter().any(|n| n.key == t.key) && self.entries.contains_key(&t.key))
            .collect();
        restored.extend(newer);
        self.pending = restored;
    }
}

#[cfg(test)]
mod tests;
