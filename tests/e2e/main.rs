//! End-to-end tests of kruise-rs: the server, the controllers, the node agent and the playground, driven as users drive them.
//!
//! One test binary (each former binary is a module): every binary links the whole
//! workspace, so one instead of dozens keeps the build's disk and link time small.

mod admit;
mod admit_stored_objects;
mod cluster_advanced_statefulset;
mod cluster_certs;
mod cluster_events;
mod cluster_group_commit;
mod cluster_owner_read;
mod cluster_pub_race;
mod cluster_refusals;
mod common;
mod completion;
mod controllers_cloneset;
mod controllers_leader;
mod controllers_pods;
mod controllers_pub;
mod controllers_statefulset;
mod controllers_throttled;
mod controllers_workload_spread;
mod daemon;
mod daemon_image_pull;
mod external_certs;
mod limits;
mod manifests;
mod playground_advancedcronjob;
mod playground_annotations;
mod playground_broadcastjob;
mod playground_ca_rotation;
mod playground_cloneset;
mod playground_conversion;
mod playground_cri;
mod playground_crr;
mod playground_crr_kubectl;
mod playground_daemonset;
mod playground_e2e;
mod playground_envmeta;
mod playground_ephemeraljob;
mod playground_failover;
mod playground_image_pull;
mod playground_install;
mod playground_kubectl;
mod playground_nodeimage;
mod playground_persistentpodstate;
mod playground_probe;
mod playground_resource_distribution;
mod playground_sidecarset;
mod playground_sidecarset_audit;
mod playground_sidecarset_holds;
mod playground_statefulset;
mod playground_uniteddeployment;
mod rotation;
mod shutdown;
mod tls;
mod unreachable_api;
