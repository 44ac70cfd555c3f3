//! Finding the container runtime's socket on a node: the first candidate that answers as CRI v1 wins.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use crate::connect::{ConnectError, Runtime};

/// Sockets tried, relative to the host's `/var/run` (mounted into the agent, by default at
/// `/hostvarrun`), in order: OpenKruise's list (containerd, CRI-O, cri-dockerd; never dockershim), plus
/// k3s/RKE2's containerd, which OpenKruise users had to configure by hand (openkruise/kruise#851, #1196).
pub const CANDIDATES: [&str; 7] = [
    "containerd.sock",
    "containerd/containerd.sock",
    "k3s/containerd/containerd.sock",
    "crio.sock",
    "crio/crio.sock",
    "cri-dockerd.sock",
    "cri-dockerd/cri-dockerd.sock",
];

/// Why no runtime was found.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    /// No candidate socket exists.
    #[error("no container runtime socket under {}: looked for {}", .root.display(), CANDIDATES.join(", "))]
    NoSocket {
        /// Where the candidates were looked for.
        root: PathBuf,
    },
    /// The configured socket does not exist.
    #[error("the runtime socket {} does not exist", .0.display())]
    Missing(PathBuf),
    /// Every existing candidate failed; the errors in the order tried.
    #[error("no container runtime answered: {}", join(.0))]
    NoneAnswered(Vec<ConnectError>),
}

fn join(errors: &[ConnectError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// A runtime found, and the candidates that failed before it.
#[derive(Debug)]
pub struct Discovered {
    /// The runtime.
    pub runtime: Runtime,
    /// Candidates that exist but did not answer as CRI v1.
    pub skipped: Vec<ConnectError>,
}

/// The candidate sockets that exist under `root`, in [`CANDIDATES`] order.
pub fn candidates(root: &Path) -> Vec<PathBuf> {
    CANDIDATES
        .iter()
        .map(|c| root.join(c))
        .filter(|p| p.exists())
        .collect()
}

/// The runtime: at `socket` only when given, else the first of [`candidates`] under `root` that answers
/// (each call within `timeout`).
pub async fn discover(
    root: &Path,
    socket: Option<&Path>,
    timeout: Duration,
) -> Result<Discovered, DiscoverError> {
    let tried = match socket {
        Some(s) if !s.exists() => return Err(DiscoverError::Missing(s.to_path_buf())),
        Some(s) => vec![s.to_path_buf()],
        None => candidates(root),
    };
    if tried.is_empty() {
        return Err(DiscoverError::NoSocket {
            root: root.to_path_buf(),
        });
    }
    let mut skipped = Vec::new();
    for path in tried {
        match Runtime::connect(&path, timeout).await {
            Ok(runtime) => return Ok(Discovered { runtime, skipped }),
            Err(e) => skipped.push(e),
        }
    }
    Err(DiscoverError::NoneAnswered(skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_the_existing_sockets_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for rel in [
            "crio/crio.sock",
            "containerd.sock",
            "k3s/containerd/containerd.sock",
        ] {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "").unwrap();
        }
        let found: Vec<_> = candidates(dir.path())
            .iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            found,
            [
                "containerd.sock",
                "k3s/containerd/containerd.sock",
                "crio/crio.sock"
            ]
        );
    }

    #[tokio::test]
    async fn nothing_to_try_says_where_it_looked() {
        let dir = tempfile::tempdir().unwrap();
        let err = discover(dir.path(), None, Duration::from_secs(1))
            .await
            .unwrap_err();
        assert!(matches!(err, DiscoverError::NoSocket { .. }), "{err}");
        assert!(
            err.to_string()
                .contains("containerd.sock, containerd/containerd.sock"),
            "{err}"
        );
        let missing = dir.path().join("none.sock");
        let err = discover(dir.path(), Some(&missing), Duration::from_secs(1))
            .await
            .unwrap_err();
        assert!(matches!(err, DiscoverError::Missing(_)), "{err}");
    }

    #[tokio::test]
    async fn a_socket_nobody_listens_on_is_skipped_with_its_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("containerd.sock");
        // Bound then closed: the file exists, connecting is refused.
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
        let err = discover(dir.path(), None, Duration::from_secs(1))
            .await
            .unwrap_err();
        let DiscoverError::NoneAnswered(errors) = &err else {
            panic!("{err}")
        };
        assert_eq!(errors.len(), 1);
        assert!(err.to_string().contains("containerd.sock"), "{err}");
    }
}
