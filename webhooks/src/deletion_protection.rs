//! Deletion protection: the `policy.kruise.io/delete-protection` label, as OpenKruise's
//! ResourcesDeletionProtection webhooks enforce it.
//!
//! On DELETE of a labelled object (read from `oldObject`):
//!
//! | Kind | `Always` | `Cascading` |
//! |---|---|---|
//! | Namespace | deny | deny while it has active pods, then while it has `Bound` PVCs |
//! | CustomResourceDefinition (v1, v1beta1) | deny | deny while custom resources of it exist (needs [`Settings::crd_cascading_protection`]; without it every delete is denied, as in OpenKruise) |
//! | Deployment, ReplicaSet, StatefulSet, CloneSet, Advanced StatefulSet, UnitedDeployment | deny | deny while `spec.replicas` > 0 |
//! | Service, Ingress (v1, v1beta1) | deny | allowed (not supported) |
//!
//! Any other label value protects nothing on DELETE, but kruise-rs rejects setting one (CREATE, or an
//! UPDATE that changes it) with 422, so a typo cannot silently disable the protection.
//!
//! Denials are 403 with OpenKruise's messages, e.g.
//! `forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always`. Objects
//! already being deleted (`deletionTimestamp` set) and sub-resources are always allowed; a DELETE without
//! `oldObject` or with an undecodable one is a 400 (fail closed). Everything is allowed when
//! [`Settings::deletion_protection`] is off.

use serde_json::{Map, Value};

use crate::{
    Decision, Settings,
    review::{AdmissionRequest, GroupVersionKind, Operation},
    view::ClusterView,
};

#[cfg(test)]
mod tests;

/// The label that asks for deletion protection.
pub use kruise_core::names::DELETE_PROTECTION_LABEL as LABEL;

/// How strongly an object is protected, from the value of [`LABEL`] (exact, case-sensitive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protection {
    /// Never deleted while the label is there.
    Always,
    /// Not deleted while it still owns something (pods, PVCs, custom resources, replicas).
    Cascading,
}

impl Protection {
    /// The label values kruise-rs accepts, in the order they are listed in messages.
    pub const VALUES: [&'static str; 2] = ["Always", "Cascading"];

    /// The protection a label value asks for; `None` for any other value.
    pub fn parse(value: &str) -> Option<Protection> {
        match value {
            "Always" => Some(Protection::Always),
            "Cascading" => Some(Protection::Cascading),
            _ => None,
        }
    }

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Protection::Always => "Always",
            Protection::Cascading => "Cascading",
        }
    }
}

/// The kinds this webhook protects, recognised from `request.kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtectedKind {
    /// `v1/Namespace`.
    Namespace,
    /// `apiextensions.k8s.io/{v1,v1beta1}/CustomResourceDefinition`.
    CustomResourceDefinition,
    /// `apps/v1` Deployment, ReplicaSet, StatefulSet; `apps.kruise.io` CloneSet, StatefulSet (Advanced),
    /// UnitedDeployment: protected by `spec.replicas`.
    Workload,
    /// `v1/Service`.
    Service,
    /// `networking.k8s.io` (or `extensions`) `{v1,v1beta1}/Ingress`.
    Ingress,
}

impl ProtectedKind {
    /// The protected kind of a request, `None` for anything else (which is allowed untouched). Like
    /// OpenKruise, only the v1 and v1beta1 versions of CustomResourceDefinition and Ingress are checked.
    pub fn of(gvk: &GroupVersionKind) -> Option<ProtectedKind> {
        let v1_or_beta = matches!(gvk.version.as_str(), "v1" | "v1beta1");
        match (gvk.group.as_str(), gvk.kind.as_str()) {
            ("", "Namespace") => Some(ProtectedKind::Namespace),
            ("", "Service") => Some(ProtectedKind::Service),
            ("apiextensions.k8s.io", "CustomResourceDefinition") if v1_or_beta => {
                Some(ProtectedKind::CustomResourceDefinition)
            }
            ("networking.k8s.io" | "extensions", "Ingress") if v1_or_beta => Some(ProtectedKind::Ingress),
            ("apps", "Deployment" | "ReplicaSet" | "StatefulSet")
            | ("apps.kruise.io", "CloneSet" | "StatefulSet" | "UnitedDeployment") => {
                Some(ProtectedKind::Workload)
            }
            _ => None,
        }
    }
}

/// Decides a request to one of the deletion-protection paths: DELETE is checked against the label,
/// CREATE and UPDATE only have the label's value validated; everything else is allowed. Never patches.
pub fn validate(request: &AdmissionRequest, view: &impl ClusterView, settings: &Settings) -> Decision {
    if !settings.deletion_protection() || request.sub_resource().is_some() {
        return Decision::allow();
    }
    let Some(kind) = ProtectedKind::of(&request.kind) else {
        return Decision::allow();
    };
    match request.operation {
        Operation::Delete => validate_delete(request, kind, view, settings),
        Operation::Create | Operation::Update => validate_label_value(request),
        Operation::Connect | Operation::Unknown => Decision::allow(),
    }
}

