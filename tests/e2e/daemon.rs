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
