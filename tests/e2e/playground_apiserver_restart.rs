//! The API server restarting in the middle of a CloneSet rollout that a `kruise serve` in cluster mode
//! drives (issue #20). The playground's restart hook (`kruise_playground::restart`) cuts every
//! connection, closes the port for a while and serves again on the same port with the same objects,
//! its watch history forgotten: what kube-apiserver's clients see of a restart. `kruise serve` is a
//! separate process, as in a cluster; the playground runs in the test, so that every pod change is
//! seen in its store, during the outage too. A short outage leaves the leader leading; a long one
//! makes it step down and lead again on caches the outage left behind.

use crate::common::{self, poll_until};

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use common::kubectl::{kubectl, ok};
use common::replicas::{Replica, proxy};
use kruise_playground::{Api, store::EventType, store::ResKey};
use serde_json::Value;

const NS: &str = "shop";
const REPLICAS: usize = 6;

/// Every state of the CloneSet's pods in the store, from the moment the observer starts.
#[derive(Debug, Default, Clone)]
struct Seen {
    /// Pods created (ADDED) and removed (DELETED).
    created: usize,
    deleted: usize,
    /// Uids of the pods created.
    new_uids: BTreeSet<String>,
    /// The most live (not terminating) pods at once.
    most_live: usize,
    /// The fewest live Ready pods at once.
    fewest_ready: usize,
    /// The observer fell behind the store's broadcast (states were missed).
    lagged: bool,
}

fn ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

fn live(pod: &Value) -> bool {
    pod["metadata"]["deletionTimestamp"].is_null()
}

fn name(pod: &Value) -> String {
    pod["metadata"]["name"].as_str().unwrap_or_default().to_string()
}

/// Follows the pods of namespace [`NS`] in the store, recording [`Seen`] after every change.
fn observe(api: Arc<Api>, seen: Arc<Mutex<Seen>>) -> tokio::task::JoinHandle<()> {
    let key = ResKey::new("", "pods");
    let (pods, rv) = api.store.list(&key, Some(NS));
    let (replay, mut changes) = api.store.watch(&key, rv).unwrap();
    assert!(replay.is_empty() || replay.iter().all(|e| e.key == key));
    let mut current: BTreeMap<String, bool> = pods
        .iter()
        .filter(|p| live(p))
        .map(|p| (name(p), ready(p)))
        .collect();
    tokio::spawn(async move {
        let mut pending = replay.into_iter();
        loop {
            let event = match pending.next() {
                Some(event) => event,
                None => match changes.recv().await {
                    Ok(event) => event,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        seen.lock().unwrap().lagged = true;
                        continue;
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                },
            };
            if event.key != key || event.object["metadata"]["namespace"] != NS {
                continue;
            }
            let mut s = seen.lock().unwrap();
            match event.kind {
                EventType::Added => {
                    s.created += 1;
                    let uid = event.object["metadata"]["uid"].as_str().unwrap_or_default();
                    s.new_uids.insert(uid.to_string());
                }
                EventType::Deleted => s.deleted += 1,
                EventType::Modified => {}
            }
            let pod = &event.object;
            if event.kind != EventType::Deleted && live(pod) {
                current.insert(name(pod), ready(pod));
            } else {
                current.remove(&name(pod));
            }
            s.most_live = s.most_live.max(current.len());
            s.fewest_ready = s.fewest_ready.min(current.values().filter(|r| **r).count());
        }
    })
}

/// `(live pods on image, of which Ready, all live pods)` in the store.
fn on_image(api: &Api, image: &str) -> (usize, usize, usize) {
    let (pods, _) = api.store.list(&ResKey::new("", "pods"), Some(NS));
    let live: Vec<&Value> = pods.iter().filter(|p| live(p)).collect();
    let on: Vec<&&Value> = live
        .iter()
        .filter(|p| p["spec"]["containers"][0]["image"] == image)
        .collect();
    (on.len(), on.iter().filter(|p| ready(p)).count(), live.len())
}

/// Requests of `method` on pods (no subresource) since `before`.
fn pod_requests(
    api: &Api,
    before: &BTreeMap<kruise_playground::request_counts::RequestKind, u64>,
    method: &str,
) -> u64 {
    api.requests
        .snapshot()
        .iter()
        .filter(|(k, _)| k.method == method && k.group.is_empty() && k.resource == "pods")
        .filter(|(k, _)| k.subresource.is_none())
        .map(|(k, n)| n - before.get(k).copied().unwrap_or(0))
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rollout_goes_on_when_the_api_server_restarts_in_the_middle_of_it() {
    // Down for 3 s, renewed every 2 s: inside the 10 s renew deadline, so the leader kept leading (its
    // controllers were not stopped and started again), the one change being the first acquisition.
    let leadership_changes = rollout_through_a_restart(Duration::from_secs(3)).await;
    assert_eq!(leadership_changes, 1);
}

/// Down longer than the renew deadline, the leader steps down and, back, leads again: its controllers
/// start on caches the outage left behind, and decide only once those show what their watches see.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_leader_that_stepped_down_in_a_long_outage_finishes_the_rollout() {
    let leadership_changes = rollout_through_a_restart(Duration::from_secs(12)).await;
    assert_eq!(leadership_changes, 3);
}

