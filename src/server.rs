//! `kruise serve`: the webhooks over HTTPS, metrics and probes over plain HTTP, graceful shutdown.

mod activity;
pub mod connections;
mod error_bodies;
pub mod events;
pub mod health;
pub mod metrics;
pub mod router;
pub mod tls;

use std::{net::SocketAddr, sync::Arc, time::Duration};

use std::future::IntoFuture as _;

use anyhow::Context as _;
use axum::{Router, http::StatusCode, response::IntoResponse, routing::get};
use kruise_certs::CertConfig;
use kruise_webhooks::MemoryView;
use time::OffsetDateTime;

use crate::{
    admission::{Admission, StateSource},
    certificates::{CertManager, CertStore},
    cli::{CertMode, ServeArgs, ServingLimits},
    cluster::{CaBundlePublisher, CertSecret, ClusterCache, LeaderElector},
    controllers, objects,
};
use health::Readiness;
use metrics::Metrics;

/// Shared by every request.
pub struct App {
    pub admission: Admission,
    pub metrics: Arc<Metrics>,
    pub readiness: Arc<Readiness>,
    /// Where decisions' events go.
    pub events: events::EventSink,
    /// Bounds on each request.
    pub requests: router::RequestLimits,
}

/// A started server.
pub struct Running {
    /// Where the HTTPS webhooks listen.
    pub webhook_addr: SocketAddr,
    /// Where /metrics, /healthz and /readyz listen.
    pub metrics_addr: SocketAddr,
    /// Starts the drain of the webhook port.
    pub shutdown: connections::Shutdown,
    /// Ends when the webhook server has stopped.
    pub done: tokio::task::JoinHandle<std::io::Result<()>>,
    /// The shared state (tests read metrics and certificates through it).
    pub app: Arc<App>,
    pub certs: Arc<CertManager>,
    /// The certificate loop, and in a cluster the caches' start-up and the controllers.
    background: Vec<tokio::task::JoinHandle<()>>,
}

impl Running {
    /// Stops the background loops, then serving (in-flight reviews get `grace`).
    pub async fn stop(self, grace: Duration) {
        for task in &self.background {
            task.abort();
        }
        self.drain(grace);
        let _ = self.done.await;
    }

    /// Reports unready, then drains the webhook port: requests that arrive within `grace` are answered.
    pub fn drain(&self, grace: Duration) {
        self.app.readiness.set_shutting_down();
        self.shutdown.drain(grace);
    }
}

/// What an embedding program hands `start` instead of taking it from the environment: the
/// playground passes its own client and a port it bound before the cluster was told about it.
#[derive(Default)]
pub struct Provided {
    /// The cluster's client (else in-cluster configuration or `KUBECONFIG`); ignored with `--objects`.
    pub client: Option<kube::Client>,
    /// An already bound webhook port (else `--bind-address`:`--port`).
    pub listener: Option<std::net::TcpListener>,
    /// Limits and timeouts of the webhook port (`kruise serve`'s flags; their defaults otherwise).
    pub limits: ServingLimits,
    /// What the controllers read as now: the system clock, except in the playground with a manual
    /// clock (`kruise serve` has no way to set another).
    pub clock: crate::clock::Clock,
}

/// Certificate parameters from the command line.
pub fn cert_config(args: &ServeArgs) -> CertConfig {
    let mut config = CertConfig::for_service(&args.service_name, &args.namespace);
    config.ca_validity = time::Duration::days(i64::from(args.ca_validity_days));
    config.leaf_validity = time::Duration::days(i64::from(args.cert_validity_days));
    config.rotation_dwell = time::Duration::seconds(i64::from(args.ca_rotation_dwell_seconds));
    config
}

/// Builds the in-memory state of standalone mode from `--objects`, one object at a time. Objects that
/// do not decode as their kind are all reported at once (file, document, field path), and refused.
pub fn load_view(paths: &[std::path::PathBuf]) -> anyhow::Result<MemoryView> {
    let mut view = MemoryView::default();
    let mut bad = Vec::new();
    objects::for_each_located(paths, &mut |object, at| {
        if let Err(e) = view.add(object) {
            bad.push(format!("{at}: {e}"));
        }
        Ok::<(), objects::ObjectsError>(())
    })?;
    if !bad.is_empty() {
        anyhow::bail!(
            "{} object(s) cannot be decoded:\n  {}",
            bad.len(),
            bad.join("\n  ")
        );
    }
    Ok(view)
}

/// Starts everything and returns once the webhook port is listening.
pub async fn start(args: ServeArgs) -> anyhow::Result<Running> {
    start_with(args, Provided::default()).await
}

