//! The thin controllers, run only by the leader replica:
//!
//! - [`advancedcronjob`]: AdvancedCronJob children (Jobs, BroadcastJobs) on schedule, history, status;
//! - [`broadcastjob`]: BroadcastJob pods (one per eligible node), status and TTL deletion;
//! - [`cloneset`]: CloneSet pods, revisions, PVCs and status;
//! - [`pod_readiness`]: initialises the `KruisePodReady` condition of pods that carry that readiness gate;
//! - [`node_image`]: one NodeImage per node, its labels, tag pruning and timeouts (gate `KruiseDaemon`);
//! - [`image_pull_job`]: ImagePullJob tags written into NodeImages, status read back, TTL deletion
//!   (off with `--feature-gates ImagePullJobGate=false`);
//! - [`image_list_pull_job`]: one ImagePullJob per image of an ImageListPullJob, status, TTL;
//! - [`launch_priority`]: the `<pod>-barrier` ConfigMap that releases containers by launch priority;
//! - [`persistentpodstate`]: PersistentPodState pod states (node topology) and the PersistentPodStates
//!   annotated StatefulSets ask for;
//! - [`pub_status`]: PodUnavailableBudget status (counts, pruning of disruptedPods/unavailablePods);
//! - [`resource_distribution`]: ResourceDistribution copies and status (off with
//!   `--feature-gates ResourceDistributionGate=false`);
//! - [`sidecarset`]: SidecarSet status and in-place sidecar image upgrades;
//! - [`pod_probe_marker`], [`node_pod_probe`]: PodProbeMarker probes placed in one NodePodProbe per
//!   Ready node, their results marked on pods (gates `PodProbeMarkerGate` and `KruiseDaemon`);
//! - [`daemonset`]: Advanced DaemonSet pods, revisions and status;
//! - [`container_recreate_request`]: ContainerRecreateRequest timeouts, snapshot, unready drain, TTL
//!   (gate `KruiseDaemon`; the node agent recreates);
//! - [`ephemeraljob`]: EphemeralJob ephemeral containers injected into matching pods, status, TTL;
//! - [`statefulset`]: Advanced StatefulSet pods, claims, revisions and status;
//! - [`uniteddeployment`]: UnitedDeployment subset workloads, revisions and status;
//! - [`workload_spread`]: WorkloadSpread subset status and pod deletion cost.
//!
//! Each controller is a pure planner (crate `kruise-reconcile`, or a `plan` function beside the loop for
//! the per-pod passes) and an implementation of [`control_loop::Reconciler`]: its kind, its trigger
//! watches and a pass that gathers the planner's inputs and carries its decisions out. The shared
//! [`control_loop`] does the rest: trigger watches, waiting for the cache to catch up with them,
//! per-object memory (expectations), requeues and backoff, and status writes carrying the
//! resourceVersion they were computed from (the admission webhooks write the same status documents) —
//! a conflict means re-read and decide again, never overwrite.
//!
//! Related objects are read from the cluster cache the webhooks already keep ([`ControllerView`]), and
//! pod changes trigger passes from that cache's own pod watch, told after the cache shows them: one pod
//! watch and one copy of every pod per process, and a pass never counts a status from a cache older
//! than the change that triggered it.

pub mod advancedcronjob;
pub mod broadcastjob;
pub mod cloneset;
pub mod container_recreate_request;
pub mod control_loop;
pub mod daemonset;
pub mod ephemeraljob;
pub mod image_list_pull_job;
pub mod image_pull_job;
pub mod launch_priority;
pub mod node_image;
pub mod node_pod_probe;
pub mod persistentpodstate;
pub mod pod_probe_marker;
pub mod pod_readiness;
pub mod pods;
pub mod pub_status;
pub mod resource_distribution;
pub mod sidecarset;
pub mod slow_start;
pub mod statefulset;
pub mod triggers;
pub mod uniteddeployment;
pub mod workload_actions;
pub mod workload_spread;
pub mod workloads;

use std::{sync::Arc, time::Duration};

use kruise_webhooks::{ClusterView, MemoryView};
use serde_json::Value;
use tokio::{sync::watch, task::JoinSet};

use kruise_api::PodRecord;

use crate::cluster::{ClusterCache, Reflector};

/// The cluster state controllers read: the webhooks' view, plus a way to hand back objects we just
/// wrote so the webhooks decide from them before the watch delivers them.
pub trait ControllerView: ClusterView + Send + Sync + 'static {
    /// Remembers an object as the API server returned it after our write.
    fn remember(&self, _object: &Value) {}

    /// The watched pods whose changes trigger passes (`None` for a view without watches: no pod
    /// change triggers anything).
    fn watched_pods(&self) -> Option<&Reflector<PodRecord>> {
        None
    }
}

impl ControllerView for ClusterCache {
    fn remember(&self, object: &Value) {
        ClusterCache::remember(self, object);
    }

    fn watched_pods(&self) -> Option<&Reflector<PodRecord>> {
        Some(self.pods())
    }
}

impl ControllerView for MemoryView {}

/// What every controller loop gets.
#[derive(Clone)]
pub struct Context {
    pub client: kube::Client,
    pub view: Arc<dyn ControllerView>,
    /// The `kruise_sidecarset_uninjected_pods` gauge the SidecarSet controller sets.
    pub uninjected_pods: crate::server::metrics::UninjectedPods,
    /// The `kruise_controller_pass_duration_seconds` histograms the control loop observes.
    pub pass_durations: crate::server::metrics::PassDurations,
    /// The feature gates (`ResourceDistributionGate` decides whether that controller runs).
    pub settings: kruise_core::Settings,
    /// What the controllers read as now (the system clock outside the playground).
    pub clock: crate::clock::Clock,
    /// The controllers' tunables (command-line flags).
    pub tuning: Tuning,
}

