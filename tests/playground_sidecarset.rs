//! SidecarSet end to end in the playground, driven with the real kubectl: the pods of a CloneSet get
//! the sidecar at creation; a new sidecar image reaches them in place (same pods, the sidecar
//! restarted once, the app container never), never more than maxUnavailable not ready at once
//! (checked on every state a pod watch sees), and the partition holds until it is lifted.
//! kubectl must be on PATH: without it this test fails.

use std::{
    collections::BTreeMap,
    path::Path,
    process::Stdio,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::StreamExt as _;
use k8s_openapi::api::{
    apps::v1::ControllerRevision,
    core::v1::{Namespace, Pod},
};
use kruise_rs::playground::{Handle, Options, start};
use kube::{
    Api,
    api::{ListParams, PostParams},
    runtime::watcher,
};
use serde_json::{Value, json};

const NS: &str = "shop";

/// Runs kubectl against the playground; panics with its stderr when it fails.
async fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<String>) -> String {
    let cache = kubeconfig.parent().unwrap().join("kube-cache");
    let mut child = tokio::process::Command::new("kubectl")
        .env("KUBECONFIG", kubeconfig)
        .env("KUBECACHEDIR", cache)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl must be on PATH for this test (Debian: apt-get install kubernetes-client)");
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        use tokio::io::AsyncWriteExt as _;
        input.write_all(text.as_bytes()).await.unwrap();
    }
    drop(input);
    let out = child.wait_with_output().await.unwrap();
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    assert!(
        out.status.success(),
        "kubectl {args:?} failed: {}",
        text(out.stderr)
    );
    text(out.stdout)
}

fn sidecar_set(image: &str, partition: i64) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": "log-agent"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
            "containers": [{"name": "agent", "image": image}],
            "updateStrategy": {"maxUnavailable": 1, "partition": partition}}})
}

fn clone_set(replicas: i64) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.0"}]}}}})
}

fn ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

