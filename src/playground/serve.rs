//! `kruise serve` in cluster mode against the playground, assembled from the server's own parts
//! (the same ones `server::start` uses) with the playground's client instead of a kubeconfig
//! from the environment, and an already bound webhook port.

use std::{sync::Arc, time::Duration};

use axum_server::{Handle, accept::NoDelayAcceptor, tls_rustls::RustlsAcceptor};
use kruise_certs::CertConfig;
use kruise_webhooks::Settings;
use time::OffsetDateTime;

use super::{NAMESPACE, PlaygroundError, SERVICE};
use crate::{
    admission::{Admission, StateSource},
    certificates::{CertManager, CertStore},
    cluster::{CaBundlePublisher, CertSecret, ClusterCache, LeaderElector},
    controllers,
    server::{App, events::EventSink, health::Readiness, metrics::Metrics, router},
};

/// The running kruise-rs.
pub struct Kruise {
    /// Caches synced and certificate loaded.
    pub readiness: Arc<Readiness>,
    handle: Handle<std::net::SocketAddr>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Kruise {
    /// Stops serving, the controllers and the certificate loop.
    pub async fn stop(self) {
        for task in &self.tasks {
            task.abort();
        }
        self.handle.graceful_shutdown(Some(Duration::from_secs(1)));
        let _ = self.server.await;
    }
}

/// Starts the webhook server, caches, leader election, controllers and certificates.
pub async fn start(
    client: kube::Client,
    listener: std::net::TcpListener,
    settings: Settings,
) -> Result<Kruise, PlaygroundError> {
    let metrics = Arc::new(Metrics::new());
    let readiness = Arc::new(Readiness::new(true));
    let cache = ClusterCache::start(&client, NAMESPACE);
    let identity = format!("kruise-playground-{}", std::process::id());
    let leading = LeaderElector::new(client.clone(), NAMESPACE, "kruise-rs-leader", &identity).spawn();
    let (synced, ready, controller_client) = (cache.clone(), readiness.clone(), client.clone());
    let caches = tokio::spawn(async move {
        if synced.wait_until_ready().await.is_ok() {
            ready.set_caches_synced();
            let context = controllers::Context {
                client: controller_client,
                view: Arc::new(synced),
            };
            // Runs until aborted with this task's handle.
            let _ = controllers::spawn(context, leading).await;
        }
    });
    let crd_names = kruise_api::crds()
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    let events = EventSink::cluster(client.clone(), identity.clone());
    let publisher = CaBundlePublisher::new(client.clone(), crd_names);
    let secret = CertSecret::new(client, NAMESPACE, "kruise-webhook-certs", publisher);
    let certs = Arc::new(CertManager::new(
        CertConfig::for_service(SERVICE, NAMESPACE),
        CertStore::Secret(Box::new(secret)),
        metrics.clone(),
        readiness.clone(),
    ));
    certs.sync(OffsetDateTime::now_utc()).await?;
    let rustls = certs
        .rustls_config()
        .await
        .ok_or_else(|| PlaygroundError::NotReady(Duration::ZERO, "no certificate after a sync"))?;
    let cert_loop = tokio::spawn(certs.clone().run());
    let app = Arc::new(App {
        admission: Admission {
            state: StateSource::Cluster(cache),
            settings,
        },
        metrics,
        readiness: readiness.clone(),
        events,
    });
    let handle = Handle::new();
    let acceptor = RustlsAcceptor::new(rustls)
        .handshake_timeout(Duration::from_secs(10))
        .acceptor(NoDelayAcceptor::new());
    let server = axum_server::from_tcp(listener)?
        .acceptor(acceptor)
        .handle(handle.clone())
        .serve(router::router(app).into_make_service());
    let server = tokio::spawn(server);
    handle
        .listening()
        .await
        .ok_or_else(|| PlaygroundError::NotReady(Duration::ZERO, "webhook port not listening"))?;
    Ok(Kruise {
        readiness,
        handle,
        tasks: vec![caches, cert_loop],
        server,
    })
}
