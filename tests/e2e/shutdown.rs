//! SIGTERM: unready first, every review that reaches us answered (keep-alive connections are told
//! `Connection: close` and closed only when idle), exit within the grace period.

use crate::common;

use std::{
    net::SocketAddr,
    process::{Child, Command, Stdio},
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use rustls::pki_types::ServerName;

/// `kruise serve` on ports it chooses, with certificates in `cert_dir`, and its webhook address.
async fn spawn_server(cert_dir: &std::path::Path) -> (Child, SocketAddr) {
    let (child, reported) = common::reported::spawn(
        Command::new(env!("CARGO_BIN_EXE_kruise"))
            .args(["serve", "--objects"])
            .arg(common::repo().join("examples/cluster"))
            .arg("--cert-dir")
            .arg(cert_dir)
            .args(["--bind-address", "127.0.0.1", "--port", "0"])
            .args(["--metrics-addr", "127.0.0.1:0"])
            .args(["--shutdown-grace", "5"])
            .stdout(Stdio::null()),
    );
    let addr = reported.webhook().await;
    (child, addr)
}

fn sigterm(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits for the child to exit, at most `limit`.
async fn exit_within(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let since = Instant::now();
    loop {
        if let Some(exit) = child.try_wait().unwrap() {
            return exit;
        }
        assert!(since.elapsed() < limit, "still running {limit:?} after SIGTERM");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// How a keep-alive client's reviews ended.
#[derive(Default)]
struct Tally {
    answered: AtomicUsize,
    /// Sent on an open connection and not answered: what kube-apiserver would report as a failure.
    failed: AtomicUsize,
}

/// A keep-alive HTTP/1.1 client like kube-apiserver's: reviews back to back on one connection, a new
/// connection after `Connection: close`, no retries. It stops once a connection is refused.
async fn keep_alive_client(
    addr: SocketAddr,
    tls: Arc<rustls::ClientConfig>,
    tally: Arc<Tally>,
    errors: Arc<std::sync::Mutex<Vec<String>>>,
) {
    let connector = tokio_rustls::TlsConnector::from(tls);
    let body = Bytes::from(common::review("delete-namespace-shop.json"));
    loop {
        let Ok(tcp) = tokio::net::TcpStream::connect(addr).await else {
            return; // Refused: the server has stopped listening.
        };
        let fail = |message: String| {
            tally.failed.fetch_add(1, Ordering::Relaxed);
            errors.lock().unwrap().push(message);
        };
        let Ok(stream) = connector
            .connect(ServerName::try_from("localhost").unwrap(), tcp)
            .await
        else {
            return; // Accepted by the kernel's backlog but closed unhandled: never sent a review.
        };
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .unwrap();
        tokio::spawn(connection);
        loop {
            if sender.ready().await.is_err() {
                fail("connection closed while idle, without Connection: close".into());
                break;
            }
            let request = hyper::Request::post("/validate-namespace")
                .header("host", "localhost")
                .header("content-type", "application/json")
                .body(Full::new(body.clone()))
                .unwrap();
            let response = match sender.send_request(request).await {
                Ok(response) => response,
                Err(e) => {
                    fail(format!("review sent, no response: {e}"));
                    break;
                }
            };
            let close = response.headers().get("connection").is_some_and(|v| v == "close");
            let status = response.status();
            match response.into_body().collect().await {
                Ok(_) if status == 200 => {
                    tally.answered.fetch_add(1, Ordering::Relaxed);
                }
                Ok(_) => fail(format!("answered {status}")),
                Err(e) => fail(format!("response body cut: {e}")),
            }
            if close {
                break;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_under_keep_alive_load_loses_no_review() {
    common::init();
    let dir = tempfile::tempdir().unwrap();
    for run in 0..5 {
        let (mut child, addr) = spawn_server(dir.path()).await;
        let port = addr.port();
        // Serving: the certificate is written and a review is answered.
        let started = Instant::now();
        let tls = loop {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "server did not start"
            );
            if let Ok(ca) = std::fs::read_to_string(dir.path().join("ca.crt")) {
                let client = common::client(&ca, addr);
                let sent = client
                    .post(format!("https://localhost:{port}/validate-namespace"))
                    .header("content-type", "application/json")
                    .body(common::review("delete-namespace-shop.json"))
                    .send()
                    .await;
                if sent.is_ok_and(|r| r.status() == 200) {
                    break Arc::new(common::client_tls(&ca));
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let tally = Arc::new(Tally::default());
        let errors = Arc::new(std::sync::Mutex::new(Vec::new()));
        let clients: Vec<_> = (0..8)
            .map(|_| {
                tokio::spawn(keep_alive_client(
                    addr,
                    tls.clone(),
                    tally.clone(),
                    errors.clone(),
                ))
            })
            .collect();
        // Traffic flows on every connection, then the signal lands in the middle of it.
        let flowing = Instant::now();
        while tally.answered.load(Ordering::Relaxed) < 200 {
            assert!(
                flowing.elapsed() < Duration::from_secs(20),
                "reviews are not flowing"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let term = Instant::now();
        sigterm(&child);
        let exit = exit_within(&mut child, Duration::from_secs(6)).await;
        assert!(exit.success(), "run {run}: {exit:?}");
        let stopped = AtomicBool::new(true);
        for client in clients {
            let done = tokio::time::timeout(Duration::from_secs(5), client).await;
            stopped.fetch_and(done.is_ok(), Ordering::Relaxed);
        }
        assert!(stopped.load(Ordering::Relaxed), "run {run}: a client hung");
        assert_eq!(
            tally.failed.load(Ordering::Relaxed),
            0,
            "run {run}: {:?} (exit {:?} after SIGTERM)",
            errors.lock().unwrap(),
            term.elapsed()
        );
    }
}

#[tokio::test]
async fn a_drain_reports_unready_first_and_waits_for_idle_keep_alive_connections() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(dir.path()).await;
    let ca = std::fs::read_to_string(dir.path().join("ca.crt")).unwrap();
    let probes = reqwest::Client::new();
    let readyz = format!("http://{}/readyz", server.metrics_addr);
    assert_eq!(probes.get(&readyz).send().await.unwrap().status(), 200);
    // One idle keep-alive connection in the pool.
    let client = common::client(&ca, server.webhook_addr);
    let url = format!(
        "https://localhost:{}/validate-namespace",
        server.webhook_addr.port()
    );
    let review = || {
        client
            .post(&url)
            .header("content-type", "application/json")
            .body(common::review("delete-namespace-shop.json"))
            .send()
    };
    assert_eq!(review().await.unwrap().status(), 200);
    server.drain(Duration::from_secs(5));
    let response = probes.get(&readyz).send().await.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(response.text().await.unwrap(), "shutting down");
    // The pooled connection is still served, and told to close.
    let answered = review().await.unwrap();
    assert_eq!(answered.status(), 200);
    assert_eq!(answered.headers()["connection"], "close");
    // With nothing open the webhook server stops, well before the grace period.
    let started = Instant::now();
    tokio::time::timeout(Duration::from_secs(3), server.done)
        .await
        .expect("the drain ends once connections are closed")
        .unwrap()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(3));
}
