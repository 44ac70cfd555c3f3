//! Which of the agent's workers `--feature-gates` leaves on (the gates and parser of `kruise serve`,
//! `kruise_core::feature_gates`; docs/node-agent.md#feature-gates). `KruiseDaemon` off turns every
//! worker off (OpenKruise resolves the gates that depend on it off as well); the others each turn one
//! worker off. The runtime search and the health endpoints always run.

use kruise_core::{FeatureGates, Gate};

/// A worker the agent starts when its gate is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Worker {
    /// Pulls the images of this node's NodeImage (`ImagePullJobGate`).
    ImagePuller,
    /// Carries out this node's ContainerRecreateRequests (`KruiseDaemon`).
    ContainerRecreate,
    /// Reports the pods' runtime containers (`DaemonWatchingPod`).
    ContainerMeta,
    /// Restarts containers whose env fed from metadata is stale (`InPlaceUpdateEnvFromMetadata`).
    EnvRestarts,
    /// Runs the PodProbeMarker probes of this node's NodePodProbe (`PodProbeMarkerGate`).
    PodProbe,
}

impl Worker {
    /// Every worker, in start order.
    pub const ALL: [Worker; 5] = [
        Worker::ImagePuller,
        Worker::ContainerRecreate,
        Worker::ContainerMeta,
        Worker::EnvRestarts,
        Worker::PodProbe,
    ];

    /// The gate that must be on (after OpenKruise's dependencies are applied).
    pub fn gate(self) -> Gate {
        match self {
            Worker::ImagePuller => Gate::ImagePullJobGate,
            Worker::ContainerRecreate => Gate::KruiseDaemon,
            Worker::ContainerMeta => Gate::DaemonWatchingPod,
            Worker::EnvRestarts => Gate::InPlaceUpdateEnvFromMetadata,
            Worker::PodProbe => Gate::PodProbeMarkerGate,
        }
    }

    /// What the log calls it.
    pub fn describe(self) -> &'static str {
        match self {
            Worker::ImagePuller => "image pre-pull (NodeImage)",
            Worker::ContainerRecreate => "container recreation (ContainerRecreateRequest)",
            Worker::ContainerMeta => "container meta reporting",
            Worker::EnvRestarts => "restarts for env fed from metadata",
            Worker::PodProbe => "PodProbeMarker probes (NodePodProbe)",
        }
    }

    /// Whether `gates` leave it on. `KruiseDaemon` off turns everything off; the env restarts are part
    /// of the container meta worker.
    pub fn on(self, gates: &FeatureGates) -> bool {
        let within = match self {
            Worker::EnvRestarts => Worker::ContainerMeta.on(gates),
            _ => true,
        };
        within && gates.enabled(Gate::KruiseDaemon) && gates.enabled(self.gate())
    }
}

/// The workers `gates` turn off, each with the gate that did it (`KruiseDaemon` when that is off).
pub fn off(gates: &FeatureGates) -> Vec<(Worker, Gate)> {
    Worker::ALL
        .into_iter()
        .filter(|w| !w.on(gates))
        .map(|w| {
            let gate = if !gates.enabled(Gate::KruiseDaemon) {
                Gate::KruiseDaemon
            } else if w == Worker::EnvRestarts && !Worker::ContainerMeta.on(gates) {
                Gate::DaemonWatchingPod
            } else {
                w.gate()
            };
            (w, gate)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gates(spec: &str) -> FeatureGates {
        FeatureGates::parse(spec).unwrap()
    }

    #[test]
    fn by_default_every_worker_runs() {
        assert_eq!(off(&FeatureGates::default()), vec![]);
    }

    #[test]
    fn each_gate_turns_its_own_worker_off() {
        assert_eq!(
            off(&gates("ImagePullJobGate=false")),
            vec![(Worker::ImagePuller, Gate::ImagePullJobGate)]
        );
        assert_eq!(
            off(&gates("PodProbeMarkerGate=false")),
            vec![(Worker::PodProbe, Gate::PodProbeMarkerGate)]
        );
        assert_eq!(
            off(&gates("InPlaceUpdateEnvFromMetadata=false")),
            vec![(Worker::EnvRestarts, Gate::InPlaceUpdateEnvFromMetadata)]
        );
        assert_eq!(
            off(&gates("DaemonWatchingPod=false, PodProbeMarkerGate=true")),
            vec![
                (Worker::ContainerMeta, Gate::DaemonWatchingPod),
                (Worker::EnvRestarts, Gate::DaemonWatchingPod)
            ]
        );
    }

    #[test]
    fn kruise_daemon_off_turns_every_worker_off() {
        let all: Vec<_> = Worker::ALL.into_iter().map(|w| (w, Gate::KruiseDaemon)).collect();
        assert_eq!(off(&gates("KruiseDaemon=false")), all);
        // Even a dependent gate asked on stays off.
        assert_eq!(off(&gates("KruiseDaemon=false,ImagePullJobGate=true")), all);
    }

    #[test]
    fn unknown_gates_are_refused_with_kubernetes_wording() {
        assert_eq!(
            FeatureGates::parse("KruiseDaemon=true,Nope=false")
                .unwrap_err()
                .to_string(),
            "unrecognized feature gate: Nope"
        );
    }
}
