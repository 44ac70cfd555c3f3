//! SIGTERM: stop accepting, finish in-flight reviews, exit within 10 s.

mod common;

use std::{
    process::{Command, Stdio},
    time::{Duration, Instant},
};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn sigterm_exits_in_time_with_open_connections() {
    common::init();
    let dir = tempfile::tempdir().unwrap();
    let (port, metrics) = (free_port(), free_port());
    let mut child = Command::new(env!("CARGO_BIN_EXE_kruise"))
        .args(["serve", "--objects"])
        .arg(common::repo().join("examples/cluster"))
        .arg("--cert-dir")
        .arg(dir.path())
        .args(["--bind-address", "127.0.0.1", "--port", &port.to_string()])
        .args(["--metrics-addr", &format!("127.0.0.1:{metrics}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until it serves, keeping a pooled keep-alive connection open.
    let started = Instant::now();
    let client = loop {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "server did not start"
        );
        if let Ok(ca) = std::fs::read_to_string(dir.path().join("ca.crt")) {
            let client = common::client(&ca, ([127, 0, 0, 1], port).into());
            let sent = client
                .post(format!("https://localhost:{port}/validate-namespace"))
                .header("content-type", "application/json")
                .body(common::review("delete-namespace-shop.json"))
                .send()
                .await;
            if sent.is_ok_and(|r| r.status() == 200) {
                break client;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let term = Instant::now();
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = loop {
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        assert!(
            term.elapsed() < Duration::from_secs(10),
            "still running 10 s after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(exit.success(), "{exit:?}");
    drop(client);
}
