//! The CRI client against a real containerd (started by `scripts/containerd.sh` under a temporary
//! directory). Without containerd and root the tests skip with a message, unless `KRUISE_REQUIRE_CRI` is
//! set (CI sets it: there they must run).

#[path = "../../tests/e2e/common/containerd.rs"]
mod containerd;
#[path = "../../tests/e2e/common/registry.rs"]
mod registry;
#[path = "../../tests/e2e/common/repo_script.rs"]
mod repo_script;

use std::time::Duration;

use containerd::Containerd;
use registry::Registry;

use kruise_cri::{DiscoverError, ImageError, discover, v1::ListImagesRequest};

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
    let tags: Vec<String> = listed
        .into_inner()
        .images
        .into_iter()
        .flat_map(|i| i.repo_tags)
        .collect();
    assert_eq!(
        tags,
        [containerd::SANDBOX_IMAGE],
        "a fresh containerd has only the sandbox image scripts/containerd.sh imports"
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

#[tokio::test]
async fn an_image_is_pulled_from_a_loopback_registry_and_a_missing_tag_fails_with_the_runtime_message() {
    let (Some(containerd), Some(registry)) = (Containerd::start(), Registry::start()) else {
        return;
    };
    let runtime = discover(containerd.dir(), None, TIMEOUT).await.unwrap().runtime;
    let image = registry.push("demo:v1");
    assert_eq!(
        runtime.image_id(&image).await.unwrap(),
        None,
        "not on the node yet"
    );
    let pulled = runtime.pull_image(&image, None, TIMEOUT).await.unwrap();
    assert!(pulled.starts_with("sha256:"), "{pulled}");
    assert_eq!(runtime.image_id(&image).await.unwrap(), Some(pulled.clone()));
    // Pulling again is a no-op with the same id.
    assert_eq!(runtime.pull_image(&image, None, TIMEOUT).await.unwrap(), pulled);

    let missing = registry.reference("demo:v9");
    let err = runtime.pull_image(&missing, None, TIMEOUT).await.unwrap_err();
    assert!(matches!(err, ImageError::Pull { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("Failed to pull image reference \"{missing}\"")),
        "{text}"
    );
    assert!(text.contains("not found"), "{text}");
}
