//! `kruise serve` in cluster mode against the playground: the server's own start-up
//! ([`crate::server::start_with`]) with the playground's client and an already bound webhook port.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use kruise_webhooks::Settings;

use futures::{StreamExt as _, stream::BoxStream};
use k8s_openapi::jiff::Timestamp;

use super::{NAMESPACE, PlaygroundError, SERVICE};
use crate::clock::{Clock, TimeSource};
use crate::{
    cli::{CertMode, ServeArgs},
    server::{self, Provided, Running, health::Readiness},
};

/// The running kruise-rs.
pub struct Kruise {
    running: Running,
}

impl Kruise {
    /// Caches synced and certificate loaded.
    pub fn readiness(&self) -> &Arc<Readiness> {
        &self.running.app.readiness
    }

    /// Where /metrics, /healthz and /readyz listen.
    pub fn metrics_addr(&self) -> SocketAddr {
        self.running.metrics_addr
    }

    /// Stops the controllers and the certificate loop, then serving.
    pub async fn stop(self) {
        self.running.stop(Duration::from_secs(1)).await;
    }
}

/// The playground's manual clock as the controllers' time source.
struct PlaygroundTime(kruise_playground::Clock);

impl TimeSource for PlaygroundTime {
    fn now(&self) -> Timestamp {
        let now = self.0.now();
        Timestamp::from_nanosecond(now.unix_timestamp_nanos()).unwrap_or_else(|_| Timestamp::now())
    }

    fn jumps(&self) -> BoxStream<'static, ()> {
        futures::stream::unfold(self.0.subscribe(), |mut moves| async move {
            moves.changed().await.ok().map(|()| ((), moves))
        })
        .boxed()
    }
}

/// The arguments `kruise serve` would get in the playground's cluster.
fn args(settings: Settings, nodeimage_creation_delay: std::time::Duration) -> ServeArgs {
    ServeArgs {
        port: 0,
        bind_address: [127, 0, 0, 1].into(),
        metrics_addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        objects: vec![],
        cert_dir: std::env::temp_dir(),
        cert_mode: CertMode::SelfSigned,
        ca_validity_days: 3650,
        cert_validity_days: 365,
        ca_rotation_dwell_seconds: 120,
        namespace: NAMESPACE.into(),
        service_name: SERVICE.into(),
        secret_name: "kruise-webhook-certs".into(),
        disable_deletion_protection: false,
        enable_crd_cascading_protection: false,
        feature_gates: Some(*settings.gates()),
        nodeimage_creation_delay,
        daemon_config_namespace: crate::controllers::DEFAULT_DAEMON_CONFIG_NAMESPACE.into(),
    }
}

/// Starts the webhook server, caches, leader election, controllers and certificates.
pub async fn start(
    client: kube::Client,
    listener: std::net::TcpListener,
    settings: Settings,
    clock: kruise_playground::Clock,
    nodeimage_creation_delay: std::time::Duration,
) -> Result<Kruise, PlaygroundError> {
    let clock = if clock.is_manual() {
        Clock::from_source(Arc::new(PlaygroundTime(clock)))
    } else {
        Clock::system()
    };
    let provided = Provided {
        client: Some(client),
        listener: Some(listener),
        clock,
        ..Provided::default()
    };
    let running = server::start_with(args(settings, nodeimage_creation_delay), provided)
        .await
        .map_err(PlaygroundError::Serve)?;
    Ok(Kruise { running })
}
