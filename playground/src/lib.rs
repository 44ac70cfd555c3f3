//! kruise-playground: an in-process simulated Kubernetes API server for end-to-end tests of
//! kruise-rs with kube-rs clients and the real `kubectl`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let pg = kruise_playground::Playground::start(Default::default()).await?;
//! let client = pg.client().await?;
//! let kubeconfig = pg.write_kubeconfig(std::path::Path::new("/tmp/kubeconfig"))?;
//! # let _ = (client, kubeconfig);
//! pg.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! See `README.md` for what is supported and every simplification.

#![warn(missing_docs)]

pub mod api;
pub mod apply;
pub mod builtin_schemas;
pub mod clock;
pub mod conversion;
pub mod crd;
pub mod cron;
pub mod cronjob;
pub mod daemonset;
pub mod defaults;
pub mod deployment;
pub mod discovery;
pub mod disruption;
pub mod ephemeral;
pub mod error;
pub mod events;
pub mod faults;
pub mod gc;
pub mod handlers;
pub mod job;
pub mod kinds;
pub mod kubeconfig;
pub mod kubelet;
pub mod meta;
pub mod node_lifecycle;
pub mod openapi;
pub mod patch;
pub mod printers;
pub mod program;
pub mod protobuf;
pub mod refusals;
pub mod registry;
pub mod request;
pub mod request_counts;
pub mod resources;
pub mod response;
pub mod restart;
pub mod routes;
pub mod scale;
pub mod scheduler;
pub mod schema;
mod seed;
pub mod selectors;
mod serving;
pub mod simulation;
pub mod statefulset;
pub mod store;
pub mod strategic;
pub mod table;
pub mod taint_eviction;
pub mod tls;
pub mod validate;
pub mod volumes;
pub mod watch;
pub mod webhook;
pub mod workload;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub use api::Api;
pub use api::admission::{AdmissionHook, Attributes, Operation};
pub use clock::{Clock, ClockError};
pub use error::{ApiError, ClientError, StartError};

/// How to start a playground.
#[derive(Clone)]
pub struct PlaygroundOptions {
    /// Listen address; port 0 picks a free port.
    pub addr: SocketAddr,
    /// Watch events retained per resource (older resourceVersions answer 410 Expired).
    pub history_limit: usize,
    /// How often watches with `allowWatchBookmarks=true` get a BOOKMARK.
    pub bookmark_interval: Duration,
    /// How long the simulated kubelet takes to stop a gracefully deleted pod (capped by its grace period).
    pub pod_termination_delay: Duration,
    /// Admission hooks run on every write, before the admission webhooks.
    pub admission: Vec<Arc<dyn AdmissionHook>>,
    /// Where the `clientConfig.service` of every admission webhook resolves to (the webhook
    /// server's local address); `None`: service webhooks cannot be reached (`no such host`).
    pub webhook_address: Option<SocketAddr>,
    /// Simulated Ready nodes. With at least one, the simulated data plane runs too: Deployment
    /// and ReplicaSet controllers, the scheduler and the kubelet (`simulation` module).
    pub nodes: usize,
    /// How long the simulated kubelet takes to start (or restart) a container.
    pub kubelet_delay: Duration,
    /// The clock the built-in controllers read ([`Clock::manual`]: one a test advances).
    pub clock: Clock,
    /// `Some`: the kubelet runs pods as real containers in this CRI runtime (`kubelet::cri`);
    /// `None`: simulated containers.
    pub runtime: Option<kubelet::cri::CriOptions>,
}

impl Default for PlaygroundOptions {
    fn default() -> Self {
        PlaygroundOptions {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            history_limit: 1000,
            bookmark_interval: Duration::from_secs(60),
            pod_termination_delay: Duration::ZERO,
            admission: vec![],
            webhook_address: None,
            nodes: 0,
            kubelet_delay: Duration::from_millis(100),
            clock: Clock::system(),
            runtime: None,
        }
    }
}

impl std::fmt::Debug for PlaygroundOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlaygroundOptions")
            .field("addr", &self.addr)
            .field("history_limit", &self.history_limit)
            .field("bookmark_interval", &self.bookmark_interval)
            .field("pod_termination_delay", &self.pod_termination_delay)
            .field("admission", &self.admission.len())
            .field("webhook_address", &self.webhook_address)
            .field("nodes", &self.nodes)
            .field("kubelet_delay", &self.kubelet_delay)
            .field("clock", &self.clock)
            .field("runtime", &self.runtime)
            .finish()
    }
}

