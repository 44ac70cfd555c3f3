//! The CloneSet controller against the in-memory API, through the webhooks' cluster cache, with a tiny
//! kubelet that runs pods and applies in-place image changes.

#[path = "support/fake_api.rs"]
mod fake_api;
#[path = "support/fake_kubelet.rs"]
mod fake_kubelet;

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
    time::Duration,
};

use fake_api::FakeApi;
use http::Method;
use kruise_rs::{
    cluster::ClusterCache,
    controllers::{self, Context},
};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

const CS: &str = "/apis/apps.kruise.io/v1beta1/namespaces/ns/clonesets/web";
const PODS: &str = "/api/v1/namespaces/ns/pods/";
const REVISIONS: &str = "/apis/apps/v1/namespaces/ns/controllerrevisions/";
const INSTANCE_ID: &str = "apps.kruise.io/cloneset-instance-id";
const REVISION_HASH: &str = "controller-revision-hash";
const STATE: &str = "apps.kruise.io/inplace-update-state";

struct Env {
    api: FakeApi,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Env {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

fn container(name: &str, image: &str) -> Value {
    json!({"name": name, "image": image})
}

/// A CloneSet `web` (v1beta1) of `replicas` with `containers` and `rolling` (`updateStrategy.rollingUpdate`).
fn clone_set(replicas: i32, containers: Value, rolling: Value) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "ns", "uid": "cs-uid", "generation": 1},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
            "revisionHistoryLimit": 10, "scaleStrategy": {},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": containers}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling}}})
}

async fn start(cs: Value, start_delay: Duration) -> Env {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    let api = FakeApi::default();
    api.put(CS, cs);
    let client = api.client();
    let cache = ClusterCache::start(&client, "kruise-system");
    tokio::time::timeout(Duration::from_secs(5), cache.wait_until_ready())
        .await
        .unwrap()
        .unwrap();
    let controller = tokio::spawn(controllers::cloneset::run(Context {
        client,
        view: Arc::new(cache),
    }));
    let kubelet = tokio::spawn(fake_kubelet::run(api.clone(), start_delay));
    Env {
        api,
        tasks: vec![controller, kubelet],
    }
}

fn pods(api: &FakeApi) -> Vec<Value> {
    api.objects
        .lock()
        .unwrap()
        .iter()
        .filter(|(path, _)| path.starts_with(PODS))
        .map(|(_, pod)| pod.clone())
        .collect()
}

fn ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

