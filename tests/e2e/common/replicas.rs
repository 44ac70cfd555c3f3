//! Replicas of `kruise serve` against one playground, as two pods of the Deployment would run, and
//! a proxy in front of them standing for the webhook Service.

use std::{
    net::SocketAddr,
    path::Path,
    process::{Child, Command, Stdio},
};

/// A `kruise serve` process against the playground, killed (SIGKILL) on drop.
pub struct Replica {
    child: Child,
    reported: super::reported::Reported,
    _dir: tempfile::TempDir,
}

impl Replica {
    /// Starts `kruise serve` as pod `name` against the playground of `kubeconfig`, with `extra` flags.
    pub fn start(kubeconfig: &Path, name: &str, extra: &[&str]) -> Replica {
        let dir = tempfile::tempdir().unwrap();
        let (child, reported) = super::reported::spawn(
            Command::new(env!("CARGO_BIN_EXE_kruise"))
                .args(["serve", "--bind-address", "127.0.0.1", "--port", "0"])
                .args(["--metrics-addr", "127.0.0.1:0"])
                .arg("--cert-dir")
                .arg(dir.path())
                .args(extra)
                .env("KUBECONFIG", kubeconfig)
                .env("POD_NAME", name)
                .env("RUST_LOG", "warn")
                .stdout(Stdio::null()),
        );
        Replica {
            child,
            reported,
            _dir: dir,
        }
    }

    /// `/readyz` answers 200.
    pub async fn ready(&self) -> bool {
        let url = format!("http://{}/readyz", self.reported.metrics().await);
        matches!(reqwest::get(url).await, Ok(r) if r.status().is_success())
    }

    /// The webhook address (bound before the replica reports ready).
    pub async fn webhook(&self) -> SocketAddr {
        self.reported.webhook().await
    }

    /// Admission reviews answered so far (`kruise_admission_reviews_total`, every label).
    pub async fn reviews(&self) -> u64 {
        let url = format!("http://{}/metrics", self.reported.metrics().await);
        let text = reqwest::get(url).await.unwrap().text().await.unwrap();
        text.lines()
            .filter(|l| l.starts_with("kruise_admission_reviews_total"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>() as u64
    }

    /// How many lines it logged with `message`.
    pub fn logged(&self, message: &str) -> usize {
        self.reported.logged(message)
    }

    /// The last lines it logged.
    pub fn log_tail(&self) -> String {
        self.reported.tail()
    }

    /// The process has not exited.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// SIGKILL, and reaped.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Forwards each connection on `listener` to one of `backends`, taken in turn, or to the next that
/// accepts it when that one does not.
pub async fn proxy(listener: tokio::net::TcpListener, backends: Vec<SocketAddr>) {
    let mut turn = 0;
    while let Ok((mut client, _)) = listener.accept().await {
        let mut backends = backends.clone();
        let first = turn % backends.len();
        backends.rotate_left(first);
        turn += 1;
        tokio::spawn(async move {
            for backend in backends {
                if let Ok(mut upstream) = tokio::net::TcpStream::connect(backend).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                    return;
                }
            }
        });
    }
}
