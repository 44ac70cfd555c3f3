//! The webhook port's connections: TLS, HTTP/1.1 or h2 by ALPN, limits and timeouts, and the drain on
//! shutdown.
//!
//! - At most [`Limits::max_connections`] connections; one more is closed at once (counted).
//! - The TLS handshake, an HTTP/1.1 request header and an idle period each have a timeout.
//! - h2: bounded streams per connection, windows and header lists.
//! - HTTP/1.1 requests hyper cannot parse are answered with a JSON `Status` ([`super::error_bodies`]).
//! - Draining (SIGTERM): the listener closes; h2 connections get GOAWAY; HTTP/1.1 responses carry
//!   `Connection: close`, and an HTTP/1.1 connection is closed by us only once it has been idle (no
//!   request in flight, no byte of a next one) for [`DRAIN_IDLE`]. A client that is sending is answered.
//!   What is still open when the grace period ends is dropped.

use std::{
    convert::Infallible,
    net::SocketAddr,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
    time::Duration,
};

use axum::{Router, body::Body, http::Request};
use axum_server::tls_rustls::RustlsConfig;
use hyper::{body::Incoming, header, http::HeaderValue};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::{TcpListener, TcpStream},
    sync::{Semaphore, watch},
    task::JoinSet,
};
use tower::ServiceExt as _;

use super::{
    activity::Activity,
    error_bodies::{ErrorBodies, MAX_HEADER_BYTES},
    metrics::Metrics,
};

/// How long an HTTP/1.1 connection must have been idle before a drain closes it.
pub const DRAIN_IDLE: Duration = Duration::from_secs(1);

/// How often each connection checks its timeouts.
const TICK: Duration = Duration::from_millis(250);

/// Bounds on the webhook port.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Open connections at most.
    pub max_connections: usize,
    /// Time to complete the TLS handshake.
    pub handshake_timeout: Duration,
    /// Time from the first byte of an HTTP/1.1 request to its complete header.
    pub header_read_timeout: Duration,
    /// Time a connection may stay without a request before it is closed.
    pub idle_timeout: Duration,
    /// Concurrent h2 streams per connection.
    pub h2_max_streams: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 1024,
            handshake_timeout: Duration::from_secs(10),
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(90),
            h2_max_streams: 64,
        }
    }
}

/// h2 flow-control windows: what one stream / one connection may have in flight unread.
const H2_STREAM_WINDOW: u32 = 1024 * 1024;
const H2_CONNECTION_WINDOW: u32 = 4 * 1024 * 1024;

/// Tells the server to drain: `None` while serving, `Some(grace)` once draining.
#[derive(Clone, Debug)]
pub struct Shutdown(watch::Sender<Option<Duration>>);

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown(watch::channel(None).0)
    }
}

impl Shutdown {
    /// Starts the drain: in-flight and arriving requests get up to `grace` to be answered.
    pub fn drain(&self, grace: Duration) {
        self.0.send_if_modified(|state| {
            let first = state.is_none();
            state.get_or_insert(grace);
            first
        });
    }

    /// Whether the drain has started.
    pub fn draining(&self) -> bool {
        self.0.borrow().is_some()
    }

    fn subscribe(&self) -> watch::Receiver<Option<Duration>> {
        self.0.subscribe()
    }
}

