//! The pure decision cores of the kruise-rs controllers: objects and a clock in, data out (actions, a
//! status, when to look again). No IO, no async, no Kubernetes client; the loops in the binary's
//! `src/controllers/` gather the inputs from their caches and carry the decisions out.
//!
//! One module per controller family:
//!
//! - [`advancedcronjob`]: the AdvancedCronJob planner (`pkg/controller/advancedcronjob`; docs/advancedcronjob.md).
//! - [`broadcastjob`]: the BroadcastJob planner (`pkg/controller/broadcastjob`; docs/broadcastjob.md).
//! - [`cloneset`]: the CloneSet planner (`pkg/controller/cloneset`; docs/cloneset-controller.md).
//! - [`daemonset`]: the Advanced DaemonSet planner (`pkg/controller/daemonset`; docs/advanced-daemonset.md).
//! - [`ephemeraljob`]: the EphemeralJob planner (`pkg/controller/ephemeraljob`; docs/ephemeraljob.md).
//! - [`persistentpodstate`]: PersistentPodState pod states and auto-generation
//!   (`pkg/controller/persistentpodstate`; docs/persistentpodstate.md).
//! - [`pod_probe_marker`] and [`node_pod_probe`]: PodProbeMarker probes placed in NodePodProbes and
//!   their results marked on pods (`pkg/controller/{podprobemarker,nodepodprobe}`; docs/podprobemarker.md).
//! - [`pub_status`]: PodUnavailableBudget status (`pkg/controller/podunavailablebudget`).
//! - [`resource_distribution`]: ResourceDistribution copies and status
//!   (`pkg/controller/resourcedistribution`; docs/resource-distribution.md).
//! - [`sidecarset`]: SidecarSet status and in-place sidecar upgrades (`pkg/controller/sidecarset`).
//! - [`statefulset`]: the Advanced StatefulSet planner (`pkg/controller/statefulset`;
//!   docs/advanced-statefulset.md#controller).
//! - [`workload_spread`]: WorkloadSpread subset status, pod adoption, deletion cost and rescheduling
//!   (`pkg/controller/workloadspread`).
//!
//! Shared by the families (and by the workload controllers to come):
//!
//! - the writes a workload planner asks for ([`Action`]) and the loop's memory of them
//!   ([`Expectations`]);
//! - questions about one pod ([`pods`]), int-or-percent fields ([`int_or_percent`], on `kruise-core`'s
//!   rule), ControllerRevision hashing and naming ([`history`]), timestamps ([`rfc3339`]);
//! - in-place update ([`inplace`]), lifecycle hooks ([`lifecycle`]) and the update scatter order
//!   ([`scatter`]).
//!
//! Label selectors are `kruise-core`'s.

pub mod action;
pub mod advancedcronjob;
pub mod broadcastjob;
pub mod cloneset;
pub mod container_recreate_request;
pub mod daemonset;
pub mod ephemeraljob;
pub mod expectations;
pub mod history;
pub mod image_list_pull_job;
pub mod image_pull_job;
pub mod inplace;
pub mod int_or_percent;
pub mod lifecycle;
pub mod node_image;
pub mod node_pod_probe;
pub mod persistentpodstate;
pub mod pod_probe_marker;
pub mod pods;
pub mod pub_status;
pub mod resource_distribution;
pub mod rfc3339;
pub mod scatter;
pub mod sidecarset;
pub mod statefulset;
pub mod uniteddeployment;
pub mod workload_spread;

pub use action::Action;
pub use expectations::Expectations;
