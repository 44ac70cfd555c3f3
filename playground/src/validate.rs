//! Request checks kube-apiserver makes before any kind-specific logic: a JSON object body, the
//! namespace of the body against the path, object names, and the total size of the annotations.

use serde_json::{Value, json};

use crate::error::{ApiError, FieldError};
use crate::meta;
use crate::resources::ResourceDef;

/// The body must be a JSON object.
pub fn object_body(obj: Value) -> Result<Value, ApiError> {
    if obj.is_object() {
        Ok(obj)
    } else {
        Err(ApiError::bad_request(
            "the body of the request was not a JSON object",
        ))
    }
}

/// Fills the namespace from the path, or refuses a body naming another one (400, as
/// `rest.EnsureObjectNamespaceMatchesRequestNamespace`).
pub fn request_namespace(def: &ResourceDef, ns: &str, obj: &mut Value) -> Result<(), ApiError> {
    let body_ns = meta::namespace(obj).to_string();
    if !def.namespaced {
        meta::metadata_mut(obj).remove("namespace");
        return Ok(());
    }
    if body_ns.is_empty() {
        meta::metadata_mut(obj).insert("namespace".into(), json!(ns));
        Ok(())
    } else if body_ns == ns {
        Ok(())
    } else {
        Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ))
    }
}

const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Whether `s` is a DNS-1123 subdomain.
pub fn is_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_label)
}

/// `metadata.name` is required and must be a DNS-1123 subdomain (a label for namespaces).
pub fn name(def: &ResourceDef, obj: &Value) -> Result<(), ApiError> {
    let name = meta::name(obj);
    if name.is_empty() {
        let e = FieldError::required("metadata.name", "name or generateName is required");
        return Err(ApiError::invalid(&def.group, &def.kind, "", &[e]));
    }
    let (ok, msg) = if def.plural == "namespaces" {
        (is_label(name), LABEL_MSG)
    } else {
        (is_subdomain(name), SUBDOMAIN_MSG)
    };
    if ok {
        Ok(())
    } else {
        let e = FieldError::invalid("metadata.name", &json!(name), msg);
        Err(ApiError::invalid(&def.group, &def.kind, name, &[e]))
    }
}

/// The most bytes all annotations of an object may take, keys and values together
/// (`TotalAnnotationSizeLimitB` of kube-apiserver's object meta validation).
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// `metadata.annotations` must not take more than [`TOTAL_ANNOTATION_SIZE_LIMIT`] bytes. Checked, as
/// kube-apiserver does, on the object as mutating admission left it.
pub fn annotations(def: &ResourceDef, obj: &Value) -> Result<(), ApiError> {
    let Some(annotations) = obj["metadata"]["annotations"].as_object() else {
        return Ok(());
    };
    let total: usize = annotations
        .iter()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    if total <= TOTAL_ANNOTATION_SIZE_LIMIT {
        return Ok(());
    }
    let e = FieldError::other(
        "FieldValueTooLong",
        "metadata.annotations",
        format!("Too long: may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"),
    );
    Err(ApiError::invalid(&def.group, &def.kind, meta::name(obj), &[e]))
}

/// A CRD's name must be `<plural>.<group>`.
pub fn crd(obj: &Value) -> Result<(), ApiError> {
    let name = meta::name(obj);
    let spec = &obj["spec"];
    let want = format!(
        "{}.{}",
        spec["names"]["plural"].as_str().unwrap_or_default(),
        spec["group"].as_str().unwrap_or_default()
    );
    if name == want {
        return Ok(());
    }
    let e = FieldError::invalid(
        "metadata.name",
        &json!(name),
        "must be spec.names.plural+\".\"+spec.group",
    );
    Err(ApiError::invalid(
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        name,
        &[e],
    ))
}
