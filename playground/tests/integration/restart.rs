//! The restart test hook (`kruise_playground::restart`): what a client sees of kube-apiserver
//! restarting — its watch cut, connections refused, then the same port, objects and resourceVersions,
//! and a watch resumed from before answered 410.

use crate::common;

use std::time::Duration;

use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams, WatchEvent, WatchParams};
use serde_json::json;

fn cm(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}})).unwrap()
}

fn rv(cm: &ConfigMap) -> u64 {
    cm.metadata.resource_version.as_deref().unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_cuts_watches_refuses_connections_and_comes_back_with_the_same_objects() {
    let pg = common::start().await;
    let client = pg.client().await.unwrap();
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let a = cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    let from = a.metadata.resource_version.clone().unwrap();
    let mut watch = cms
        .watch(&WatchParams::default().timeout(60), &from)
        .await
        .unwrap()
        .boxed();
    // A change the watch sees before the restart: resuming from `from` needs its event.
    cms.create(&PostParams::default(), &cm("before")).await.unwrap();

    // Bad requests first: they restart nothing.
    let (code, _) = common::raw(&client, "GET", "/playground/restart", "application/json", "").await;
    assert_eq!(code, 405);
    for body in [r#"{"downSeconds": -1}"#, r#"{"downSeconds": 301}"#, r#"{}"#] {
        let (code, answer) =
            common::raw(&client, "POST", "/playground/restart", "application/json", body).await;
        assert_eq!(code, 400, "{body}: {answer}");
    }

    let (code, answer) = common::raw(
        &client,
        "POST",
        "/playground/restart",
        "application/json",
        r#"{"downSeconds": 1.5}"#,
    )
    .await;
    assert_eq!(code, 202, "{answer}");
    assert_eq!(answer["kind"], "PlaygroundRestart");
    assert_eq!(answer["restart"], 1);
    assert_eq!(answer["downSeconds"], 1.5);

    // The open watch is cut (not ended by its timeout), and the port refuses connections.
    let cut = tokio::time::timeout(Duration::from_secs(3), async {
        while let Ok(Some(_)) = watch.try_next().await {}
    })
    .await;
    assert!(cut.is_ok(), "the watch outlived the restart");
    assert!(tokio::net::TcpStream::connect(pg.addr()).await.is_err());
    assert_eq!(pg.api().restarts.completed(), 0);

    common::eventually("the server to listen again", || async {
        (pg.api().restarts.completed() == 1).then_some(())
    })
    .await;
    // The same port, object and resourceVersion; writes go on from there.
    let again = cms.get("a").await.unwrap();
    assert_eq!(again.metadata.uid, a.metadata.uid);
    assert_eq!(rv(&again), rv(&a));
    let b = cms.create(&PostParams::default(), &cm("b")).await.unwrap();
    assert!(rv(&b) > rv(&a));
    // The watch history is gone: resuming from before the restart is 410 Expired.
    let mut resumed = cms
        .watch(&WatchParams::default().timeout(5), &from)
        .await
        .unwrap()
        .boxed();
    match resumed.try_next().await.unwrap() {
        Some(WatchEvent::Error(e)) => assert_eq!((e.code, e.reason.as_str()), (410, "Expired")),
        other => panic!("expected 410 Expired, got {other:?}"),
    }
    pg.shutdown().await;
}
