//! The watch caches against an API server that refuses or starves them (apiserver contract §4.79–81):
//! lists and watches throttled with 429 (API Priority and Fairness), a kind the server forbids (RBAC
//! missing), a watch stream gone silent on a half-open connection. The playground's
//! [`Refusals`](kruise_playground::refusals) answer before any handler.

use crate::common;

use std::time::{Duration, Instant};

use common::cluster::{self, Cluster, NAMESPACES};
use kruise_core::view::ClusterView as _;
use kruise_playground::refusals::{Refusal, Requests};
use kruise_rs::cluster::ClusterCache;
use serde_json::json;

/// Polls `check` every 50 ms for up to `limit`; returns how long it took.
async fn within(what: &str, limit: Duration, mut check: impl FnMut() -> bool) -> Duration {
    let started = Instant::now();
    while !check() {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    started.elapsed()
}

/// Whether the caches have all synced, waiting at most `limit`.
async fn synced_within(cache: &ClusterCache, limit: Duration) -> bool {
    tokio::time::timeout(limit, cache.wait_until_ready())
        .await
        .is_ok_and(|r| r.is_ok())
}

async fn create_namespace(cluster: &Cluster, name: &str) {
    cluster
        .create(
            NAMESPACES,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
        )
        .await;
}

/// §4.80: the kube client retries a 429 itself, after the `Retry-After` the server asked for; the
/// caches sync and keep following changes.
#[tokio::test]
async fn lists_and_watches_throttled_with_429_are_retried_after_retry_after() {
    common::init();
    let cluster = cluster::start().await;
    let refusals = &cluster.api().refusals;
    let pods = Requests::on("", "pods").reads();
    let namespaces = Requests::on("", "namespaces").watches();
    let throttle = Refusal::TooManyRequests {
        retry_after_seconds: 1,
    };
    refusals.arm(pods.clone(), throttle, Some(3));
    refusals.arm(namespaces.clone(), throttle, Some(2));
    let started = Instant::now();
    let cache = ClusterCache::start(&cluster.client, "kruise-system");
    assert!(
        synced_within(&cache, Duration::from_secs(30)).await,
        "caches never synced"
    );
    assert_eq!(refusals.refused(&pods), 3, "the pod list was throttled");
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "Retry-After was not honoured: synced after {:?}",
        started.elapsed()
    );
    create_namespace(&cluster, "after-throttling").await;
    within("the namespace in the cache", Duration::from_secs(20), || {
        cache.namespace("after-throttling").is_some()
    })
    .await;
    assert_eq!(
        refusals.refused(&namespaces),
        2,
        "the namespace watch was throttled"
    );
}

/// §4.81: a kind the server forbids keeps the caches unready (deciding without it could admit what
/// it protects); it is retried with kube-runtime's backoff (0.8 s doubling to 30 s), not in a hot loop,
/// and the caches sync on the first retry after the permission is granted.
#[tokio::test]
async fn a_forbidden_kind_keeps_the_caches_unready_and_is_retried_with_backoff() {
    common::init();
    let cluster = cluster::start().await;
    let refusals = &cluster.api().refusals;
    let pods = Requests::on("", "pods").reads();
    refusals.arm(pods.clone(), Refusal::Forbidden, None);
    let cache = ClusterCache::start(&cluster.client, "kruise-system");
    assert!(
        !synced_within(&cache, Duration::from_secs(8)).await,
        "synced without being allowed to list pods"
    );
    // The other kinds are followed meanwhile.
    create_namespace(&cluster, "while-forbidden").await;
    within("the namespace in the cache", Duration::from_secs(10), || {
        cache.namespace("while-forbidden").is_some()
    })
    .await;
    // 0.8 + 1.6 + 3.2 s (with jitter) fit in 8 s: a handful of attempts, not hundreds.
    let attempts = refusals.refused(&pods);
    assert!((2..=8).contains(&attempts), "{attempts} lists in 8 s");
    refusals.clear(&pods);
    assert!(
        synced_within(&cache, Duration::from_secs(35)).await,
        "the caches did not sync once pods could be listed"
    );
}

/// §4.79: a watch stream that goes silent without closing is given up by kube-runtime's watcher after
/// its idle timeout (the watch's `timeoutSeconds` + 5 s) and watched again; what changed meanwhile
/// arrives. Here the watch asks for 3 s, so the bound is 8 s; our caches use the default 290 s, so a
/// silent stream delays their changes by at most 295 s.
#[tokio::test]
async fn a_silent_watch_stream_is_given_up_after_the_idle_timeout_and_watched_again() {
    use futures::StreamExt as _;
    use k8s_openapi::api::core::v1::Namespace;
    use kube::runtime::{WatchStreamExt as _, watcher};

    common::init();
    let cluster = cluster::start().await;
    let refusals = &cluster.api().refusals;
    let namespaces = Requests::on("", "namespaces").watches();
    refusals.arm(namespaces.clone(), Refusal::Silence, Some(1));
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let watching = {
        let api: kube::Api<Namespace> = kube::Api::all(cluster.client.clone());
        let seen = seen.clone();
        tokio::spawn(async move {
            let stream = watcher(api, watcher::Config::default().timeout(3)).default_backoff();
            let mut stream = std::pin::pin!(stream.applied_objects());
            while let Some(Ok(namespace)) = stream.next().await {
                let name = namespace.metadata.name.unwrap_or_default();
                seen.lock().unwrap().push(name);
            }
        })
    };
    within("the silent watch", Duration::from_secs(10), || {
        refusals.refused(&namespaces) == 1
    })
    .await;
    create_namespace(&cluster, "while-silent").await;
    let took = within("the namespace seen", Duration::from_secs(15), || {
        seen.lock().unwrap().iter().any(|n| n == "while-silent")
    })
    .await;
    watching.abort();
    assert!(
        took >= Duration::from_secs(4),
        "seen after {took:?}: the silent stream was not what delayed it"
    );
    println!("seen {took:?} after its creation");
}
