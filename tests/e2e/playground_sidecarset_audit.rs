//! The injection audit end to end in the playground with the real kubectl: pods a SidecarSet selects
//! but never injected (created before it existed) are counted in `status.uninjectedPods` and named in a
//! Warning event; with `apps.kruise.io/replace-uninjected-pods: "true"` their CloneSet replaces them,
//! the new pods injected, never more than maxUnavailable pods not ready on any state a pod watch sees.

use crate::common;

use common::playground_sidecarset::{Env, SET, clone_set, image_of, sidecar_set, uid};
use kruise_playground::store::ResKey;
use serde_json::json;

#[tokio::test]
async fn pods_created_before_the_sidecar_set_are_reported_and_replaced_only_when_asked() {
    let env = Env::start().await;
    env.apply(&clone_set(3)).await;
    env.wait("3 ready pods without a sidecar", 60, async || {
        let pods = env.pods().await;
        pods.len() == 3
            && pods
                .iter()
                .all(|p| common::playground_sidecarset::ready(p) && image_of(p, "agent").is_empty())
    })
    .await;
    let before = env.pods_by_uid().await;
    env.apply(&sidecar_set("web", "agent:1.0", json!({"maxUnavailable": 1})))
        .await;
    env.wait("3 uninjected pods counted", 30, async || {
        env.status().await["uninjectedPods"] == 3
    })
    .await;
    assert_eq!(env.counts().await.0, 0, "none matched");
    let events = env.events().await;
    let (_, _, message) = events
        .iter()
        .find(|(warning, reason, _)| *warning && reason == "UninjectedPods")
        .unwrap_or_else(|| panic!("an UninjectedPods event: {events:?}"));
    assert!(message.starts_with("3 pod(s)"), "{message}");
    for pod in before.values() {
        let name = format!("shop/{}", pod["metadata"]["name"].as_str().unwrap());
        assert!(message.contains(&name), "{message} names {name}");
    }
    assert_eq!(
        env.pods_by_uid().await.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>(),
        "only reported: nothing replaced without the annotation"
    );

    let watch = env.watch_not_ready();
    env.patch(
        "sidecarset",
        SET,
        json!({"metadata": {"annotations": {"apps.kruise.io/replace-uninjected-pods": "true"}}}),
    )
    .await;
    env.wait("3 new pods with the sidecar", 90, async || {
        let pods = env.pods().await;
        pods.len() == 3
            && pods.iter().all(|p| {
                !before.contains_key(&uid(p))
                    && common::playground_sidecarset::ready(p)
                    && image_of(p, "agent") == "agent:1.0"
            })
    })
    .await;
    env.wait("the status counts them", 30, async || {
        env.counts().await == (3, 3, 3, 3) && env.status().await["uninjectedPods"].as_i64().unwrap_or(0) == 0
    })
    .await;
    // Each old pod was labelled for its CloneSet before it went.
    let history = env
        .pg
        .playground
        .api()
        .store
        .watch(&ResKey::new("", "pods"), 0)
        .expect("history retained")
        .0;
    for old in before.keys() {
        assert!(
            history.iter().any(|e| uid(&e.object) == *old
                && e.object["metadata"]["labels"]["apps.kruise.io/specified-delete"] == "true"),
            "pod {old} was labelled apps.kruise.io/specified-delete"
        );
    }
    assert!(
        watch.most() <= 1,
        "never more than maxUnavailable (1) pods not ready; saw {}",
        watch.most()
    );
}
