//! The simulated data plane, one task beside the garbage collector: the node lifecycle taints and
//! taint eviction,
//! the Deployment, ReplicaSet, StatefulSet, DaemonSet, CronJob and Job controllers, the volume
//! binder, the scheduler and the kubelets of `nodes` Ready nodes (simulated or on a real runtime). Passes run on every store
//! change (at most one per 10 ms, or per the last pass's duration when longer) and every 50 ms (so
//! container start delays are honoured closely).

use std::sync::Arc;
use std::time::Duration;

use crate::api::Api;
use crate::kubelet::Kubelet;
use crate::{
    cronjob, daemonset, deployment, job, node_lifecycle, scheduler, statefulset, taint_eviction, volumes,
};

/// The least time between two passes.
pub const MIN_PASS_INTERVAL: Duration = Duration::from_millis(10);

/// Creates the nodes, then runs the controllers, scheduler and kubelet until aborted.
pub async fn run(api: Arc<Api>, nodes: usize, kubelet: Kubelet) {
    scheduler::create_nodes(&api, nodes).await;
    loop {
        let notified = api.store.changed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let started = std::time::Instant::now();
        node_lifecycle::sync(&api).await;
        taint_eviction::sync(&api).await;
        deployment::deployments(&api).await;
        deployment::replica_sets(&api).await;
        statefulset::sync(&api).await;
        daemonset::sync(&api).await;
        cronjob::sync(&api).await;
        job::sync(&api).await;
        volumes::sync(&api).await;
        scheduler::schedule(&api).await;
        kubelet.sync(&api).await;
        // A burst of writes costs one pass, not one each. A pass walks every object, so with many
        // (50,000 pods) it waits as long as it took: the simulation leaves at least half a core to
        // serving the API, instead of starving the clients it simulates for.
        tokio::time::sleep(MIN_PASS_INTERVAL.max(started.elapsed())).await;
        tokio::select! {
            _ = notified => {}
            _ = tokio::time::sleep(Duration::from_millis(50)) => {}
        }
    }
}
