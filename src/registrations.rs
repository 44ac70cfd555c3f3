//! How our webhooks are registered with kube-apiserver: OpenKruise's configuration object names, webhook
//! names and paths, with kruise-rs's selectors. `manifests/webhooks.yaml` is generated from this table
//! (a test fails when it drifts), and `kruise admit -f` routes objects with the same rules.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::admissionregistration::v1::{
        MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ServiceReference,
        ValidatingWebhook, ValidatingWebhookConfiguration, WebhookClientConfig,
    },
    apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement, ObjectMeta},
};
use kruise_webhooks::Webhook;

use crate::cluster::ca_bundle::{MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION};

/// The label of deletion protection.
pub const DELETE_PROTECTION_LABEL: &str = "policy.kruise.io/delete-protection";

/// Namespaces our webhooks never see, so kruise-rs never blocks the control plane or itself.
pub const EXCLUDED_NAMESPACES: &[&str] = &["kube-system", "kruise-system"];

/// One admission rule.
#[derive(Debug)]
pub struct Rule {
    pub group: &'static str,
    pub versions: &'static [&'static str],
    pub resource: &'static str,
    pub operations: &'static [&'static str],
}

/// One webhook entry of a configuration.
#[derive(Debug)]
pub struct Registration {
    /// The webhook name, as OpenKruise's (e.g. `vnamespace.kb.io`).
    pub name: &'static str,
    pub webhook: Webhook,
    pub rules: &'static [Rule],
    /// Only objects carrying the deletion-protection label are sent.
    pub only_delete_protected: bool,
    /// `None` or `NoneOnDryRun` (for webhooks that write status).
    pub side_effects: &'static str,
    /// `Fail` or `Ignore`.
    pub failure_policy: &'static str,
}

const CUD: &[&str] = &["CREATE", "UPDATE", "DELETE"];

const fn protection(name: &'static str, webhook: Webhook, rules: &'static [Rule]) -> Registration {
    Registration {
        name,
        webhook,
        rules,
        only_delete_protected: true,
        side_effects: "None",
        failure_policy: "Fail",
    }
}

/// A webhook for an OpenKruise custom resource: sees every object (no objectSelector).
const fn crd(name: &'static str, webhook: Webhook, rules: &'static [Rule]) -> Registration {
    Registration {
        name,
        webhook,
        rules,
        only_delete_protected: false,
        side_effects: "None",
        failure_policy: "Fail",
    }
}

const CU: &[&str] = &["CREATE", "UPDATE"];
const KRUISE_VERSIONS: &[&str] = &["v1alpha1", "v1beta1"];

