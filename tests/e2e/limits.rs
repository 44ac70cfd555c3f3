//! Bounded resources on the webhook port (the `kruise` binary, as deployed): stalled uploads, idle
//! connections and slowloris headers at once leave a normal review answered promptly and memory
//! bounded, and each is closed by its timeout; limits answer fast with JSON `Status` bodies.

use crate::common;

use std::{
    net::SocketAddr,
    process::{Child, Command, Stdio},
    sync::Arc,
    time::{Duration, Instant},
};

use rustls::pki_types::ServerName;
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio_rustls::client::TlsStream;

/// A `kruise serve` child process, killed when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
    metrics: SocketAddr,
    ca: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts the binary with `flags` (and a soft open-files limit of `soft_nofile`) and waits until it serves.
    async fn start(flags: &[&str], soft_nofile: u32) -> Server {
        common::init();
        let dir = tempfile::tempdir().unwrap();
        let command = format!("ulimit -Sn {soft_nofile} && exec \"$0\" \"$@\"",);
        let (child, reported) = common::reported::spawn(
            Command::new("sh")
                .args(["-c", &command, env!("CARGO_BIN_EXE_kruise"), "serve", "--objects"])
                .arg(common::repo().join("examples/cluster"))
                .arg("--cert-dir")
                .arg(dir.path())
                .args(["--bind-address", "127.0.0.1", "--port", "0"])
                .args(["--metrics-addr", "127.0.0.1:0"])
                .args(flags)
                .stdout(Stdio::null()),
        );
        let mut server = Server {
            child,
            addr: reported.webhook().await,
            metrics: reported.metrics().await,
            ca: String::new(),
            _dir: dir,
        };
        let started = Instant::now();
        loop {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "server did not start"
            );
            if let Ok(ca) = std::fs::read_to_string(server._dir.path().join("ca.crt")) {
                server.ca = ca;
                if server.review().await.0 == 200 {
                    return server;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// A normal review on a fresh connection: status and body.
    async fn review(&self) -> (u16, Value) {
        self.post(
            "/validate-namespace",
            common::review("delete-namespace-shop.json"),
        )
        .await
    }

    /// A POST of `body` to `path` on a fresh connection: status and body.
    async fn post(&self, path: &str, body: Vec<u8>) -> (u16, Value) {
        let client = common::client(&self.ca, self.addr);
        let sent = client
            .post(format!("https://localhost:{}{path}", self.addr.port()))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await;
        match sent {
            Ok(response) => (
                response.status().as_u16(),
                response.json().await.unwrap_or_default(),
            ),
            Err(_) => (0, Value::Null),
        }
    }

    /// A TLS connection (HTTP/1.1).
    async fn connect(&self) -> TlsStream<tokio::net::TcpStream> {
        let connector = tokio_rustls::TlsConnector::from(Arc::new(common::client_tls(&self.ca)));
        let tcp = tokio::net::TcpStream::connect(self.addr).await.unwrap();
        connector
            .connect(ServerName::try_from("localhost").unwrap(), tcp)
            .await
            .unwrap()
    }

    /// A metric's value from /metrics.
    async fn metric(&self, name: &str) -> f64 {
        let text = reqwest::get(format!("http://{}/metrics", self.metrics))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {text}"))
    }

    /// Resident memory of the server, in MiB.
    fn rss_mib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        kib / 1024
    }
}

/// Waits until `check` holds, failing after `limit`.
async fn eventually<F: Future<Output = bool>>(what: &str, limit: Duration, mut check: impl FnMut() -> F) {
    let since = Instant::now();
    while !check().await {
        assert!(since.elapsed() < limit, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A review header declaring `length` bytes of body.
fn head(length: usize) -> String {
    format!(
        "POST /validate-namespace HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
         content-length: {length}\r\n\r\n"
    )
}

/// Reads what the server sends until it closes (or 5 s pass).
async fn read_until_closed(stream: &mut TlsStream<tokio::net::TcpStream>) -> String {
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_uploads_idle_connections_and_slowloris_leave_reviews_answered() {
    let server = Server::start(
        &[
            "--header-read-timeout",
            "2",
            "--body-read-timeout",
            "3",
            "--idle-timeout",
            "3",
        ],
        256,
    )
    .await;
    // The soft limit of 256 was raised to the hard limit at start.
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", server.child.id())).unwrap();
    let open_files: Vec<&str> = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(open_files[3], open_files[4], "soft = hard: {limits}");
    let rss_at_start = server.rss_mib();

    // 50 uploads that declare 4 MiB and stall after 64 KiB.
    let mut stalled = Vec::new();
    for _ in 0..50 {
        let mut stream = server.connect().await;
        stream.write_all(head(4 << 20).as_bytes()).await.unwrap();
        stream.write_all(&vec![b' '; 64 << 10]).await.unwrap();
        stalled.push(stream);
    }
    // 100 idle connections.
    let mut idle = Vec::new();
    for _ in 0..100 {
        idle.push(server.connect().await);
    }
    // 50 slowloris connections: a header byte every 300 ms.
    let mut slowloris = Vec::new();
    for _ in 0..50 {
        let mut stream = server.connect().await;
        stream
            .write_all(b"POST /validate-namespace HTTP/1.1\r\n")
            .await
            .unwrap();
        slowloris.push(tokio::spawn(async move {
            for _ in 0..40 {
                if stream.write_all(b"x").await.is_err() || stream.flush().await.is_err() {
                    return true; // Closed by the server.
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            false
        }));
    }
    assert!(server.metric("kruise_webhook_open_connections").await >= 200.0);

    let asked = Instant::now();
    let (status, body) = server.review().await;
    let took = asked.elapsed();
    assert_eq!(status, 200);
    assert_eq!(body["response"]["status"]["code"], 403);
    assert!(took < Duration::from_secs(1), "a review took {took:?}");
    let rss = server.rss_mib();
    assert!(rss < 128, "RSS {rss} MiB ({rss_at_start} MiB at start)");

    // Each is closed by its timeout: stalled bodies get 408, slowloris and idle connections are closed.
    for stream in &mut stalled {
        let answer = read_until_closed(stream).await;
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains(r#""reason":"Timeout""#), "{answer}");
    }
    for task in slowloris {
        assert!(task.await.unwrap(), "a slowloris connection was not closed");
    }
    for stream in &mut idle {
        assert_eq!(read_until_closed(stream).await, "");
    }
    eventually("connections closed", Duration::from_secs(5), || async {
        server.metric("kruise_webhook_open_connections").await == 0.0
    })
    .await;
    assert!(server.metric("kruise_webhook_timed_out_connections_total").await >= 50.0);
    assert!(server.rss_mib() < 128);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_answer_at_once_with_json_status() {
    let server = Server::start(
        &[
            "--max-connections",
            "8",
            "--max-concurrent-requests",
            "2",
            "--body-read-timeout",
            "5",
        ],
        1024,
    )
    .await;
    // Two requests waiting for their bodies hold both request slots: the next one is shed with 503.
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = server.connect().await;
        stream.write_all(head(1000).as_bytes()).await.unwrap();
        stream.write_all(b"{").await.unwrap();
        held.push(stream);
    }
    eventually("both slots taken", Duration::from_secs(5), || async {
        let asked = Instant::now();
        let (status, body) = server.review().await;
        if status != 503 {
            return false;
        }
        assert_eq!(body["kind"], "Status");
        assert_eq!(body["reason"], "ServiceUnavailable");
        assert!(asked.elapsed() < Duration::from_secs(1));
        true
    })
    .await;
    drop(held);
    eventually("slots released", Duration::from_secs(5), || async {
        server.review().await.0 == 200
    })
    .await;

    // A declared length over 8 MiB is refused before any of the body is read.
    let mut stream = server.connect().await;
    stream.write_all(head(9 << 20).as_bytes()).await.unwrap();
    let answer = read_until_closed(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("declared Content-Length 9437184"), "{answer}");

    // 405 with a JSON Status.
    let mut stream = server.connect().await;
    stream
        .write_all(b"GET /validate-namespace HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let answer = read_until_closed(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 405"), "{answer}");
    assert!(
        answer.contains(r#""kind":"Status""#) && answer.contains("MethodNotAllowed"),
        "{answer}"
    );

    // Over --max-connections, a connection is closed at once.
    let mut open = Vec::new();
    for _ in 0..8 {
        open.push(server.connect().await);
    }
    eventually("8 connections open", Duration::from_secs(5), || async {
        server.metric("kruise_webhook_open_connections").await == 8.0
    })
    .await;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(common::client_tls(&server.ca)));
    let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let refused = tokio::time::timeout(
        Duration::from_secs(2),
        connector.connect(ServerName::try_from("localhost").unwrap(), tcp),
    )
    .await
    .expect("refused at once, not left hanging");
    assert!(refused.is_err());
    assert_eq!(
        server.metric("kruise_webhook_refused_connections_total").await,
        1.0
    );
    drop(open);
    eventually(
        "a review once connections are free",
        Duration::from_secs(5),
        || async { server.review().await.0 == 200 },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wide_pods_are_refused_naming_the_limit_and_large_reviews_are_answered() {
    let server = Server::start(&[], 1024).await;
    let review: Value =
        serde_json::from_str(include_str!("../../benches/data/pod-create-review.json")).unwrap();

    // A large but ordinary pod (a 400 KiB annotation) is decided off the async workers, and answered.
    let mut large = review.clone();
    large["request"]["object"]["metadata"]["annotations"]["big"] = Value::String("x".repeat(400 << 10));
    large["request"]["dryRun"] = Value::Bool(true);
    let (status, body) = server
        .post("/mutate-pod", serde_json::to_vec(&large).unwrap())
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["response"]["allowed"], true, "{body}");

    // 5,000 containers: 400, naming the limit.
    let mut wide = review;
    let containers: Vec<Value> = (0..5000)
        .map(|i| serde_json::json!({"name": format!("c{i}"), "image": "busybox"}))
        .collect();
    wide["request"]["object"]["spec"]["containers"] = Value::Array(containers);
    let (status, body) = server
        .post("/mutate-pod", serde_json::to_vec(&wide).unwrap())
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["kind"], "Status");
    assert_eq!(
        body["message"],
        "request object is too wide: spec has 5000 containers (all kinds); at most 1000 are accepted"
    );
}

/// Sends `bytes` on a fresh connection (write errors ignored: the server may answer and close first)
/// and returns what it answers.
async fn raw(server: &Server, bytes: &[u8]) -> String {
    let mut stream = server.connect().await;
    let _ = stream.write_all(bytes).await;
    let _ = stream.flush().await;
    read_until_closed(&mut stream).await
}

/// The JSON `Status` body of a raw answer, checked to be one with `code` and `reason`.
fn assert_status(answer: &str, code: u16, reason: &str) {
    assert!(answer.starts_with(&format!("HTTP/1.1 {code} ")), "{answer}");
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((answer, ""));
    assert!(head.contains("content-type: application/json"), "{answer}");
    let status: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {answer}"));
    assert_eq!(status["kind"], "Status", "{answer}");
    assert_eq!(status["code"], code, "{answer}");
    assert_eq!(status["reason"], reason, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unparseable_requests_and_unreadable_bodies_get_json_status_with_their_own_reason() {
    let server = Server::start(&["--body-read-timeout", "5"], 1024).await;
    // hyper's own answers: a request line, a header line, a header over 64 KiB.
    assert_status(&raw(&server, b"GARBAGE\r\n\r\n").await, 400, "BadRequest");
    let bad_header = b"POST /validate-namespace HTTP/1.1\r\nhost: localhost\r\nx-bad: a\x00b\r\n\r\n";
    assert_status(&raw(&server, bad_header).await, 400, "BadRequest");
    // hyper checks its 64 KiB buffer between reads, so a header a little over it can still be read
    // whole when it arrives in one read; four times over never is.
    let big = format!(
        "POST /validate-namespace HTTP/1.1\r\nhost: localhost\r\nx-big: {}\r\n\r\n",
        "x".repeat(256 << 10)
    );
    let answer = raw(&server, big.as_bytes()).await;
    assert_status(&answer, 431, "RequestHeaderFieldsTooLarge");
    assert!(answer.contains("larger than 65536 bytes"), "{answer}");

    // On a keep-alive connection, after an answered review: the review's answer, then the Status.
    let review = common::review("delete-namespace-shop.json");
    let mut both = head(review.len()).into_bytes();
    both.extend_from_slice(&review);
    both.extend_from_slice(b"GARBAGE\r\n\r\n");
    let answer = raw(&server, &both).await;
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
    let second = &answer[answer.find("HTTP/1.1 400 ").unwrap_or_else(|| panic!("{answer}"))..];
    assert_status(second, 400, "BadRequest");

    // A body that cannot be read is a 400 naming why, not a 413.
    let chunked = "POST /validate-namespace HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
                   transfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n";
    let answer = raw(&server, chunked.as_bytes()).await;
    assert_status(&answer, 400, "BadRequest");
    assert!(answer.contains("cannot read the request body"), "{answer}");
    // A chunked body over 8 MiB (no length declared) is a 413.
    let mut stream = server.connect().await;
    let start = "POST /validate-namespace HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
                 transfer-encoding: chunked\r\n\r\n";
    let _ = stream.write_all(start.as_bytes()).await;
    for _ in 0..9 {
        let _ = stream.write_all(format!("{:x}\r\n", 1 << 20).as_bytes()).await;
        let _ = stream.write_all(&vec![b' '; 1 << 20]).await;
        let _ = stream.write_all(b"\r\n").await;
    }
    let answer = read_until_closed(&mut stream).await;
    assert_status(&answer, 413, "RequestEntityTooLarge");
    // And the server still answers reviews.
    assert_eq!(server.review().await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_over_the_buffered_bytes_budget_are_shed_with_503() {
    let server = Server::start(&["--max-buffered-body-bytes", "1048576"], 1024).await;
    // An upload that declares 4 MiB and stalls after 900 KiB holds 900 KiB of the 1 MiB budget.
    let mut stalled = server.connect().await;
    stalled.write_all(head(4 << 20).as_bytes()).await.unwrap();
    stalled.write_all(&vec![b' '; 900 << 10]).await.unwrap();
    stalled.flush().await.unwrap();
    eventually("900 KiB buffered", Duration::from_secs(5), || async {
        server.metric("kruise_webhook_buffered_body_bytes").await >= (900 << 10) as f64
    })
    .await;
    // A 200 KiB review does not fit: 503 with a JSON Status, at once.
    let mut padded = common::review("delete-namespace-shop.json");
    padded.resize(200 << 10, b' ');
    let asked = Instant::now();
    let (status, body) = server.post("/validate-namespace", padded.clone()).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["kind"], "Status");
    assert_eq!(body["reason"], "ServiceUnavailable");
    assert!(
        body["message"].as_str().unwrap().contains("1048576 bytes"),
        "{body}"
    );
    assert!(asked.elapsed() < Duration::from_secs(1));
    // A small review still fits.
    assert_eq!(server.review().await.0, 200);
    // Once the upload is gone, its bytes are released and the large review is answered.
    drop(stalled);
    eventually("bytes released", Duration::from_secs(5), || async {
        server.metric("kruise_webhook_buffered_body_bytes").await == 0.0
    })
    .await;
    let (status, body) = server.post("/validate-namespace", padded).await;
    assert_eq!(status, 200, "{body}");
}

/// Reads one HTTP/1.1 answer (head and `content-length` body) off `stream`; what arrived if the
/// connection ends or breaks first, or 5 s pass.
async fn read_answer(stream: &mut TlsStream<tokio::net::TcpStream>) -> String {
    let mut out = Vec::new();
    let complete = |out: &[u8]| {
        let text = String::from_utf8_lossy(out);
        let Some(end) = text.find("\r\n\r\n") else {
            return false;
        };
        let length = text[..end]
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")?
                    .trim()
                    .parse()
                    .ok()
            })
            .unwrap_or(0);
        out.len() >= end + 4 + length
    };
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        let mut chunk = [0u8; 16 << 10];
        while !complete(&out) {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await;
    String::from_utf8_lossy(&out).into_owned()
}

/// A client still sending its body when the 503 comes (kube-apiserver's HTTP/1.1 transport writes the
/// whole body before it looks at an answer) is not cut off: the server reads the rest, so the client's
/// writes succeed, it reads the 503, and the connection serves its next review.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shed_client_still_sending_gets_its_503_and_keeps_its_connection() {
    let server = Server::start(&["--max-buffered-body-bytes", "1048576"], 1024).await;
    let mut stalled = server.connect().await;
    stalled.write_all(head(4 << 20).as_bytes()).await.unwrap();
    stalled.write_all(&vec![b' '; 900 << 10]).await.unwrap();
    stalled.flush().await.unwrap();
    eventually("900 KiB buffered", Duration::from_secs(5), || async {
        server.metric("kruise_webhook_buffered_body_bytes").await >= (900 << 10) as f64
    })
    .await;
    // 400 KiB declared; 200 KiB sent, over what is left of the budget: the 503 comes mid-body.
    let review = common::review("delete-namespace-shop.json");
    let mut padded = review.clone();
    padded.resize(400 << 10, b' ');
    let mut shed = server.connect().await;
    shed.write_all(head(padded.len()).as_bytes()).await.unwrap();
    shed.write_all(&padded[..200 << 10]).await.unwrap();
    shed.flush().await.unwrap();
    let answer = read_answer(&mut shed).await;
    assert!(answer.starts_with("HTTP/1.1 503 "), "{answer}");
    assert!(answer.contains("\"reason\":\"ServiceUnavailable\""), "{answer}");
    // A slow client sends the rest later; the connection was not closed under it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    shed.write_all(&padded[200 << 10..]).await.unwrap();
    shed.flush().await.unwrap();
    shed.write_all(head(review.len()).as_bytes()).await.unwrap();
    shed.write_all(&review).await.unwrap();
    shed.flush().await.unwrap();
    let answer = read_answer(&mut shed).await;
    assert!(
        answer.starts_with("HTTP/1.1 200 "),
        "the next review on the connection: {answer:?}"
    );
    drop(stalled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2_only_clients_are_served_past_the_stream_limit_on_one_connection() {
    let server = Server::start(&[], 1024).await;
    let mut tls = common::client_tls(&server.ca);
    tls.alpn_protocols = vec![b"h2".to_vec()];
    let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let stream = tokio_rustls::TlsConnector::from(Arc::new(tls))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (sender, connection) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(stream),
    )
    .await
    .unwrap();
    tokio::spawn(connection);

    // 100 reviews at once on one connection, over the 64 concurrent streams the server allows: the client
    // waits for a free stream and every review is answered. One review first, so that the server's
    // SETTINGS (its stream limit) have reached the client: streams opened before that and over the limit
    // are refused by HTTP/2 (REFUSED_STREAM), which Go's client — kube-apiserver's — retries and
    // hyper's does not.
    let body = bytes::Bytes::from(common::review("delete-namespace-shop.json"));
    let review = |body: bytes::Bytes| {
        http::Request::post("https://localhost/validate-namespace")
            .header("content-type", "application/json")
            .body(http_body_util::Full::new(body))
            .unwrap()
    };
    let first = sender.clone().send_request(review(body.clone())).await.unwrap();
    assert_eq!(first.status(), 200);
    let reviews = (0..100).map(|_| {
        let mut sender = sender.clone();
        let body = body.clone();
        async move {
            let response = sender.send_request(review(body)).await.unwrap();
            let status = response.status().as_u16();
            let bytes = http_body_util::BodyExt::collect(response.into_body())
                .await
                .unwrap()
                .to_bytes();
            (status, serde_json::from_slice::<Value>(&bytes).unwrap())
        }
    });
    let answers = futures::future::join_all(reviews).await;
    assert_eq!(answers.len(), 100);
    for (status, body) in answers {
        assert_eq!(status, 200);
        assert_eq!(body["response"]["status"]["code"], 403, "{body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_gone_mid_request_leave_nothing_behind() {
    let server = Server::start(&[], 1024).await;
    let review = common::review("delete-namespace-shop.json");
    for _ in 0..20 {
        // Gone halfway through the body: nothing was decided.
        let mut half = server.connect().await;
        half.write_all(head(review.len()).as_bytes()).await.unwrap();
        half.write_all(&review[..review.len() / 2]).await.unwrap();
        half.flush().await.unwrap();
        drop(half);
        // Gone right after the whole request, before the answer.
        let mut whole = server.connect().await;
        whole.write_all(head(review.len()).as_bytes()).await.unwrap();
        whole.write_all(&review).await.unwrap();
        whole.flush().await.unwrap();
        drop(whole);
    }
    let (status, body) = server.review().await;
    assert_eq!(status, 200);
    assert_eq!(body["response"]["status"]["code"], 403);
    eventually("connections closed", Duration::from_secs(5), || async {
        server.metric("kruise_webhook_open_connections").await == 0.0
    })
    .await;
}
