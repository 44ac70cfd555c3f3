//! Node agents for end-to-end tests on the real runtime: one `kruise daemon` per simulated node of the
//! playground, all on the same containerd, and the polling the tests do while the agents work.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::containerd::Containerd;
use super::kubectl::kubectl;

/// The playground's simulated nodes (`kruise playground --nodes 3`).
pub const NODES: [&str; 3] = ["playground-node-1", "playground-node-2", "playground-node-3"];

/// `kruise daemon` processes, killed on drop.
pub struct Agents(Vec<Child>);

impl Drop for Agents {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// One `kruise daemon` per node of [`NODES`], talking to `containerd` and the playground.
pub fn agents(kubeconfig: &Path, containerd: &Containerd) -> Agents {
    Agents(
        NODES
            .iter()
            .map(|node| {
                Command::new(env!("CARGO_BIN_EXE_kruise"))
                    .args(["daemon", "--addr", "127.0.0.1:0", "--probe-interval", "1"])
                    .arg("--socket-file")
                    .arg(containerd.socket())
                    .env("NODE_NAME", node)
                    .env("KUBECONFIG", kubeconfig)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect(),
    )
}

/// `kubectl get … -o json`, or `None` when kubectl fails (not found).
pub fn get(k: &Path, what: &[&str]) -> Option<Value> {
    let mut args = vec!["get"];
    args.extend_from_slice(what);
    args.extend_from_slice(&["-o", "json"]);
    let (success, out, _) = kubectl(k, &args, None);
    success.then(|| serde_json::from_str(&out).ok()).flatten()
}

/// Polls `check` every 200 ms for up to `seconds`.
pub fn eventually<T>(what: &str, seconds: u64, mut check: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(
            start.elapsed() < Duration::from_secs(seconds),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// What a test on the real runtime starts: a fresh containerd, a loopback registry with `demo:v1`
/// pushed, the playground in CRI mode on that containerd, a CRI client of it, and one agent per node.
/// Fields drop in declaration order: the agents stop first, containerd last.
pub struct CriPlayground {
    pub agents: Agents,
    pub runtime: kruise_cri::Runtime,
    /// The tokio runtime the CRI client's channel lives on.
    pub rt: tokio::runtime::Runtime,
    pub served: super::kubectl::Served,
    /// `demo:v1` in the registry, as pods name it.
    pub image: String,
    pub registry: super::registry::Registry,
    pub containerd: Containerd,
}

impl CriPlayground {
    /// `None` when containerd or the registry cannot start on this machine (they say why; the test
    /// then passes without running, except where `KRUISE_REQUIRE_CRI` makes that a failure).
    pub fn start() -> Option<CriPlayground> {
        let (containerd, registry) = (Containerd::start()?, super::registry::Registry::start()?);
        let image = registry.push("demo:v1");
        let socket = format!("unix://{}", containerd.socket().display());
        let served = super::kubectl::serve(&["--runtime", &format!("containerd={socket}")]);
        let rt = tokio::runtime::Runtime::new().unwrap();
        let runtime = rt.block_on(async {
            kruise_cri::Runtime::connect(&containerd.socket(), Duration::from_secs(10))
                .await
                .unwrap()
        });
        let agents = agents(&served.kubeconfig, &containerd);
        Some(CriPlayground {
            agents,
            runtime,
            rt,
            served,
            image,
            registry,
            containerd,
        })
    }

    /// The playground's kubeconfig.
    pub fn kubeconfig(&self) -> &Path {
        &self.served.kubeconfig
    }
}
