//! How fast the simulated data plane makes pods ready, run by hand in a release build (ignored in
//! CI; speed is never asserted in timed tests):
//!
//! ```sh
//! cargo nextest run --release -p kruise-playground --test integration speed:: --run-ignored only --no-capture
//! ```
//!
//! 10,000 pods of one Deployment on 50 nodes, with a StatefulSet, a DaemonSet and a finished Job
//! beside them so the new controllers' passes are part of the figure.

use crate::common;

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use kruise_playground::PlaygroundOptions;
use kube::api::{Api, PostParams};
use serde_json::json;

const PODS: i64 = 10_000;

fn workload<T: serde::de::DeserializeOwned>(name: &str, extra: serde_json::Value) -> T {
    let mut spec = json!({"selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}},
                     "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}});
    for (k, v) in extra.as_object().unwrap() {
        spec[k] = v.clone();
    }
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).unwrap()
}

#[tokio::test]
#[ignore = "a measurement, run by hand in a release build"]
async fn ten_thousand_pods_become_ready() {
    let pg = common::start_with(PlaygroundOptions {
        nodes: 50,
        kubelet_delay: Duration::from_millis(200),
        ..PlaygroundOptions::default()
    })
    .await;
    let client = pg.client().await.unwrap();
    let pp = PostParams::default();
    let sets: Api<StatefulSet> = Api::default_namespaced(client.clone());
    sets.create(&pp, &workload("db", json!({"replicas": 3, "serviceName": "db"})))
        .await
        .unwrap();
    let daemons: Api<DaemonSet> = Api::default_namespaced(client.clone());
    daemons.create(&pp, &workload("agent", json!({}))).await.unwrap();
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let mut job: Job = workload("once", json!({}));
    let spec = job.spec.as_mut().unwrap();
    spec.selector = None;
    let pod = spec.template.spec.as_mut().unwrap();
    pod.restart_policy = Some("Never".into());
    pod.containers[0].command = Some(vec!["true".into()]);
    jobs.create(&pp, &job).await.unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;

    let deployments: Api<Deployment> = Api::default_namespaced(client.clone());
    let start = Instant::now();
    deployments
        .create(&pp, &workload("web", json!({"replicas": PODS})))
        .await
        .unwrap();
    loop {
        let d = deployments.get_status("web").await.unwrap();
        let ready = d.status.and_then(|s| s.ready_replicas).unwrap_or(0);
        if i64::from(ready) >= PODS {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(600),
            "{ready} ready after 10 minutes"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{PODS} pods ready in {secs:.1} s: {:.0} pods per second",
        PODS as f64 / secs
    );
}
