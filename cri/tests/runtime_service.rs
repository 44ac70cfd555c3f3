//! The runtime service against a real containerd and a loopback registry: a host-network sandbox and a
//! busybox container in it, labelled as kubelet labels them; exec, stop (SIGTERM, then the exit code),
//! a second attempt, removal. Skips without containerd and root unless `KRUISE_REQUIRE_CRI` is set.

#[path = "../../tests/e2e/common/containerd.rs"]
mod containerd;
#[path = "../../tests/e2e/common/registry.rs"]
mod registry;
#[path = "../../tests/e2e/common/repo_script.rs"]
mod repo_script;

use std::time::Duration;

use containerd::Containerd;
use registry::Registry;

use kruise_cri::{
    Runtime, discover, kubelet,
    v1::{
        ContainerConfig, ContainerMetadata, ContainerState, ImageSpec, LinuxPodSandboxConfig,
        LinuxSandboxSecurityContext, NamespaceMode, NamespaceOption, PodSandboxConfig, PodSandboxMetadata,
        PodSandboxState,
    },
};

const TIMEOUT: Duration = Duration::from_secs(20);

fn sandbox_config(uid: &str, log_dir: &std::path::Path) -> PodSandboxConfig {
    PodSandboxConfig {
        metadata: Some(PodSandboxMetadata {
            name: "web-0".into(),
            uid: uid.into(),
            namespace: "shop".into(),
            attempt: 0,
        }),
        log_directory: log_dir.display().to_string(),
        labels: [
            (kubelet::POD_NAME, "web-0"),
            (kubelet::POD_NAMESPACE, "shop"),
            (kubelet::POD_UID, uid),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect(),
        linux: Some(LinuxPodSandboxConfig {
            security_context: Some(LinuxSandboxSecurityContext {
                namespace_options: Some(NamespaceOption {
                    network: NamespaceMode::Node.into(),
                    ..NamespaceOption::default()
                }),
                ..LinuxSandboxSecurityContext::default()
            }),
            ..LinuxPodSandboxConfig::default()
        }),
        ..PodSandboxConfig::default()
    }
}

fn container_config(uid: &str, image: &str, attempt: u32, command: &[&str]) -> ContainerConfig {
    ContainerConfig {
        metadata: Some(ContainerMetadata {
            name: "app".into(),
            attempt,
        }),
        image: Some(ImageSpec {
            image: image.into(),
            ..ImageSpec::default()
        }),
        command: command.iter().map(|c| (*c).to_owned()).collect(),
        log_path: format!("app/{attempt}.log"),
        labels: [
            (kubelet::POD_NAME, "web-0"),
            (kubelet::POD_NAMESPACE, "shop"),
            (kubelet::POD_UID, uid),
            (kubelet::CONTAINER_NAME, "app"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect(),
        annotations: [
            (
                kubelet::CONTAINER_HASH.to_owned(),
                kubelet::container_hash_hex("app", image),
            ),
            (kubelet::CONTAINER_RESTART_COUNT.to_owned(), attempt.to_string()),
        ]
        .into_iter()
        .collect(),
        ..ContainerConfig::default()
    }
}

async fn running(runtime: &Runtime, id: &str) {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let status = runtime.container_status(id).await.unwrap();
        if status.state() == ContainerState::ContainerRunning {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{id} never ran: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_sandbox_and_a_container_run_exec_stop_and_go() {
    let (Some(containerd), Some(registry)) = (Containerd::start(), Registry::start()) else {
        return;
    };
    let runtime = discover(containerd.dir(), None, TIMEOUT).await.unwrap().runtime;
    let image = registry.push("demo:v1");
    let image_id = runtime.pull_image(&image, None, TIMEOUT).await.unwrap();
    let logs = tempfile::tempdir().unwrap();
    let uid = "8d1d2c33-0000-4000-8000-000000000001";
    let sandbox = sandbox_config(uid, logs.path());
    let sandbox_id = runtime.run_pod_sandbox(sandbox.clone()).await.unwrap();

    let by_pod = [(kubelet::POD_UID, uid)];
    let listed = runtime.list_pod_sandboxes(&by_pod).await.unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].id, sandbox_id);
    assert_eq!(listed[0].state(), PodSandboxState::SandboxReady);
    assert_eq!(listed[0].labels[kubelet::POD_NAME], "web-0");
    assert!(
        runtime
            .list_pod_sandboxes(&[(kubelet::POD_UID, "another")])
            .await
            .unwrap()
            .is_empty()
    );

    // A shell that exits 143 on SIGTERM (busybox sleep in the foreground would not see it).
    let command = [
        "/bin/sh",
        "-c",
        "trap 'exit 143' TERM; while true; do sleep 0.1; done",
    ];
    let first = runtime
        .create_container(
            &sandbox_id,
            container_config(uid, &image, 0, &command),
            sandbox.clone(),
        )
        .await
        .unwrap();
    runtime.start_container(&first).await.unwrap();
    running(&runtime, &first).await;
    let status = runtime.container_status(&first).await.unwrap();
    assert_eq!(status.labels[kubelet::CONTAINER_NAME], "app");
    assert_eq!(
        status.annotations[kubelet::CONTAINER_HASH],
        kubelet::container_hash_hex("app", &image)
    );
    assert!(status.started_at > 0 && status.finished_at == 0, "{status:?}");
    assert!(
        status.image_ref == image_id || status.image_ref.contains("@sha256:"),
        "{} vs {image_id}",
        status.image_ref
    );

    let out = runtime
        .exec_sync(
            &first,
            &["/bin/sh", "-c", "echo hello; cat /image.txt; exit 3"],
            TIMEOUT,
        )
        .await
        .unwrap();
    assert_eq!(out.exit_code, 3);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hello\ndemo:v1\n");
    let slow = runtime
        .exec_sync(&first, &["/bin/sleep", "30"], Duration::from_secs(1))
        .await;
    assert!(
        slow.is_err() || slow.as_ref().is_ok_and(|o| o.exit_code != 0),
        "{slow:?}"
    );

    let in_pod = [(kubelet::POD_UID, uid), (kubelet::CONTAINER_NAME, "app")];
    let listed = runtime.list_containers(&in_pod, None).await.unwrap();
    assert_eq!(
        listed.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        [first.as_str()]
    );

    runtime
        .stop_container(&first, Duration::from_secs(10))
        .await
        .unwrap();
    let stopped = runtime.container_status(&first).await.unwrap();
    assert_eq!(stopped.state(), ContainerState::ContainerExited);
    assert_eq!(stopped.exit_code, 143, "SIGTERM reached the shell: {stopped:?}");
    assert!(stopped.finished_at >= stopped.started_at);
    // An exited container does not start again: the next attempt is a new container.
    assert!(runtime.start_container(&first).await.is_err());
    let second = runtime
        .create_container(
            &sandbox_id,
            container_config(uid, &image, 1, &["/bin/sh", "-c", "exit 7"]),
            sandbox,
        )
        .await
        .unwrap();
    runtime.start_container(&second).await.unwrap();
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    let exited = loop {
        let s = runtime.container_status(&second).await.unwrap();
        if s.state() == ContainerState::ContainerExited {
            break s;
        }
        assert!(tokio::time::Instant::now() < deadline, "never exited: {s:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!((exited.exit_code, exited.reason.as_str()), (7, "Error"));
    assert_eq!(runtime.list_containers(&in_pod, None).await.unwrap().len(), 2);

    runtime.remove_container(&first).await.unwrap();
    runtime
        .remove_container(&first)
        .await
        .expect("removing twice is no error");
    let err = runtime.container_status(&first).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    runtime.stop_pod_sandbox(&sandbox_id).await.unwrap();
    runtime.remove_pod_sandbox(&sandbox_id).await.unwrap();
    assert!(runtime.list_pod_sandboxes(&by_pod).await.unwrap().is_empty());
    assert!(runtime.list_containers(&in_pod, None).await.unwrap().is_empty());
    runtime
        .remove_pod_sandbox(&sandbox_id)
        .await
        .expect("gone already");
}
