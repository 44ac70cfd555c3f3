//! NodeImage and ImagePullJob behaviour that needs no container runtime, on `kruise playground
//! --clock manual --nodeimage-creation-delay 30s` driven with the real kubectl: NodeImages appear only
//! once the nodes have been Ready for the delay; the NodeImage webhooks refuse a bad spec and default a
//! good one (createdAt, pull policy, tags sorted); a job's pull secret is copied into `kruise-daemon`
//! and referenced from the NodeImage; a tag no agent answers is failed after 10 minutes with a
//! `PullImageFailed` event, and the finished job releases its copy.

use crate::common;
use common::agents::{NODES, eventually, get};

use std::path::Path;
use std::time::Duration;

use common::kubectl::{kubectl, ok, serve};
use serde_json::{Value, json};

fn advance(k: &Path, seconds: u64) {
    let body = json!({ "advanceSeconds": seconds }).to_string();
    let (success, _, err) = kubectl(
        k,
        &["create", "--raw", "/playground/clock", "-f", "-"],
        Some(&body),
    );
    assert!(success, "advancing the clock failed: {err}");
}

fn node_image_names(k: &Path) -> Vec<String> {
    let list = get(k, &["nodeimages"]).unwrap_or(Value::Null);
    let mut names: Vec<String> = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["metadata"]["name"].as_str().map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// The copies in `kruise-daemon` of `default/regcred`.
fn copies(k: &Path) -> Vec<Value> {
    let list = get(k, &["secrets", "-n", "kruise-daemon"]).unwrap_or(Value::Null);
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["metadata"]["annotations"]["imagepulljobs.kruise.io/source-key"] == "default/regcred")
        .cloned()
        .collect()
}