fn image_of(pod: &Value, container: &str) -> String {
    pod["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == container)
        .map(|c| c["image"].as_str().unwrap_or("").to_string())
        .unwrap_or_default()
}

fn restarts(pod: &Value, container: &str) -> i64 {
    pod["status"]["containerStatuses"]
        .as_array()
        .and_then(|s| s.iter().find(|c| c["name"] == container))
        .and_then(|c| c["restartCount"].as_i64())
        .unwrap_or(-1)
}

fn status(api: &FakeApi) -> Value {
    api.get(CS).unwrap()["status"].clone()
}

/// Polls (every 20ms, up to `seconds`) until `done`; `sample` sees every intermediate state.
async fn wait(
    api: &FakeApi,
    seconds: u64,
    what: &str,
    mut sample: impl FnMut(&FakeApi),
    done: impl Fn(&FakeApi) -> bool,
) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    loop {
        sample(api);
        if done(api) {
            return;
        }
        if tokio::time::Instant::now() > deadline {
            panic!(
                "timed out waiting for {what}; status {}; pods {:#?}",
                status(api),
                pods(api)
                    .iter()
                    .map(|p| (
                        p["metadata"]["name"].clone(),
                        p["metadata"]["labels"].clone(),
                        ready(p)
                    ))
                    .collect::<Vec<_>>()
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// All `replicas` pods exist, are Ready and the status says so (updated, ready and available).
fn settled(api: &FakeApi, replicas: i64) -> bool {
    let s = status(api);
    let all = pods(api);
    all.len() as i64 == replicas
        && all.iter().all(ready)
        && s["replicas"] == replicas
        && s["readyReplicas"] == replicas
        && s["availableReplicas"] == replicas
        && s["updatedReplicas"] == replicas
        && s["updatedReadyReplicas"] == replicas
        && s["observedGeneration"] == api.get(CS).unwrap()["metadata"]["generation"]
        && s["updateRevision"] == s["currentRevision"]
}

async fn settle(api: &FakeApi, replicas: i64) {
    wait(
        api,
        30,
        &format!("{replicas} ready pods"),
        |_| {},
        |api| settled(api, replicas),
    )
    .await;
}

/// Changes the CloneSet's spec as a user would (generation + 1).
fn edit(api: &FakeApi, change: impl FnOnce(&mut Value)) {
    api.modify(CS, |cs| {
        change(&mut cs["spec"]);
        let generation = cs["metadata"]["generation"].as_i64().unwrap_or(1);
        cs["metadata"]["generation"] = json!(generation + 1);
    });
}

fn identities(api: &FakeApi) -> BTreeMap<String, String> {
    pods(api)
        .iter()
        .map(|p| {
            (
                p["metadata"]["name"].as_str().unwrap().to_string(),
                p["metadata"]["uid"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn not_ready(api: &FakeApi) -> usize {
    pods(api).iter().filter(|p| !ready(p)).count()
}

#[tokio::test]
async fn creates_five_ready_pods_with_ids_hashes_and_the_in_place_gate() {
    let env = start(
        clone_set(
            5,
            json!([container("main", "nginx:1.0")]),
            json!({"podUpdatePolicy": "InPlaceIfPossible"}),
        ),
        Duration::ZERO,
    )
    .await;
    settle(&env.api, 5).await;
    let s = status(&env.api);
    let revision = s["updateRevision"].as_str().unwrap().to_string();
    assert!(revision.starts_with("web-"), "{revision}");
    assert!(env.api.get(&format!("{REVISIONS}{revision}")).is_some());
    let mut ids = BTreeSet::new();
    for pod in pods(&env.api) {
        let name = pod["metadata"]["name"].as_str().unwrap();
        let id = pod["metadata"]["labels"][INSTANCE_ID].as_str().unwrap();
        assert_eq!(name, format!("web-{id}"));
        assert_eq!(id.len(), 5);
        assert!(
            id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()),
            "{id}"
        );
        assert_eq!(pod["metadata"]["labels"][REVISION_HASH], revision.as_str());
        assert_eq!(
            pod["spec"]["readinessGates"],
            json!([{"conditionType": "InPlaceUpdateReady"}])
        );
        assert_eq!(pod["metadata"]["ownerReferences"][0]["uid"], "cs-uid");
        ids.insert(id.to_string());
    }
    assert_eq!(ids.len(), 5);
    assert_eq!(s["expectedUpdatedReplicas"], 5);
    assert_eq!(s["updatedAvailableReplicas"], 5);
}

#[tokio::test]
async fn in_place_update_honours_partition_then_max_unavailable() {
    let env = start(
        clone_set(
            5,
            json!([container("main", "nginx:1.0")]),
            json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 2}),
        ),
        Duration::from_millis(300),
    )
    .await;
    let api = &env.api;
    settle(api, 5).await;
    let before = identities(api);

    edit(api, |spec| {
        spec["template"]["spec"]["containers"][0]["image"] = json!("nginx:2.0");
        spec["updateStrategy"]["rollingUpdate"]["partition"] = json!(3);
    });
    wait(
        api,
        30,
        "2 pods updated in place",
        |_| {},
        |api| {
            let s = status(api);
            s["updatedReplicas"] == 2 && s["updatedReadyReplicas"] == 2 && s["readyReplicas"] == 5
        },
    )
    .await;
    assert_eq!(identities(api), before, "in place: same names and uids");
    let all = pods(api);
    let updated: Vec<&Value> = all
        .iter()
        .filter(|p| image_of(p, "main") == "nginx:2.0")
        .collect();
    assert_eq!(updated.len(), 2);
    assert!(updated.iter().all(|p| restarts(p, "main") == 1));
    assert!(
        all.iter()
            .filter(|p| image_of(p, "main") == "nginx:1.0")
            .all(|p| restarts(p, "main") == 0)
    );

    edit(api, |spec| {
        spec["updateStrategy"]["rollingUpdate"]["partition"] = json!(0)
    });
    let mut worst = 0;
    wait(
        api,
        30,
        "all pods updated",
        |api| worst = worst.max(not_ready(api)),
        |api| settled(api, 5) && pods(api).iter().all(|p| image_of(p, "main") == "nginx:2.0"),
    )
    .await;
    assert!(
        worst <= 2,
        "{worst} pods unavailable at once with maxUnavailable 2"
    );
    assert_eq!(identities(api), before);
    assert!(pods(api).iter().all(|p| restarts(p, "main") == 1));
}

#[tokio::test]
async fn recreate_with_max_surge_never_exceeds_replicas_plus_one() {
    let env = start(
        clone_set(
            5,
            json!([container("main", "nginx:1.0")]),
            json!({"podUpdatePolicy": "ReCreate", "maxSurge": 1, "maxUnavailable": 0}),
        ),
        Duration::from_millis(100),
    )
    .await;
    let api = &env.api;
    settle(api, 5).await;
    let before = identities(api);
    edit(api, |spec| {
        spec["template"]["spec"]["containers"][0]["image"] = json!("nginx:2.0")
    });
    let mut most = 0;
    wait(
        api,
        60,
        "all pods recreated",
        |api| most = most.max(pods(api).len()),
        |api| settled(api, 5) && pods(api).iter().all(|p| image_of(p, "main") == "nginx:2.0"),
    )
    .await;
    assert!(most <= 6, "{most} pods at once with replicas 5 and maxSurge 1");
    let after = identities(api);
    assert!(
        after.keys().all(|n| !before.contains_key(n)),
        "every pod recreated"
    );
}

#[tokio::test]
async fn pods_to_delete_replaces_the_named_pod() {
    let env = start(
        clone_set(
            5,
            json!([container("main", "nginx:1.0")]),
            json!({"podUpdatePolicy": "InPlaceIfPossible"}),
        ),
        Duration::ZERO,
    )
    .await;
    let api = &env.api;
    settle(api, 5).await;
    let victim = pods(api)[0]["metadata"]["name"].as_str().unwrap().to_string();
    edit(api, |spec| {
        spec["scaleStrategy"]["podsToDelete"] = json!([victim])
    });
    wait(
        api,
        30,
        "the named pod replaced",
        |_| {},
        |api| settled(api, 5) && !identities(api).contains_key(&victim),
    )
    .await;
    wait(
        api,
        10,
        "podsToDelete emptied",
        |_| {},
        |api| {
            api.get(CS).unwrap()["spec"]["scaleStrategy"]["podsToDelete"]
                .as_array()
                .is_none_or(Vec::is_empty)
        },
    )
    .await;
}

#[tokio::test]
async fn scales_five_to_ten_to_two() {
    let env = start(
        clone_set(
            5,
            json!([container("main", "nginx:1.0")]),
            json!({"podUpdatePolicy": "InPlaceIfPossible"}),
        ),
        Duration::ZERO,
    )
    .await;
    let api = &env.api;
    settle(api, 5).await;
    edit(api, |spec| spec["replicas"] = json!(10));
    settle(api, 10).await;
    edit(api, |spec| spec["replicas"] = json!(2));
    settle(api, 2).await;
    let deletes = api
        .writes
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, p)| *m == Method::DELETE && p.starts_with(PODS))
        .count();
    assert_eq!(deletes, 8);
}

#[tokio::test]
async fn launch_priority_updates_the_higher_priority_container_first() {
    let barrier = |key: &str| {
        json!([{"name": "KRUISE_CONTAINER_BARRIER",
            "valueFrom": {"configMapKeyRef": {"name": "web-barrier", "key": key}}}])
    };
    let containers = json!([
        {"name": "main", "image": "nginx:1.0", "env": barrier("p_0")},
        {"name": "sidecar", "image": "envoy:1.0", "env": barrier("p_1000")},
    ]);
    let env = start(
        clone_set(1, containers, json!({"podUpdatePolicy": "InPlaceIfPossible"})),
        Duration::from_millis(200),
    )
    .await;
    let api = &env.api;
    settle(api, 1).await;
    edit(api, |spec| {
        spec["template"]["spec"]["containers"][0]["image"] = json!("nginx:2.0");
        spec["template"]["spec"]["containers"][1]["image"] = json!("envoy:2.0");
    });
    let mut sidecar_alone = false;
    wait(
        api,
        30,
        "both containers updated",
        |api| {
            let pod = &pods(api)[0];
            sidecar_alone |= image_of(pod, "sidecar") == "envoy:2.0" && image_of(pod, "main") == "nginx:1.0";
        },
        |api| {
            settled(api, 1)
                && pods(api)
                    .iter()
                    .all(|p| image_of(p, "main") == "nginx:2.0" && image_of(p, "sidecar") == "envoy:2.0")
        },
    )
    .await;
    assert!(
        sidecar_alone,
        "the sidecar (priority 1000) was updated before main"
    );
    let pod = &pods(api)[0];
    let state: Value = serde_json::from_str(pod["metadata"]["annotations"][STATE].as_str().unwrap()).unwrap();
    let batches: Vec<Value> = state["containerBatchesRecord"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["containers"].clone())
        .collect();
    assert_eq!(batches, vec![json!(["sidecar"]), json!(["main"])], "{state}");
    assert_eq!((restarts(pod, "main"), restarts(pod, "sidecar")), (1, 1));
}

#[tokio::test]
async fn rollback_reuses_the_old_revision_and_leaves_its_pods_alone() {
    let env = start(
        clone_set(
            5,
            json!([container("main", "nginx:1.0")]),
            json!({"podUpdatePolicy": "InPlaceIfPossible"}),
        ),
        Duration::ZERO,
    )
    .await;
    let api = &env.api;
    settle(api, 5).await;
    let old_revision = status(api)["updateRevision"].as_str().unwrap().to_string();
    edit(api, |spec| {
        spec["template"]["spec"]["containers"][0]["image"] = json!("nginx:2.0");
        spec["updateStrategy"]["rollingUpdate"]["partition"] = json!(3);
    });
    wait(
        api,
        30,
        "2 pods on the new revision",
        |_| {},
        |api| {
            let s = status(api);
            s["updatedReplicas"] == 2 && s["updatedReadyReplicas"] == 2 && s["readyReplicas"] == 5
        },
    )
    .await;
    let old_pods: Vec<String> = pods(api)
        .iter()
        .filter(|p| p["metadata"]["labels"][REVISION_HASH] == old_revision.as_str())
        .map(|p| p["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(old_pods.len(), 3);
    let revisions_before = api
        .objects
        .lock()
        .unwrap()
        .keys()
        .filter(|k| k.starts_with(REVISIONS))
        .count();
    let mark = api.writes.lock().unwrap().len();

    edit(api, |spec| {
        spec["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.0");
        spec["updateStrategy"]["rollingUpdate"]["partition"] = json!(0);
    });
    wait(
        api,
        30,
        "rolled back",
        |_| {},
        |api| settled(api, 5) && status(api)["updateRevision"] == old_revision.as_str(),
    )
    .await;
    assert!(pods(api).iter().all(|p| image_of(p, "main") == "nginx:1.0"));
    let revisions_after = api
        .objects
        .lock()
        .unwrap()
        .keys()
        .filter(|k| k.starts_with(REVISIONS))
        .count();
    assert_eq!(revisions_after, revisions_before, "no new revision");
    let writes = api.writes.lock().unwrap()[mark..].to_vec();
    for pod in &old_pods {
        let touched: Vec<_> = writes
            .iter()
            .filter(|(_, p)| p.starts_with(&format!("{PODS}{pod}")))
            .collect();
        assert!(
            touched.is_empty(),
            "{pod} was already on the old revision: {touched:?}"
        );
    }
}

#[tokio::test]
async fn in_place_rollout_of_100_pods_writes_at_most_two_pod_objects_per_pod() {
    let env = start(
        clone_set(
            100,
            json!([container("main", "nginx:1.0")]),
            json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "50%"}),
        ),
        Duration::ZERO,
    )
    .await;
    let api = &env.api;
    wait(api, 120, "100 ready pods", |_| {}, |api| settled(api, 100)).await;
    let mark = api.writes.lock().unwrap().len();
    edit(api, |spec| {
        spec["template"]["spec"]["containers"][0]["image"] = json!("nginx:2.0")
    });
    wait(
        api,
        120,
        "100 pods updated",
        |_| {},
        |api| settled(api, 100) && pods(api).iter().all(|p| image_of(p, "main") == "nginx:2.0"),
    )
    .await;
    let writes = api.writes.lock().unwrap()[mark..].to_vec();
    let pod_writes = writes
        .iter()
        .filter(|(_, p)| p.starts_with(PODS) && !p.ends_with("/status"))
        .count();
    let pod_status_writes = writes
        .iter()
        .filter(|(_, p)| p.starts_with(PODS) && p.ends_with("/status"))
        .count();
    let cloneset_status_writes = writes
        .iter()
        .filter(|(_, p)| p == &format!("{CS}/status"))
        .count();
    println!(
        "100-pod in-place rollout: {pod_writes} pod writes, {pod_status_writes} pods/status writes, \
         {cloneset_status_writes} CloneSet status writes, {} writes in all",
        writes.len()
    );
    // Per pod: the in-place patch and the lifecycle Updating → Normal patch; on pods/status the
    // InPlaceUpdateReady False → True pair.
    assert!(pod_writes <= 200, "{pod_writes} pod writes for 100 pods");
    assert!(
        pod_status_writes <= 200,
        "{pod_status_writes} pods/status writes for 100 pods"
    );
    assert!(pods(api).iter().all(|p| restarts(p, "main") == 1));
}

#[tokio::test]
async fn a_status_conflict_is_planned_again_never_overwritten() {
    let env = start(
        clone_set(
            5,
            json!([container("main", "nginx:1.0")]),
            json!({"podUpdatePolicy": "InPlaceIfPossible"}),
        ),
        Duration::ZERO,
    )
    .await;
    let api = &env.api;
    settle(api, 5).await;
    // Another writer scales to 3 just before our next status write lands: it must be refused, and the
    // controller must plan again from the new spec.
    *api.before_conflict.lock().unwrap() = Some(Box::new(|api: &FakeApi| {
        edit(api, |spec| spec["replicas"] = json!(3));
    }));
    api.conflict_once.lock().unwrap().insert(format!("{CS}/status"));
    edit(api, |spec| spec["replicas"] = json!(4));
    settle(api, 3).await;
    assert!(
        api.conflict_once.lock().unwrap().is_empty(),
        "the conflict was injected"
    );
    assert_eq!(api.get(CS).unwrap()["spec"]["replicas"], 3);
}

#[tokio::test]
async fn failed_creates_are_forgotten_and_retried() {
    let env = start(
        clone_set(
            3,
            json!([container("main", "nginx:1.0")]),
            json!({"podUpdatePolicy": "InPlaceIfPossible"}),
        ),
        Duration::ZERO,
    )
    .await;
    let api = &env.api;
    let collection = PODS.trim_end_matches('/').to_string();
    api.failing.lock().unwrap().insert(collection.clone());
    wait(
        api,
        10,
        "a FailedCreate event",
        |_| {},
        |api| {
            api.objects
                .lock()
                .unwrap()
                .iter()
                .any(|(p, e)| p.contains("/events/") && e["reason"] == "FailedCreate")
        },
    )
    .await;
    assert!(pods(api).is_empty());
    api.failing.lock().unwrap().remove(&collection);
    settle(api, 3).await;
}

#[tokio::test]
async fn adopts_an_orphan_that_matches_the_selector() {
    let env = start(
        clone_set(
            3,
            json!([container("main", "nginx:1.0")]),
            json!({"podUpdatePolicy": "InPlaceIfPossible"}),
        ),
        Duration::ZERO,
    )
    .await;
    let api = &env.api;
    settle(api, 3).await;
    let orphan = format!("{PODS}stray");
    api.put(
        &orphan,
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "stray", "namespace": "ns", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1.0"}]}}),
    );
    // Adopted; then, being one pod too many and on no revision of the CloneSet, scaled away.
    wait(
        api,
        30,
        "the orphan adopted",
        |_| {},
        |api| api.writes_to(&orphan).contains(&Method::PATCH),
    )
    .await;
    settle(api, 3).await;
    if let Some(pod) = api.get(&orphan) {
        assert_eq!(pod["metadata"]["ownerReferences"][0]["uid"], "cs-uid");
    }
}
