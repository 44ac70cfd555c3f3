//! A playground with kruise-rs for the SidecarSet end-to-end tests (`tests/playground_sidecarset*.rs`):
//! kubectl, the pods of namespace `shop`, the SidecarSet's status and events, a pod watch that records
//! the most pods ever not ready at once, and the playground's request counter.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::Stdio,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::{Event, Namespace, Pod};
use kruise_playground::request_counts::RequestKind;
use kruise_rs::playground::{Handle, Options, start};
use kube::{
    Api,
    api::{ListParams, PostParams},
    runtime::watcher,
};
use serde_json::{Value, json};

pub const NS: &str = "shop";
/// The SidecarSet every test uses.
pub const SET: &str = "log-agent";

/// Runs kubectl against the playground; panics with its stderr when it fails.
pub async fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<String>) -> String {
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

/// The SidecarSet `log-agent`: one sidecar `agent` on `image` for pods labelled `app: <app>`, with
/// `updateStrategy` as given.
pub fn sidecar_set(app: &str, image: &str, strategy: Value) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": SET},
        "spec": {"selector": {"matchLabels": {"app": app}},
            "containers": [{"name": "agent", "image": image}],
            "updateStrategy": strategy}})
}

/// A CloneSet `web` of `replicas` pods labelled `app: web`, one container `main`.
pub fn clone_set(replicas: i64) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.0"}]}}}})
}

pub fn ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

pub fn image_of(pod: &Value, container: &str) -> String {
    pod["spec"]["containers"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == container))
        .and_then(|c| c["image"].as_str())
        .unwrap_or_default()
        .to_string()
}

pub fn restarts(pod: &Value, container: &str) -> i64 {
    pod["status"]["containerStatuses"]
        .as_array()
        .and_then(|s| s.iter().find(|c| c["name"] == container))
        .and_then(|c| c["restartCount"].as_i64())
        .unwrap_or(-1)
}

/// The sidecar's container state (`running`, `waiting: <reason>`, …), for failure messages.
fn agent_state(pod: &Value) -> String {
    let status = pod["status"]["containerStatuses"]
        .as_array()
        .and_then(|s| s.iter().find(|c| c["name"] == "agent"))
        .cloned()
        .unwrap_or_default();
    let state = status["state"].as_object().cloned().unwrap_or_default();
    state
        .iter()
        .map(|(k, v)| format!("{k} {}", v["reason"].as_str().unwrap_or_default()))
        .collect()
}

pub fn uid(pod: &Value) -> String {
    pod["metadata"]["uid"].as_str().unwrap_or_default().to_string()
}

/// The most pods not ready at once and those pods (name, sidecar image).
type Worst = (usize, Vec<(String, String)>);

/// The most pods labelled `app` ever not ready at once, from every state a pod watch sees, and at the
/// first such state the pods not ready with their sidecar image (for failure messages).
pub struct NotReadyWatch {
    most: Arc<Mutex<Worst>>,
    task: tokio::task::JoinHandle<()>,
}

impl NotReadyWatch {
    pub fn most(&self) -> usize {
        self.most.lock().unwrap().0
    }

    /// The pods not ready (name, sidecar image) when [`Self::most`] was first reached.
    pub fn worst(&self) -> Vec<(String, String)> {
        self.most.lock().unwrap().1.clone()
    }
}

impl Drop for NotReadyWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn record_not_ready(pods: Api<Pod>, app: String, most: Arc<Mutex<Worst>>) {
    // Pod name → (ready, sidecar image).
    let mut current: BTreeMap<String, (bool, String)> = BTreeMap::new();
    let config = watcher::Config::default().labels(&format!("app={app}"));
    let mut events = std::pin::pin!(watcher(pods, config));
    while let Some(event) = events.next().await {
        match event {
            Ok(watcher::Event::Apply(pod) | watcher::Event::InitApply(pod)) => {
                let pod = serde_json::to_value(pod).unwrap();
                let name = pod["metadata"]["name"].as_str().unwrap_or_default().to_string();
                current.insert(name, (ready(&pod), image_of(&pod, "agent")));
            }
            Ok(watcher::Event::Delete(pod)) => {
                current.remove(&pod.metadata.name.unwrap_or_default());
            }
            Ok(watcher::Event::Init | watcher::Event::InitDone) | Err(_) => continue,
        }
        let not_ready: Vec<(String, String)> = current
            .iter()
            .filter(|(_, (r, _))| !*r)
            .map(|(n, (_, image))| (n.clone(), image.clone()))
            .collect();
        let mut m = most.lock().unwrap();
        if not_ready.len() > m.0 {
            *m = (not_ready.len(), not_ready);
        }
    }
}

pub struct Env {
    pub pg: Handle,
    pub kubeconfig: PathBuf,
    /// The label value (`app`) of the pods the test looks at.
    pub app: String,
    _dir: tempfile::TempDir,
}