#[test]
fn node_images_wait_for_the_delay_and_pull_secrets_reach_them() {
    let served = serve(&["--clock", "manual", "--nodeimage-creation-delay", "30s"]);
    let k = served.kubeconfig.as_path();

    // The nodes became Ready as the playground started: no NodeImage before 30 s have passed.
    std::thread::sleep(Duration::from_secs(1));
    assert!(node_image_names(k).is_empty(), "{:?}", node_image_names(k));
    advance(k, 31);
    eventually("a NodeImage per node", 15, || {
        (node_image_names(k) == NODES).then_some(())
    });

    // The NodeImage webhook.
    let bad = json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "NodeImage",
        "metadata": {"name": "spare", "labels": {"apps.kruise.io/fake-nodeimage": "true"}},
        "spec": {"images": {"demo": {"tags": [{"tag": "v1", "createdAt": "2026-01-01T00:00:00Z",
            "version": -1, "pullPolicy": {"ttlSecondsAfterFinished": 60}}]}}}});
    let (success, _, err) = kubectl(k, &["create", "-f", "-"], Some(&bad.to_string()));
    assert!(!success);
    assert!(
        err.contains("admission webhook \"vnodeimage.kb.io\" denied the request: spec.images[demo].tags[0].version: Invalid value: -1: version for demo/v1 can not be less than 0"),
        "{err}"
    );
    // The defaulting webhook: createdAt and the pull policy's timeout and backoff, tags sorted.
    let spare = json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "NodeImage",
        "metadata": {"name": "spare", "labels": {"apps.kruise.io/fake-nodeimage": "true"}},
        "spec": {"images": {"demo": {"tags": [
            {"tag": "v2", "pullPolicy": {"ttlSecondsAfterFinished": 60}},
            {"tag": "v1", "createdAt": "2026-01-01T00:00:00Z", "pullPolicy": {"ttlSecondsAfterFinished": 60}}]}}}});
    let (success, _, err) = kubectl(k, &["create", "-f", "-"], Some(&spare.to_string()));
    assert!(success, "{err}");
    let tags = get(k, &["nodeimage", "spare"]).unwrap()["spec"]["images"]["demo"]["tags"].clone();
    assert_eq!(tags[0]["tag"], "v1", "{tags}");
    assert_eq!(tags[0]["createdAt"], "2026-01-01T00:00:00Z");
    assert_eq!(tags[1]["tag"], "v2", "{tags}");
    assert!(
        tags[1]["createdAt"].as_str().is_some_and(|t| t.ends_with('Z')),
        "{tags}"
    );
    for t in [&tags[0], &tags[1]] {
        assert_eq!(
            t["pullPolicy"],
            json!({"ttlSecondsAfterFinished": 60, "timeoutSeconds": 600, "backoffLimit": 3})
        );
    }

    // A job with a pull secret: the secret is copied for the agents (into `kruise-daemon`, which
    // manifests/daemon.yaml creates) and referenced by the NodeImage.
    ok(k, &["create", "namespace", "kruise-daemon"]);
    ok(
        k,
        &[
            "create",
            "secret",
            "docker-registry",
            "regcred",
            "--docker-server=127.0.0.1:5000",
            "--docker-username=puller",
            "--docker-password=s3cret",
        ],
    );
    let job = json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "ImagePullJob",
        "metadata": {"name": "warm", "namespace": "default"},
        "spec": {"image": "127.0.0.1:5000/demo:v1", "pullSecrets": ["regcred"],
            "selector": {"names": [NODES[0]]}, "completionPolicy": {"type": "Always"}}});
    let (success, _, err) = kubectl(k, &["apply", "-f", "-"], Some(&job.to_string()));
    assert!(success, "{err}");
    let copy = eventually("the pull secret copied", 15, || copies(k).into_iter().next());
    let source = get(k, &["secret", "regcred"]).unwrap();
    assert_eq!(copy["data"], source["data"]);
    assert_eq!(copy["type"], "kubernetes.io/dockerconfigjson");
    let annotations = &copy["metadata"]["annotations"];
    assert_eq!(annotations["imagepulljobs.kruise.io/references"], "default/warm");
    assert_eq!(annotations["imagepulljobs.kruise.io/mode"], "batch");
    let copy_name = copy["metadata"]["name"].as_str().unwrap().to_owned();
    assert!(copy_name.starts_with("regcred-") && copy_name.len() == "regcred-".len() + 6);
    let reference = eventually("the NodeImage references the copy", 15, || {
        let ni = get(k, &["nodeimage", NODES[0]])?;
        let image = &ni["spec"]["images"]["127.0.0.1:5000/demo"];
        (image["tags"][0]["tag"] == "v1").then(|| image["pullSecrets"].clone())
    });
    assert_eq!(
        reference,
        json!([{"namespace": "kruise-daemon", "name": copy_name, "mode": "batch"}])
    );
    let stored = get(k, &["imagepulljob", "warm"]).unwrap();
    assert_eq!(
        stored["metadata"]["finalizers"],
        json!(["apps.kruise.io/deletion-protection"])
    );
    // Immutable.
    let (success, _, err) = kubectl(
        k,
        &[
            "patch",
            "imagepulljob",
            "warm",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"pullSecrets":["other"]}}"#,
        ],
        None,
    );
    assert!(!success && err.contains("spec.pullSecrets is immutable"), "{err}");

    // No agent answers: 10 minutes later the tag fails, with an event on the job; the job completes
    // and releases its copy.
    advance(k, 601);
    let status = eventually("the job completes", 20, || {
        let job = get(k, &["imagepulljob", "warm"])?;
        job["status"].get("completionTime").map(|_| job["status"].clone())
    });
    assert_eq!(status["failed"], 1, "{status}");
    assert_eq!(status["failedNodes"], json!([NODES[0]]));
    let note = eventually("a PullImageFailed event on the job", 15, || {
        let events = get(k, &["events"])?;
        events["items"]
            .as_array()?
            .iter()
            .find(|e| e["reason"] == "PullImageFailed" && e["involvedObject"]["kind"] == "ImagePullJob")
            .map(|e| e["message"].clone())
    });
    assert_eq!(
        note,
        format!(
            "Failed to pull image 127.0.0.1:5000/demo:v1 on node {} for node has not responded for a long time",
            NODES[0]
        )
    );
    eventually("the copy released", 15, || copies(k).is_empty().then_some(()));
    // Deleting the job removes the finalizer.
    ok(k, &["delete", "imagepulljob", "warm", "--timeout=15s"]);
    assert!(get(k, &["imagepulljob", "warm"]).is_none());
}
