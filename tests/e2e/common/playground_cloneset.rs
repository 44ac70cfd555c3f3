//! A CloneSet `web` in namespace `shop` of a playground, with a pod watch that records the extremes
//! every intermediate state reached (`tests/e2e/playground_cloneset.rs`).

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::StreamExt as _;
use k8s_openapi::api::{
    core::v1::{Namespace, Pod},
    events::v1::Event,
};
use kruise_rs::playground::{Handle, Options, start};
use kube::{
    Api, Client,
    api::{DynamicObject, ListParams, Patch, PatchParams, PostParams},
    discovery::ApiResource,
    runtime::watcher,
};
use serde_json::{Value, json};

pub const NS: &str = "shop";
pub const INSTANCE_ID: &str = "apps.kruise.io/cloneset-instance-id";
pub const REVISION_HASH: &str = "controller-revision-hash";
pub const STATE: &str = "apps.kruise.io/inplace-update-state";

fn clonesets() -> ApiResource {
    ApiResource {
        group: "apps.kruise.io".into(),
        version: "v1beta1".into(),
        api_version: "apps.kruise.io/v1beta1".into(),
        kind: "CloneSet".into(),
        plural: "clonesets".into(),
    }
}

/// A CloneSet `web` of `replicas` with `containers` and `rolling` (`updateStrategy.rollingUpdate`).
pub fn clone_set(replicas: i32, containers: Value, rolling: Value) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
        "metadata": {"name": "web"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": containers}},
            "updateStrategy": {"rollingUpdate": rolling}}})
}

pub fn container(name: &str, image: &str) -> Value {
    json!({"name": name, "image": image})
}

/// The highest count of live (not terminating) pods and of not-ready ones that any state of the pods
/// has had since the last reset.
#[derive(Debug, Default, Clone, Copy)]
pub struct Extremes {
    pub pods: usize,
    pub not_ready: usize,
}

pub struct Env {
    pub pg: Handle,
    /// CloneSets of the namespace.
    pub sets: Api<DynamicObject>,
    /// Pods of the namespace.
    pub pods: Api<Pod>,
    extremes: Arc<Mutex<Extremes>>,
    watch: tokio::task::JoinHandle<()>,
}

impl Drop for Env {
    fn drop(&mut self) {
        self.watch.abort();
    }
}

pub async fn start_with(kubelet_delay: Duration, cs: Value) -> Env {
    start_on(
        Options {
            kubelet_delay,
            ..Options::default()
        },
        cs,
    )
    .await
}

/// [`start_with`] a playground started with `options` (a real runtime, say).
pub async fn start_on(options: Options, cs: Value) -> Env {
    let pg = start(options).await.expect("playground starts");
    let client: Client = pg.client.clone();
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": NS}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), NS);
    let extremes = Arc::new(Mutex::new(Extremes::default()));
    let watch = tokio::spawn(record_extremes(pods.clone(), extremes.clone()));
    let sets: Api<DynamicObject> = Api::namespaced_with(client, NS, &clonesets());
    let cs: DynamicObject = serde_json::from_value(cs).unwrap();
    sets.create(&PostParams::default(), &cs).await.unwrap();
    Env {
        pg,
        sets,
        pods,
        extremes,
        watch,
    }
}

/// Follows every pod event and keeps the running maxima of pods and of not-ready pods.
async fn record_extremes(pods: Api<Pod>, extremes: Arc<Mutex<Extremes>>) {
    let mut current: BTreeMap<String, bool> = BTreeMap::new();
    let mut events = std::pin::pin!(watcher(pods, watcher::Config::default().labels("app=web")));
    while let Some(event) = events.next().await {
        match event {
            // A terminating pod no longer counts, as for OpenKruise's (and Kubernetes') maxSurge.
            Ok(watcher::Event::Apply(pod) | watcher::Event::InitApply(pod))
                if pod.metadata.deletion_timestamp.is_some() =>
            {
                current.remove(&pod.metadata.name.unwrap_or_default());
            }
            Ok(watcher::Event::Apply(pod) | watcher::Event::InitApply(pod)) => {
                let pod = serde_json::to_value(pod).unwrap();
                current.insert(name(&pod), ready(&pod));
            }
            Ok(watcher::Event::Delete(pod)) => {
                current.remove(&pod.metadata.name.unwrap_or_default());
            }
            Ok(watcher::Event::Init | watcher::Event::InitDone) | Err(_) => continue,
        }
        let mut e = extremes.lock().unwrap();
        e.pods = e.pods.max(current.len());
        e.not_ready = e.not_ready.max(current.values().filter(|r| !**r).count());
    }
}

