use kruise_core::{Gate, Settings};
use serde_json::{Value, json};

use super::*;
use crate::review::AdmissionRequest;

fn distribution(version: &str, resource: Value, targets: Value) -> Value {
    json!({"apiVersion": format!("apps.kruise.io/{version}"), "kind": "ResourceDistribution",
        "metadata": {"name": "settings"}, "spec": {"resource": resource, "targets": targets}})
}

fn config_map() -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app-settings"},
        "data": {"log-level": "info"}})
}

fn request(operation: &str, object: &Value, old: Option<&Value>) -> AdmissionRequest {
    let version = object["apiVersion"].as_str().unwrap().rsplit_once('/').unwrap().1;
    let mut review = json!({"uid": "1", "operation": operation, "name": "settings", "namespace": "",
        "kind": {"group": "apps.kruise.io", "version": version, "kind": "ResourceDistribution"},
        "resource": {"group": "apps.kruise.io", "version": version, "resource": "resourcedistributions"},
        "userInfo": {"username": "u"}, "object": object});
    if let Some(old) = old {
        review["oldObject"] = old.clone();
    }
    serde_json::from_value(review).unwrap()
}

fn message(decision: &Decision) -> String {
    let d = decision
        .denial
        .as_ref()
        .unwrap_or_else(|| panic!("allowed: {decision:?}"));
    assert_eq!(d.code, 422, "{d:?}");
    d.message.clone()
}

fn create(object: &Value) -> Decision {
    validate(&request("CREATE", object, None), &Settings::default())
}

#[test]
fn a_config_map_or_secret_to_valid_targets_is_allowed_in_both_versions() {
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "token"},
        "type": "kubernetes.io/tls", "data": {"tls.crt": "YQ=="}, "stringData": {"tls.key": "k"}});
    for version in ["v1alpha1", "v1beta1"] {
        let selector = if version == "v1alpha1" {
            "namespaceLabelSelector"
        } else {
            "namespaceSelector"
        };
        for resource in [config_map(), secret.clone()] {
            let targets = json!({"includedNamespaces": {"list": [{"name": "shared"}]},
                "excludedNamespaces": {"list": [{"name": "sandbox"}]},
                selector: {"matchLabels": {"env": "prod"}}});
            let d = create(&distribution(version, resource, targets));
            assert!(d.allowed(), "{version}: {d:?}");
        }
    }
}

#[test]
fn with_the_gate_off_every_create_and_update_is_forbidden() {
    let object = distribution("v1beta1", config_map(), json!({"allNamespaces": true}));
    let off = Settings::default().with(Gate::ResourceDistributionGate, false);
    for (operation, old) in [("CREATE", None), ("UPDATE", Some(&object))] {
        let d = validate(&request(operation, &object, old), &off);
        let denial = d.denial.unwrap();
        assert_eq!(denial.code, 403);
        assert_eq!(
            denial.message,
            "feature-gate ResourceDistributionGate is not enabled"
        );
    }
}

#[test]
fn only_core_secrets_and_config_maps_can_be_distributed() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}});
    assert_eq!(
        message(&create(&distribution("v1beta1", pod, json!({})))),
        "spec.resource: Invalid value: Pod: unknown or unsupported resource GroupKind, only support [Secret ConfigMap]"
    );
    let other_group = json!({"apiVersion": "example.com/v1", "kind": "Secret", "metadata": {"name": "s"}});
    assert!(
        message(&create(&distribution("v1beta1", other_group, json!({})))).contains("Secret.example.com")
    );
}

#[test]
fn an_empty_or_kindless_resource_is_refused() {
    let mut object = distribution("v1beta1", config_map(), json!({}));
    object["spec"].as_object_mut().unwrap().remove("resource");
    assert_eq!(
        message(&create(&object)),
        "spec.resource: Invalid value: null: empty resource is not allowed"
    );
    let kindless = json!({"apiVersion": "v1", "metadata": {"name": "x"}});
    assert!(
        message(&create(&distribution("v1beta1", kindless, json!({}))))
            .starts_with("spec.resource: Internal error: failed to deserialize resource")
    );
}

