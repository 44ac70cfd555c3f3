//! `kruise serve` in cluster mode with no API server to reach: the process stays up, its probe port
//! answers at once (alive, unready with the reason), so a liveness probe never restarts it for what a
//! restart cannot fix.

use crate::common::{plain_http, reported};

use std::{
    process::{Command, Stdio},
    time::{Duration, Instant},
};

#[tokio::test]
async fn probes_answer_while_the_api_server_cannot_be_reached() {
    let dir = tempfile::tempdir().unwrap();
    // Port 1 on loopback: nothing listens there, and no test (unprivileged) can start to.
    let dead = 1;
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: \"https://127.0.0.1:{dead}\", insecure-skip-tls-verify: true}}\n\
             users:\n- name: u\n  user: {{token: t}}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n"
        ),
    )
    .unwrap();
    let (mut child, reported) = reported::spawn(
        Command::new(env!("CARGO_BIN_EXE_kruise"))
            .args(["serve", "--port", "0", "--metrics-addr", "127.0.0.1:0"])
            .arg("--cert-dir")
            .arg(dir.path().join("certs"))
            .env("KUBECONFIG", &kubeconfig)
            .env("POD_NAMESPACE", "kruise-system")
            .stdout(Stdio::null()),
    );
    let probes = reported.metrics().await.port();
    let start = Instant::now();
    let ready = loop {
        if let Some(answer) = plain_http::get(probes, "/readyz").await {
            break answer;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the probe port never opened"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(ready.0, 503, "{ready:?}");
    assert!(!ready.1.is_empty(), "the reason is given");
    assert_eq!(
        plain_http::get(probes, "/healthz").await,
        Some((200, "ok".into()))
    );
    // Still running and still unready a while later: it keeps retrying instead of exiting.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(child.try_wait().unwrap().is_none(), "the process exited");
    assert_eq!(plain_http::get(probes, "/readyz").await.map(|r| r.0), Some(503));
    let _ = child.kill();
    let _ = child.wait();
}
