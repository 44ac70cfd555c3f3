//! Our webhook configurations for kube-apiserver, built from the registrations each webhook declares beside
//! its handler (`kruise_webhooks::REGISTRATIONS`): OpenKruise's configuration object names, with kruise-rs's
//! selectors. `manifests/webhooks.yaml` is generated from them (a test fails when it drifts), and
//! `kruise admit -f` routes objects with the same rules ([`matching`]).

use std::collections::BTreeMap;

use k8s_openapi::{
    api::admissionregistration::v1::{
        MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ServiceReference,
        ValidatingWebhook, ValidatingWebhookConfiguration, WebhookClientConfig,
    },
    apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement, ObjectMeta},
};
use kruise_webhooks::{
    REGISTRATIONS, Webhook,
    registration::{Registration, Scope},
};

use crate::cluster::ca_bundle::{MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION};

pub use kruise_webhooks::registration::EXCLUDED_NAMESPACES;

fn client_config(namespace: &str, service: &str, webhook: Webhook) -> WebhookClientConfig {
    WebhookClientConfig {
        service: Some(ServiceReference {
            name: service.into(),
            namespace: namespace.into(),
            path: Some(webhook.path().into()),
            port: Some(443),
        }),
        ..WebhookClientConfig::default()
    }
}

fn rules(r: &Registration) -> Vec<RuleWithOperations> {
    r.rules
        .iter()
        .map(|rule| RuleWithOperations {
            api_groups: Some(vec![rule.group.into()]),
            api_versions: Some(rule.versions.iter().map(|v| v.to_string()).collect()),
            resources: Some(vec![rule.resource.into()]),
            operations: Some(rule.operations.iter().map(|o| o.to_string()).collect()),
            scope: None,
        })
        .collect()
}

fn namespace_selector() -> LabelSelector {
    LabelSelector {
        match_expressions: Some(vec![LabelSelectorRequirement {
            key: "kubernetes.io/metadata.name".into(),
            operator: "NotIn".into(),
            values: Some(EXCLUDED_NAMESPACES.iter().map(|n| n.to_string()).collect()),
        }]),
        match_labels: None,
    }
}

fn object_selector(r: &Registration) -> Option<LabelSelector> {
    (r.scope == Scope::DeleteProtected).then(|| LabelSelector {
        match_expressions: Some(vec![LabelSelectorRequirement {
            key: kruise_core::names::DELETE_PROTECTION_LABEL.into(),
            operator: "Exists".into(),
            values: None,
        }]),
        match_labels: None,
    })
}

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        labels: Some(BTreeMap::from([(
            "app.kubernetes.io/name".to_string(),
            "kruise-rs".to_string(),
        )])),
        ..ObjectMeta::default()
    }
}

/// The MutatingWebhookConfiguration, or `None` while no mutating webhook is served.
pub fn mutating_configuration(namespace: &str, service: &str) -> Option<MutatingWebhookConfiguration> {
    let webhooks: Vec<MutatingWebhook> = REGISTRATIONS
        .iter()
        .filter(|(w, _)| w.is_mutating())
        .map(|(w, r)| MutatingWebhook {
            name: r.name.into(),
            admission_review_versions: vec!["v1".into()],
            client_config: client_config(namespace, service, *w),
            failure_policy: Some(r.failure_policy.as_str().into()),
            namespace_selector: Some(namespace_selector()),
            object_selector: object_selector(r),
            rules: Some(rules(r)),
            side_effects: r.side_effects.as_str().into(),
            timeout_seconds: Some(10),
            reinvocation_policy: Some("IfNeeded".into()),
            ..MutatingWebhook::default()
        })
        .collect();
    (!webhooks.is_empty()).then(|| MutatingWebhookConfiguration {
        metadata: meta(MUTATING_CONFIGURATION),
        webhooks: Some(webhooks),
    })
}

