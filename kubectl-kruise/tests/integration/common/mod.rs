//! A playground (kruise-rs installed, its controllers running) on a thread of its own, and the real
//! kubectl with this crate's `kubectl-kruise` first on PATH, so `kubectl kruise …` runs the plugin
//! exactly as a user's kubectl finds it. kubectl must be on PATH: without it these tests fail.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A running playground, stopped on drop.
pub struct Cluster {
    pub kubeconfig: PathBuf,
    dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What a command did.
#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Starts the playground; returns once kruise-rs answers.
pub fn start() -> Cluster {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("playground.kubeconfig");
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let path = kubeconfig.clone();
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let options = kruise_rs::playground::Options {
                kubelet_delay: Duration::from_millis(200),
                ..Default::default()
            };
            let handle = kruise_rs::playground::start(options)
                .await
                .expect("the playground starts");
            handle.write_kubeconfig(&path).unwrap();
            ready_tx.send(()).unwrap();
            let _ = stop_rx.await;
            handle.shutdown().await;
        });
    });
    ready_rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the playground is ready");
    Cluster {
        kubeconfig,
        dir,
        stop: Some(stop_tx),
        thread: Some(thread),
    }
}

/// PATH with the plugin's directory first.
pub fn plugin_path() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_kubectl-kruise"));
    let dir = bin.parent().unwrap().display().to_string();
    format!("{dir}:{}", std::env::var("PATH").unwrap_or_default())
}

impl Cluster {
    /// Runs `kubectl ARGS` (stdin: `input`).
    pub fn run(&self, args: &[&str], input: Option<&str>) -> Output {
        self.run_env(&[], args, input)
    }

    /// Runs `kubectl ARGS` with extra environment variables (stdin: `input`).
    pub fn run_env(&self, env: &[(&str, &str)], args: &[&str], input: Option<&str>) -> Output {
        let mut child = Command::new("kubectl")
            .envs(env.iter().copied())
            .env("KUBECONFIG", &self.kubeconfig)
            .env("KUBECACHEDIR", self.dir.path().join("kube-cache"))
            .env("PATH", plugin_path())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl must be on PATH for these tests");
        if let Some(input) = input {
            use std::io::Write as _;
            child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        } else {
            drop(child.stdin.take());
        }
        let out = child.wait_with_output().unwrap();
        let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: text(out.stdout),
            stderr: text(out.stderr),
        }
    }

    /// Runs kubectl, which must succeed; returns its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args, None);
        assert_eq!(out.code, 0, "kubectl {args:?} failed: {}", out.stderr);
        out.stdout
    }

    /// `kubectl apply -f -` of `yaml`.
    pub fn apply(&self, yaml: &str) {
        let out = self.run(&["apply", "-f", "-"], Some(yaml));
        assert_eq!(out.code, 0, "apply failed: {}", out.stderr);
    }

    /// A JSONPath of one object.
    pub fn jsonpath(&self, object: &str, path: &str) -> String {
        self.ok(&["get", object, "-o", &format!("jsonpath={path}")])
    }
}

/// Polls `check` every 100 ms until it holds; fails after 60 s.
pub fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A CloneSet of `replicas` pods running `image`, with `strategy` as its v1beta1 updateStrategy.
pub fn cloneset(name: &str, replicas: u32, image: &str, strategy: &str) -> String {
    format!(
        "apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata:
  name: {name}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
        - name: main
          image: {image}
  updateStrategy: {strategy}
"
    )
}

/// A stand-in for kubectl, for the plugin's own calls (`KUBECTL=<path>`): prints each argument on a
/// line and exits with `code`. It shows the command line the plugin built and that the exit code
/// comes back, where the playground cannot do what the real kubectl would ask (pods/exec).
pub fn recording_kubectl(dir: &Path, code: i32) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join(format!("kubectl-exit-{code}"));
    std::fs::write(&path, format!("#!/bin/sh\nprintf '%s\\n' \"$@\"\nexit {code}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}
