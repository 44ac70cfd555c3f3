//! Shared helpers of the fidelity tests: a started playground, raw HTTP requests through its
//! kube client, and the real `kubectl` driven with the written kubeconfig.

#![allow(dead_code)]

pub mod webhooks;

use std::path::PathBuf;
use std::time::Duration;

use http_body_util::BodyExt as _;
use kruise_playground::{Playground, PlaygroundOptions};
use serde_json::Value;

/// A playground with default options.
pub async fn start() -> Playground {
    start_with(PlaygroundOptions::default()).await
}

/// A playground with options.
pub async fn start_with(options: PlaygroundOptions) -> Playground {
    Playground::start(options).await.expect("playground starts")
}

/// A playground with `nodes` simulated nodes whose kubelets start containers after 50 ms.
pub async fn start_nodes(nodes: usize) -> Playground {
    start_with(PlaygroundOptions {
        nodes,
        kubelet_delay: Duration::from_millis(50),
        ..PlaygroundOptions::default()
    })
    .await
}

/// An object as JSON.
pub fn value<T: serde::Serialize>(o: &T) -> Value {
    serde_json::to_value(o).expect("serialisable")
}

/// Sends a raw request; returns the HTTP code and the JSON body.
pub async fn raw(
    client: &kube::Client,
    method: &str,
    path: &str,
    content_type: &str,
    body: &str,
) -> (u16, Value) {
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", content_type)
        .body(kube::client::Body::from(body.as_bytes().to_vec()))
        .expect("request");
    let res = client.send(req).await.expect("response");
    let code = res.status().as_u16();
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
    (code, value)
}

/// Polls `check` until it returns `Some`, for up to 30 seconds.
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    for _ in 0..600 {
        if let Some(v) = check().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

/// The kubectl binary on PATH. Fails loudly: these tests must not pass without it.
pub fn kubectl_path() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("kubectl"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "kubectl not found on PATH: the playground's kubectl fidelity tests drive the real kubectl \
                 binary; install kubectl (CI and the dev machines have it)"
            )
        })
}

/// kubectl against one playground, with its own kubeconfig and cache directory.
pub struct Kubectl {
    bin: PathBuf,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

/// What one kubectl run printed.
#[derive(Debug)]
pub struct Output {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Kubectl {
    pub fn new(pg: &Playground) -> Self {
        let bin = kubectl_path();
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = pg
            .write_kubeconfig(&dir.path().join("kubeconfig"))
            .expect("kubeconfig");
        Kubectl { bin, dir, kubeconfig }
    }

    /// Runs kubectl with `args`, feeding `stdin`.
    pub async fn run_stdin(&self, args: &[&str], stdin: &str) -> Output {
        use tokio::io::AsyncWriteExt as _;
        let cache = self.dir.path().join("cache");
        let mut child = tokio::process::Command::new(&self.bin)
            .args(args)
            .arg(format!("--cache-dir={}", cache.display()))
            .env("KUBECONFIG", &self.kubeconfig)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl starts");
        let mut input = child.stdin.take().expect("stdin");
        input.write_all(stdin.as_bytes()).await.expect("stdin written");
        drop(input);
        let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
            .await
            .expect("kubectl finishes within 60s")
            .expect("kubectl output");
        Output {
            success: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into(),
            stderr: String::from_utf8_lossy(&out.stderr).into(),
        }
    }

    /// Starts a long-running kubectl (`get -w`); its stdout accumulates in the returned buffer
    /// until the child is dropped.
    pub fn spawn(&self, args: &[&str]) -> (tokio::process::Child, std::sync::Arc<std::sync::Mutex<String>>) {
        use tokio::io::AsyncBufReadExt as _;
        let mut child = tokio::process::Command::new(&self.bin)
            .args(args)
            .arg(format!("--cache-dir={}", self.dir.path().join("cache").display()))
            .env("KUBECONFIG", &self.kubeconfig)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("kubectl starts");
        let output = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let mut lines = tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
        let sink = output.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let mut out = sink.lock().unwrap();
                out.push_str(&line);
                out.push('\n');
            }
        });
        (child, output)
    }

    /// Runs kubectl with `args`.
    pub async fn run(&self, args: &[&str]) -> Output {
        self.run_stdin(args, "").await
    }

    /// Runs kubectl and requires success; returns stdout.
    pub async fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args).await;
        assert!(
            out.success,
            "kubectl {args:?} failed: {}{}",
            out.stdout, out.stderr
        );
        out.stdout
    }

    /// `kubectl apply -f -` of `yaml`; requires success; returns stdout.
    pub async fn apply(&self, yaml: &str) -> String {
        let out = self.run_stdin(&["apply", "-f", "-"], yaml).await;
        assert!(out.success, "kubectl apply failed: {}{}", out.stdout, out.stderr);
        out.stdout
    }
}