/// Serves `router` on `listener` until a drain has finished (or its grace period has ended).
pub async fn serve(
    listener: TcpListener,
    tls: RustlsConfig,
    router: Router,
    limits: Limits,
    metrics: Arc<Metrics>,
    shutdown: Shutdown,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let mut connections = JoinSet::new();
    let mut drain = shutdown.subscribe();
    let grace = loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (tcp, peer) = match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Out of file descriptors, most likely: back off instead of spinning.
                        tracing::warn!(error = %e, "cannot accept a webhook connection");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let Ok(slot) = slots.clone().try_acquire_owned() else {
                    metrics.refused_connections.inc();
                    tracing::warn!(%peer, limit = limits.max_connections, "connection limit reached; closing");
                    drop(tcp);
                    continue;
                };
                let connection = Connection {
                    tls: tls.clone(),
                    router: router.clone(),
                    limits: limits.clone(),
                    metrics: metrics.clone(),
                    shutdown: shutdown.clone(),
                };
                connections.spawn(async move {
                    let _slot = slot;
                    connection.run(tcp, peer).await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            _ = drain.changed() => {
                if let Some(grace) = *drain.borrow() {
                    break grace;
                }
            }
        }
    };
    drop(listener);
    tracing::info!(open = connections.len(), "draining webhook connections");
    let drained =
        tokio::time::timeout(grace, async { while connections.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        tracing::warn!(
            open = connections.len(),
            "grace period over; closing the remaining connections"
        );
        connections.shutdown().await;
    }
    Ok(())
}

/// One accepted connection and what it needs.
struct Connection {
    tls: RustlsConfig,
    router: Router,
    limits: Limits,
    metrics: Arc<Metrics>,
    shutdown: Shutdown,
}

impl Connection {
    async fn run(self, tcp: TcpStream, peer: SocketAddr) {
        let metrics = self.metrics.clone();
        metrics.open_connections.inc();
        let _open = scopeguard(move || {
            metrics.open_connections.dec();
        });
        let _ = tcp.set_nodelay(true);
        let activity = Arc::new(Activity::new());
        let watched = Watched {
            inner: tcp,
            activity: activity.clone(),
        };
        let acceptor = tokio_rustls::TlsAcceptor::from(self.tls.get_inner());
        let stream = match tokio::time::timeout(self.limits.handshake_timeout, acceptor.accept(watched)).await
        {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => {
                tracing::debug!(%peer, error = %e, "TLS handshake failed");
                return;
            }
            Err(_) => {
                self.metrics.timed_out_connections.inc();
                tracing::debug!(%peer, "TLS handshake timed out");
                return;
            }
        };
        let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
        activity.exchange_ended();
        let service = service(self.router.clone(), self.shutdown.clone(), activity.clone(), h2);
        if h2 {
            let io = TokioIo::new(stream);
            let mut builder = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
            builder
                .timer(TokioTimer::new())
                .max_concurrent_streams(self.limits.h2_max_streams)
                .initial_stream_window_size(H2_STREAM_WINDOW)
                .initial_connection_window_size(H2_CONNECTION_WINDOW)
                .max_header_list_size(MAX_HEADER_BYTES as u32)
                .max_send_buf_size(H2_STREAM_WINDOW as usize);
            let conn = builder.serve_connection(io, service);
            self.watch(conn, &activity, true, peer).await;
        } else {
            // hyper's own 400/414/431 get JSON `Status` bodies.
            let io = TokioIo::new(ErrorBodies::new(stream, activity.clone()));
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.max_buf_size(MAX_HEADER_BYTES.max(8192));
            let conn = builder.serve_connection(io, service);
            self.watch(conn, &activity, false, peer).await;
        }
    }

    /// Drives `conn` to its end, closing it on a timeout or when a drain allows.
    async fn watch<C: Graceful>(&self, conn: C, activity: &Activity, h2: bool, peer: SocketAddr) {
        let mut conn = std::pin::pin!(conn);
        let mut ticker = tokio::time::interval(TICK);
        let mut closing = false;
        loop {
            tokio::select! {
                result = conn.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!(%peer, error = %e, "webhook connection ended with an error");
                    }
                    return;
                }
                _ = ticker.tick() => {}
            }
            if closing {
                continue;
            }
            let draining = self.shutdown.draining();
            if !h2 && let Some(waited) = activity.header_pending_for() {
                if waited >= self.limits.header_read_timeout {
                    self.metrics.timed_out_connections.inc();
                    tracing::debug!(%peer, "request header not received in time; closing");
                    return;
                }
                continue;
            }
            let idle = activity.idle_for(h2);
            let idle_limit = if draining {
                DRAIN_IDLE
            } else {
                self.limits.idle_timeout
            };
            if (h2 && draining) || idle.is_some_and(|idle| idle >= idle_limit) {
                conn.as_mut().graceful_shutdown();
                closing = true;
            }
        }
    }
}

/// The router, with the connection's bookkeeping around each request.
fn service(
    router: Router,
    shutdown: Shutdown,
    activity: Arc<Activity>,
    h2: bool,
) -> impl hyper::service::Service<
    Request<Incoming>,
    Response = axum::response::Response,
    Error = Infallible,
    Future = impl Future<Output = Result<axum::response::Response, Infallible>> + Send,
> + Clone {
    hyper::service::service_fn(move |request: Request<Incoming>| {
        let (router, shutdown, activity) = (router.clone(), shutdown.clone(), activity.clone());
        async move {
            let _in_flight = activity.request_started();
            let mut response = match router.oneshot(request.map(Body::new)).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            if !h2 && shutdown.draining() {
                // HTTP/1.1 has no GOAWAY: this tells the client not to send another request here.
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            Ok(response)
        }
    })
}

/// hyper's HTTP/1.1 and h2 server connections: futures that can be asked to finish gracefully.
trait Graceful: Future<Output = Result<(), hyper::Error>> {
    fn graceful_shutdown(self: Pin<&mut Self>);
}

impl<I, S> Graceful for hyper::server::conn::http1::Connection<I, S>
where
    S: hyper::service::HttpService<Incoming, ResBody = Body>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    fn graceful_shutdown(self: Pin<&mut Self>) {
        hyper::server::conn::http1::Connection::graceful_shutdown(self);
    }
}

impl<I, S> Graceful for hyper::server::conn::http2::Connection<I, S, TokioExecutor>
where
    S: hyper::service::HttpService<Incoming, ResBody = Body>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    S::Future: Send + 'static,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    fn graceful_shutdown(self: Pin<&mut Self>) {
        hyper::server::conn::http2::Connection::graceful_shutdown(self);
    }
}

/// The TCP stream, telling [`Activity`] when bytes arrive.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let result = Pin::new(&mut this.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.activity.bytes_read();
        }
        result
    }
}

impl AsyncWrite for Watched {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// Runs `f` when dropped.
fn scopeguard(f: impl FnOnce()) -> impl Drop {
    struct Guard<F: FnOnce()>(Option<F>);
    impl<F: FnOnce()> Drop for Guard<F> {
        fn drop(&mut self) {
            if let Some(f) = self.0.take() {
                f();
            }
        }
    }
    Guard(Some(f))
}
