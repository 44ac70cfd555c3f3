//! `kubectl kruise create containerrecreaterequest` end to end on a real runtime (the CriPlayground:
//! containerd, the playground in CRI mode, one agent per node) with the real kubectl and our plugin on
//! PATH. `--containers=app` recreates only `app` (kruise-tools recreates them all, spec §F.5): `app`
//! gets a new container id and restartCount 1, the sidecar keeps its id, the pod keeps its uid; `-u`
//! and `-m` reach the request. A missing pod or container is refused naming it. Skips without
//! containerd and root unless `KRUISE_REQUIRE_CRI` is set; the plugin must be built beside `kruise`
//! (`cargo build -p kubectl-kruise`, done by any workspace test run).

use crate::common;
use common::agents::{CriPlayground, eventually, get};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::kubectl::kubectl;
use serde_json::{Value, json};

/// The plugin binary, in the same target directory as `kruise`.
fn plugin_dir() -> PathBuf {
    let kruise = Path::new(env!("CARGO_BIN_EXE_kruise"));
    let dir = kruise.parent().expect("kruise has a directory").to_path_buf();
    assert!(
        dir.join("kubectl-kruise").is_file(),
        "kubectl-kruise is not built in {}: run `cargo build -p kubectl-kruise` first",
        dir.display()
    );
    dir
}

/// `kubectl kruise ARGS` with the plugin first on PATH: (success, stdout, stderr).
pub(crate) fn kruise(k: &Path, args: &[&str]) -> (bool, String, String) {
    let path = format!(
        "{}:{}",
        plugin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let cache = k.parent().map(|d| d.join("kube-cache")).unwrap_or_default();
    let out = Command::new("kubectl")
        .env("KUBECONFIG", k)
        .env("KUBECACHEDIR", cache)
        .env("PATH", path)
        .arg("kruise")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("kubectl must be on PATH for these tests");
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (out.status.success(), text(out.stdout), text(out.stderr))
}

fn status_of<'a>(pod: &'a Value, container: &str) -> &'a Value {
    pod["status"]["containerStatuses"]
        .as_array()
        .and_then(|s| s.iter().find(|c| c["name"] == container))
        .unwrap_or(&Value::Null)
}

fn container_id(pod: &Value, container: &str) -> String {
    status_of(pod, container)["containerID"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Pod `name` once all of `containers` run and are ready.
pub fn running_pod(k: &Path, name: &str, containers: &[&str]) -> Value {
    eventually(&format!("pod {name} to run its containers"), 60, || {
        let pod = get(k, &["pod", name])?;
        containers
            .iter()
            .all(|c| status_of(&pod, c)["ready"] == true)
            .then_some(pod)
    })
}

/// Request `name` once Completed.
pub fn completed(k: &Path, name: &str) -> Value {
    eventually(&format!("{name} completes"), 90, || {
        let c = get(k, &["containerrecreaterequests", name])?;
        (c["status"]["phase"] == "Completed").then_some(c)
    })
}

#[test]
fn kubectl_kruise_create_crr_recreates_only_the_named_container() {
    let Some(playground) = CriPlayground::start() else {
        return;
    };
    plugin_dir();
    let k = playground.kubeconfig();
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"terminationGracePeriodSeconds": 2, "containers": [
            {"name": "app", "image": playground.image}, {"name": "sidecar", "image": playground.image}]}});
    let (applied, _, err) = kubectl(k, &["apply", "-f", "-"], Some(&pod.to_string()));
    assert!(applied, "{err}");
    let before = running_pod(k, "web", &["app", "sidecar"]);
    let uid = before["metadata"]["uid"].clone();
    let (app_before, sidecar_before) = (container_id(&before, "app"), container_id(&before, "sidecar"));

    // Refusals name what is missing, and create nothing.
    let (ok, _, err) = kruise(k, &["create", "crr", "x", "--pod=nope", "--containers=app"]);
    assert!(!ok && err.contains("pod default/nope not found"), "{err}");
    let (ok, _, err) = kruise(k, &["create", "crr", "x", "--pod=web", "--containers=typo"]);
    assert!(
        !ok && err.contains("container \"typo\" not found in pod web"),
        "{err}"
    );
    assert!(get(k, &["containerrecreaterequests", "x"]).is_none());

    let (ok, out, err) = kruise(
        k,
        &[
            "create",
            "containerrecreaterequest",
            "restart-app",
            "--pod=web",
            "--containers=app",
            "-u",
            "1",
            "-m",
            "1",
        ],
    );
    assert!(ok, "{err}");
    assert!(out.contains("restart-app"), "{out}");
    let stored = get(k, &["containerrecreaterequests", "restart-app"]).unwrap();
    assert_eq!(
        stored["spec"]["containers"]
            .as_array()
            .map(|c| c.iter().map(|c| c["name"].clone()).collect::<Vec<_>>()),
        Some(vec![json!("app")]),
        "{stored}"
    );
    assert_eq!(
        stored["spec"]["containers"][0]["statusContext"]["containerID"],
        app_before.as_str()
    );
    assert_eq!(stored["spec"]["strategy"]["unreadyGracePeriodSeconds"], 1);
    assert_eq!(stored["spec"]["strategy"]["minStartedSeconds"], 1);

    let done = completed(k, "restart-app");
    assert_eq!(
        done["status"]["containerRecreateStates"],
        json!([{"name": "app", "phase": "Succeeded", "isKilled": true}]),
        "{done}"
    );
    let after = running_pod(k, "web", &["app", "sidecar"]);
    assert_eq!(after["metadata"]["uid"], uid, "the pod is the same");
    assert_ne!(
        container_id(&after, "app"),
        app_before,
        "app runs in a new container"
    );
    assert_eq!(status_of(&after, "app")["restartCount"], 1);
    assert_eq!(
        container_id(&after, "sidecar"),
        sidecar_before,
        "the sidecar kept its container"
    );
    assert_eq!(status_of(&after, "sidecar")["restartCount"], 0);
}
