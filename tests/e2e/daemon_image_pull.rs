//! `kruise daemon` pulls what its NodeImage lists, on a real containerd from a registry on 127.0.0.1,
//! reading and writing its NodeImage through a playground API server (kubeconfig): a tag present →
//! in containerd and `Succeeded`; a missing tag → `Failed` with the runtime's message; a digest-pinned
//! tag (openkruise/kruise#2534) → pulled by `name@sha256:…`. Status writes are counted.

use crate::common;
use crate::common::containerd;
use crate::common::registry;

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::cluster::{self, Cluster, requests_between};
use containerd::Containerd;
use kruise_cri::discover;
use registry::Registry;
use serde_json::{Value, json};

const NODE_IMAGES: cluster::Res = ("apps.kruise.io", "v1beta1", "nodeimages");

/// A running `kruise daemon` for node `node-1`, killed on drop.
struct Agent(Child);

impl Agent {
    fn start(cluster: &Cluster, containerd: &Containerd, dir: &std::path::Path) -> Agent {
        let kubeconfig = dir.join("kubeconfig");
        std::fs::write(&kubeconfig, cluster.playground.kubeconfig()).unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(env!("CARGO_BIN_EXE_kruise"))
            .args([
                "daemon",
                "--addr",
                &format!("127.0.0.1:{port}"),
                "--probe-interval",
                "1",
            ])
            .arg("--socket-file")
            .arg(containerd.socket())
            .env("NODE_NAME", "node-1")
            .env("KUBECONFIG", &kubeconfig)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Agent(child)
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn tag(tag: &str, policy: &str) -> Value {
    json!({"tag": tag, "createdAt": "2026-01-01T00:00:00Z", "imagePullPolicy": policy,
        "pullPolicy": {"timeoutSeconds": 60, "backoffLimit": 1, "ttlSecondsAfterFinished": 600}})
}

/// The status of `tag` of image `name` once it has a completion time.
fn finished(cluster: &Cluster, name: &str, tag: &str) -> Option<Value> {
    let ni = cluster.get(NODE_IMAGES, "", "node-1")?;
    let tags = ni.pointer(&format!("/status/imageStatuses/{}/tags", name.replace('/', "~1")))?;
    tags.as_array()?
        .iter()
        .find(|t| t["tag"] == tag && t.get("completionTime").is_some())
        .cloned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_pulls_its_node_image_tags_into_containerd_and_reports_them() {
    let (Some(containerd), Some(registry)) = (Containerd::start(), Registry::start()) else {
        return;
    };
    let reference = registry.push("demo:v2");
    let name = reference.trim_end_matches(":v2").to_owned();
    let cluster = cluster::start().await;
    let dir = tempfile::tempdir().unwrap();
    cluster
        .create(
            NODE_IMAGES,
            json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "NodeImage", "metadata": {"name": "node-1"},
                "spec": {"images": {name.as_str(): {"tags": [tag("v2", "IfNotPresent"), tag("v9", "IfNotPresent")]}}}}),
        )
        .await;
    // Another node's NodeImage is not this agent's business.
    cluster
        .create(
            NODE_IMAGES,
            json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "NodeImage", "metadata": {"name": "node-2"},
                "spec": {"images": {name.as_str(): {"tags": [tag("v2", "IfNotPresent")]}}}}),
        )
        .await;
    let before = cluster.requests();
    let _agent = Agent::start(&cluster, &containerd, dir.path());

    let ok = cluster::eventually("v2 pulled", 60, || finished(&cluster, &name, "v2")).await;
    assert_eq!(ok["phase"], "Succeeded", "{ok}");
    assert_eq!(ok["progress"], 100);
    let image_id = ok["imageID"].as_str().unwrap();
    assert!(image_id.starts_with(&format!("{name}@sha256:")), "{image_id}");
    let runtime = discover(containerd.dir(), None, Duration::from_secs(10))
        .await
        .unwrap()
        .runtime;
    let in_runtime = runtime
        .image_id(&reference)
        .await
        .unwrap()
        .expect("v2 is in containerd");
    assert_eq!(image_id, format!("{name}@{in_runtime}"));

    let failed = cluster::eventually("v9 failed", 60, || finished(&cluster, &name, "v9")).await;
    assert_eq!(failed["phase"], "Failed", "{failed}");
    let message = failed["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("Failed to pull image reference \"{name}:v9\"")),
        "{message}"
    );
    assert!(message.contains("not found"), "{message}");
    let ni = cluster.get(NODE_IMAGES, "", "node-1").unwrap();
    assert_eq!(ni["status"]["desired"], 2);
    assert_eq!(ni["status"]["succeeded"], 1);
    assert_eq!(ni["status"]["failed"], 1);
    assert!(
        cluster
            .get(NODE_IMAGES, "", "node-2")
            .unwrap()
            .get("status")
            .is_none()
    );

    // One event per finished pull, on the NodeImage (the tags have no owner here).
    let notes = |reason: &str| -> Vec<String> {
        cluster
            .list(cluster::EVENTS, "default")
            .iter()
            .filter(|e| e["reason"] == reason && e["regarding"]["name"] == "node-1")
            .filter_map(|e| e["note"].as_str().map(str::to_owned))
            .collect()
    };
    let succeeded = cluster::eventually("a PullImageSucceed event", 10, || {
        Some(notes("PullImageSucceed")).filter(|n| !n.is_empty())
    })
    .await;
    assert_eq!(succeeded.len(), 1, "{succeeded:?}");
    assert!(
        succeeded[0].starts_with(&format!("Image {name}:v2, ecalpsedTime ")),
        "{succeeded:?}"
    );
    let failures = cluster::eventually("a PullImageFailed event", 10, || {
        Some(notes("PullImageFailed")).filter(|n| !n.is_empty())
    })
    .await;
    assert_eq!(failures, [format!("Image {name}:v9 {message}")]);

    // At most two status writes per tag (its start and its end).
    let after = cluster.requests();
    let writes = requests_between(&before, &after, "PATCH", NODE_IMAGES, Some("status"))
        + requests_between(&before, &after, "PUT", NODE_IMAGES, Some("status"));
    eprintln!("status writes for 2 tags: {writes}");
    assert!((1..=4).contains(&writes), "{writes} status writes for 2 tags");

    // A digest-pinned reference is pulled as name@digest (OpenKruise joins it with ':' and fails).
    let mut images = runtime.images.clone();
    let status = images
        .image_status(kruise_cri::v1::ImageStatusRequest {
            image: Some(kruise_cri::v1::ImageSpec {
                image: reference.clone(),
                ..Default::default()
            }),
            verbose: false,
        })
        .await
        .unwrap()
        .into_inner();
    let repo_digest = status
        .image
        .unwrap()
        .repo_digests
        .into_iter()
        .next()
        .expect("a repo digest");
    let digest = repo_digest.split_once('@').unwrap().1.to_owned();
    cluster
        .modify(NODE_IMAGES, "", "node-1", |ni| {
            let tags = ni["spec"]["images"][name.as_str()]["tags"]
                .as_array_mut()
                .unwrap();
            tags.push(tag(&digest, "Always"));
        })
        .await;
    let pinned = cluster::eventually("digest pulled", 60, || finished(&cluster, &name, &digest)).await;
    assert_eq!(pinned["phase"], "Succeeded", "{pinned}");
    // The finished tags were not pulled again.
    let ni = cluster.get(NODE_IMAGES, "", "node-1").unwrap();
    assert_eq!(ni["status"]["succeeded"], 2);
    assert_eq!(ni["status"]["failed"], 1);
}