#[test]
fn the_resource_kind_and_name_are_immutable() {
    let old = distribution("v1beta1", config_map(), json!({}));
    let mut renamed = old.clone();
    renamed["spec"]["resource"]["metadata"]["name"] = json!("other");
    let d = validate(&request("UPDATE", &renamed, Some(&old)), &Settings::default());
    assert_eq!(
        message(&d),
        "spec.resource: Invalid value: null: resource apiVersion, kind, and name are immutable"
    );
    let mut data_changed = old.clone();
    data_changed["spec"]["resource"]["data"]["log-level"] = json!("debug");
    assert!(
        validate(
            &request("UPDATE", &data_changed, Some(&old)),
            &Settings::default()
        )
        .allowed()
    );
}

#[test]
fn what_the_api_server_would_refuse_is_refused_as_the_dry_run_reports_it() {
    let cases = [
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"bad key": "v"}}),
            "ConfigMap \"x\" is invalid: data[bad key]: Invalid value: \"bad key\": a valid config key",
        ),
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Not_DNS"}}),
            "metadata.name: Invalid value: \"Not_DNS\"",
        ),
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}),
            "metadata.name: Required value: name or generateName is required",
        ),
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"},
                "data": {"k": "a"}, "binaryData": {"k": "YQ=="}}),
            "duplicate of key present in binaryData",
        ),
        (
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}, "data": {"k": "not base64!"}}),
            "data[k]: Invalid value: null: illegal base64 data",
        ),
        (
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}, "type": "kubernetes.io/tls",
                "data": {"tls.crt": "YQ=="}}),
            "data[tls.key]: Required value",
        ),
        (
            json!({"apiVersion": "v2", "kind": "Secret", "metadata": {"name": "x"}}),
            "apiVersion: Invalid value: \"v2\": must be v1",
        ),
    ];
    for (resource, expected) in cases {
        let got = message(&create(&distribution("v1beta1", resource.clone(), json!({}))));
        assert!(
            got.starts_with("spec.resource: Invalid value: null: spec.resource is invalid: "),
            "{got}"
        );
        assert!(got.contains(expected), "{resource}: {got}");
    }
    let big = "a".repeat(MAX_DATA_BYTES + 1);
    let large =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"k": big}});
    assert!(
        message(&create(&distribution("v1beta1", large, json!({}))))
            .contains("may not be more than 1048576 bytes")
    );
}

#[test]
fn namespace_lists_must_be_valid_and_disjoint() {
    let targets = json!({"includedNamespaces": {"list": [{"name": "a"}, {"name": "Bad_Name"}]},
        "excludedNamespaces": {"list": [{"name": "a"}]}});
    let got = message(&create(&distribution("v1beta1", config_map(), targets)));
    assert!(
        got.contains("spec.targets.includedNamespaces: Invalid value: \"Bad_Name\""),
        "{got}"
    );
    assert!(
        got.contains(
            "ambiguous targets because namespace [a] is in both IncludedNamespaces.List and ExcludedNamespaces.List"
        ),
        "{got}"
    );
}

#[test]
fn an_invalid_namespace_selector_is_refused_under_its_v1beta1_path() {
    for version in ["v1alpha1", "v1beta1"] {
        let selector = if version == "v1alpha1" {
            "namespaceLabelSelector"
        } else {
            "namespaceSelector"
        };
        let targets = json!({selector: {"matchExpressions": [{"key": "env", "operator": "Near"}]}});
        let got = message(&create(&distribution(version, config_map(), targets)));
        assert!(
            got.starts_with("spec.targets.namespaceSelector: Invalid value: v1.LabelSelector{"),
            "{version}: {got}"
        );
        assert!(got.contains("labelSelectorAsSelector error: "), "{got}");
    }
}

#[test]
fn a_namespaced_distribution_is_refused() {
    let mut object = distribution("v1beta1", config_map(), json!({}));
    object["metadata"]["namespace"] = json!("shop");
    assert!(message(&create(&object)).contains("metadata.namespace: Forbidden: not allowed on this type"));
}