impl Env {
    pub async fn pods(&self) -> Vec<Value> {
        let list = self
            .pods
            .list(&ListParams::default().labels("app=web"))
            .await
            .unwrap();
        list.items
            .into_iter()
            .map(|p| serde_json::to_value(p).unwrap())
            .collect()
    }

    pub async fn cloneset(&self) -> Value {
        serde_json::to_value(self.sets.get("web").await.unwrap()).unwrap()
    }

    pub async fn status(&self) -> Value {
        self.cloneset().await["status"].clone()
    }

    /// Changes the spec as `kubectl edit` would (a merge patch, generation + 1).
    pub async fn edit(&self, spec: Value) {
        self.sets
            .patch(
                "web",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": spec})),
            )
            .await
            .unwrap();
    }

    /// All `replicas` pods exist and are Ready on the update revision, and the status says so.
    pub async fn settled(&self, replicas: i64) -> bool {
        let cs = self.cloneset().await;
        let s = &cs["status"];
        let pods = self.pods().await;
        pods.len() as i64 == replicas
            && pods.iter().all(ready)
            && pods
                .iter()
                .all(|p| p["metadata"]["labels"][REVISION_HASH] == s["updateRevision"])
            && s["replicas"] == replicas
            && s["readyReplicas"] == replicas
            && s["availableReplicas"] == replicas
            && s["updatedReplicas"] == replicas
            && s["updatedReadyReplicas"] == replicas
            && s["observedGeneration"] == cs["metadata"]["generation"]
            && s["updateRevision"] == s["currentRevision"]
    }

    /// [`Self::settled`], with every pod's `main` container on `image`.
    pub async fn rolled_out(&self, replicas: i64, image: &str) -> bool {
        self.settled(replicas).await && self.pods().await.iter().all(|p| image_of(p, "main") == image)
    }

    pub async fn settle(&self, replicas: i64) {
        self.wait(&format!("{replicas} ready pods"), 60, async || {
            self.settled(replicas).await
        })
        .await;
    }

    /// Polls `done` every 50 ms for up to `seconds`.
    pub async fn wait(&self, what: &str, seconds: u64, mut done: impl AsyncFnMut() -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
        while !done().await {
            if tokio::time::Instant::now() > deadline {
                let pods: Vec<_> = self
                    .pods()
                    .await
                    .iter()
                    .map(|p| (name(p), image_of(p, "main"), ready(p)))
                    .collect();
                panic!(
                    "timed out waiting for {what}; status {}; pods {pods:?}",
                    self.status().await
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Starts a fresh record of extremes from the current state.
    pub async fn reset_extremes(&self) {
        let pods = self.pods().await;
        *self.extremes.lock().unwrap() = Extremes {
            pods: pods.len(),
            not_ready: pods.iter().filter(|p| !ready(p)).count(),
        };
    }

    pub fn extremes(&self) -> Extremes {
        *self.extremes.lock().unwrap()
    }

    /// Pod name → uid.
    pub async fn identities(&self) -> BTreeMap<String, String> {
        self.pods()
            .await
            .iter()
            .map(|p| (name(p), p["metadata"]["uid"].as_str().unwrap().to_string()))
            .collect()
    }

    pub async fn event_reasons(&self) -> Vec<String> {
        let events: Api<Event> = Api::namespaced(self.pg.client.clone(), NS);
        let list = events.list(&ListParams::default()).await.unwrap();
        list.items
            .into_iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.kind.as_deref()) == Some("CloneSet"))
            .filter_map(|e| e.reason)
            .collect()
    }
}

pub fn name(pod: &Value) -> String {
    pod["metadata"]["name"].as_str().unwrap_or_default().to_string()
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
