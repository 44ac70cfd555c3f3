//! `kruise daemon` as a process: unready with the reason while no runtime answers, ready once a real
//! containerd's socket appears, unready again when containerd stops and ready again when it is back.

use crate::common::containerd;
use crate::common::plain_http;

use std::{
    net::TcpListener,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use containerd::Containerd;

/// A running `kruise daemon`, killed on drop.
struct Agent {
    child: Child,
    port: u16,
}

impl Agent {
    fn start(host_run_dir: &std::path::Path) -> Agent {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(env!("CARGO_BIN_EXE_kruise"))
            .args([
                "daemon",
                "--addr",
                &format!("127.0.0.1:{port}"),
                "--probe-interval",
                "1",
            ])
            .arg("--host-run-dir")
            .arg(host_run_dir)
            .env("NODE_NAME", "node-1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Agent { child, port }
    }

    /// Status and body of GET `path`, or None while nothing listens.
    async fn get(&self, path: &str) -> Option<(u16, String)> {
        plain_http::get(self.port, path).await
    }

    /// Polls /readyz until `want` (status) and the body contains `text`; panics after 30 s.
    async fn wait_ready(&self, want: u16, text: &str) -> String {
        let start = Instant::now();
        loop {
            if let Some((status, body)) = self.get("/readyz").await
                && status == want
                && body.contains(text)
            {
                return body;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "/readyz never gave {want} with {text:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn without_a_runtime_the_agent_stays_up_and_unready_and_picks_containerd_up_when_it_appears() {
    let host_run = tempfile::tempdir().unwrap();
    let agent = Agent::start(host_run.path());
    let body = agent.wait_ready(503, "no container runtime socket under").await;
    assert!(body.contains("containerd.sock"), "{body}");
    assert_eq!(
        agent.get("/healthz").await,
        Some((200, "ok".into())),
        "alive while unready"
    );

    let Some(containerd) = Containerd::start() else {
        return;
    };
    std::os::unix::fs::symlink(containerd.socket(), host_run.path().join("containerd.sock")).unwrap();
    let body = agent.wait_ready(200, "ok: containerd").await;
    assert!(body.contains("containerd.sock"), "{body}");

    containerd.stop();
    agent.wait_ready(503, "no container runtime").await;
    assert_eq!(agent.get("/healthz").await, Some((200, "ok".into())));
    containerd.restart();
    agent.wait_ready(200, "ok: containerd").await;
}

#[test]
fn without_a_node_name_the_agent_refuses_to_start() {
    let out = Command::new(env!("CARGO_BIN_EXE_kruise"))
        .args(["daemon", "--addr", "127.0.0.1:0"])
        .env_remove("NODE_NAME")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("NODE_NAME"), "{stderr}");
}

/// `kruise daemon --feature-gates …` (no API server, no runtime): its stderr until `until` or exit.
fn daemon_log(gates: &str, until: &[&str]) -> (Option<i32>, String) {
    use std::io::{BufRead as _, BufReader};
    let host_run = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kruise"))
        .args(["daemon", "--addr", "127.0.0.1:0", "--feature-gates", gates])
        .arg("--host-run-dir")
        .arg(host_run.path())
        .env("NODE_NAME", "node-1")
        .env("KUBECONFIG", host_run.path().join("none"))
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Lines arrive through a thread, so a missing line fails after 30 s instead of hanging.
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut log = String::new();
    while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        log.push_str(&line);
        log.push('\n');
        if !until.is_empty() && until.iter().all(|u| log.contains(u)) {
            break;
        }
    }
    let _ = child.kill();
    let code = child.wait().unwrap().code();
    (code, log)
}

#[test]
fn the_agent_takes_feature_gates_and_refuses_unknown_ones() {
    let (code, log) = daemon_log("KruiseDaemon=true,Nope=false", &[]);
    assert_eq!(code, Some(2), "{log}");
    assert!(log.contains("unrecognized feature gate: Nope"), "{log}");

    let (_, log) = daemon_log(
        "PodProbeMarkerGate=false, ImagePullJobGate=false",
        &["PodProbeMarker probes", "image pre-pull", "node agent started"],
    );
    assert!(
        log.contains("feature gate off: PodProbeMarker probes (NodePodProbe) is not started"),
        "{log}"
    );
    assert!(
        log.contains("feature gate off: image pre-pull (NodeImage) is not started"),
        "{log}"
    );
    assert!(!log.contains("container recreation"), "{log}");
}
