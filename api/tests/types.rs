//! Behaviour of the typed API: lenient enums, embedded Kubernetes types, resource metadata.

use kruise_api::apps_v1beta1::{self as beta, CloneSetPodUpdateStrategyType, SidecarContainer};
use kruise_api::policy_v1beta1::PubOperation;
use kube::Resource;
use serde_json::json;

#[test]
fn unknown_enum_values_are_kept_verbatim() {
    let p: CloneSetPodUpdateStrategyType = serde_json::from_value(json!("InPlaceIfPossible")).unwrap();
    assert_eq!(p, CloneSetPodUpdateStrategyType::InPlaceIfPossible);
    let other: CloneSetPodUpdateStrategyType = serde_json::from_value(json!("Rolling")).unwrap();
    assert_eq!(other, CloneSetPodUpdateStrategyType::Other("Rolling".into()));
    assert_eq!(serde_json::to_value(&other).unwrap(), json!("Rolling"));
    assert_eq!(PubOperation::from("EVICT").as_str(), "EVICT");
    assert_eq!(PubOperation::KNOWN, ["DELETE", "UPDATE", "EVICT", "RESIZE"]);
}

#[test]
fn sidecar_container_inlines_the_container() {
    let value = json!({
        "name": "envoy",
        "image": "envoy:v1",
        "env": [{"name": "A", "value": "1"}],
        "resources": {"limits": {"cpu": 1}},
        "podInjectPolicy": "AfterAppContainer",
        "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"}
    });
    let c: SidecarContainer = serde_json::from_value(value).unwrap();
    assert_eq!(c.name, "envoy");
    assert_eq!(c.image.as_deref(), Some("envoy:v1"));
    let cpu = c
        .resources
        .as_ref()
        .and_then(|r| r.limits.as_ref())
        .and_then(|l| l.get("cpu"))
        .unwrap();
    assert_eq!(cpu.0, "1");
    assert_eq!(
        c.upgrade_strategy.hot_upgrade_empty_image.as_deref(),
        Some("empty:1")
    );
    let back = serde_json::to_value(&c).unwrap();
    assert_eq!(back["name"], "envoy");
    assert_eq!(back["podInjectPolicy"], "AfterAppContainer");
    assert_eq!(back["env"][0]["value"], "1");
}

#[test]
fn resources_know_their_group_version_kind_and_plural() {
    let cs = beta::CloneSet::new("web", beta::CloneSetSpec::default());
    assert_eq!(beta::CloneSet::api_version(&()), "apps.kruise.io/v1beta1");
    assert_eq!(beta::CloneSet::plural(&()), "clonesets");
    assert_eq!(cs.metadata.name.as_deref(), Some("web"));
    assert_eq!(
        kruise_api::policy_v1alpha1::PodUnavailableBudget::kind(&()),
        "PodUnavailableBudget"
    );
    assert_eq!(
        kruise_api::policy_v1alpha1::PodUnavailableBudget::group(&()),
        "policy.kruise.io"
    );
    assert_eq!(kruise_api::apps_v1alpha1::SidecarSet::version(&()), "v1alpha1");
}

#[test]
fn go_style_zero_values_are_omitted() {
    let spec = beta::CloneSetSpec {
        replicas: Some(2),
        ..Default::default()
    };
    let json = serde_json::to_value(&spec).unwrap();
    assert_eq!(json["replicas"], 2);
    assert!(json.get("minReadySeconds").is_none());
    assert!(json["scaleStrategy"].as_object().unwrap().is_empty());
    assert!(json.get("selector").is_none());
}
