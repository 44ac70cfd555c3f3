//! A controller's own status write answered 429 (API Priority and Fairness) through the shared
//! control loop (docs/reliability.md §4.80): the kube client waits the `Retry-After` it is given and
//! writes again; a write that stays throttled past `Tuning::status_write_bound` fails the pass as
//! throttled, which is requeued (never spinning, never dropped) and lands once the server takes it.
//! The PodUnavailableBudget status controller stands for all of them (one `Pass::write_status`).

use crate::common;

use std::time::{Duration, Instant};

use common::cluster::{Cluster, PUBS};
use kruise_playground::refusals::{Refusal, Requests};
use kruise_rs::controllers::Tuning;
use serde_json::{Value, json};

use crate::controllers_pub::{budget, start_tuned, workload};

fn status_writes() -> Requests {
    Requests::on("policy.kruise.io", "podunavailablebudgets").subresource(axum::http::Method::PUT, "status")
}

/// A budget whose status the controller has to write (it counts 3 pods; the stored status says 0).
async fn throttled_budget(retry_after_seconds: u64, times: Option<u32>) -> Cluster {
    let cluster = workload().await;
    cluster.seed(budget(json!({"unavailableAllowed": 0, "currentAvailable": 0,
        "desiredAvailable": 0, "totalReplicas": 0})));
    cluster.api().refusals.arm(
        status_writes(),
        Refusal::TooManyRequests { retry_after_seconds },
        times,
    );
    cluster
}

fn total_replicas(cluster: &Cluster) -> Value {
    cluster.get(PUBS, "ns", "web-pub").unwrap()["status"]["totalReplicas"].clone()
}

async fn written_within(cluster: &Cluster, limit: Duration) -> Duration {
    let started = Instant::now();
    while total_replicas(cluster) != 3 {
        assert!(started.elapsed() < limit, "status not written within {limit:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    started.elapsed()
}

#[tokio::test]
async fn a_status_write_throttled_twice_waits_as_told_and_lands() {
    common::init();
    let cluster = throttled_budget(1, Some(2)).await;
    let task = start_tuned(&cluster, Tuning::default()).await;
    let took = written_within(&cluster, Duration::from_secs(10)).await;
    let refused = cluster.api().refusals.refused(&status_writes());
    task.abort();
    assert_eq!(refused, 2, "each refused write was retried once, not spun");
    assert!(
        took >= Duration::from_secs(2),
        "written after {took:?}: the two Retry-After: 1 were not both waited"
    );
}

#[tokio::test]
async fn a_status_write_throttled_past_its_bound_fails_the_pass_which_is_retried_later() {
    common::init();
    // The server asks for 30 s each time, which the kube client would wait (holding the pass) before
    // writing again; the write may take 1 s.
    let cluster = throttled_budget(30, None).await;
    let tuning = Tuning {
        status_write_bound: Duration::from_secs(1),
        ..Tuning::default()
    };
    let task = start_tuned(&cluster, tuning).await;
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let refusals = &cluster.api().refusals;
    // One attempt abandoned at the bound, then the requeue's wait (a pod change may bring one more
    // pass early); a spinning loop would have made dozens.
    let refused = refusals.refused(&status_writes());
    assert!(
        (1..=2).contains(&refused),
        "{refused} status writes refused in 3.5 s"
    );
    assert_eq!(total_replicas(&cluster), 0);
    // The server takes writes again: the requeued pass writes the status (5 s after one failure, 10 s
    // after two).
    refusals.clear(&status_writes());
    let took = written_within(&cluster, Duration::from_secs(15)).await;
    println!("{refused} attempts refused; written {took:?} after the throttling stopped");
    task.abort();
}
