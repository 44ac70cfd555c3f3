//! An Advanced StatefulSet `web` in namespace `db` of an in-process playground, with a pod watch that
//! checks every intermediate state the API server went through (ordering, not-ready bounds).
//!
//! A flow is written once and run as either API version ([`Version`]): the set is created, edited and
//! read back through the version it was written in, and [`Env::settled`] also checks that both versions
//! show the same status.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::{Namespace, PersistentVolumeClaim, Pod};
use kruise_rs::playground::{Handle, Options, start};
use kube::{
    Api,
    api::{DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams},
    discovery::ApiResource,
    runtime::watcher,
};
use serde_json::{Value, json};

pub const NS: &str = "db";
pub const REVISION_HASH: &str = "controller-revision-hash";

pub fn resource(version: &str) -> ApiResource {
    ApiResource {
        group: "apps.kruise.io".into(),
        version: version.into(),
        api_version: format!("apps.kruise.io/{version}"),
        kind: "StatefulSet".into(),
        plural: "statefulsets".into(),
    }
}

/// The API version a flow writes and reads the set in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1alpha1,
    V1beta1,
}

impl Version {
    pub fn name(self) -> &'static str {
        match self {
            Version::V1alpha1 => "v1alpha1",
            Version::V1beta1 => "v1beta1",
        }
    }

    fn parse(api_version: &str) -> Version {
        match api_version.rsplit('/').next() {
            Some("v1alpha1") => Version::V1alpha1,
            _ => Version::V1beta1,
        }
    }
}

/// The status fields both versions have (v1alpha1 lacks `updatedReadyReplicas`,
/// `updatedAvailableReplicas` and `volumeClaims`).
pub const SHARED_STATUS: [&str; 11] = [
    "observedGeneration",
    "replicas",
    "readyReplicas",
    "availableReplicas",
    "currentReplicas",
    "updatedReplicas",
    "currentRevision",
    "updateRevision",
    "collisionCount",
    "conditions",
    "labelSelector",
];

/// A set `web` of `replicas` (`main` on `nginx:1.0`) written as `version`, with `spec` merged over the
/// defaults (`spec` must only use fields `version` has).
pub fn stateful_set(version: Version, replicas: i32, spec: Value) -> Value {
    let mut s = json!({"apiVersion": format!("apps.kruise.io/{}", version.name()), "kind": "StatefulSet",
        "metadata": {"name": "web"},
        "spec": {"replicas": replicas, "serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.0"}]}}}});
    merge(&mut s["spec"], spec);
    s
}

fn merge(a: &mut Value, b: Value) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (a, b) => *a = b,
    }
}

/// What the pod watch saw.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    /// The most not-ready live pods at once.
    pub not_ready: usize,
    /// Pod names in the order they first appeared.
    pub created: Vec<String>,
    /// Pods that appeared while a lower ordinal was missing or not ready.
    pub out_of_order: Vec<String>,
}

pub struct Env {
    pub pg: Handle,
    /// The sets, through that version.
    pub sets: Api<DynamicObject>,
    /// The sets, as v1beta1 (the storage version).
    pub beta: Api<DynamicObject>,
    /// The sets, as v1alpha1.
    pub alpha: Api<DynamicObject>,
    pub pods: Api<Pod>,
    pub claims: Api<PersistentVolumeClaim>,
    seen: Arc<Mutex<Seen>>,
    watch: tokio::task::JoinHandle<()>,
}

impl Drop for Env {
    fn drop(&mut self) {
        self.watch.abort();
    }
}

pub fn ordinal(name: &str) -> i64 {
    name.rsplit('-').next().and_then(|n| n.parse().ok()).unwrap_or(-1)
}

/// Starts a playground and creates `set` (as the version its apiVersion names).
pub async fn start_with(set: Value) -> Env {
    let pg = start(Options {
        kubelet_delay: Duration::from_millis(100),
        ..Options::default()
    })
    .await
    .expect("playground starts");
    let client = pg.client.clone();
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": NS}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), NS);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let watch = tokio::spawn(record(pods.clone(), seen.clone()));
    let version = Version::parse(set["apiVersion"].as_str().unwrap());
    let created: DynamicObject = serde_json::from_value(set).unwrap();
    let sets = Api::<DynamicObject>::namespaced_with(client.clone(), NS, &resource(version.name()));
    sets.create(&PostParams::default(), &created).await.unwrap();
    Env {
        sets,
        beta: Api::namespaced_with(client.clone(), NS, &resource("v1beta1")),
        alpha: Api::namespaced_with(client.clone(), NS, &resource("v1alpha1")),
        claims: Api::namespaced(client, NS),
        pg,
        pods,
        seen,
        watch,
    }
}

