//! `kruise daemon`, the node agent: finds the node's container runtime and reports on it. A node whose
//! runtime cannot be found or stops answering leaves the agent running and unready with the reason
//! (OpenKruise's agent exits and crash-loops instead: openkruise/kruise#851, #1196, #1663); it searches
//! again every `--probe-interval` and picks the runtime up when it answers (docs/node-agent.md).
//! With an API server (in-cluster or `KUBECONFIG`) it pulls the images its NodeImage lists ([`puller`])
//! and recreates containers for the ContainerRecreateRequests of its node ([`recreate`]); it reports its
//! pods' runtime containers and restarts those whose env fed from metadata is stale ([`containermeta`]),
//! and runs the PodProbeMarker probes of its node's NodePodProbe ([`probe`]). `--feature-gates` turns
//! these workers off ([`gates`]).

use std::{
    sync::{Arc, RwLock},
    time::Duration,
};

use axum::{Router, http::StatusCode, response::IntoResponse, routing::get};
use kruise_cri::{Runtime, discover};
use tokio::sync::watch;

use crate::cli::DaemonArgs;
use gates::Worker;

pub mod containermeta;
pub mod gates;
pub mod http_get;
pub mod probe;
pub mod pull_events;
pub mod puller;
pub mod recreate;
pub mod secrets;
pub mod worker;

/// How long one CRI call may take during discovery and checks.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// What the agent knows about the runtime.
#[derive(Debug, Clone)]
pub enum RuntimeState {
    /// None answers yet, and why.
    Searching(String),
    /// This one answers.
    Connected {
        /// `containerd`, `cri-o`, …
        name: String,
        /// Its version.
        version: String,
        /// Its socket.
        socket: String,
    },
}

/// The state the probes read, shared with the search loop.
pub type SharedState = Arc<RwLock<RuntimeState>>;

/// The node agent's tokio workers, whatever the node's core count: it waits on the API server and the
/// runtime, and each worker thread costs memory (its stack and its allocator heap) on every node.
const WORKER_THREADS: usize = 2;

/// The async runtime the agent runs on ([`WORKER_THREADS`] workers), for `kruise daemon` and
/// `kruise-daemon` alike.
pub fn runtime() -> tokio::runtime::Builder {
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.worker_threads(WORKER_THREADS).enable_all();
    runtime
}

/// Runs the agent until SIGTERM or Ctrl-C.
pub async fn run(args: DaemonArgs) -> anyhow::Result<()> {
    if args.node_name.is_empty() {
        anyhow::bail!("NODE_NAME is empty: set it from the downward API (spec.nodeName)");
    }
    let state: SharedState = Arc::new(RwLock::new(RuntimeState::Searching("not searched yet".into())));
    let listener = tokio::net::TcpListener::bind(args.addr).await?;
    tracing::info!(node = %args.node_name, addr = %listener.local_addr()?, "node agent started");
    let (runtime_tx, runtime_rx) = watch::channel(None);
    let search = tokio::spawn(keep_runtime(args.clone(), state.clone(), runtime_tx));
    let gates = args.feature_gates.unwrap_or_default();
    for (worker, gate) in gates::off(&gates) {
        tracing::info!(
            gate = gate.name(),
            "feature gate off: {} is not started",
            worker.describe()
        );
    }
    let on = |w: Worker| w.on(&gates);
    let mut workers: Vec<tokio::task::JoinHandle<()>> = Vec::new();
    match kube::Client::try_default().await {
        Ok(client) => {
            let node = args.node_name.clone();
            if on(Worker::ContainerRecreate) {
                workers.push(tokio::spawn(recreate::run(
                    client.clone(),
                    node.clone(),
                    runtime_rx.clone(),
                )));
            }
            if on(Worker::PodProbe) {
                workers.push(tokio::spawn(probe::run(
                    client.clone(),
                    node.clone(),
                    runtime_rx.clone(),
                )));
            }
            if on(Worker::ContainerMeta) {
                let restarts = on(Worker::EnvRestarts);
                let meta = containermeta::run(client.clone(), node.clone(), runtime_rx.clone(), restarts);
                workers.push(tokio::spawn(meta));
            }
            if on(Worker::ImagePuller) {
                let config = puller::Config {
                    node,
                    max_concurrent_pulls: args.max_concurrent_pulls,
                };
                workers.push(tokio::spawn(puller::run(client, config, runtime_rx)));
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, "no API server configuration: image pre-pull and container recreation are off");
        }
    };
    let served = axum::serve(listener, probes(state))
        .with_graceful_shutdown(crate::server::shutdown_signal())
        .await;
    search.abort();
    for w in workers {
        w.abort();
    }
    Ok(served?)
}

