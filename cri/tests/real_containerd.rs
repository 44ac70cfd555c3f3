//! The CRI client against a real containerd (started by `scripts/containerd.sh` under a temporary
//! directory). Without containerd and root the tests skip with a message, unless `KRUISE_REQUIRE_CRI` is
//! set (CI sets it: there they must run).

use std::{path::Path, process::Command, time::Duration};

use kruise_cri::{DiscoverError, discover, v1::ListImagesRequest};

const TIMEOUT: Duration = Duration::from_secs(10);

/// A containerd of the test's own; stopped on drop.
struct Containerd {
    dir: tempfile::TempDir,
}

impl Containerd {
    fn start() -> Option<Containerd> {
        let dir = tempfile::tempdir().unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/containerd.sh");
        let out = Command::new("bash")
            .arg(&script)
            .arg("start")
            .arg(dir.path())
            .output()
            .expect("bash runs");
        if out.status.success() {
            return Some(Containerd { dir });
        }
        let why = String::from_utf8_lossy(&out.stderr);
        assert!(
            std::env::var_os("KRUISE_REQUIRE_CRI").is_none(),
            "KRUISE_REQUIRE_CRI is set but containerd did not start: {why}"
        );
        eprintln!("skipped: containerd did not start here (needs root and Debian's containerd): {why}");
        None
    }

    fn socket(&self) -> std::path::PathBuf {
        self.dir.path().join("containerd.sock")
    }
}

impl Drop for Containerd {
    fn drop(&mut self) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/containerd.sh");
        let _ = Command::new("bash")
            .arg(script)
            .arg("stop")
            .arg(self.dir.path())
            .status();
    }
}

#[tokio::test]
async fn containerd_is_found_among_the_candidates_and_answers_cri_v1() {
    let Some(containerd) = Containerd::start() else {
        return;
    };
    let found = discover(containerd.dir.path(), None, TIMEOUT).await.unwrap();
    assert_eq!(found.runtime.name(), "containerd");
    assert!(!found.runtime.runtime_version().is_empty());
    assert_eq!(found.runtime.path(), containerd.socket());
    assert!(found.skipped.is_empty());
    let mut images = found.runtime.images.clone();
    let listed = images
        .list_images(ListImagesRequest { filter: None })
        .await
        .unwrap();
    assert!(
        listed.into_inner().images.is_empty(),
        "a fresh containerd has no images"
    );
}

#[tokio::test]
async fn a_dead_socket_before_the_live_one_is_skipped() {
    let Some(containerd) = Containerd::start() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    drop(std::os::unix::net::UnixListener::bind(root.path().join("containerd.sock")).unwrap());
    std::os::unix::fs::symlink(containerd.socket(), root.path().join("crio.sock")).unwrap();
    let found = discover(root.path(), None, TIMEOUT).await.unwrap();
    assert_eq!(found.runtime.name(), "containerd");
    assert_eq!(found.runtime.path(), root.path().join("crio.sock"));
    assert_eq!(found.skipped.len(), 1, "{:?}", found.skipped);
    assert!(found.skipped[0].to_string().contains("containerd.sock"));

    // The configured socket is the only one tried.
    let only = discover(root.path(), Some(&root.path().join("containerd.sock")), TIMEOUT).await;
    assert!(
        matches!(only, Err(DiscoverError::NoneAnswered(ref e)) if e.len() == 1),
        "{only:?}"
    );
}
