//! CustomResourceDefinitions: the six kinds serving `v1alpha1` and `v1beta1` (storage), converted
//! by the webhook at `/convert`, and the `v1alpha1`-only kinds (BroadcastJob, AdvancedCronJob, EphemeralJob).

use k8s_openapi::ByteString;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceConversion, CustomResourceDefinition, CustomResourceDefinitionVersion, ServiceReference,
    WebhookClientConfig, WebhookConversion,
};
use kube::CustomResourceExt;
use kube::core::crd::merge_crds;
use serde_json::Value;

use crate::apps::{v1alpha1 as apps_a, v1beta1 as apps_b};
use crate::policy::{v1alpha1 as policy_a, v1beta1 as policy_b};

/// Namespace of the service that serves the conversion webhook.
pub const CONVERSION_SERVICE_NAMESPACE: &str = "kruise-system";
/// Name of the service that serves the conversion webhook.
pub const CONVERSION_SERVICE_NAME: &str = "kruise-webhook-service";
/// HTTP path of the conversion webhook.
pub const CONVERSION_PATH: &str = "/convert";
/// Service port of the conversion webhook.
pub const CONVERSION_SERVICE_PORT: i32 = 443;
/// Version stored in etcd for every kind.
pub const STORAGE_VERSION: &str = "v1beta1";

/// All CRDs, sorted by name.
pub fn crds() -> Vec<CustomResourceDefinition> {
    let mut out = vec![
        merged(apps_a::CloneSet::crd(), apps_b::CloneSet::crd()),
        merged(apps_a::SidecarSet::crd(), apps_b::SidecarSet::crd()),
        merged(apps_a::WorkloadSpread::crd(), apps_b::WorkloadSpread::crd()),
        merged(apps_a::StatefulSet::crd(), apps_b::StatefulSet::crd()),
        merged(apps_a::DaemonSet::crd(), apps_b::DaemonSet::crd()),
        merged(
            apps_a::ResourceDistribution::crd(),
            apps_b::ResourceDistribution::crd(),
        ),
        merged(apps_a::UnitedDeployment::crd(), apps_b::UnitedDeployment::crd()),
        merged(
            apps_a::ContainerRecreateRequest::crd(),
            apps_b::ContainerRecreateRequest::crd(),
        ),
        merged(
            apps_a::PersistentPodState::crd(),
            apps_b::PersistentPodState::crd(),
        ),
        merged(
            policy_a::PodUnavailableBudget::crd(),
            policy_b::PodUnavailableBudget::crd(),
        ),
        merged(apps_a::NodeImage::crd(), apps_b::NodeImage::crd()),
        merged(apps_a::ImagePullJob::crd(), apps_b::ImagePullJob::crd()),
        merged(apps_a::ImageListPullJob::crd(), apps_b::ImageListPullJob::crd()),
        single(apps_a::BroadcastJob::crd()),
        single(apps_a::AdvancedCronJob::crd()),
        single(apps_a::EphemeralJob::crd()),
        single(apps_a::PodProbeMarker::crd()),
        single(apps_a::NodePodProbe::crd()),
    ];
    out.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    out
}

/// All CRDs as one YAML stream, documents separated by `---`, in the order of [`crds`].
pub fn crds_yaml() -> String {
    crds().iter().map(crd_yaml).collect::<Vec<_>>().join("---\n")
}

/// One CRD rendered as a YAML document.
pub fn crd_yaml(crd: &CustomResourceDefinition) -> String {
    // A CRD built from static type information always serializes.
    serde_saphyr::to_string(crd).expect("a CustomResourceDefinition serializes to YAML")
}

/// File name of a CRD under `manifests/crds/`: `<plural>.<group>.yaml`.
pub fn crd_file_name(crd: &CustomResourceDefinition) -> String {
    format!("{}.{}.yaml", crd.spec.names.plural, crd.spec.group)
}

/// `(file name, YAML)` pairs for every CRD, as kept in `manifests/crds/`.
pub fn crd_files() -> Vec<(String, String)> {
    crds().iter().map(|c| (crd_file_name(c), crd_yaml(c))).collect()
}

/// Sets the CA bundle of a CRD's conversion webhook client config, if it has one.
pub fn set_conversion_ca_bundle(crd: &mut CustomResourceDefinition, ca_bundle_pem: &[u8]) {
    if let Some(webhook) = crd.spec.conversion.as_mut().and_then(|c| c.webhook.as_mut())
        && let Some(client) = webhook.client_config.as_mut()
    {
        client.ca_bundle = Some(ByteString(ca_bundle_pem.to_vec()));
    }
}