/// [`start`] with a client and a webhook port provided by the caller.
pub async fn start_with(args: ServeArgs, provided: Provided) -> anyhow::Result<Running> {
    let metrics = Arc::new(Metrics::new());
    let standalone = !args.objects.is_empty();
    let readiness = Arc::new(Readiness::new(!standalone));
    let metrics_listener = tokio::net::TcpListener::bind(args.metrics_addr)
        .await
        .with_context(|| format!("cannot listen on --metrics-addr {}", args.metrics_addr))?;
    let metrics_addr = metrics_listener.local_addr()?;
    tracing::info!(%metrics_addr, "probes listening");
    // The probes port opens first and lives as long as the process: alive (and unready, with the
    // reason) while the API server cannot be reached or certificates are not loaded yet, and still
    // answering while reviews drain.
    tokio::spawn(
        axum::serve(
            metrics_listener,
            probes_router(metrics.clone(), readiness.clone()),
        )
        .into_future(),
    );
    let mut background = Vec::new();
    let (state, store) = if standalone {
        let view = load_view(&args.objects)?;
        tracing::info!(
            namespaces = view.kinds.namespaces.len(),
            pods = view.kinds.pods.len(),
            "standalone: cluster state loaded from files"
        );
        let store = match args.cert_mode {
            CertMode::SelfSigned => CertStore::Dir(args.cert_dir.clone()),
            CertMode::External => CertStore::External(args.cert_dir.clone()),
        };
        (StateSource::Memory(Box::new(std::sync::RwLock::new(view))), store)
    } else {
        let (state, store, caches) =
            cluster_state(&args, &readiness, &metrics, provided.client, provided.clock).await?;
        background.push(caches);
        (state, store)
    };
    let admission = Admission::new(state, args.settings());
    let certs = Arc::new(CertManager::new(
        cert_config(&args),
        store,
        metrics.clone(),
        readiness.clone(),
    ));
    let rustls = first_certificate(&certs, standalone).await?;
    background.push(tokio::spawn(certs.clone().run()));

    let events = match &admission.state {
        StateSource::Cluster(cache) => events::EventSink::cluster(cache.client().clone(), instance_name()),
        StateSource::Memory(_) => events::EventSink::Log,
    };
    let limits = provided.limits;
    let app = Arc::new(App {
        admission,
        metrics,
        readiness,
        events,
        requests: router::RequestLimits::new(&limits),
    });
    if standalone {
        background.push(tokio::spawn(expire_records(app.clone())));
    }
    let addr = SocketAddr::new(args.bind_address, args.port);
    let listener = match provided.listener {
        Some(listener) => {
            listener.set_nonblocking(true)?;
            tokio::net::TcpListener::from_std(listener).context("the provided webhook listener")?
        }
        None => tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?,
    };
    let webhook_addr = listener.local_addr()?;
    let shutdown = connections::Shutdown::default();
    let done = tokio::spawn(connections::serve(
        listener,
        rustls,
        router::router(app.clone()),
        connections::Limits {
            max_connections: limits.max_connections,
            handshake_timeout: limits.handshake_timeout,
            header_read_timeout: limits.header_read_timeout,
            idle_timeout: limits.idle_timeout,
            ..connections::Limits::default()
        },
        app.metrics.clone(),
        shutdown.clone(),
    ));
    tracing::info!(%webhook_addr, %metrics_addr, standalone, "kruise webhook server listening");
    Ok(Running {
        webhook_addr,
        metrics_addr,
        shutdown,
        done,
        app,
        certs,
        background,
    })
}

/// How often standalone state drops the WorkloadSpread and budget records that are past their timeouts.
const EXPIRY_PERIOD: Duration = Duration::from_secs(5);

/// Standalone: what the controllers do to admission's records in a cluster ([`Admission::expire_records`]),
/// so records of pods that never show up neither hold replicas nor grow without bound.
async fn expire_records(app: Arc<App>) {
    let mut tick = tokio::time::interval(EXPIRY_PERIOD);
    loop {
        tick.tick().await;
        let dropped = app.admission.expire_records(k8s_openapi::jiff::Timestamp::now());
        if dropped > 0 {
            tracing::debug!(dropped, "expired WorkloadSpread and budget records");
        }
    }
}

/// Loads the first certificate. Standalone fails fast; in a cluster the API may not be reachable yet,
/// so retry (the pod stays unready meanwhile).
async fn first_certificate(
    certs: &CertManager,
    standalone: bool,
) -> anyhow::Result<axum_server::tls_rustls::RustlsConfig> {
    let mut delay = Duration::from_millis(500);
    loop {
        match certs.sync(OffsetDateTime::now_utc()).await {
            Ok(()) => break,
            Err(e) if standalone => return Err(e).context("cannot load webhook certificates"),
            Err(e) => {
                tracing::warn!(error = %e, "cannot load webhook certificates yet; retrying");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(30));
            }
        }
    }
    certs
        .rustls_config()
        .await
        .context("no certificate after a successful sync")
}

