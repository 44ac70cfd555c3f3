//! The install manifests stay in step with the code, and the dependency tree has one crypto provider.

mod common;

#[test]
fn webhook_configurations_match_the_registrations() {
    let generated = kruise_rs::registrations::webhooks_yaml("kruise-system", "kruise-webhook-service");
    let path = common::repo().join("manifests/webhooks.yaml");
    if std::env::var_os("UPDATE_MANIFESTS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "manifests/webhooks.yaml is out of date: run `UPDATE_MANIFESTS=1 cargo test --test manifests`"
    );
}

#[test]
fn webhook_configurations_follow_the_contract() {
    let validating =
        kruise_rs::registrations::validating_configuration("kruise-system", "kruise-webhook-service");
    assert_eq!(
        validating.metadata.name.as_deref(),
        Some("kruise-validating-webhook-configuration")
    );
    for webhook in validating.webhooks.unwrap() {
        assert_eq!(webhook.timeout_seconds, Some(10), "{}", webhook.name);
        assert_eq!(webhook.admission_review_versions, ["v1"]);
        let selector = webhook.namespace_selector.unwrap();
        let expression = &selector.match_expressions.unwrap()[0];
        assert_eq!(expression.key, "kubernetes.io/metadata.name");
        assert_eq!(expression.operator, "NotIn");
        assert_eq!(
            expression.values.as_deref().unwrap(),
            ["kube-system", "kruise-system"]
        );
        let service = webhook.client_config.service.unwrap();
        assert_eq!(
            (service.name.as_str(), service.port),
            ("kruise-webhook-service", Some(443))
        );
        assert!(kruise_webhooks::Webhook::from_path(service.path.as_deref().unwrap()).is_some());
    }
}

#[test]
fn only_the_ring_crypto_provider_is_in_the_tree() {
    let lock = std::fs::read_to_string(common::repo().join("Cargo.lock")).unwrap();
    for banned in ["aws-lc-rs", "aws-lc-sys", "openssl-sys"] {
        assert!(
            !lock.contains(&format!("name = \"{banned}\"")),
            "{banned} is in Cargo.lock"
        );
    }
    assert!(lock.contains("name = \"ring\""));
}