impl Env {
    /// A playground with kruise-rs (kubelet delay 300 ms), a kubeconfig for kubectl, namespace `NS`;
    /// the test looks at the pods labelled `app: web`.
    pub async fn start() -> Env {
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
            app: "web".into(),
            _dir: dir,
        }
    }

    /// `kubectl apply -f -` of `object`.
    pub async fn apply(&self, object: &Value) {
        kubectl(&self.kubeconfig, &["apply", "-f", "-"], Some(object.to_string())).await;
    }

    /// `kubectl patch <kind> <name> --type merge -p <patch>` (namespace `NS` unless the kind is cluster-scoped).
    pub async fn patch(&self, kind: &str, name: &str, patch: Value) {
        let patch = patch.to_string();
        let mut args = vec!["patch", kind, name, "--type", "merge", "-p", &patch];
        if kind != "sidecarset" {
            args.extend(["-n", NS]);
        }
        kubectl(&self.kubeconfig, &args, None).await;
    }

    /// The SidecarSet's sidecar `agent` set to `image` (other fields of the sidecar as `extra`).
    pub async fn set_agent(&self, image: &str, extra: Value) {
        let mut agent = json!({"name": "agent", "image": image});
        for (k, v) in extra.as_object().into_iter().flatten() {
            agent[k] = v.clone();
        }
        self.patch("sidecarset", SET, json!({"spec": {"containers": [agent]}}))
            .await;
    }

    /// A watch recording the most pods ever not ready at once, from now on.
    pub fn watch_not_ready(&self) -> NotReadyWatch {
        let most = Arc::new(Mutex::new((0, Vec::new())));
        let task = tokio::spawn(record_not_ready(
            Api::namespaced(self.pg.client.clone(), NS),
            self.app.clone(),
            most.clone(),
        ));
        NotReadyWatch { most, task }
    }

    pub async fn pods(&self) -> Vec<Value> {
        let api: Api<Pod> = Api::namespaced(self.pg.client.clone(), NS);
        let selector = format!("app={}", self.app);
        let list = api.list(&ListParams::default().labels(&selector)).await.unwrap();
        list.items
            .into_iter()
            .map(|p| serde_json::to_value(p).unwrap())
            .collect()
    }

    /// The pods by uid.
    pub async fn pods_by_uid(&self) -> BTreeMap<String, Value> {
        self.pods().await.into_iter().map(|p| (uid(&p), p)).collect()
    }

    /// The SidecarSet's status, read with kubectl.
    pub async fn status(&self) -> Value {
        let out = kubectl(&self.kubeconfig, &["get", "sidecarset", SET, "-o", "json"], None).await;
        serde_json::from_str::<Value>(&out).unwrap()["status"].clone()
    }

    /// The `Progressing` condition's status and reason.
    pub async fn progressing(&self) -> (String, String) {
        let status = self.status().await;
        let c = status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "Progressing")
            .cloned()
            .unwrap_or_default();
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        (text(&c["status"]), text(&c["reason"]))
    }

    /// The `Progressing` condition's message.
    pub async fn progressing_message(&self) -> String {
        self.status().await["conditions"][0]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Events about the SidecarSet (`warning`, reason, message).
    pub async fn events(&self) -> Vec<(bool, String, String)> {
        let api: Api<Event> = Api::all(self.pg.client.clone());
        let list = api.list(&ListParams::default()).await.unwrap();
        list.items
            .into_iter()
            .filter(|e| e.involved_object.kind.as_deref() == Some("SidecarSet"))
            .map(|e| {
                (
                    e.type_.as_deref() == Some("Warning"),
                    e.reason.unwrap_or_default(),
                    e.message.unwrap_or_default(),
                )
            })
            .collect()
    }

    /// Polls `done` every 100 ms for up to `seconds`.
    pub async fn wait(&self, what: &str, seconds: u64, mut done: impl AsyncFnMut() -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
        while !done().await {
            if tokio::time::Instant::now() > deadline {
                let pods: Vec<_> = self
                    .pods()
                    .await
                    .iter()
                    .map(|p| (image_of(p, "agent"), ready(p), agent_state(p)))
                    .collect();
                panic!(
                    "timed out waiting for {what}; status {}; pods {pods:?}",
                    self.status().await
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// (matchedPods, updatedPods, readyPods, updatedReadyPods).
    pub async fn counts(&self) -> (i64, i64, i64, i64) {
        let s = self.status().await;
        let n = |k: &str| s[k].as_i64().unwrap_or(0);
        (
            n("matchedPods"),
            n("updatedPods"),
            n("readyPods"),
            n("updatedReadyPods"),
        )
    }

    /// Waits for `n` ready pods with the sidecar on `image` and a status counting them all.
    pub async fn settled(&self, n: usize, image: &str) {
        self.wait(&format!("{n} ready pods with agent {image}"), 60, async || {
            let pods = self.pods().await;
            pods.len() == n && pods.iter().all(|p| ready(p) && image_of(p, "agent") == image)
        })
        .await;
        let n = n as i64;
        self.wait("the status counts the pods", 30, async || {
            self.counts().await == (n, n, n, n)
        })
        .await;
    }

    /// The playground's request counts so far.
    pub fn requests(&self) -> BTreeMap<RequestKind, u64> {
        self.pg.playground.api().requests.snapshot()
    }

    /// Writes to pods since `before`: (the pod objects, `pods/status`).
    pub fn pod_writes_since(&self, before: &BTreeMap<RequestKind, u64>) -> (u64, u64) {
        let requests = &self.pg.playground.api().requests;
        (
            requests.writes_since(before, "", "pods", None),
            requests.writes_since(before, "", "pods", Some("status")),
        )
    }
}
