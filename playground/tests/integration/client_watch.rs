//! Watch semantics through kube-rs: event sequences, resourceVersion starts, 410 Expired,
//! bookmarks and timeouts.

use crate::common;

use std::time::Duration;

use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::core::v1::ConfigMap;
use kruise_playground::PlaygroundOptions;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;

fn cm(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}})).unwrap()
}

fn describe(e: &WatchEvent<ConfigMap>) -> String {
    match e {
        WatchEvent::Added(o) => format!("ADDED {}", o.metadata.name.clone().unwrap()),
        WatchEvent::Modified(o) => format!("MODIFIED {}", o.metadata.name.clone().unwrap()),
        WatchEvent::Deleted(o) => format!("DELETED {}", o.metadata.name.clone().unwrap()),
        WatchEvent::Bookmark(_) => "BOOKMARK".into(),
        WatchEvent::Error(s) => format!("ERROR {} {}", s.code, s.reason),
    }
}

#[tokio::test]
async fn watch_from_zero_then_changes_in_order() {
    let pg = common::start().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(pg.client().await.unwrap());
    let first = cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    let stream = cms.watch(&WatchParams::default().timeout(5), "0").await.unwrap();
    let mut stream = stream.boxed();
    assert_eq!(describe(&stream.try_next().await.unwrap().unwrap()), "ADDED a");
    cms.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"x": "1"}})),
    )
    .await
    .unwrap();
    cms.create(&PostParams::default(), &cm("b")).await.unwrap();
    cms.delete("a", &DeleteParams::default()).await.unwrap();
    let mut seen = vec![];
    let mut rvs = vec![];
    for _ in 0..3 {
        let e = stream.try_next().await.unwrap().unwrap();
        if let WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) = &e {
            rvs.push(
                o.metadata
                    .resource_version
                    .clone()
                    .unwrap()
                    .parse::<u64>()
                    .unwrap(),
            );
        }
        seen.push(describe(&e));
    }
    assert_eq!(seen, ["MODIFIED a", "ADDED b", "DELETED a"]);
    assert!(rvs.windows(2).all(|w| w[0] < w[1]), "{rvs:?}");

    // From a specific resourceVersion: only what came after it.
    let rv = first.metadata.resource_version.unwrap();
    let replay: Vec<String> = cms
        .watch(&WatchParams::default().timeout(1), &rv)
        .await
        .unwrap()
        .map(|e| describe(&e.unwrap()))
        .collect()
        .await;
    assert_eq!(replay, ["MODIFIED a", "ADDED b", "DELETED a"]);
    pg.shutdown().await;
}

#[tokio::test]
async fn too_old_resource_version_is_410_expired() {
    let options = PlaygroundOptions {
        history_limit: 3,
        ..PlaygroundOptions::default()
    };
    let pg = common::start_with(options).await;
    let client = pg.client().await.unwrap();
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    for n in ["a", "b", "c", "d", "e"] {
        cms.create(&PostParams::default(), &cm(n)).await.unwrap();
    }
    let events: Vec<_> = cms
        .watch(&WatchParams::default(), "1")
        .await
        .unwrap()
        .collect()
        .await;
    assert_eq!(events.len(), 1);
    let WatchEvent::Error(status) = events[0].as_ref().unwrap() else {
        panic!("expected an ERROR event, got {events:?}");
    };
    assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
    assert!(
        status.message.starts_with("too old resource version: 1 ("),
        "{}",
        status.message
    );

    let (code, body) = common::raw(
        &client,
        "GET",
        "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1",
        "",
        "",
    )
    .await;
    assert_eq!(
        code, 200,
        "the watch cache answers 200 and an ERROR event: {body}"
    );
    pg.shutdown().await;
}

#[tokio::test]
async fn bookmarks_and_timeout() {
    let options = PlaygroundOptions {
        bookmark_interval: Duration::from_millis(200),
        ..PlaygroundOptions::default()
    };
    let pg = common::start_with(options).await;
    let cms: Api<ConfigMap> = Api::default_namespaced(pg.client().await.unwrap());
    cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    let started = std::time::Instant::now();
    let events: Vec<String> = cms
        .watch(&WatchParams::default().timeout(1), "0")
        .await
        .unwrap()
        .map(|e| describe(&e.unwrap()))
        .collect()
        .await;
    let elapsed = started.elapsed();
    assert_eq!(events[0], "ADDED a");
    assert!(
        events[1..].iter().all(|e| e == "BOOKMARK") && events.len() >= 3,
        "{events:?}"
    );
    assert!(
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_secs(5),
        "{elapsed:?}"
    );
    pg.shutdown().await;
}

#[tokio::test]
async fn selector_watch_sees_objects_leave() {
    let pg = common::start().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(pg.client().await.unwrap());
    let mut stream = cms
        .watch(&WatchParams::default().labels("app=web").timeout(5), "0")
        .await
        .unwrap()
        .boxed();
    let mut labelled = cm("a");
    labelled.metadata.labels = Some([("app".to_string(), "web".to_string())].into());
    cms.create(&PostParams::default(), &cm("other")).await.unwrap();
    cms.create(&PostParams::default(), &labelled).await.unwrap();
    cms.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"app": "db"}}})),
    )
    .await
    .unwrap();
    let a = describe(&stream.try_next().await.unwrap().unwrap());
    let b = describe(&stream.try_next().await.unwrap().unwrap());
    assert_eq!([a, b], ["ADDED a", "DELETED a"]);
    pg.shutdown().await;
}
