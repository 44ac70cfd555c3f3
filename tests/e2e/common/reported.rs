//! `kruise serve` children on ports the kernel chose. A port found free by binding `:0` and dropping
//! the listener can be taken by another test (or a client's ephemeral port) before the child binds it;
//! here the child binds `:0` itself and the test reads the addresses from its JSON log lines
//! ("probes listening" with `metrics_addr`, "kruise webhook server listening" with `webhook_addr`).

use std::{
    collections::{HashMap, VecDeque},
    io::{BufRead as _, BufReader},
    net::SocketAddr,
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

/// Lines of the child's log kept for a failure message.
const TAIL: usize = 40;

#[derive(Default)]
struct Seen {
    metrics: Option<SocketAddr>,
    webhook: Option<SocketAddr>,
    tail: VecDeque<String>,
    /// How many lines carried each message.
    messages: HashMap<String, usize>,
}

/// What a child reported about its listeners; its stderr is read (and drained) by a thread.
#[derive(Clone)]
pub struct Reported(Arc<Mutex<Seen>>);

/// Spawns `command` (a `kruise serve …` that binds `--port 0` and `--metrics-addr 127.0.0.1:0`) with
/// JSON logs on stderr, at least `info` from the server module and leader election whatever
/// `RUST_LOG` it was given.
pub fn spawn(command: &mut Command) -> (Child, Reported) {
    let level = command
        .get_envs()
        .find(|(k, _)| *k == "RUST_LOG")
        .and_then(|(_, v)| v.map(|v| v.to_string_lossy().into_owned()))
        .or_else(|| std::env::var("RUST_LOG").ok())
        .unwrap_or_else(|| "info".into());
    let mut child = command
        .env("KRUISE_LOG_FORMAT", "json")
        .env(
            "RUST_LOG",
            format!("{level},kruise_rs::server=info,kruise_rs::cluster::leader=info"),
        )
        .stderr(Stdio::piped())
        .spawn()
        .expect("the child starts");
    let reported = Reported(Arc::default());
    let stderr = child.stderr.take().expect("stderr is piped");
    let seen = reported.0.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let fields: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
            let addr = |key: &str| fields.get(key)?.as_str()?.parse::<SocketAddr>().ok();
            let mut seen = seen.lock().unwrap();
            seen.metrics = seen.metrics.or(addr("metrics_addr"));
            seen.webhook = seen.webhook.or(addr("webhook_addr"));
            if let Some(message) = fields.get("message").and_then(|m| m.as_str()) {
                *seen.messages.entry(message.to_string()).or_default() += 1;
            }
            if seen.tail.len() == TAIL {
                seen.tail.pop_front();
            }
            seen.tail.push_back(line);
        }
    });
    (child, reported)
}

impl Reported {
    /// The probes and metrics address, once bound (it is bound first, before any API call).
    pub async fn metrics(&self) -> SocketAddr {
        self.wait("the probes address", |s| s.metrics).await
    }

    /// The webhook address, once bound.
    pub async fn webhook(&self) -> SocketAddr {
        self.wait("the webhook address", |s| s.webhook).await
    }

    /// How many lines the child logged with `message`.
    pub fn logged(&self, message: &str) -> usize {
        let seen = self.0.lock().unwrap();
        seen.messages.get(message).copied().unwrap_or(0)
    }

    /// The last lines the child logged.
    pub fn tail(&self) -> String {
        let seen = self.0.lock().unwrap();
        seen.tail.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    async fn wait(&self, what: &str, get: impl Fn(&Seen) -> Option<SocketAddr>) -> SocketAddr {
        let started = Instant::now();
        loop {
            if let Some(addr) = get(&self.0.lock().unwrap()) {
                return addr;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "no {what} reported within 60 s; the child's log:\n{}",
                self.tail()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
