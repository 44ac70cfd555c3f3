//! `kruise playground`: a simulated cluster (kruise-playground) with kruise-rs installed into it
//! the normal way — CRDs, webhook configurations, namespace, Service — and the real `kruise serve`
//! pieces running in cluster mode against it: reflector caches, the certificate Secret and
//! caBundle publisher, leader election, controllers and the HTTPS webhook server.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kruise_rs::playground::PlaygroundError> {
//! let pg = kruise_rs::playground::start(Default::default()).await?;
//! let client = pg.client.clone(); // admission goes through kruise-rs's webhooks
//! # let _ = client;
//! pg.shutdown().await;
//! # Ok(()) }
//! ```

mod install;
mod serve;

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use kruise_playground::{Playground, PlaygroundOptions};
use kruise_webhooks::Settings;

/// The namespace kruise-rs is installed in.
pub const NAMESPACE: &str = "kruise-system";
/// The Service fronting the webhooks.
pub const SERVICE: &str = "kruise-webhook-service";

/// Why the playground could not start.
#[derive(Debug, thiserror::Error)]
pub enum PlaygroundError {
    /// The simulated API server did not start.
    #[error("simulated API server: {0}")]
    Start(#[from] kruise_playground::StartError),
    /// No client for it.
    #[error("client: {0}")]
    Client(#[from] kruise_playground::ClientError),
    /// Installing kruise-rs failed.
    #[error("installing kruise-rs: {0}")]
    Install(#[from] kube::Error),
    /// The webhook port or the kubeconfig.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// kruise-rs's own start-up (certificates, ports).
    #[error("kruise serve: {0:#}")]
    Serve(anyhow::Error),
    /// kruise-rs did not become ready in time.
    #[error("kruise-rs not ready after {0:?}: {1}")]
    NotReady(Duration, &'static str),
}

/// How to start.
#[derive(Clone, Debug)]
pub struct Options {
    /// The API server's listen address (port 0: any free port).
    pub listen: SocketAddr,
    /// Simulated Ready nodes.
    pub nodes: usize,
    /// How long the simulated kubelet takes to start a container.
    pub kubelet_delay: Duration,
    /// The webhook switches.
    pub settings: Settings,
    /// Run kruise-rs elsewhere: its webhook Service resolves to this address, where a separate
    /// `kruise serve` (given this playground's kubeconfig) is to listen. `None`: run it here.
    pub external_webhook: Option<SocketAddr>,
    /// The clock the playground's and kruise-rs's controllers share ([`kruise_playground::Clock::manual`]:
    /// one a test moves forward with `POST /playground/clock`).
    pub clock: kruise_playground::Clock,
    /// `Some`: pods run as real containers in this CRI runtime (`kruise playground --runtime
    /// containerd`); `None`: simulated.
    pub runtime: Option<kruise_playground::kubelet::cri::CriOptions>,
    /// kruise-rs's `--nodeimage-creation-delay`: zero by default, since the simulated nodes are Ready
    /// from the start and have no runtime to settle.
    pub nodeimage_creation_delay: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            nodes: 3,
            kubelet_delay: Duration::from_millis(100),
            settings: Settings::default(),
            external_webhook: None,
            clock: kruise_playground::Clock::system(),
            runtime: None,
            nodeimage_creation_delay: Duration::ZERO,
        }
    }
}

/// A running playground with kruise-rs installed.
pub struct Handle {
    /// The simulated cluster.
    pub playground: Playground,
    /// A client of it (trusting its CA).
    pub client: kube::Client,
    /// Where kruise-rs's webhooks listen.
    pub webhook_addr: SocketAddr,
    /// Where its /metrics, /healthz and /readyz listen (`None` when it runs elsewhere).
    pub metrics_addr: Option<SocketAddr>,
    kruise: Option<serve::Kruise>,
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("playground", &self.playground.url())
            .field("webhook_addr", &self.webhook_addr)
            .finish_non_exhaustive()
    }
}

/// Starts the simulated cluster, installs kruise-rs and returns once its webhooks answer (at
/// once, when kruise-rs is to run elsewhere).
pub async fn start(options: Options) -> Result<Handle, PlaygroundError> {
    // The webhook port is bound first so that the cluster can resolve the Service to it.
    let (listener, webhook_addr) = match options.external_webhook {
        Some(addr) => (None, addr),
        None => {
            let listener = std::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
            listener.set_nonblocking(true)?;
            let addr = listener.local_addr()?;
            (Some(listener), addr)
        }
    };
    let playground = Playground::start(PlaygroundOptions {
        addr: options.listen,
        webhook_address: Some(webhook_addr),
        nodes: options.nodes,
        kubelet_delay: options.kubelet_delay,
        clock: options.clock.clone(),
        runtime: options.runtime.clone(),
        ..PlaygroundOptions::default()
    })
    .await?;
    let client = playground.client().await?;
    install::install(&client).await?;
    let kruise = match listener {
        Some(listener) => {
            let kruise = serve::start(
                client.clone(),
                listener,
                options.settings,
                options.clock,
                options.nodeimage_creation_delay,
            )
            .await?;
            install::wait_ready(&client, &kruise).await?;
            Some(kruise)
        }
        None => None,
    };
    Ok(Handle {
        playground,
        client,
        webhook_addr,
        metrics_addr: kruise.as_ref().map(serve::Kruise::metrics_addr),
        kruise,
    })
}

impl Handle {
    /// Writes the playground's kubeconfig.
    pub fn write_kubeconfig(&self, path: &std::path::Path) -> Result<PathBuf, PlaygroundError> {
        Ok(self.playground.write_kubeconfig(path)?)
    }