/// The controllers' tunables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tuning {
    /// How long a node must have been Ready before its NodeImage is created
    /// (`--nodeimage-creation-delay`, OpenKruise's default 30 s).
    pub node_image_creation_delay: std::time::Duration,
    /// Where ImagePullJobs' pull secrets are copied for the node agents (`--daemon-config-namespace`).
    pub daemon_config_namespace: String,
    /// How long one status write of the control loop may take, the kube client's own retries of a
    /// 429 or 503 included ([`control_loop::STATUS_WRITE_BOUND`] by default).
    pub status_write_bound: std::time::Duration,
}

/// The namespace the node agents read pull secrets in: `kruise-daemon`, theirs (OpenKruise:
/// `kruise-daemon-config`).
pub const DEFAULT_DAEMON_CONFIG_NAMESPACE: &str = "kruise-daemon";

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            node_image_creation_delay: kruise_reconcile::node_image::DEFAULT_CREATION_DELAY,
            daemon_config_namespace: DEFAULT_DAEMON_CONFIG_NAMESPACE.into(),
            status_write_bound: control_loop::STATUS_WRITE_BOUND,
        }
    }
}

/// Errors of one reconcile; the error policy requeues with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("API request failed: {0}")]
    Api(#[source] Box<kube::Error>),
    #[error("{0}")]
    Write(#[source] Box<crate::cluster::status_writes::WriteError>),
    /// A write's resourceVersion precondition failed: re-read and decide again.
    #[error("{kind} {namespace}/{name} changed since it was read; deciding again")]
    Conflict {
        kind: String,
        namespace: String,
        name: String,
    },
    /// The API server refused a status write for its own load (429 or 503 after the kube client's
    /// retries) or did not answer within the bound: retried after what it asked for (bounded).
    #[error("{kind} {namespace}/{name}: status write throttled: {message}")]
    Throttled {
        kind: String,
        namespace: String,
        name: String,
        message: String,
        /// The server's `Retry-After`, when it gave one.
        retry_after: Option<Duration>,
    },
    /// The object is gone: nothing to do until it comes back.
    #[error("the object is gone")]
    Gone,
    #[error("invalid {what}: {message}")]
    Invalid { what: &'static str, message: String },
    /// Some writes of a pass failed (the status says which); the pass is retried with backoff.
    #[error("{what}: {message}")]
    Partial { what: &'static str, message: String },
}

impl From<kube::Error> for Error {
    fn from(e: kube::Error) -> Self {
        Error::Api(Box::new(e))
    }
}

/// How long a failed reconcile waits before the next attempt.
pub const ERROR_REQUEUE: Duration = Duration::from_secs(5);

/// Runs the controllers while `leading` reads true: starts them when it turns true, aborts them when it
/// turns false (or when the sender is gone). Webhook serving is unaffected.
pub fn spawn(context: Context, leading: watch::Receiver<bool>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(run_while_leading(context, leading))
}

/// [`spawn`]'s loop, to run inside another task: dropping the future stops the controllers.
pub async fn run_while_leading(context: Context, mut leading: watch::Receiver<bool>) {
    let mut running: Option<JoinSet<()>> = None;
    loop {
        let lead = *leading.borrow_and_update();
        if lead && running.is_none() {
            tracing::info!("leading: starting controllers");
            running = Some(start_all(&context));
        } else if !lead && let Some(mut set) = running.take() {
            tracing::info!("not leading: stopping controllers");
            set.abort_all();
            while set.join_next().await.is_some() {}
        }
        if leading.changed().await.is_err() {
            break;
        }
    }
    if let Some(mut set) = running.take() {
        set.abort_all();
        while set.join_next().await.is_some() {}
    }
}

/// Starts every controller; dropping or aborting the set stops them.
pub fn start_all(context: &Context) -> JoinSet<()> {
    let mut set = JoinSet::new();
    set.spawn(advancedcronjob::run(context.clone()));
    set.spawn(broadcastjob::run(context.clone()));
    set.spawn(cloneset::run(context.clone()));
    set.spawn(daemonset::run(context.clone()));
    set.spawn(ephemeraljob::run(context.clone()));
    set.spawn(pods::run(context.clone()));
    set.spawn(persistentpodstate::run(context.clone()));
    set.spawn(pub_status::run(context.clone()));
    if context
        .settings
        .enabled(kruise_core::Gate::ResourceDistributionGate)
    {
        set.spawn(resource_distribution::run(context.clone()));
    }
    if context.settings.enabled(kruise_core::Gate::KruiseDaemon) {
        set.spawn(node_image::run(context.clone()));
        set.spawn(container_recreate_request::run(context.clone()));
        if context.settings.enabled(kruise_core::Gate::PodProbeMarkerGate) {
            set.spawn(pod_probe_marker::run(context.clone()));
            set.spawn(node_pod_probe::run(context.clone()));
        }
    }
    if context.settings.enabled(kruise_core::Gate::ImagePullJobGate) {
        set.spawn(image_pull_job::run(context.clone()));
        set.spawn(image_list_pull_job::run(context.clone()));
    }
    set.spawn(sidecarset::run(context.clone()));
    set.spawn(statefulset::run(context.clone()));
    set.spawn(uniteddeployment::run(context.clone()));
    set.spawn(workload_spread::run(context.clone()));
    set
}
