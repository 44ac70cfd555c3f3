//! The CRI client against a real containerd (started by `scripts/containerd.sh` under a temporary
//! directory). Without containerd and root the tests skip with a message, unless `KRUISE_REQUIRE_CRI` is
//! set (CI sets it: there they must run).

#[path = "../../tests/common/containerd.rs"]
mod containerd;

use std::time::Duration;

use containerd::Containerd;

use kruise_cri::{DiscoverError, discover, v1::ListImagesRequest};

const TIMEOUT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn containerd_is_found_among_the_candidates_and_answers_cri_v1() {
    let Some(containerd) = Containerd::start() else {
        return;
    };
    let found = discover(containerd.dir(), None, TIMEOUT).await.unwrap();
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