    /// Stops kruise-rs, then the cluster.
    pub async fn shutdown(self) {
        if let Some(kruise) = self.kruise {
            kruise.stop().await;
        }
        self.playground.shutdown().await;
    }
}

/// `kruise playground`: serves until Ctrl-C or SIGTERM.
pub async fn run(args: &crate::cli::PlaygroundArgs) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let options = Options {
        listen: args.listen,
        nodes: args.nodes,
        kubelet_delay: Duration::from_millis(args.kubelet_delay_ms),
        external_webhook: args.external_webhook,
        clock: match args.clock {
            crate::cli::ClockKind::System => kruise_playground::Clock::system(),
            crate::cli::ClockKind::Manual => kruise_playground::Clock::manual(),
        },
        runtime: match &args.runtime {
            crate::cli::PlaygroundRuntime::Simulated => None,
            crate::cli::PlaygroundRuntime::Containerd(socket) => Some(
                kruise_playground::kubelet::cri::CriOptions::new(&socket.to_string_lossy()),
            ),
        },
        nodeimage_creation_delay: args.nodeimage_creation_delay,
        ..Options::default()
    };
    let options_runtime = options.runtime.clone();
    let handle = start(options).await.context("cannot start the playground")?;
    let path = handle.write_kubeconfig(&args.kubeconfig)?;
    let path = std::path::absolute(&path).unwrap_or(path);
    println!("kubeconfig: {}", path.display());
    println!("  export KUBECONFIG={}", path.display());
    match (args.external_webhook, handle.metrics_addr) {
        (Some(addr), _) => println!(
            "kruise-rs is not running: start `KUBECONFIG={} kruise serve --port {}`",
            path.display(),
            addr.port()
        ),
        (None, Some(metrics)) => println!("kruise-rs metrics: http://{metrics}/metrics"),
        (None, None) => {}
    }
    if let Some(runtime) = &options_runtime {
        println!("pods run as containers in {}", runtime.socket.display());
    }
    if handle.playground.clock().is_manual() {
        println!(
            "manual clock: kubectl create --raw /playground/clock -f - <<< '{{\"advanceSeconds\": 60}}'"
        );
    }
    println!("ready");
    shutdown_signal().await;
    tracing::info!("shutting down the playground");
    handle.shutdown().await;
    Ok(())
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {},
                _ = term.recv() => {},
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
