//! A bare simulated cluster for tests that run one piece of kruise-rs (a controller, the caches,
//! the certificate Secret) against an API server: the playground with kruise-rs's CRDs but without
//! its webhooks or controllers, a [`Faults`] hook to inject failures and conflicts, and the
//! in-process `Api` for the test's own reads and writes (as another client's, not counted in
//! `Api::requests`).

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use kruise_playground::{
    Api, Playground, PlaygroundOptions,
    api::{UpdateMode, key},
    faults::{Faults, Interleaved},
    request_counts::RequestKind,
    resources::ResourceDef,
    store::{Event, ResKey},
};
use serde_json::{Value, json};

/// A served resource: group, version, plural.
pub type Res = (&'static str, &'static str, &'static str);

pub const NAMESPACES: Res = ("", "v1", "namespaces");
pub const PODS: Res = ("", "v1", "pods");
pub const NODES: Res = ("", "v1", "nodes");
pub const CONFIGMAPS: Res = ("", "v1", "configmaps");
pub const SECRETS: Res = ("", "v1", "secrets");
pub const EVENTS: Res = ("events.k8s.io", "v1", "events");
pub const LEASES: Res = ("coordination.k8s.io", "v1", "leases");
pub const REPLICASETS: Res = ("apps", "v1", "replicasets");
pub const DEPLOYMENTS: Res = ("apps", "v1", "deployments");
pub const CONTROLLER_REVISIONS: Res = ("apps", "v1", "controllerrevisions");
pub const CLONESETS: Res = ("apps.kruise.io", "v1beta1", "clonesets");
pub const ADVANCED_STATEFULSETS: Res = ("apps.kruise.io", "v1beta1", "statefulsets");
pub const WORKLOADSPREADS: Res = ("apps.kruise.io", "v1beta1", "workloadspreads");
pub const PUBS: Res = ("policy.kruise.io", "v1beta1", "podunavailablebudgets");
pub const VALIDATING_CONFIGURATIONS: Res = (
    "admissionregistration.k8s.io",
    "v1",
    "validatingwebhookconfigurations",
);
pub const CRDS: Res = ("apiextensions.k8s.io", "v1", "customresourcedefinitions");

/// A running bare cluster.
pub struct Cluster {
    pub playground: Playground,
    /// A client of it, for the code under test.
    pub client: kube::Client,
    /// Armed by tests: injected failures and conflicts.
    pub faults: Arc<Faults>,
}

/// Which parts of the simulation run.
pub struct Setup {
    /// Simulated nodes (with them the scheduler and kubelet run).
    pub nodes: usize,
    /// How long the kubelet takes to (re)start a container.
    pub kubelet_delay: Duration,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            nodes: 0,
            kubelet_delay: Duration::from_millis(100),
        }
    }
}

/// A cluster with kruise-rs's CRDs and no nodes.
pub async fn start() -> Cluster {
    start_with(Setup::default()).await
}

pub async fn start_with(setup: Setup) -> Cluster {
    let faults = Faults::new();
    let playground = Playground::start(PlaygroundOptions {
        admission: vec![faults.clone()],
        nodes: setup.nodes,
        kubelet_delay: setup.kubelet_delay,
        ..PlaygroundOptions::default()
    })
    .await
    .expect("playground starts");
    let client = playground.client().await.expect("client");
    let cluster = Cluster {
        playground,
        client,
        faults,
    };
    for crd in kruise_api::crds() {
        cluster.create(CRDS, serde_json::to_value(crd).unwrap()).await;
    }
    cluster
}

impl Cluster {
    pub fn api(&self) -> &Arc<Api> {
        self.playground.api()
    }

    fn def(&self, (group, version, plural): Res) -> ResourceDef {
        self.api()
            .registry
            .find(group, version, plural)
            .unwrap_or_else(|| panic!("{group}/{version} {plural} is not served"))
    }

    /// Creates a namespace.
    pub async fn namespace(&self, name: &str) {
        self.create(
            NAMESPACES,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
        )
        .await;
    }