async fn record(pods: Api<Pod>, seen: Arc<Mutex<Seen>>) {
    let mut current: BTreeMap<i64, bool> = BTreeMap::new();
    let mut events = std::pin::pin!(watcher(pods, watcher::Config::default().labels("app=web")));
    while let Some(event) = events.next().await {
        let mut s = seen.lock().unwrap();
        match event {
            Ok(watcher::Event::Apply(pod) | watcher::Event::InitApply(pod)) => {
                let name = pod.metadata.name.clone().unwrap_or_default();
                let o = ordinal(&name);
                if pod.metadata.deletion_timestamp.is_some() {
                    current.remove(&o);
                } else {
                    let pod = serde_json::to_value(pod).unwrap();
                    if !current.contains_key(&o) && !s.created.contains(&name) {
                        s.created.push(name.clone());
                        if current.range(..o).count() != usize::try_from(o).unwrap_or(0)
                            || current.range(..o).any(|(_, r)| !r)
                        {
                            s.out_of_order.push(name);
                        }
                    }
                    current.insert(o, ready(&pod));
                }
            }
            Ok(watcher::Event::Delete(pod)) => {
                current.remove(&ordinal(&pod.metadata.name.unwrap_or_default()));
            }
            Ok(watcher::Event::Init | watcher::Event::InitDone) | Err(_) => continue,
        }
        s.not_ready = s.not_ready.max(current.values().filter(|r| !**r).count());
    }
}

impl Env {
    pub async fn pods(&self) -> Vec<Value> {
        let list = self
            .pods
            .list(&ListParams::default().labels("app=web"))
            .await
            .unwrap();
        let mut pods: Vec<Value> = list
            .items
            .into_iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .map(|p| serde_json::to_value(p).unwrap())
            .collect();
        pods.sort_by_key(|p| ordinal(&name(p)));
        pods
    }

    /// Ordinals of the live pods, ascending.
    pub async fn ordinals(&self) -> Vec<i64> {
        self.pods().await.iter().map(|p| ordinal(&name(p))).collect()
    }

    pub async fn claim_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .claims
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|c| c.metadata.deletion_timestamp.is_none())
            .filter_map(|c| c.metadata.name)
            .collect();
        names.sort();
        names
    }

    /// The set, read in the version it was written in.
    pub async fn set(&self) -> Value {
        serde_json::to_value(self.sets.get("web").await.unwrap()).unwrap()
    }

    /// Its status, read in the version it was written in.
    pub async fn status(&self) -> Value {
        self.set().await["status"].clone()
    }

    /// Its status read as v1beta1 (which alone has `updatedReadyReplicas`, …).
    pub async fn full_status(&self) -> Value {
        serde_json::to_value(self.beta.get("web").await.unwrap()).unwrap()["status"].clone()
    }

    /// The status fields both versions have, as each version shows them.
    pub async fn shared_status(&self) -> (Value, Value) {
        let pick = |set: DynamicObject| {
            let status = serde_json::to_value(set).unwrap()["status"].clone();
            Value::Object(
                SHARED_STATUS
                    .iter()
                    .filter(|k| !status[**k].is_null())
                    .map(|k| (k.to_string(), status[*k].clone()))
                    .collect(),
            )
        };
        (
            pick(self.alpha.get("web").await.unwrap()),
            pick(self.beta.get("web").await.unwrap()),
        )
    }

    /// A merge patch of the spec, in the version the set was written in.
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

    pub async fn delete_set(&self) {
        self.sets.delete("web", &DeleteParams::default()).await.unwrap();
    }

    /// `ordinals` exist, all Ready on the update revision, and the status says so, the same in both
    /// versions.
    pub async fn settled(&self, ordinals: &[i64]) -> bool {
        let set = self.set().await;
        let s = &set["status"];
        let pods = self.pods().await;
        let n = ordinals.len() as i64;
        pods.iter().map(|p| ordinal(&name(p))).collect::<Vec<_>>() == ordinals
            && pods.iter().all(ready)
            && pods
                .iter()
                .all(|p| p["metadata"]["labels"][REVISION_HASH] == s["updateRevision"])
            && s["replicas"] == n
            && s["readyReplicas"] == n
            && s["updatedReplicas"] == n
            && s["observedGeneration"] == set["metadata"]["generation"]
            && s["updateRevision"] == s["currentRevision"]
            && {
                let (alpha, beta) = self.shared_status().await;
                alpha == beta
            }
    }

    pub async fn settle(&self, ordinals: &[i64]) {
        self.wait(&format!("pods {ordinals:?} ready"), 60, async || {
            self.settled(ordinals).await
        })
        .await;
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

    pub fn seen(&self) -> Seen {
        self.seen.lock().unwrap().clone()
    }

    /// Restarts the not-ready maximum from the current state.
    pub async fn reset_seen(&self) {
        let pods = self.pods().await;
        self.seen.lock().unwrap().not_ready = pods.iter().filter(|p| !ready(p)).count();
    }

    /// Pod name → uid.
    pub async fn identities(&self) -> BTreeMap<String, String> {
        self.pods()
            .await
            .iter()
            .map(|p| (name(p), p["metadata"]["uid"].as_str().unwrap().to_string()))
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