/// The rollout with the API server down for `down` in the middle of it; how many times the replica
/// logged a change of leadership.
async fn rollout_through_a_restart(down: Duration) -> usize {
    common::init();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let service = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    let pg = kruise_rs::playground::start(kruise_rs::playground::Options {
        external_webhook: Some(service),
        kubelet_delay: Duration::from_millis(500),
        ..Default::default()
    })
    .await
    .unwrap();
    let api = pg.playground.api().clone();
    let dir = tempfile::tempdir().unwrap();
    let k = pg.write_kubeconfig(&dir.path().join("kubeconfig")).unwrap();

    let mut replica = Replica::start(&k, "replica-a", &[]);
    poll_until("kruise serve to be ready", 60, async || replica.ready().await).await;
    let proxying = tokio::spawn(proxy(
        tokio::net::TcpListener::from_std(listener).unwrap(),
        vec![replica.webhook().await],
    ));

    ok(&k, &["create", "namespace", NS]);
    let cloneset = serde_json::json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {"replicas": REPLICAS, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "app:v1"}]}},
            "updateStrategy": {"rollingUpdate": {"maxUnavailable": 1, "podUpdatePolicy": "ReCreate"}}}});
    let (created, _, err) = kubectl(&k, &["apply", "-f", "-"], Some(&cloneset.to_string()));
    assert!(created, "{err}");
    poll_until("6 ready pods on v1", 60, async || {
        on_image(&api, "app:v1") == (REPLICAS, REPLICAS, REPLICAS)
    })
    .await;

    let seen = Arc::new(Mutex::new(Seen {
        fewest_ready: REPLICAS,
        ..Seen::default()
    }));
    let observing = observe(api.clone(), seen.clone());
    let before = api.requests.snapshot();
    let expired_before = api.store.too_old_watches();
    ok(
        &k,
        &[
            "patch",
            "cloneset",
            "web",
            "-n",
            NS,
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"app:v2"}]}}}}"#,
        ],
    );
    poll_until("the rollout to be under way (2 pods on v2)", 60, async || {
        on_image(&api, "app:v2").0 >= 2
    })
    .await;

    // The restart, asked for as a user would; answered before the connections are cut.
    let (asked, out, err) = kubectl(
        &k,
        &["create", "--raw", "/playground/restart", "-f", "-"],
        Some(&format!(r#"{{"downSeconds": {}}}"#, down.as_secs())),
    );
    assert!(asked, "{err}");
    assert!(out.contains("PlaygroundRestart"), "{out}");
    let (updated_at_restart, _, _) = on_image(&api, "app:v2");
    assert!(
        updated_at_restart < REPLICAS,
        "the rollout ended before the restart"
    );
    // The port really closes: connections are refused while the server is down.
    let addr = pg.playground.addr();
    poll_until("the API server's port to refuse connections", 5, async || {
        tokio::net::TcpStream::connect(addr).await.is_err()
    })
    .await;
    let went_down = Instant::now();
    poll_until("the API server to listen again", 30, async || {
        api.restarts.completed() == 1
    })
    .await;
    assert!(went_down.elapsed() >= down - Duration::from_secs(1));
    let back = Instant::now();
    assert!(
        replica.running(),
        "kruise serve exited while the API server was down"
    );

    let started = Instant::now();
    while on_image(&api, "app:v2") != (REPLICAS, REPLICAS, REPLICAS) {
        if started.elapsed() > Duration::from_secs(120) {
            let (pods, _) = api.store.list(&ResKey::new("", "pods"), Some(NS));
            let pods: Vec<_> = pods
                .iter()
                .map(|p| {
                    (
                        name(p),
                        p["spec"]["containers"][0]["image"].clone(),
                        live(p),
                        ready(p),
                    )
                })
                .collect();
            let cloneset = api
                .store
                .get(&ResKey::new("apps.kruise.io", "clonesets"), NS, "web");
            panic!(
                "timed out after 120 s waiting for the rollout to finish after the restart; pods \
                 (name, image, live, ready) {pods:?}; CloneSet status {}; kruise serve's log:\n{}",
                cloneset.unwrap_or_default()["status"],
                replica.log_tail()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let finished_after = back.elapsed();
    poll_until("the CloneSet status to say 6 updated and ready", 60, async || {
        let cloneset = api
            .store
            .get(&ResKey::new("apps.kruise.io", "clonesets"), NS, "web")
            .unwrap_or_default();
        cloneset["status"]["updatedReadyReplicas"] == REPLICAS
    })
    .await;
    poll_until("kruise serve to be ready", 30, async || replica.ready().await).await;
    assert!(replica.running(), "kruise serve exited");

    let seen = seen.lock().unwrap().clone();
    observing.abort();
    proxying.abort();
    eprintln!(
        "{seen:?}; {updated_at_restart} pods on v2 at the restart; rollout finished {:?} after the \
         server came back; watches answered 410 after the restart: {}",
        finished_after,
        api.store.too_old_watches() - expired_before
    );
    assert!(!seen.lagged, "the observer missed states");
    // The caches' watches resumed from before the restart were answered 410 and listed again.
    assert!(api.store.too_old_watches() > expired_before);
    // ReCreate: each of the 6 old pods deleted once and replaced by exactly one new pod.
    assert_eq!(seen.created, REPLICAS, "{seen:?}");
    assert_eq!(seen.new_uids.len(), REPLICAS, "{seen:?}");
    assert_eq!(seen.deleted, REPLICAS, "{seen:?}");
    assert_eq!(
        pod_requests(&api, &before, "POST"),
        REPLICAS as u64,
        "pod creates"
    );
    assert_eq!(
        pod_requests(&api, &before, "DELETE"),
        REPLICAS as u64,
        "pod deletes"
    );
    assert!(seen.most_live <= REPLICAS, "{seen:?}");
    assert!(
        seen.fewest_ready >= REPLICAS - 1,
        "maxUnavailable 1 broken: {seen:?}"
    );
    let leadership_changes = replica.logged("leadership changed");
    drop(replica);
    pg.shutdown().await;
    leadership_changes
}