/// The conversion stanza shared by every CRD (without CA bundle).
pub fn conversion_webhook() -> CustomResourceConversion {
    CustomResourceConversion {
        strategy: "Webhook".to_string(),
        webhook: Some(WebhookConversion {
            client_config: Some(WebhookClientConfig {
                ca_bundle: None,
                service: Some(ServiceReference {
                    namespace: CONVERSION_SERVICE_NAMESPACE.to_string(),
                    name: CONVERSION_SERVICE_NAME.to_string(),
                    path: Some(CONVERSION_PATH.to_string()),
                    port: Some(CONVERSION_SERVICE_PORT),
                }),
                url: None,
            }),
            conversion_review_versions: vec!["v1".to_string()],
        }),
    }
}

/// A CRD served in one version only (stored as is, no conversion).
fn single(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    for v in &mut crd.spec.versions {
        v.served = true;
        v.storage = true;
        finish_schema(v);
    }
    crd
}

fn finish_schema(v: &mut CustomResourceDefinitionVersion) {
    if let Some(schema) = v.schema.as_mut().and_then(|s| s.open_api_v3_schema.as_mut())
        && let Ok(mut json) = serde_json::to_value(&*schema)
    {
        // OpenKruise's Go types make `spec` optional (`omitempty`); kube's root requires it.
        if let Some(root) = json.as_object_mut() {
            root.remove("required");
        }
        add_atomic_markers(&mut json);
        if let Ok(marked) = serde_json::from_value(json) {
            *schema = marked;
        }
    }
}

fn merged(alpha: CustomResourceDefinition, beta: CustomResourceDefinition) -> CustomResourceDefinition {
    // Both inputs come from our own derives with the same group, kind and scope.
    let mut crd = merge_crds(vec![alpha, beta], STORAGE_VERSION).expect("versions of one kind merge");
    crd.spec.versions.sort_by(|a, b| a.name.cmp(&b.name));
    for v in &mut crd.spec.versions {
        v.served = true;
        v.storage = v.name == STORAGE_VERSION;
    }
    for v in &mut crd.spec.versions {
        finish_schema(v);
    }
    crd.spec.conversion = Some(conversion_webhook());
    crd
}

/// Adds the `x-kubernetes-map-type` / `x-kubernetes-list-type: atomic` markers that the
/// Kubernetes Go types carry (and OpenKruise's CRDs therefore have) but k8s-openapi's schemas
/// lack: label selectors, node selector terms, field selectors and local object references.
/// They make server-side apply replace these values as a whole.
fn add_atomic_markers(node: &mut Value) {
    let Some(obj) = node.as_object_mut() else { return };
    let keys: Vec<String> = obj
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let atomic_lists: &[&str] = match keys.as_slice() {
        ["matchExpressions", "matchLabels"] => &["matchExpressions"],
        ["matchExpressions", "matchFields"] => &["matchExpressions", "matchFields"],
        ["apiVersion", "fieldPath"] | ["name"] => &[],
        _ => {
            recurse(obj);
            return;
        }
    };
    obj.insert("x-kubernetes-map-type".into(), Value::String("atomic".into()));
    if let Some(props) = obj.get_mut("properties").and_then(Value::as_object_mut) {
        for list in atomic_lists {
            if let Some(list) = props.get_mut(*list).and_then(Value::as_object_mut) {
                list.insert("x-kubernetes-list-type".into(), Value::String("atomic".into()));
                let values = list
                    .get_mut("items")
                    .and_then(|i| i.get_mut("properties"))
                    .and_then(|p| p.get_mut("values"))
                    .and_then(Value::as_object_mut);
                if let Some(values) = values {
                    values.insert("x-kubernetes-list-type".into(), Value::String("atomic".into()));
                }
            }
        }
    }
}

fn recurse(obj: &mut serde_json::Map<String, Value>) {
    if let Some(props) = obj.get_mut("properties").and_then(Value::as_object_mut) {
        for child in props.values_mut() {
            add_atomic_markers(child);
        }
    }
    if let Some(items) = obj.get_mut("items") {
        add_atomic_markers(items);
    }
    if let Some(ap) = obj.get_mut("additionalProperties") {
        add_atomic_markers(ap);
    }
}
