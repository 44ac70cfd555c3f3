//! The kubelets of the playground's nodes: pods bound to a node get their containers and the status a
//! kubelet reports. Two runtimes, one per playground:
//!
//! - [`simulated`] (the default): nothing runs; containers start after a delay and commands "end" as
//!   the `program` module reads them;
//! - [`cri`]: every pod is a real pod sandbox with real containers in one containerd (CRI v1), which
//!   all the playground's nodes share (docs/playground.md, "Real containers").

pub mod cri;
mod ephemeral;
mod pod_status;
pub mod simulated;

use std::sync::Arc;
use std::time::Duration;

use crate::api::Api;

pub use pod_status::{image_id, unpullable};

/// The kubelet of every node, on one runtime.
#[derive(Debug)]
pub enum Kubelet {
    /// Simulated containers.
    Simulated(simulated::Simulated),
    /// Real containers through CRI.
    Cri(Arc<cri::CriKubelet>),
}

impl Kubelet {
    /// The simulated kubelet, starting containers after `delay`.
    pub fn new(delay: Duration) -> Self {
        Kubelet::Simulated(simulated::Simulated::new(delay))
    }

    /// One pass: every pod bound to a node gets what it needs and its status reported.
    pub async fn sync(&self, api: &Arc<Api>) {
        match self {
            Kubelet::Simulated(k) => k.sync(api).await,
            Kubelet::Cri(k) => k.sync(api).await,
        }
    }
}