/// Every registration, mutating ones first, in OpenKruise's order.
pub const REGISTRATIONS: &[Registration] = &[
    // Pod mutation on CREATE: readiness gate, WorkloadSpread (records its booking: NoneOnDryRun), SidecarSet
    // injection, container launch priority, PUB annotation.
    Registration {
        name: "mpod.kb.io",
        webhook: Webhook::MutatePod,
        rules: &[Rule {
            group: "",
            versions: &["v1"],
            resource: "pods",
            operations: &["CREATE"],
        }],
        only_delete_protected: false,
        side_effects: "NoneOnDryRun",
        failure_policy: "Fail",
    },
    crd(
        "mcloneset.kb.io",
        Webhook::MutateCloneSet,
        &[Rule {
            group: "apps.kruise.io",
            versions: KRUISE_VERSIONS,
            resource: "clonesets",
            operations: CU,
        }],
    ),
    crd(
        "msidecarset.kb.io",
        Webhook::MutateSidecarSet,
        &[Rule {
            group: "apps.kruise.io",
            versions: KRUISE_VERSIONS,
            resource: "sidecarsets",
            operations: CU,
        }],
    ),
    // PodUnavailableBudget protection and WorkloadSpread accounting: they write status, never in dry run.
    Registration {
        name: "vpod.kb.io",
        webhook: Webhook::ValidatePod,
        rules: &[Rule {
            group: "",
            versions: &["v1"],
            resource: "pods",
            operations: &["UPDATE", "DELETE"],
        }],
        only_delete_protected: false,
        side_effects: "NoneOnDryRun",
        failure_policy: "Fail",
    },
    Registration {
        name: "vpodeviction.kb.io",
        webhook: Webhook::ValidatePod,
        rules: &[Rule {
            group: "",
            versions: &["v1"],
            resource: "pods/eviction",
            operations: &["CREATE"],
        }],
        only_delete_protected: false,
        side_effects: "NoneOnDryRun",
        failure_policy: "Fail",
    },
    protection(
        "vnamespace.kb.io",
        Webhook::ValidateNamespace,
        &[Rule {
            group: "",
            versions: &["v1"],
            resource: "namespaces",
            operations: CUD,
        }],
    ),
    protection(
        "vcustomresourcedefinition.kb.io",
        Webhook::ValidateCustomResourceDefinition,
        &[Rule {
            group: "apiextensions.k8s.io",
            versions: &["v1"],
            resource: "customresourcedefinitions",
            operations: CUD,
        }],
    ),
    protection(
        "vbuiltindeployment.kb.io",
        Webhook::ValidateDeployment,
        &[Rule {
            group: "apps",
            versions: &["v1"],
            resource: "deployments",
            operations: CUD,
        }],
    ),
    protection(
        "vbuiltinreplicaset.kb.io",
        Webhook::ValidateReplicaSet,
        &[Rule {
            group: "apps",
            versions: &["v1"],
            resource: "replicasets",
            operations: CUD,
        }],
    ),
    protection(
        "vbuiltinstatefulset.kb.io",
        Webhook::ValidateStatefulSet,
        &[Rule {
            group: "apps",
            versions: &["v1"],
            resource: "statefulsets",
            operations: CUD,
        }],
    ),
    protection(
        "vservice.kb.io",
        Webhook::ValidateService,
        &[Rule {
            group: "",
            versions: &["v1"],
            resource: "services",
            operations: CUD,
        }],
    ),
    protection(
        "vingress.kb.io",
        Webhook::ValidateIngress,
        &[Rule {
            group: "networking.k8s.io",
            versions: &["v1"],
            resource: "ingresses",
            operations: CUD,
        }],
    ),
    crd(
        "vworkloadspread.kb.io",
        Webhook::ValidateWorkloadSpread,
        &[Rule {
            group: "apps.kruise.io",
            versions: KRUISE_VERSIONS,
            resource: "workloadspreads",
            operations: CU,
        }],
    ),
    // CloneSet validation and deletion protection: sees every CloneSet.
    crd(
        "vcloneset.kb.io",
        Webhook::ValidateCloneSet,
        &[Rule {
            group: "apps.kruise.io",
            versions: &["v1alpha1", "v1beta1"],
            resource: "clonesets",
            operations: CUD,
        }],
    ),
    protection(
        "vstatefulset.kb.io",
        Webhook::ValidateAdvancedStatefulSet,
        &[Rule {
            group: "apps.kruise.io",
            versions: &["v1alpha1", "v1beta1"],
            resource: "statefulsets",
            operations: CUD,
        }],
    ),
    protection(
        "vuniteddeployment.kb.io",
        Webhook::ValidateUnitedDeployment,
        &[Rule {
            group: "apps.kruise.io",
            versions: &["v1alpha1", "v1beta1"],
            resource: "uniteddeployments",
            operations: CUD,
        }],
    ),
    crd(
        "vpodunavailablebudget.kb.io",
        Webhook::ValidatePodUnavailableBudget,
        &[Rule {
            group: "policy.kruise.io",
            versions: KRUISE_VERSIONS,
            resource: "podunavailablebudgets",
            operations: CU,
        }],
    ),
    crd(
        "vsidecarset.kb.io",
        Webhook::ValidateSidecarSet,
        &[Rule {
            group: "apps.kruise.io",
            versions: KRUISE_VERSIONS,
            resource: "sidecarsets",
            operations: CU,
        }],
    ),
];

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
    r.only_delete_protected.then(|| LabelSelector {
        match_expressions: Some(vec![LabelSelectorRequirement {
            key: DELETE_PROTECTION_LABEL.into(),
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
        .filter(|r| r.webhook.is_mutating())
        .map(|r| MutatingWebhook {
            name: r.name.into(),
            admission_review_versions: vec!["v1".into()],
            client_config: client_config(namespace, service, r.webhook),
            failure_policy: Some(r.failure_policy.into()),
            namespace_selector: Some(namespace_selector()),
            object_selector: object_selector(r),
            rules: Some(rules(r)),
            side_effects: r.side_effects.into(),
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
        .filter(|r| !r.webhook.is_mutating())
        .map(|r| ValidatingWebhook {
            name: r.name.into(),
            admission_review_versions: vec!["v1".into()],
            client_config: client_config(namespace, service, r.webhook),
            failure_policy: Some(r.failure_policy.into()),
            namespace_selector: Some(namespace_selector()),
            object_selector: object_selector(r),
            rules: Some(rules(r)),
            side_effects: r.side_effects.into(),
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
                  --test manifests`.\n# caBundle is published at runtime by kruise-rs.\n";
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

/// The registrations that would be called for `operation` on an object of `group`/`version`/`kind`.
pub fn matching<'a>(
    group: &'a str,
    version: &'a str,
    kind: &'a str,
    operation: &'a str,
) -> impl Iterator<Item = &'static Registration> + 'a {
    let resource = plural(kind);
    REGISTRATIONS.iter().filter(move |r| {
        r.rules.iter().any(|rule| {
            rule.group == group
                && rule.versions.contains(&version)
                && rule.resource == resource
                && rule.operations.contains(&operation)
        })
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
            .map(|r| r.name)
            .collect();
        assert_eq!(names, ["vbuiltindeployment.kb.io"]);
        assert_eq!(matching("apps", "v1", "Deployment", "CONNECT").count(), 0);
        assert_eq!(matching("", "v1", "ConfigMap", "CREATE").count(), 0);
    }
}
