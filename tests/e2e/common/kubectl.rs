//! `kruise playground` as a process, driven with the real kubectl (which must be on PATH).

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `kruise playground` process, killed on drop.
pub struct Served {
    child: Child,
    /// The kubeconfig the playground wrote.
    pub kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `kruise playground` with three nodes and `extra` arguments; returns once it prints `ready`.
pub fn serve(extra: &[&str]) -> Served {
    serve_nodes(3, extra)
}

/// [`serve`] with `nodes` simulated nodes.
pub fn serve_nodes(nodes: usize, extra: &[&str]) -> Served {
    let nodes = nodes.to_string();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("playground.kubeconfig");
    let mut child = Command::new(env!("CARGO_BIN_EXE_kruise"))
        .args([
            "playground",
            "--listen",
            "127.0.0.1:0",
            "--nodes",
            &nodes,
            "--kubeconfig",
        ])
        .arg(&kubeconfig)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kruise playground starts");
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    loop {
        match lines.next() {
            Some(Ok(line)) if line == "ready" => break,
            Some(Ok(_)) => continue,
            other => panic!("kruise playground ended before printing ready: {other:?}"),
        }
    }
    Served {
        child,
        kubeconfig,
        _dir: dir,
    }
}

/// Runs kubectl; returns (success, stdout, stderr). A missing kubectl fails the test.
pub fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
    let mut cmd = Command::new("kubectl");
    // The discovery cache beside the kubeconfig: nothing read from or left in ~/.kube/cache.
    let cache = kubeconfig
        .parent()
        .map(|d| d.join("kube-cache"))
        .unwrap_or_default();
    cmd.env("KUBECONFIG", kubeconfig)
        .env("KUBECACHEDIR", cache)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .expect("kubectl must be on PATH for these tests (Debian: apt-get install kubernetes-client)");
    if let Some(input) = stdin {
        use std::io::Write as _;
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    } else {
        drop(child.stdin.take());
    }
    let out = child.wait_with_output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (out.status.success(), text(out.stdout), text(out.stderr))
}

/// Runs kubectl, which must succeed; returns its stdout.
pub fn ok(kubeconfig: &Path, args: &[&str]) -> String {
    let (success, out, err) = kubectl(kubeconfig, args, None);
    assert!(success, "kubectl {args:?} failed: {err}");
    out
}

/// Polls `check` every 100 ms until it holds; fails after 30 s.
pub fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
