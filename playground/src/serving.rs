//! The API server's HTTPS listener, taken down and brought back on the same port by restarts
//! (`restart` module), until the playground stops.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum_server::Handle;
use axum_server::tls_rustls::RustlsConfig;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::api::Api;
use crate::error::StartError;

/// Time given to the answer of `POST /playground/restart` before the connections are cut.
const ANSWER_GRACE: Duration = Duration::from_millis(200);

/// How often, and how many times, binding the port again is tried after a restart.
const REBIND_EVERY: Duration = Duration::from_millis(100);
const REBIND_TRIES: u32 = 100;

/// The listener and the loop that restarts it.
#[derive(Debug)]
pub(crate) struct Serving {
    /// The handle of the server listening now (each restart starts a new one).
    current: Arc<Mutex<Handle<SocketAddr>>>,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

/// One listening server: its handle and the task serving it.
struct Listening {
    handle: Handle<SocketAddr>,
    task: JoinHandle<()>,
}

/// Binds `addr` and serves the API on it; `None` when the port cannot be bound.
async fn listen(api: &Arc<Api>, tls: &RustlsConfig, addr: SocketAddr) -> Option<(Listening, SocketAddr)> {
    let handle = Handle::new();
    let server = axum_server::bind_rustls(addr, tls.clone()).handle(handle.clone());
    let app = crate::routes::router(api.clone());
    let task = tokio::spawn(async move {
        if let Err(e) = server.serve(app.into_make_service()).await {
            tracing::error!(error = %e, "playground server failed");
        }
    });
    let bound = handle.listening().await?;
    Some((Listening { handle, task }, bound))
}

fn lock(current: &Mutex<Handle<SocketAddr>>) -> std::sync::MutexGuard<'_, Handle<SocketAddr>> {
    current.lock().unwrap_or_else(|e| e.into_inner())
}

impl Serving {
    /// Serves the API on `addr` (port 0: any free port); returns once listening, with the address.
    pub(crate) async fn start(
        api: Arc<Api>,
        tls: RustlsConfig,
        addr: SocketAddr,
    ) -> Result<(Serving, SocketAddr), StartError> {
        let (listening, addr) = listen(&api, &tls, addr).await.ok_or(StartError::NotListening)?;
        let current = Arc::new(Mutex::new(listening.handle.clone()));
        let stop = watch::channel(false).0;
        let task = tokio::spawn(restarts(
            api,
            tls,
            addr,
            current.clone(),
            stop.subscribe(),
            listening,
        ));
        Ok((Serving { current, stop, task }, addr))
    }

    /// Stops serving: every connection is cut, the port closed.
    pub(crate) async fn shutdown(&mut self) {
        self.stop.send_replace(true);
        lock(&self.current).shutdown();
        let _ = (&mut self.task).await;
    }

    /// [`Self::shutdown`] without waiting.
    pub(crate) fn abort(&self) {
        self.stop.send_replace(true);
        lock(&self.current).shutdown();
        self.task.abort();
    }
}

/// Serves until stopped, carrying out each requested restart: the connections cut and the port closed,
/// the watch history forgotten, the port closed for the requested time, then bound again.
async fn restarts(
    api: Arc<Api>,
    tls: RustlsConfig,
    addr: SocketAddr,
    current: Arc<Mutex<Handle<SocketAddr>>>,
    mut stopped: watch::Receiver<bool>,
    mut listening: Listening,
) {
    let mut requests = api.restarts.subscribe();
    requests.mark_unchanged();
    loop {
        tokio::select! {
            _ = stopped.wait_for(|s| *s) => break,
            changed = requests.changed() => if changed.is_err() { break },
        }
        let down = requests.borrow_and_update().down;
        tokio::time::sleep(ANSWER_GRACE).await;
        listening.handle.shutdown();
        let _ = (&mut listening.task).await;
        api.store.expire_watches();
        tracing::info!(
            down_seconds = down.as_secs_f64(),
            "playground API server down (restart)"
        );
        tokio::select! {
            _ = stopped.wait_for(|s| *s) => return,
            _ = tokio::time::sleep(down) => {}
        }
        let mut tries = 0;
        listening = loop {
            if *stopped.borrow() {
                return;
            }
            if let Some((again, _)) = listen(&api, &tls, addr).await {
                break again;
            }
            tries += 1;
            if tries == REBIND_TRIES {
                tracing::error!(%addr, "playground API server cannot listen again after a restart");
                return;
            }
            tokio::time::sleep(REBIND_EVERY).await;
        };
        *lock(&current) = listening.handle.clone();
        api.restarts.complete();
        tracing::info!(%addr, "playground API server listening again");
    }
    listening.handle.shutdown();
    let _ = listening.task.await;
}