    /// Creates an object as a client would (defaulting, admission and faults apply).
    pub async fn create(&self, res: Res, object: Value) -> Value {
        let ns = object["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.api()
            .create(&self.def(res), &ns, object, false)
            .await
            .unwrap_or_else(|e| panic!("create: {e}"))
    }

    /// Stores an object as another writer left it (status, uid and timestamps as given).
    pub fn seed(&self, object: Value) -> Value {
        self.api().seed(object).unwrap_or_else(|e| panic!("seed: {e}"))
    }

    /// The stored object.
    pub fn get(&self, (group, _, plural): Res, ns: &str, name: &str) -> Option<Value> {
        self.api().store.get(&ResKey::new(group, plural), ns, name)
    }

    /// The stored objects of a resource in `ns` ("" for cluster-scoped).
    pub fn list(&self, res: Res, ns: &str) -> Vec<Value> {
        if res == EVENTS {
            // Both Event APIs share one store, in the core shape, as kube-apiserver keeps them.
            let core = self.api().store.list(&ResKey::new("", "events"), Some(ns)).0;
            return core
                .into_iter()
                .map(kruise_playground::events::from_core)
                .collect();
        }
        let (group, _, plural) = res;
        self.api().store.list(&ResKey::new(group, plural), Some(ns)).0
    }

    /// Every retained change of a resource, oldest first.
    pub fn history(&self, (group, _, plural): Res) -> Vec<Arc<Event>> {
        let key = ResKey::new(group, plural);
        self.api().store.watch(&key, 0).expect("history retained").0
    }

    /// Changes a stored object as another client would (an update of the main resource carrying
    /// the read resourceVersion; the status is kept).
    pub async fn modify(&self, res: Res, ns: &str, name: &str, change: impl FnOnce(&mut Value)) -> Value {
        self.write(res, ns, name, UpdateMode::Main, change).await
    }

    /// Changes a stored object's status as another client would (through `/status`).
    pub async fn modify_status(
        &self,
        res: Res,
        ns: &str,
        name: &str,
        change: impl FnOnce(&mut Value),
    ) -> Value {
        self.write(res, ns, name, UpdateMode::Status, change).await
    }

    async fn write(
        &self,
        res: Res,
        ns: &str,
        name: &str,
        mode: UpdateMode,
        change: impl FnOnce(&mut Value),
    ) -> Value {
        write(self.api(), &self.def(res), ns, name, mode, change).await
    }

    /// The write of another client getting in just before an injected conflict (see
    /// `Faults::conflict_once`): [`Self::modify`] (`Main`) or [`Self::modify_status`] (`Status`).
    pub fn interleaved(
        &self,
        res: Res,
        ns: &str,
        name: &str,
        mode: UpdateMode,
        change: impl FnOnce(&mut Value) + Send + 'static,
    ) -> Interleaved {
        let (api, def) = (self.api().clone(), self.def(res));
        let (ns, name) = (ns.to_string(), name.to_string());
        Box::new(move || {
            Box::pin(async move {
                write(&api, &def, &ns, &name, mode, change).await;
            })
        })
    }

    /// Requests answered so far, by kind.
    pub fn requests(&self) -> BTreeMap<RequestKind, u64> {
        self.api().requests.snapshot()
    }
}

async fn write(
    api: &Api,
    def: &ResourceDef,
    ns: &str,
    name: &str,
    mode: UpdateMode,
    change: impl FnOnce(&mut Value),
) -> Value {
    let mut object = api.store.get(&key(def), ns, name).expect("object to modify");
    change(&mut object);
    api.update(def, ns, name, object, mode, false)
        .await
        .unwrap_or_else(|e| panic!("update of {name}: {e}"))
}

/// Requests of `method` to `group`/`resource` (with `subresource`) between two snapshots.
pub fn requests_between(
    before: &BTreeMap<RequestKind, u64>,
    after: &BTreeMap<RequestKind, u64>,
    method: &str,
    (group, _, resource): Res,
    subresource: Option<&str>,
) -> u64 {
    after
        .iter()
        .filter(|(k, _)| {
            k.method == method
                && k.group == group
                && k.resource == resource
                && k.subresource.as_deref() == subresource
        })
        .map(|(k, n)| n - before.get(k).copied().unwrap_or(0))
        .sum()
}

/// Polls `check` every 20 ms until it returns `Some`, for up to `seconds`.
pub async fn eventually<T>(what: &str, seconds: u64, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    loop {
        if let Some(found) = check() {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