/// The ValidatingWebhookConfiguration.
pub fn validating_configuration(namespace: &str, service: &str) -> ValidatingWebhookConfiguration {
    let webhooks = REGISTRATIONS
        .iter()
        .filter(|(w, _)| !w.is_mutating())
        .map(|(w, r)| ValidatingWebhook {
            name: r.name.into(),
            admission_review_versions: vec!["v1".into()],
            client_config: client_config(namespace, service, *w),
            failure_policy: Some(r.failure_policy.as_str().into()),
            namespace_selector: Some(namespace_selector()),
            object_selector: object_selector(r),
            rules: Some(rules(r)),
            side_effects: r.side_effects.as_str().into(),
            timeout_seconds: Some(10),
            ..ValidatingWebhook::default()
        })
        .collect();
    ValidatingWebhookConfiguration {
        metadata: meta(VALIDATING_CONFIGURATION),
        webhooks: Some(webhooks),
    }
}

/// `manifests/webhooks.yaml`: both configurations as a YAML stream.
pub fn webhooks_yaml(namespace: &str, service: &str) -> String {
    let mut docs = Vec::new();
    if let Some(m) = mutating_configuration(namespace, service) {
        docs.push(with_type(&m, "MutatingWebhookConfiguration"));
    }
    docs.push(with_type(
        &validating_configuration(namespace, service),
        "ValidatingWebhookConfiguration",
    ));
    let header = "# Generated from src/registrations.rs: regenerate with `UPDATE_MANIFESTS=1 cargo test \
                  --test e2e manifests::`.\n# caBundle is published at runtime by kruise-rs.\n";
    let body: Vec<String> = docs
        .iter()
        .map(|d| serde_saphyr::to_string(d).unwrap_or_default())
        .collect();
    format!("{header}---\n{}", body.join("---\n"))
}

fn with_type<T: serde::Serialize>(object: &T, kind: &str) -> serde_json::Value {
    let mut value = serde_json::to_value(object).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        let mut out = serde_json::Map::new();
        out.insert("apiVersion".into(), "admissionregistration.k8s.io/v1".into());
        out.insert("kind".into(), kind.into());
        out.extend(std::mem::take(map));
        return serde_json::Value::Object(out);
    }
    value
}

/// The plural resource name of a kind (`Ingress` → `ingresses`, `NetworkPolicy` → `networkpolicies`).
pub fn plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower.ends_with('s') || lower.ends_with("sh") || lower.ends_with("ch") || lower.ends_with('x') {
        format!("{lower}es")
    } else if let Some(stem) = lower
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'i', 'o', 'u']))
    {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    }
}

/// The registrations (with their webhooks) that would be called for `operation` on an object of
/// `group`/`version`/`kind`.
pub fn matching<'a>(
    group: &'a str,
    version: &'a str,
    kind: &'a str,
    operation: &'a str,
) -> impl Iterator<Item = &'static (Webhook, Registration)> + 'a {
    let resource = plural(kind);
    REGISTRATIONS.iter().filter(move |(_, r)| {
        r.rules
            .iter()
            .any(|rule| rule.matches(group, version, &resource, operation))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals() {
        for (kind, plural_name) in [
            ("Pod", "pods"),
            ("Ingress", "ingresses"),
            ("NetworkPolicy", "networkpolicies"),
            ("Gateway", "gateways"),
            ("CloneSet", "clonesets"),
            ("CustomResourceDefinition", "customresourcedefinitions"),
        ] {
            assert_eq!(plural(kind), plural_name);
        }
    }

    #[test]
    fn routing_follows_the_rules() {
        let names: Vec<_> = matching("apps", "v1", "Deployment", "DELETE")
            .map(|(_, r)| r.name)
            .collect();
        assert_eq!(names, ["vbuiltindeployment.kb.io"]);
        assert_eq!(matching("apps", "v1", "Deployment", "CONNECT").count(), 0);
        assert_eq!(matching("", "v1", "ConfigMap", "CREATE").count(), 0);
    }
}