/// /healthz (the process is alive: 200 even without a runtime, so a restart is never the cure) and
/// /readyz (200 with the runtime, 503 with the reason it has none).
pub fn probes(state: SharedState) -> Router {
    Router::new().route("/healthz", get(|| async { "ok" })).route(
        "/readyz",
        get(move || async move {
            match state.read().map(|s| s.clone()) {
                Ok(RuntimeState::Connected {
                    name,
                    version,
                    socket,
                }) => (StatusCode::OK, format!("ok: {name} {version} at {socket}")).into_response(),
                Ok(RuntimeState::Searching(why)) => (
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!("no container runtime: {why}"),
                )
                    .into_response(),
                Err(_) => (StatusCode::INTERNAL_SERVER_ERROR, "state poisoned").into_response(),
            }
        }),
    )
}

/// Finds the runtime, then checks it every interval; when it stops answering, searches again.
async fn keep_runtime(args: DaemonArgs, state: SharedState, runtime_tx: watch::Sender<Option<Runtime>>) {
    let mut last_reason = String::new();
    loop {
        match discover(&args.host_run_dir, args.socket_file.as_deref(), CALL_TIMEOUT).await {
            Ok(found) => {
                for skipped in &found.skipped {
                    tracing::warn!(error = %skipped, "runtime socket skipped");
                }
                let runtime = found.runtime;
                tracing::info!(runtime = runtime.name(), version = runtime.runtime_version(),
                    socket = %runtime.path().display(), "container runtime connected");
                set(
                    &state,
                    RuntimeState::Connected {
                        name: runtime.name().to_owned(),
                        version: runtime.runtime_version().to_owned(),
                        socket: runtime.path().display().to_string(),
                    },
                );
                last_reason.clear();
                runtime_tx.send_replace(Some(runtime.clone()));
                let lost = check(&runtime, args.probe_interval).await;
                runtime_tx.send_replace(None);
                tracing::warn!(error = %lost, "container runtime stopped answering; searching again");
                set(&state, RuntimeState::Searching(lost));
            }
            Err(e) => {
                let reason = e.to_string();
                if reason != last_reason {
                    tracing::warn!(error = %reason, "no container runtime; the agent stays unready and searches again");
                    last_reason.clone_from(&reason);
                }
                set(&state, RuntimeState::Searching(reason));
            }
        }
        tokio::time::sleep(args.probe_interval).await;
    }
}

/// Returns once `runtime` fails a `Version` check, with the error.
async fn check(runtime: &Runtime, interval: Duration) -> String {
    let mut client = runtime.runtime.clone();
    loop {
        tokio::time::sleep(interval).await;
        let request = kruise_cri::v1::VersionRequest { version: "v1".into() };
        match tokio::time::timeout(CALL_TIMEOUT, client.version(request)).await {
            Ok(Ok(_)) => {}
            Ok(Err(status)) => {
                return format!("Version on {}: {}", runtime.path().display(), status.message());
            }
            Err(_) => {
                return format!(
                    "Version on {}: no answer within {CALL_TIMEOUT:?}",
                    runtime.path().display()
                );
            }
        }
    }
}

fn set(state: &SharedState, new: RuntimeState) {
    if let Ok(mut s) = state.write() {
        *s = new;
    }
}