/// `forbidden by ResourcesProtectionDeletion for L=<value>` followed by `rest`.
fn protection_message(protection: Protection, rest: &str) -> String {
    format!(
        "forbidden by ResourcesProtectionDeletion for {LABEL}={}{rest}",
        protection.as_str()
    )
}

fn validate_delete(
    request: &AdmissionRequest,
    kind: ProtectedKind,
    view: &impl ClusterView,
    settings: &Settings,
) -> Decision {
    let Some(old) = request.old_object.as_ref() else {
        return Decision::bad_request(format!(
            "DELETE request has no oldObject, so the {LABEL} label cannot be checked; refusing the delete"
        ));
    };
    let target = match Target::decode(old, kind) {
        Ok(target) => target,
        Err(message) => return Decision::bad_request(format!("cannot decode oldObject: {message}")),
    };
    if target.deleting {
        return Decision::allow();
    }
    let Some(protection) = target.label.and_then(Protection::parse) else {
        return Decision::allow();
    };
    if protection == Protection::Always {
        return Decision::forbid(protection_message(protection, ""));
    }
    match target.cascading {
        Cascading::Namespace { name } => namespace_cascading(name.unwrap_or(&request.name), view),
        Cascading::Crd(crd) => crd_cascading(&crd, view, settings),
        Cascading::Replicas(replicas) if replicas > 0 => Decision::forbid(protection_message(
            protection,
            &format!(" and replicas {replicas}>0"),
        )),
        Cascading::Replicas(_) | Cascading::Unsupported => Decision::allow(),
    }
}

/// `Cascading` namespace: no active pods, then no bound PVCs.
fn namespace_cascading(namespace: &str, view: &impl ClusterView) -> Decision {
    let active = view
        .pods(namespace)
        .iter()
        .filter(|pod| kruise_core::pod_state::is_active(pod))
        .count();
    if active > 0 {
        return Decision::forbid(protection_message(
            Protection::Cascading,
            &format!(" and active pods {active}>0"),
        ));
    }
    let bound = view
        .persistent_volume_claims(namespace)
        .iter()
        .filter(|pvc| {
            pvc.metadata.deletion_timestamp.is_none()
                && pvc.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound")
        })
        .count();
    if bound > 0 {
        return Decision::forbid(protection_message(
            Protection::Cascading,
            &format!(" and \"Bound\" status pvc {bound}>0"),
        ));
    }
    Decision::allow()
}

/// `Cascading` CRD: gated, then no custom resources left (fail closed when they cannot be counted).
fn crd_cascading(crd: &Crd<'_>, view: &impl ClusterView, settings: &Settings) -> Decision {
    if !settings.crd_cascading_protection() {
        return Decision::forbid("feature-gate DeletionProtectionForCRDCascadingGate is not enabled");
    }
    // OpenKruise lists `<group>/<storage version>, Kind=<listKind>`; its errors name that GVK.
    let gvk = format!("{}/{}, Kind={}", crd.group, crd.storage_version, crd.list_kind);
    match view.active_custom_resource_count(crd.group, crd.kind) {
        None => Decision::forbid(format!(
            "failed to list CRs of {gvk}: custom resources of group {}, kind {} are not known to kruise-rs",
            quote(crd.group),
            quote(crd.kind)
        )),
        Some(0) => Decision::allow(),
        Some(active) => Decision::forbid(protection_message(
            Protection::Cascading,
            &format!(" and active CRs {active}>0"),
        )),
    }
}

/// CREATE/UPDATE: a label value other than `Always`/`Cascading` is refused when it is being set (on
/// UPDATE an unchanged invalid value is left alone, so objects labelled before kruise-rs stay writable).
fn validate_label_value(request: &AdmissionRequest) -> Decision {
    let op = request.operation.as_str();
    let Some(object) = request.object.as_ref() else {
        return Decision::bad_request(format!(
            "{op} request has no object, so the {LABEL} label cannot be checked"
        ));
    };
    let label = match metadata_of(object).and_then(|m| label_of(m, LABEL)) {
        Ok(label) => label,
        Err(message) => return Decision::bad_request(format!("cannot decode object: {message}")),
    };
    let Some(value) = label else {
        return Decision::allow();
    };
    if Protection::parse(value).is_some() {
        return Decision::allow();
    }
    if request.operation == Operation::Update {
        let old = request
            .old_object
            .as_ref()
            .map(|old| metadata_of(old).and_then(|m| label_of(m, LABEL)));
        if let Some(Ok(Some(old_value))) = old
            && old_value == value
        {
            return Decision::allow();
        }
    }
    let supported = Protection::VALUES.map(quote).join(", ");
    Decision::deny(
        422,
        "Invalid",
        format!(
            "metadata.labels[{LABEL}]: Unsupported value: {}: supported values: {supported}",
            quote(value)
        ),
    )
}

/// A string quoted like Go's `%q` for the characters that matter (JSON string escaping).
fn quote(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// What a DELETE decision needs from `oldObject`, decoded as strictly as OpenKruise's typed decoding
/// would (wrong JSON types are a 400), but only for the fields read.
struct Target<'a> {
    label: Option<&'a str>,
    deleting: bool,
    cascading: Cascading<'a>,
}