/// This replica's name: `POD_NAME`, else `HOSTNAME`, else `kruise-<pid>`.
fn instance_name() -> String {
    std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| format!("kruise-{}", std::process::id()))
}

/// Cluster mode: caches, the certificate Secret, leader election.
async fn cluster_state(
    args: &ServeArgs,
    readiness: &Arc<Readiness>,
    metrics: &Metrics,
    client: Option<kube::Client>,
    clock: crate::clock::Clock,
) -> anyhow::Result<(StateSource, CertStore, tokio::task::JoinHandle<()>)> {
    let client = match client {
        Some(client) => client,
        None => kube::Client::try_default().await.context(
            "no cluster configuration (in-cluster or KUBECONFIG); use --objects to run standalone",
        )?,
    };
    let cache = ClusterCache::start_counting(&client, &args.namespace, metrics.objects_skipped.clone());
    let identity = instance_name();
    let leading = LeaderElector::new(client.clone(), &args.namespace, "kruise-rs-leader", &identity).spawn();
    let synced = cache.clone();
    let ready = readiness.clone();
    let controller_client = client.clone();
    let uninjected_pods = metrics.sidecarset_uninjected_pods.clone();
    let pass_durations = metrics.pass_durations.clone();
    let settings = args.settings();
    let tuning = controllers::Tuning {
        node_image_creation_delay: args.nodeimage_creation_delay,
        daemon_config_namespace: args.daemon_config_namespace.clone(),
        ..controllers::Tuning::default()
    };
    let caches = tokio::spawn(async move {
        if synced.wait_until_ready().await.is_ok() {
            tracing::info!("cluster caches synced");
            ready.set_caches_synced();
            // Controllers decide from the caches, so they start (on the leader) only once those are
            // complete: an empty cache would read as "no pods" and prune PUB records.
            let context = controllers::Context {
                client: controller_client,
                view: Arc::new(synced),
                uninjected_pods,
                pass_durations,
                settings,
                clock,
                tuning,
            };
            // Runs until this task is aborted ([`Running::stop`]), which stops the controllers.
            controllers::run_while_leading(context, leading).await;
        }
    });
    let store = match args.cert_mode {
        CertMode::SelfSigned => {
            let crd_names = kruise_api::crds()
                .iter()
                .filter_map(|c| c.metadata.name.clone())
                .collect();
            let publisher = CaBundlePublisher::new(client.clone(), crd_names);
            let secret = CertSecret::new(client, &args.namespace, &args.secret_name, publisher);
            CertStore::Secret(Box::new(secret))
        }
        CertMode::External => CertStore::External(args.cert_dir.clone()),
    };
    Ok((StateSource::Cluster(cache), store, caches))
}

/// /metrics, /healthz and /readyz.
pub fn probes_router(metrics: Arc<Metrics>, readiness: Arc<Readiness>) -> Router {
    Router::new()
        .route("/metrics", get(move || async move { metrics.encode() }))
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/readyz",
            get(move || async move {
                match readiness.check() {
                    Ok(()) => (StatusCode::OK, "ok").into_response(),
                    Err(reason) => (StatusCode::SERVICE_UNAVAILABLE, reason).into_response(),
                }
            }),
        )
}

/// Runs until SIGTERM or Ctrl-C, then drains: unready first, in-flight and arriving reviews answered,
/// keep-alive connections closed once idle, exit within `--shutdown-grace`.
pub async fn run(args: ServeArgs, limits: ServingLimits) -> anyhow::Result<()> {
    raise_open_files_limit(limits.max_connections);
    let grace = limits.shutdown_grace;
    let provided = Provided {
        limits,
        ..Provided::default()
    };
    let mut running = start_with(args, provided).await?;
    tokio::select! {
        () = shutdown_signal() => {}
        ended = &mut running.done => {
            ended.context("server task failed")?.context("server failed")?;
            return Ok(());
        }
    }
    tracing::info!(
        grace_seconds = grace.as_secs_f64(),
        "shutting down: draining webhook connections"
    );
    running.drain(grace);
    running
        .done
        .await
        .context("server task failed")?
        .context("server failed")?;
    tracing::info!("stopped");
    Ok(())
}

/// Raises the soft limit on open files to the hard limit: every connection is a file, and a low soft
/// limit (often 1024, sometimes 256) would stall TLS handshakes long before `--max-connections`.
fn raise_open_files_limit(max_connections: usize) {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) if limit < max_connections as u64 + 64 => tracing::warn!(
            limit,
            max_connections,
            "the open files limit is below --max-connections; new connections will fail first"
        ),
        Ok(limit) => tracing::info!(limit, "open files limit"),
        Err(e) => tracing::warn!(error = %e, "cannot raise the open files limit"),
    }
}

pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(term) => term,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! {
            _ = ctrl_c => {},
            _ = term.recv() => {},
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}
