//! The OpenAPI v3 schemas of the built-in kinds (what `kubectl explain deployment.spec` reads),
//! generated on request from k8s-openapi's JSON schemas (its `schemars` feature) rather than
//! shipped as kube-apiserver's documents. kube-apiserver's schemas also carry the
//! `x-kubernetes-patch-merge-key`/`-strategy` extensions kubectl's client-side apply reads from
//! the same documents; they are added here from [`crate::strategic::merge_key`], the rules the
//! playground's own strategic merge applies.

use k8s_openapi::api::{
    admissionregistration::v1 as admission, apps::v1 as apps, batch::v1 as batch,
    coordination::v1 as coordination, core::v1 as core, events::v1 as events, policy::v1 as policy,
    rbac::v1 as rbac,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_openapi::schemars::{JsonSchema, SchemaGenerator, generate::SchemaSettings};
use serde_json::{Map, Value, json};

use crate::strategic::merge_key;

type Generate = fn(&mut SchemaGenerator) -> Value;

fn of<T: JsonSchema>(g: &mut SchemaGenerator) -> Value {
    g.subschema_for::<T>().to_value()
}

/// The built-in kinds with a schema, by group, version and kind.
const KINDS: &[(&str, &str, &str, Generate)] = &[
    ("", "v1", "Namespace", of::<core::Namespace>),
    ("", "v1", "Pod", of::<core::Pod>),
    ("", "v1", "ConfigMap", of::<core::ConfigMap>),
    ("", "v1", "Secret", of::<core::Secret>),
    ("", "v1", "Service", of::<core::Service>),
    ("", "v1", "Endpoints", of::<core::Endpoints>),
    ("", "v1", "Event", of::<core::Event>),
    ("", "v1", "Node", of::<core::Node>),
    ("", "v1", "PersistentVolume", of::<core::PersistentVolume>),
    (
        "",
        "v1",
        "PersistentVolumeClaim",
        of::<core::PersistentVolumeClaim>,
    ),
    ("", "v1", "ServiceAccount", of::<core::ServiceAccount>),
    ("", "v1", "ResourceQuota", of::<core::ResourceQuota>),
    ("", "v1", "LimitRange", of::<core::LimitRange>),
    ("rbac.authorization.k8s.io", "v1", "Role", of::<rbac::Role>),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        of::<rbac::RoleBinding>,
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        of::<rbac::ClusterRole>,
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        of::<rbac::ClusterRoleBinding>,
    ),
    ("apps", "v1", "Deployment", of::<apps::Deployment>),
    ("apps", "v1", "ReplicaSet", of::<apps::ReplicaSet>),
    ("apps", "v1", "StatefulSet", of::<apps::StatefulSet>),
    ("apps", "v1", "DaemonSet", of::<apps::DaemonSet>),
    ("apps", "v1", "ControllerRevision", of::<apps::ControllerRevision>),
    ("batch", "v1", "Job", of::<batch::Job>),
    ("batch", "v1", "CronJob", of::<batch::CronJob>),
    ("events.k8s.io", "v1", "Event", of::<events::Event>),
    ("coordination.k8s.io", "v1", "Lease", of::<coordination::Lease>),
    (
        "policy",
        "v1",
        "PodDisruptionBudget",
        of::<policy::PodDisruptionBudget>,
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "MutatingWebhookConfiguration",
        of::<admission::MutatingWebhookConfiguration>,
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingWebhookConfiguration",
        of::<admission::ValidatingWebhookConfiguration>,
    ),
    (
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        of::<apiextensions::CustomResourceDefinition>,
    ),
];

/// The `components.schemas` entries of the given built-in kinds of one group version: each kind's
/// schema, tagged with its `x-kubernetes-group-version-kind`, and every schema it refers to.
pub fn schemas(group: &str, version: &str, kinds: &[&str]) -> Map<String, Value> {
    let mut generator = SchemaSettings::openapi3().into_generator();
    let mut tagged = vec![];
    for (g, v, kind, generate) in KINDS {
        if (*g, *v) == (group, version) && kinds.contains(kind) {
            let reference = generate(&mut generator);
            if let Some(name) = reference["$ref"].as_str().and_then(|r| r.rsplit('/').next()) {
                tagged.push((name.to_string(), *kind));
            }
        }
    }
    let mut out = generator.take_definitions(true);
    for (name, kind) in tagged {
        if let Some(schema) = out.get_mut(&name) {
            schema["x-kubernetes-group-version-kind"] =
                json!([{"group": group, "version": version, "kind": kind}]);
        }
    }
    for schema in out.values_mut() {
        add_patch_extensions(schema);
    }
    out
}

/// Marks the list properties the strategic merge merges by key (or as a set).
fn add_patch_extensions(schema: &mut Value) {
    let Some(properties) = schema["properties"].as_object_mut() else {
        return;
    };
    for (field, property) in properties.iter_mut() {
        let sample = (field == "ports").then(|| json!({"containerPort": 0}));
        let is_port_of_container = property["items"]["$ref"]
            .as_str()
            .is_some_and(|r| r.ends_with(".ContainerPort"));
        let key = match field.as_str() {
            "ports" if !is_port_of_container => merge_key(field, None),
            _ => merge_key(field, sample.as_ref()),
        };
        if property["type"] != "array" {
            continue;
        }
        if let Some(key) = key {
            property["x-kubernetes-patch-merge-key"] = json!(key);
            property["x-kubernetes-patch-strategy"] = json!("merge");
        } else if field == "finalizers" {
            property["x-kubernetes-patch-strategy"] = json!("merge");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_and_what_it_refers_to_with_patch_keys() {
        let s = schemas("apps", "v1", &["Deployment"]);
        let deployment = &s["io.k8s.api.apps.v1.Deployment"];
        assert_eq!(
            deployment["x-kubernetes-group-version-kind"],
            json!([{"group": "apps", "version": "v1", "kind": "Deployment"}])
        );
        // A reference with a description beside it is wrapped in `allOf`, as kube-apiserver does.
        assert_eq!(
            deployment["properties"]["spec"]["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec",
            "{}",
            deployment["properties"]["spec"]
        );
        let pod_spec = &s["io.k8s.api.core.v1.PodSpec"]["properties"];
        assert_eq!(pod_spec["containers"]["x-kubernetes-patch-merge-key"], "name");
        assert_eq!(pod_spec["tolerations"].get("x-kubernetes-patch-merge-key"), None);
        let container = &s["io.k8s.api.core.v1.Container"]["properties"];
        assert_eq!(
            container["ports"]["x-kubernetes-patch-merge-key"],
            "containerPort"
        );
        assert!(s["io.k8s.api.core.v1.Container"]["description"].is_string());
        assert!(schemas("apps", "v1", &["CloneSet"]).is_empty());
    }
}