/// What the `Cascading` rule of a kind looks at.
enum Cascading<'a> {
    Namespace {
        name: Option<&'a str>,
    },
    Crd(Crd<'a>),
    /// `spec.replicas`, defaulted to 1 when absent (as the apiserver and Kruise's defaulting do).
    Replicas(i32),
    /// Service, Ingress: `Cascading` protects nothing.
    Unsupported,
}

/// The parts of a CRD that name its custom resources.
struct Crd<'a> {
    group: &'a str,
    kind: &'a str,
    list_kind: &'a str,
    storage_version: &'a str,
}

impl<'a> Target<'a> {
    fn decode(object: &'a Value, kind: ProtectedKind) -> Result<Target<'a>, String> {
        let metadata = metadata_of(object)?;
        let label = label_of(metadata, LABEL)?;
        let deleting = match metadata.and_then(|m| m.get("deletionTimestamp")) {
            None | Some(Value::Null) => false,
            Some(Value::String(_)) => true,
            Some(_) => return Err("metadata.deletionTimestamp is not a string".into()),
        };
        let spec = object_field(Some(root_of(object)?), "spec", "spec")?;
        let cascading = match kind {
            ProtectedKind::Namespace => Cascading::Namespace {
                name: string_field(metadata, "name", "metadata.name")?.filter(|n| !n.is_empty()),
            },
            ProtectedKind::CustomResourceDefinition => Cascading::Crd(Crd::decode(spec)?),
            ProtectedKind::Workload => Cascading::Replicas(replicas_of(spec)?),
            ProtectedKind::Service | ProtectedKind::Ingress => Cascading::Unsupported,
        };
        Ok(Target {
            label,
            deleting,
            cascading,
        })
    }
}

impl<'a> Crd<'a> {
    fn decode(spec: Option<&'a Map<String, Value>>) -> Result<Crd<'a>, String> {
        let names = object_field(spec, "names", "spec.names")?;
        let mut storage_version = "";
        let versions = spec.and_then(|s| s.get("versions"));
        match versions {
            None | Some(Value::Null) => {}
            Some(Value::Array(versions)) => {
                for v in versions {
                    let v = v.as_object().ok_or("spec.versions[] is not an object")?;
                    let storage = match v.get("storage") {
                        None | Some(Value::Null) => false,
                        Some(Value::Bool(b)) => *b,
                        Some(_) => return Err("spec.versions[].storage is not a boolean".into()),
                    };
                    let name = string_field(Some(v), "name", "spec.versions[].name")?;
                    if storage && storage_version.is_empty() {
                        storage_version = name.unwrap_or("");
                    }
                }
            }
            Some(_) => return Err("spec.versions is not a list".into()),
        }
        Ok(Crd {
            group: string_field(spec, "group", "spec.group")?.unwrap_or(""),
            kind: string_field(names, "kind", "spec.names.kind")?.unwrap_or(""),
            list_kind: string_field(names, "listKind", "spec.names.listKind")?.unwrap_or(""),
            storage_version,
        })
    }
}

/// The object itself, which must be a JSON object.
fn root_of(object: &Value) -> Result<&Map<String, Value>, String> {
    object
        .as_object()
        .ok_or_else(|| "the object is not a JSON object".to_string())
}

/// The object's `metadata`, `None` when absent or null.
fn metadata_of(object: &Value) -> Result<Option<&Map<String, Value>>, String> {
    object_field(Some(root_of(object)?), "metadata", "metadata")
}

/// The value of label `key`; every label value must be a string, as in Kubernetes.
fn label_of<'a>(metadata: Option<&'a Map<String, Value>>, key: &str) -> Result<Option<&'a str>, String> {
    let Some(labels) = object_field(metadata, "labels", "metadata.labels")? else {
        return Ok(None);
    };
    if let Some((k, _)) = labels.iter().find(|(_, v)| !v.is_string()) {
        return Err(format!("metadata.labels[{k}] is not a string"));
    }
    Ok(labels.get(key).and_then(Value::as_str))
}

/// `spec.replicas` as an int32; absent or null defaults to 1.
fn replicas_of(spec: Option<&Map<String, Value>>) -> Result<i32, String> {
    match spec.and_then(|s| s.get("replicas")) {
        None | Some(Value::Null) => Ok(1),
        Some(v) => v
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .ok_or_else(|| format!("spec.replicas is not a 32-bit integer: {v}")),
    }
}

/// A member of `parent` (if any) that must be an object when present and not null.
fn object_field<'a>(
    parent: Option<&'a Map<String, Value>>,
    key: &str,
    path: &str,
) -> Result<Option<&'a Map<String, Value>>, String> {
    match parent.and_then(|p| p.get(key)) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(map)) => Ok(Some(map)),
        Some(_) => Err(format!("{path} is not an object")),
    }
}

/// A member of `parent` (if any) that must be a string when present and not null.
fn string_field<'a>(
    parent: Option<&'a Map<String, Value>>,
    key: &str,
    path: &str,
) -> Result<Option<&'a str>, String> {
    match parent.and_then(|p| p.get(key)) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("{path} is not a string")),
    }
}