/// A running playground.
#[derive(Debug)]
pub struct Playground {
    addr: SocketAddr,
    ca_pem: String,
    api: Arc<Api>,
    serving: serving::Serving,
    controllers: tokio::task::JoinHandle<()>,
    simulation: Option<tokio::task::JoinHandle<()>>,
    cri: Option<Arc<kubelet::cri::CriKubelet>>,
}

impl Playground {
    /// Starts the API server (HTTPS, self-signed serving certificate for `localhost` and
    /// `127.0.0.1`) and its background controllers.
    pub async fn start(options: PlaygroundOptions) -> Result<Playground, StartError> {
        let cri = match &options.runtime {
            Some(cri) if options.nodes > 0 => Some(kubelet::cri::CriKubelet::start(cri.clone()).await?),
            _ => None,
        };
        let (ca_pem, rustls) = tls::self_signed()?;
        let mut hooks = options.admission.clone();
        hooks.push(Arc::new(webhook::Webhooks {
            service_address: options.webhook_address,
        }));
        let mut api = Api::new(options.history_limit, hooks);
        api.bookmark_interval = options.bookmark_interval;
        api.webhook_address = options.webhook_address;
        api.clock = options.clock.clone();
        let api = Arc::new(api);
        let config = axum_server::tls_rustls::RustlsConfig::from_config(rustls);
        let (serving, addr) = serving::Serving::start(api.clone(), config, options.addr).await?;
        let (gc, disruption) = (
            gc::run(
                api.clone(),
                cri.is_none().then_some(options.pod_termination_delay),
            ),
            disruption::run(api.clone()),
        );
        let controllers = tokio::spawn(async move {
            tokio::join!(gc, disruption);
        });
        let simulation = (options.nodes > 0).then(|| {
            let kubelet = match &cri {
                Some(cri) => kubelet::Kubelet::Cri(cri.clone()),
                None => kubelet::Kubelet::new(options.kubelet_delay),
            };
            tokio::spawn(simulation::run(api.clone(), options.nodes, kubelet))
        });
        Ok(Playground {
            simulation,
            cri,
            addr,
            ca_pem,
            api,
            serving,
            controllers,
        })
    }

    /// Restarts the API server as clients see it (`restart` module): every connection cut, the
    /// port closed for `down`, then serving again on the same port with the same objects.
    pub fn restart(&self, down: Duration) -> Result<u64, restart::RestartError> {
        self.api.restarts.request(down)
    }

    /// The listening address (the same after a restart).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `https://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.addr.port())
    }

    /// The CA certificate (PEM) clients must trust.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The clock the built-in controllers read.
    pub fn clock(&self) -> &Clock {
        &self.api.clock
    }

    /// The server state (store, registry), for in-process controllers and assertions.
    pub fn api(&self) -> &Arc<Api> {
        &self.api
    }

    /// A kubeconfig (YAML) for this playground: trusted CA, a bearer token, namespace `default`.
    pub fn kubeconfig(&self) -> String {
        kubeconfig::render(&self.url(), &self.ca_pem)
    }

    /// Writes [`Self::kubeconfig`] to `path`; returns the path.
    pub fn write_kubeconfig(&self, path: &std::path::Path) -> Result<std::path::PathBuf, ClientError> {
        std::fs::write(path, self.kubeconfig())?;
        Ok(path.to_path_buf())
    }

    /// A kube client for this playground.
    pub async fn client(&self) -> Result<kube::Client, ClientError> {
        let config = kubeconfig::config(&self.kubeconfig()).await?;
        Ok(kube::Client::try_from(config)?)
    }

    /// Stops serving and the controllers; open watches are cut. With a real runtime, the sandboxes
    /// and containers of this playground are removed.
    pub async fn shutdown(mut self) {
        self.controllers.abort();
        if let Some(sim) = &self.simulation {
            sim.abort();
        }
        if let Some(cri) = self.cri.take() {
            cri.clean_up().await;
        }
        self.serving.shutdown().await;
    }
}

impl Drop for Playground {
    /// A playground dropped without [`Playground::shutdown`] stops too (and removes its containers,
    /// waiting for the runtime).
    fn drop(&mut self) {
        self.controllers.abort();
        if let Some(sim) = &self.simulation {
            sim.abort();
        }
        if let Some(cri) = self.cri.take() {
            cri.clean_up_blocking();
        }
        self.serving.abort();
    }
}