fn image_of(pod: &Value, container: &str) -> String {
    pod["spec"]["containers"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == container))
        .and_then(|c| c["image"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn restarts(pod: &Value, container: &str) -> i64 {
    pod["status"]["containerStatuses"]
        .as_array()
        .and_then(|s| s.iter().find(|c| c["name"] == container))
        .and_then(|c| c["restartCount"].as_i64())
        .unwrap_or(-1)
}

/// The most pods ever not ready at once since the last reset, from every watched state.
async fn record_not_ready(pods: Api<Pod>, most: Arc<Mutex<usize>>) {
    let mut current: BTreeMap<String, bool> = BTreeMap::new();
    let mut events = std::pin::pin!(watcher(pods, watcher::Config::default().labels("app=web")));
    while let Some(event) = events.next().await {
        match event {
            Ok(watcher::Event::Apply(pod) | watcher::Event::InitApply(pod)) => {
                let pod = serde_json::to_value(pod).unwrap();
                let name = pod["metadata"]["name"].as_str().unwrap_or_default().to_string();
                current.insert(name, ready(&pod));
            }
            Ok(watcher::Event::Delete(pod)) => {
                current.remove(&pod.metadata.name.unwrap_or_default());
            }
            Ok(watcher::Event::Init | watcher::Event::InitDone) | Err(_) => continue,
        }
        let mut m = most.lock().unwrap();
        *m = (*m).max(current.values().filter(|r| !**r).count());
    }
}

struct Env {
    pg: Handle,
    kubeconfig: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Env {
    /// A playground with kruise-rs (kubelet delay 300 ms), a kubeconfig for kubectl, namespace `NS`.
    async fn start() -> Env {
        let pg = start(Options {
            kubelet_delay: Duration::from_millis(300),
            ..Options::default()
        })
        .await
        .expect("playground starts");
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = pg
            .write_kubeconfig(&dir.path().join("playground.kubeconfig"))
            .unwrap();
        let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": NS}})).unwrap();
        Api::<Namespace>::all(pg.client.clone())
            .create(&PostParams::default(), &ns)
            .await
            .unwrap();
        Env {
            pg,
            kubeconfig,
            _dir: dir,
        }
    }

    async fn pods(&self) -> Vec<Value> {
        let api: Api<Pod> = Api::namespaced(self.pg.client.clone(), NS);
        let list = api.list(&ListParams::default().labels("app=web")).await.unwrap();
        list.items
            .into_iter()
            .map(|p| serde_json::to_value(p).unwrap())
            .collect()
    }

    async fn status(&self) -> Value {
        let out = kubectl(
            &self.kubeconfig,
            &["get", "sidecarset", "log-agent", "-o", "json"],
            None,
        )
        .await;
        serde_json::from_str::<Value>(&out).unwrap()["status"].clone()
    }

    /// Polls `done` every 100 ms for up to `seconds`.
    async fn wait(&self, what: &str, seconds: u64, mut done: impl AsyncFnMut() -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
        while !done().await {
            if tokio::time::Instant::now() > deadline {
                let pods: Vec<_> = self
                    .pods()
                    .await
                    .iter()
                    .map(|p| (image_of(p, "agent"), ready(p)))
                    .collect();
                panic!(
                    "timed out waiting for {what}; status {}; pods {pods:?}",
                    self.status().await
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn counts(&self) -> (i64, i64, i64, i64) {
        let s = self.status().await;
        let n = |k: &str| s[k].as_i64().unwrap_or(0);
        (
            n("matchedPods"),
            n("updatedPods"),
            n("readyPods"),
            n("updatedReadyPods"),
        )
    }
}

#[tokio::test]
async fn a_new_sidecar_image_reaches_running_pods_in_place_within_max_unavailable_and_partition() {
    let env = Env::start().await;
    let k = env.kubeconfig.clone();
    kubectl(
        &k,
        &["apply", "-f", "-"],
        Some(sidecar_set("agent:1.0", 1).to_string()),
    )
    .await;
    kubectl(&k, &["apply", "-f", "-"], Some(clone_set(4).to_string())).await;
    env.wait("4 ready pods with the sidecar", 60, async || {
        let pods = env.pods().await;
        pods.len() == 4
            && pods
                .iter()
                .all(|p| ready(p) && image_of(p, "agent") == "agent:1.0")
    })
    .await;
    env.wait("the status counts the pods", 30, async || {
        env.counts().await == (4, 4, 4, 4)
    })
    .await;
    let before: BTreeMap<String, Value> = env
        .pods()
        .await
        .into_iter()
        .map(|p| (p["metadata"]["uid"].as_str().unwrap().to_string(), p))
        .collect();

    let most_not_ready = Arc::new(Mutex::new(0));
    let watch = tokio::spawn(record_not_ready(
        Api::namespaced(env.pg.client.clone(), NS),
        most_not_ready.clone(),
    ));
    let patch = json!({"spec": {"containers": [{"name": "agent", "image": "agent:2.0"}]}}).to_string();
    kubectl(
        &k,
        &[
            "patch",
            "sidecarset",
            "log-agent",
            "--type",
            "merge",
            "-p",
            &patch,
        ],
        None,
    )
    .await;
    env.wait("3 pods updated, 1 kept by the partition", 60, async || {
        env.counts().await == (4, 3, 4, 3)
    })
    .await;
    // Let any stray fourth update show before checking.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pods = env.pods().await;
    let on = |image: &str| pods.iter().filter(|p| image_of(p, "agent") == image).count();
    assert_eq!((on("agent:2.0"), on("agent:1.0")), (3, 1), "the partition holds");
    for pod in &pods {
        let uid = pod["metadata"]["uid"].as_str().unwrap();
        let old = before
            .get(uid)
            .expect("the same pods: updated in place, not recreated");
        let bumped = i64::from(image_of(pod, "agent") == "agent:2.0");
        assert_eq!(restarts(pod, "agent"), restarts(old, "agent") + bumped);
        assert_eq!(
            restarts(pod, "main"),
            restarts(old, "main"),
            "the app container never restarts"
        );
        assert_eq!(image_of(pod, "main"), "nginx:1.0");
    }

    kubectl(
        &k,
        &[
            "patch",
            "sidecarset",
            "log-agent",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"updateStrategy":{"partition":0}}}"#,
        ],
        None,
    )
    .await;
    env.wait("all 4 pods updated", 60, async || {
        env.counts().await == (4, 4, 4, 4)
    })
    .await;
    let pods = env.pods().await;
    assert!(pods.iter().all(|p| image_of(p, "agent") == "agent:2.0"));
    assert_eq!(pods.len(), 4);
    assert!(
        pods.iter()
            .all(|p| before.contains_key(p["metadata"]["uid"].as_str().unwrap()))
    );
    assert!(
        *most_not_ready.lock().unwrap() <= 1,
        "never more than maxUnavailable (1) pods not ready; saw {}",
        most_not_ready.lock().unwrap()
    );
    let condition = &env.status().await["conditions"][0];
    assert_eq!(
        (&condition["type"], &condition["reason"]),
        (&json!("Progressing"), &json!("Complete"))
    );
    // One ControllerRevision per sidecar spec, in kruise-rs's namespace; the pods record the latest.
    let revisions: Api<ControllerRevision> = Api::all(env.pg.client.clone());
    let revisions = revisions
        .list(&ListParams::default().labels("kruise.io/sidecarset-name=log-agent"))
        .await
        .unwrap()
        .items;
    assert_eq!(revisions.len(), 2);
    let latest = env.status().await["latestRevision"].as_str().unwrap().to_string();
    let newest = revisions.iter().max_by_key(|r| r.revision).unwrap();
    assert_eq!(newest.metadata.name.as_deref(), Some(latest.as_str()));
    for pod in env.pods().await {
        let records: Value = serde_json::from_str(
            pod["metadata"]["annotations"]["kruise.io/sidecarset-hash"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(records["log-agent"]["controllerRevision"], latest.as_str());
    }
    let table = kubectl(&k, &["get", "sidecarset", "log-agent"], None).await;
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(&row[..4], ["log-agent", "4", "4", "4"], "{table}");
    watch.abort();
}

fn working_twin(pod: &Value) -> String {
    let raw = pod["metadata"]["annotations"]["kruise.io/sidecarset-working-hotupgrade-container"]
        .as_str()
        .unwrap_or("{}");
    let map: BTreeMap<String, String> = serde_json::from_str(raw).unwrap_or_default();
    map.get("agent").cloned().unwrap_or_default()
}

/// Every pod: `working` is the working twin on `image`, the other twin on the empty image, all ready.
fn hot_state(pods: &[Value], working: &str, image: &str) -> bool {
    let idle = if working == "agent-1" {
        "agent-2"
    } else {
        "agent-1"
    };
    pods.iter().all(|p| {
        ready(p)
            && working_twin(p) == working
            && image_of(p, working) == image
            && image_of(p, idle) == "agent-empty:1"
    })
}

#[tokio::test]
async fn a_hot_upgrade_flips_the_working_twin_twice_without_restarting_the_app() {
    let env = Env::start().await;
    let k = env.kubeconfig.clone();
    let hot = |image: &str| {
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
            "metadata": {"name": "log-agent"},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                "containers": [{"name": "agent", "image": image,
                    "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "agent-empty:1"}}],
                "updateStrategy": {"maxUnavailable": 1}}})
        .to_string()
    };
    kubectl(&k, &["apply", "-f", "-"], Some(hot("agent:1.0"))).await;
    kubectl(&k, &["apply", "-f", "-"], Some(clone_set(2).to_string())).await;
    env.wait("2 ready pods, agent-1 working", 60, async || {
        let pods = env.pods().await;
        pods.len() == 2 && hot_state(&pods, "agent-1", "agent:1.0")
    })
    .await;
    let before: BTreeMap<String, i64> = env
        .pods()
        .await
        .iter()
        .map(|p| {
            (
                p["metadata"]["uid"].as_str().unwrap().to_string(),
                restarts(p, "main"),
            )
        })
        .collect();
    let most_not_ready = Arc::new(Mutex::new(0));
    let watch = tokio::spawn(record_not_ready(
        Api::namespaced(env.pg.client.clone(), NS),
        most_not_ready.clone(),
    ));
    for (image, working) in [("agent:2.0", "agent-2"), ("agent:3.0", "agent-1")] {
        kubectl(&k, &["apply", "-f", "-"], Some(hot(image))).await;
        env.wait(
            &format!("{working} working on {image}, the other twin empty"),
            60,
            async || hot_state(&env.pods().await, working, image),
        )
        .await;
        env.wait("the status counts the pods", 30, async || {
            env.counts().await == (2, 2, 2, 2)
        })
        .await;
    }
    watch.abort();
    let after = env.pods().await;
    for p in &after {
        let uid = p["metadata"]["uid"].as_str().unwrap();
        assert_eq!(
            before.get(uid),
            Some(&restarts(p, "main")),
            "same pods, the app never restarted"
        );
    }
    assert!(
        *most_not_ready.lock().unwrap() <= 1,
        "never more than maxUnavailable not ready"
    );
}
