//! What holds a SidecarSet rollout, end to end in the playground with the real kubectl: `paused`
//! (no pod written until unpaused), a sidecar image that cannot be pulled (the rollout stops once
//! maxUnavailable pods hold it; a fixed image completes it), a PodUnavailableBudget (the condition names
//! it; raising it lets the rollout go on) and a change besides the image (reported, no pod touched).
//! Never more than maxUnavailable pods not ready, on every state a pod watch sees.

use crate::common;

use std::time::Duration;

use common::playground_sidecarset::{Env, NS, SET, clone_set, image_of, kubectl, ready, sidecar_set, uid};
use serde_json::json;

/// How long a test lets a stray write show before asserting none happened (the controller is passed
/// again on every pod change; 1 s covers several passes).
const QUIET: Duration = Duration::from_secs(1);

#[tokio::test]
async fn paused_freezes_the_rollout_without_a_pod_write_and_unpausing_completes_it() {
    let env = Env::start().await;
    env.apply(&sidecar_set("web", "agent:1.0", json!({"maxUnavailable": 1})))
        .await;
    env.apply(&clone_set(3)).await;
    env.settled(3, "agent:1.0").await;
    let requests = env.requests();
    env.patch(
        "sidecarset",
        SET,
        json!({"spec": {"containers": [{"name": "agent", "image": "agent:2.0"}],
            "updateStrategy": {"paused": true}}}),
    )
    .await;
    env.wait("the Paused condition", 30, async || {
        env.progressing().await == ("False".into(), "Paused".into())
    })
    .await;
    tokio::time::sleep(QUIET).await;
    assert_eq!(env.counts().await, (3, 0, 3, 0));
    assert!(
        env.pods()
            .await
            .iter()
            .all(|p| image_of(p, "agent") == "agent:1.0"),
        "no pod upgraded while paused"
    );
    assert_eq!(
        env.pod_writes_since(&requests),
        (0, 0),
        "no pod written while paused"
    );
    assert!(
        env.events()
            .await
            .iter()
            .any(|(warning, reason, _)| *warning && reason == "Paused"),
        "the pause is announced"
    );

    let watch = env.watch_not_ready();
    env.patch(
        "sidecarset",
        SET,
        json!({"spec": {"updateStrategy": {"paused": false}}}),
    )
    .await;
    env.settled(3, "agent:2.0").await;
    assert_eq!(env.progressing().await, ("True".into(), "Complete".into()));
    assert!(watch.most() <= 1, "saw {} pods not ready at once", watch.most());
}

#[tokio::test]
async fn an_image_that_cannot_be_pulled_stops_after_max_unavailable_pods_and_a_fixed_one_completes() {
    let env = Env::start().await;
    env.apply(&sidecar_set("web", "agent:1.0", json!({"maxUnavailable": 2})))
        .await;
    env.apply(&clone_set(4)).await;
    env.settled(4, "agent:1.0").await;
    let before = env.pods_by_uid().await;
    let watch = env.watch_not_ready();
    // `.invalid` never resolves: the playground's kubelet keeps such a container in ImagePullBackOff.
    env.set_agent("registry.invalid/agent:2.0", json!({})).await;
    env.wait("2 pods stuck on the bad image", 30, async || {
        env.counts().await == (4, 2, 2, 0)
            && env.progressing().await == ("True".into(), "MaxUnavailableReached".into())
    })
    .await;
    tokio::time::sleep(QUIET).await;
    let pods = env.pods().await;
    let bad: Vec<_> = pods
        .iter()
        .filter(|p| image_of(p, "agent") == "registry.invalid/agent:2.0")
        .collect();
    assert_eq!(bad.len(), 2, "the rollout stopped at maxUnavailable (2)");
    assert!(bad.iter().all(|p| !ready(p)));
    assert_eq!(pods.iter().filter(|p| ready(p)).count(), 2);
    let message = env.progressing_message().await;
    for p in &bad {
        let name = p["metadata"]["name"].as_str().unwrap();
        assert!(message.contains(name), "{message} names {name}");
    }

    env.set_agent("agent:3.0", json!({})).await;
    env.settled(4, "agent:3.0").await;
    let pods = env.pods().await;
    assert!(pods.iter().all(|p| before.contains_key(&uid(p))), "the same pods");
    assert!(
        watch.most() <= 2,
        "never more than maxUnavailable (2) not ready; saw {}: {:?}",
        watch.most(),
        watch.worst()
    );
}

