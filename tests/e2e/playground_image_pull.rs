//! Image pre-pull end to end: `kruise playground` (three simulated nodes, kruise-rs's controllers and
//! webhooks) driven with the real kubectl, one `kruise daemon` process per simulated node — all three
//! pointing at the same real containerd (the playground's nodes have no runtime of their own) — and a
//! registry on 127.0.0.1. An ImagePullJob for 2 of the 3 nodes completes with the image in containerd;
//! a missing tag ends in `failedNodes` with the runtime's message on the NodeImage.

use crate::common;
use crate::common::containerd;
use crate::common::registry;
use common::agents::{NODES, agents, eventually, get};

use std::path::Path;
use std::time::Duration;

use common::kubectl::{kubectl, ok, serve};
use containerd::Containerd;
use registry::Registry;
use serde_json::{Value, json};

fn apply(k: &Path, object: &Value) {
    let (success, _, err) = kubectl(k, &["apply", "-f", "-"], Some(&object.to_string()));
    assert!(success, "kubectl apply failed: {err}");
}

fn job(name: &str, image: &str, nodes: &[&str], pull_policy: Value) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "ImagePullJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"image": image, "parallelism": 2, "selector": {"names": nodes}, "pullPolicy": pull_policy,
            "completionPolicy": {"type": "Always"}}})
}

/// The job's status once it has a completion time.
fn completed(k: &Path, name: &str) -> Value {
    eventually(&format!("{name} completes"), 90, || {
        let job = get(k, &["imagepulljobs", name])?;
        job["status"]
            .get("completionTime")
            .is_some()
            .then(|| job["status"].clone())
    })
}

#[test]
fn an_image_pull_job_on_two_of_three_nodes_completes_and_a_missing_tag_fails() {
    let (Some(containerd), Some(registry)) = (Containerd::start(), Registry::start()) else {
        return;
    };
    let reference = registry.push("demo:v2");
    let name = reference.trim_end_matches(":v2").to_owned();
    let served = serve(&[]);
    let k = served.kubeconfig.as_path();

    // The NodeImage controller gives every node its NodeImage.
    eventually("a NodeImage per node", 30, || {
        let list = get(k, &["nodeimages"])?;
        let mut names: Vec<String> = list["items"]
            .as_array()?
            .iter()
            .filter_map(|n| n["metadata"]["name"].as_str().map(str::to_owned))
            .collect();
        names.sort();
        (names == NODES).then_some(())
    });
    let _agents = agents(k, &containerd);

    apply(
        k,
        &job("pull-v2", &reference, &NODES[..2], json!({"timeoutSeconds": 60})),
    );
    let status = completed(k, "pull-v2");
    assert_eq!(status["desired"], 2, "{status}");
    assert_eq!(status["succeeded"], 2, "{status}");
    assert_eq!(status["failed"], 0, "{status}");
    assert_eq!(status["message"], "job has completed");
    // The webhook defaulted the job.
    let stored = get(k, &["imagepulljobs", "pull-v2"]).unwrap();
    assert_eq!(stored["spec"]["imagePullPolicy"], "IfNotPresent");
    assert_eq!(stored["spec"]["pullPolicy"]["backoffLimit"], 3);

    for node in &NODES[..2] {
        let ni = get(k, &["nodeimages", node]).unwrap();
        let tag = &ni["status"]["imageStatuses"][name.as_str()]["tags"][0];
        assert_eq!(tag["phase"], "Succeeded", "{node}: {ni}");
        assert!(
            tag["imageID"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{name}@sha256:"))
        );
    }
    let third = get(k, &["nodeimages", NODES[2]]).unwrap();
    assert!(third["spec"]["images"].get(name.as_str()).is_none(), "{third}");
    let runtime = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let runtime = kruise_cri::discover(containerd.dir(), None, Duration::from_secs(10))
            .await
            .unwrap()
            .runtime;
        runtime.image_id(&reference).await.unwrap()
    });
    assert!(runtime.is_some(), "the image is in containerd");

    // A missing tag fails on its node, with the runtime's message.
    let missing = registry.reference("demo:v9");
    apply(
        k,
        &job(
            "pull-v9",
            &missing,
            &NODES[2..],
            json!({"timeoutSeconds": 30, "backoffLimit": 0}),
        ),
    );
    let status = completed(k, "pull-v9");
    assert_eq!(status["failed"], 1, "{status}");
    assert_eq!(status["failedNodes"], json!([NODES[2]]));
    let ni = get(k, &["nodeimages", NODES[2]]).unwrap();
    let tag = &ni["status"]["imageStatuses"][name.as_str()]["tags"][0];
    assert_eq!(tag["phase"], "Failed");
    let message = tag["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("Failed to pull image reference \"{missing}\"")),
        "{message}"
    );
    assert!(message.contains("not found"), "{message}");
    let printed = ok(k, &["get", "imagepulljobs"]);
    assert!(
        printed.contains("TOTAL") && printed.contains("pull-v9"),
        "{printed}"
    );
}
