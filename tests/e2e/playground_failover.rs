//! Two `kruise serve` replicas against one playground (as two pods of the Deployment would run): the
//! leader is killed (SIGKILL) in the middle of a CloneSet rollout; the other replica takes the Lease
//! and finishes the rollout, no pod is created twice and `maxUnavailable` holds in every state a pod
//! watch sees. The webhook Service resolves to a test proxy that forwards each connection to the first
//! replica in turn (or the other when that one refuses), as a Service forwards to its endpoints.

use crate::common::{self, poll_until};

use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
    sync::{Arc, Mutex},
};

use common::kubectl::{kubectl, ok, serve};
use common::replicas::{Replica, proxy};
use futures::StreamExt as _;
use k8s_openapi::api::core::v1::Pod;
use kube::{Api, Client, runtime::watcher};

const NS: &str = "shop";
const REPLICAS: usize = 6;

/// What the pod watch saw from the moment it was armed.
#[derive(Debug, Default, Clone)]
struct Seen {
    /// Every pod uid seen.
    uids: BTreeSet<String>,
    /// The most live (not terminating) pods at once.
    most_live: usize,
    /// The fewest live Ready pods at once.
    fewest_ready: usize,
}

/// A client of the playground that asks once (kube-rs retries 429s by default; kubectl does not).
async fn client_of(kubeconfig: &Path) -> Client {
    let yaml = std::fs::read_to_string(kubeconfig).unwrap();
    let mut config = kruise_playground::kubeconfig::config(&yaml).await.unwrap();
    config.default_retry = false;
    Client::try_from(config).unwrap()
}

fn ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// Watches the CloneSet's pods and records [`Seen`] over every state after the initial list.
async fn watch(pods: Api<Pod>, seen: Arc<Mutex<Seen>>) {
    let mut events = std::pin::pin!(watcher(pods, watcher::Config::default().labels("app=web")));
    let mut current: BTreeMap<String, bool> = BTreeMap::new();
    let mut listed = false;
    while let Some(event) = events.next().await {
        match event {
            Ok(watcher::Event::Apply(pod) | watcher::Event::InitApply(pod)) => {
                seen.lock()
                    .unwrap()
                    .uids
                    .insert(pod.metadata.uid.clone().unwrap_or_default());
                let name = pod.metadata.name.clone().unwrap_or_default();
                if pod.metadata.deletion_timestamp.is_some() {
                    current.remove(&name);
                } else {
                    current.insert(name, ready(&pod));
                }
            }
            Ok(watcher::Event::Delete(pod)) => {
                current.remove(&pod.metadata.name.unwrap_or_default());
            }
            Ok(watcher::Event::InitDone) => listed = true,
            Ok(watcher::Event::Init) | Err(_) => continue,
        }
        if listed {
            let mut s = seen.lock().unwrap();
            s.most_live = s.most_live.max(current.len());
            s.fewest_ready = s.fewest_ready.min(current.values().filter(|r| **r).count());
        }
    }
}

fn lease_holder(kubeconfig: &Path) -> String {
    let (_, out, _) = kubectl(
        kubeconfig,
        &[
            "get",
            "lease",
            "kruise-rs-leader",
            "-n",
            "kruise-system",
            "-o",
            "jsonpath={.spec.holderIdentity}",
        ],
        None,
    );
    out
}