#[tokio::test]
async fn a_pod_unavailable_budget_holds_the_upgrade_until_it_is_raised() {
    let env = Env::start().await;
    // The budget exists before the pods: the pod webhook records it on them (`kruise.io/related-pub`).
    let budget = |max: i64| {
        json!({"apiVersion": "policy.kruise.io/v1alpha1", "kind": "PodUnavailableBudget",
            "metadata": {"name": "web-pub", "namespace": NS},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": max}})
    };
    env.apply(&budget(0)).await;
    env.apply(&sidecar_set("web", "agent:1.0", json!({"maxUnavailable": 1})))
        .await;
    env.apply(&clone_set(3)).await;
    env.settled(3, "agent:1.0").await;
    // The budget protects the pods once its controller has counted them: until then its status says
    // nothing is desired and, as in OpenKruise, the check lets a pod through.
    env.wait("the budget to count the pods", 30, async || {
        let out = kubectl(
            &env.kubeconfig,
            &[
                "get",
                "podunavailablebudget",
                "web-pub",
                "-n",
                NS,
                "-o",
                "jsonpath={.status.desiredAvailable}",
            ],
            None,
        )
        .await;
        out == "3"
    })
    .await;
    let requests = env.requests();
    env.set_agent("agent:2.0", json!({})).await;
    env.wait("the budget named in the condition", 30, async || {
        env.progressing().await == ("True".into(), "PodUnavailableBudgetReached".into())
    })
    .await;
    let message = env.progressing_message().await;
    assert!(message.contains("shop/web-pub"), "{message}");
    tokio::time::sleep(QUIET).await;
    assert!(
        env.pods()
            .await
            .iter()
            .all(|p| image_of(p, "agent") == "agent:1.0")
    );
    assert_eq!(
        env.pod_writes_since(&requests).0,
        0,
        "no pod write tried against the budget"
    );

    let watch = env.watch_not_ready();
    env.apply(&budget(1)).await;
    env.settled(3, "agent:2.0").await;
    assert!(watch.most() <= 1, "saw {} pods not ready at once", watch.most());
}

#[tokio::test]
async fn a_change_besides_the_image_is_reported_and_touches_no_pod() {
    let env = Env::start().await;
    env.apply(&sidecar_set("web", "agent:1.0", json!({"maxUnavailable": 1})))
        .await;
    env.apply(&clone_set(3)).await;
    env.settled(3, "agent:1.0").await;
    let before = env.pods_by_uid().await;
    let requests = env.requests();
    env.set_agent("agent:1.0", json!({"env": [{"name": "LEVEL", "value": "debug"}]}))
        .await;
    env.wait("the NotUpgradablePods condition", 30, async || {
        env.progressing().await == ("False".into(), "NotUpgradablePods".into())
    })
    .await;
    env.wait("SidecarSetUpgradable=False on every pod", 30, async || {
        env.pods().await.iter().all(|p| {
            p["status"]["conditions"].as_array().is_some_and(|cs| {
                cs.iter().any(|c| {
                    c["type"] == "SidecarSetUpgradable"
                        && c["status"] == "False"
                        && c["reason"] == "UpdateImmutableField"
                })
            })
        })
    })
    .await;
    tokio::time::sleep(QUIET).await;
    assert_eq!(
        env.pod_writes_since(&requests).0,
        0,
        "no pod object written (only the pods/status condition)"
    );
    for pod in env.pods().await {
        let old = &before[&uid(&pod)];
        assert_eq!(pod["spec"], old["spec"], "the pod spec is untouched");
    }
    assert_eq!(env.counts().await, (3, 0, 3, 0));
    let events = env.events().await;
    assert!(
        events.iter().any(|(warning, reason, message)| !*warning
            && reason == "NotUpgradablePods"
            && message.contains("detected 3 not upgradable pod(s)")),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|(warning, reason, _)| *warning && reason == "NotUpgradablePods"),
        "{events:?}"
    );
}