/// `(pods on image, ready pods on image, all pods)` of the CloneSet.
async fn on_image(pods: &Api<Pod>, image: &str) -> (usize, usize, usize) {
    let list = pods
        .list(&kube::api::ListParams::default().labels("app=web"))
        .await
        .unwrap()
        .items;
    let live: Vec<&Pod> = list
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .collect();
    let with = |p: &&&Pod| {
        p.spec
            .as_ref()
            .is_some_and(|s| s.containers.iter().any(|c| c.image.as_deref() == Some(image)))
    };
    let on: Vec<&&Pod> = live.iter().filter(with).collect();
    let ready_on = on.iter().filter(|p| ready(p)).count();
    (on.len(), ready_on, live.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_other_replica_takes_the_lease_and_finishes_a_rollout_whose_leader_was_killed() {
    common::init();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let service = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    let served = serve(&[
        "--external-webhook",
        &service.to_string(),
        "--kubelet-delay-ms",
        "500",
    ]);
    let k = served.kubeconfig.clone();

    let mut first = Replica::start(&k, "replica-a", &[]);
    poll_until("replica-a to lead and be ready", 60, async || {
        first.ready().await && lease_holder(&k) == "replica-a"
    })
    .await;
    let second = Replica::start(&k, "replica-b", &[]);
    poll_until("replica-b to be ready", 60, async || second.ready().await).await;
    let proxying = tokio::spawn(proxy(
        tokio::net::TcpListener::from_std(listener).unwrap(),
        vec![first.webhook().await, second.webhook().await],
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
    let pods: Api<Pod> = Api::namespaced(client_of(&k).await, NS);
    poll_until("6 ready pods on v1", 60, async || {
        on_image(&pods, "app:v1").await == (REPLICAS, REPLICAS, REPLICAS)
    })
    .await;

    let seen = Arc::new(Mutex::new(Seen {
        fewest_ready: REPLICAS,
        ..Seen::default()
    }));
    let watching = tokio::spawn(watch(pods.clone(), seen.clone()));
    poll_until("the watch to list the 6 pods", 30, async || {
        seen.lock().unwrap().uids.len() == REPLICAS
    })
    .await;

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
        on_image(&pods, "app:v2").await.0 >= 2
    })
    .await;
    let (updated_at_kill, _, _) = on_image(&pods, "app:v2").await;
    first.kill();
    assert!(
        updated_at_kill < REPLICAS,
        "the rollout ended before the leader was killed"
    );

    // The Lease runs out (15 s) before replica-b may lead; then it finishes the rollout.
    poll_until("replica-b to finish the rollout", 90, async || {
        on_image(&pods, "app:v2").await == (REPLICAS, REPLICAS, REPLICAS)
    })
    .await;
    assert_eq!(lease_holder(&k), "replica-b");
    poll_until("the status to say 6 updated and ready", 30, async || {
        ok(
            &k,
            &[
                "get",
                "cloneset",
                "web",
                "-n",
                NS,
                "-o",
                "jsonpath={.status.updatedReadyReplicas}",
            ],
        ) == "6"
    })
    .await;

    let seen = seen.lock().unwrap().clone();
    watching.abort();
    proxying.abort();
    // ReCreate: each of the 6 old pods replaced by exactly one new pod.
    assert_eq!(seen.uids.len(), 2 * REPLICAS, "pods created: {:?}", seen.uids);
    assert!(seen.most_live <= REPLICAS, "{seen:?}");
    assert!(
        seen.fewest_ready >= REPLICAS - 1,
        "maxUnavailable 1 broken: {seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_under_concurrent_evictions_never_lets_a_budget_be_overspent() {
    common::init();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let service = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    let served = serve(&[
        "--external-webhook",
        &service.to_string(),
        "--kubelet-delay-ms",
        "200",
    ]);
    let k = served.kubeconfig.clone();
    let mut first = Replica::start(&k, "replica-a", &[]);
    let second = Replica::start(&k, "replica-b", &[]);
    poll_until("both replicas ready", 60, async || {
        first.ready().await && second.ready().await
    })
    .await;
    let proxying = tokio::spawn(proxy(
        tokio::net::TcpListener::from_std(listener).unwrap(),
        vec![first.webhook().await, second.webhook().await],
    ));

    const PODS: usize = 100;
    ok(&k, &["create", "namespace", NS]);
    ok(
        &k,
        &[
            "create",
            "deployment",
            "web",
            "-n",
            NS,
            "--image=app:v1",
            &format!("--replicas={PODS}"),
        ],
    );
    let budget = serde_json::json!({"apiVersion": "policy.kruise.io/v1alpha1", "kind": "PodUnavailableBudget",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 3}});
    let (created, _, err) = kubectl(&k, &["apply", "-f", "-"], Some(&budget.to_string()));
    assert!(created, "{err}");
    let client = client_of(&k).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), NS);
    let all = || kube::api::ListParams::default().labels("app=web");
    poll_until("100 ready pods", 90, async || {
        let list = pods.list(&all()).await.unwrap().items;
        list.len() == PODS && list.iter().all(ready)
    })
    .await;
    poll_until("the budget to allow 3", 30, async || {
        ok(
            &k,
            &[
                "get",
                "pub",
                "web",
                "-n",
                NS,
                "-o",
                "jsonpath={.status.unavailableAllowed}",
            ],
        ) == "3"
    })
    .await;
    // Replacements stay Pending (unready), so the budget cannot come back during the test.
    for node in ok(&k, &["get", "nodes", "-o", "name"]).lines() {
        ok(&k, &["cordon", node]);
    }

    let names: Vec<String> = pods
        .list(&all())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .collect();
    let answered = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let evictions: Vec<_> = names
        .iter()
        .map(|name| {
            let (pods, name, answered) = (pods.clone(), name.clone(), answered.clone());
            tokio::spawn(async move {
                let result = pods.evict(&name, &kube::api::EvictParams::default()).await;
                answered.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                result.is_ok()
            })
        })
        .collect();
    poll_until("the first answers", 30, async || {
        answered.load(std::sync::atomic::Ordering::SeqCst) >= 5
    })
    .await;
    first.kill();
    let mut allowed = 0;
    for eviction in evictions {
        allowed += usize::from(eviction.await.unwrap());
    }
    proxying.abort();

    // An eviction refused (or whose webhook call failed with the killed replica) deletes nothing.
    let evicted = |list: &[Pod]| {
        names
            .iter()
            .filter(|name| {
                !list.iter().any(|p| {
                    p.metadata.name.as_ref() == Some(*name) && p.metadata.deletion_timestamp.is_none()
                })
            })
            .count()
    };
    let list = pods.list(&all()).await.unwrap().items;
    eprintln!("{allowed} of {PODS} evictions allowed");
    assert!(allowed <= 3, "{allowed} evictions allowed with a budget of 3");
    assert!(allowed >= 1, "no eviction allowed");
    assert_eq!(evicted(&list), allowed, "pods gone or terminating");
}
