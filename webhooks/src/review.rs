//! The AdmissionReview wire format (`admission.k8s.io/v1`, and `v1beta1` for OpenKruise compatibility).
//!
//! Our own types rather than kube-core's: the response must carry the patch as a standard base64
//! string (kube-core serialises `Vec<u8>` as an array of numbers, kube-rs/kube#1781), and the request keeps
//! `object` / `oldObject` as raw JSON so patches are built against exactly what the apiserver sent.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Group, version and kind as the apiserver sends them in `request.kind`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct GroupVersionKind {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub kind: String,
}

/// Group, version and resource as the apiserver sends them in `request.resource`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct GroupVersionResource {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub resource: String,
}

/// The operation being admitted.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "UPPERCASE")]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
    /// Anything else; handlers treat it as "not for me".
    #[serde(other)]
    Unknown,
}

impl Operation {
    /// The wire spelling, e.g. `CREATE`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
            Operation::Unknown => "UNKNOWN",
        }
    }
}

/// `AdmissionReview.request`, with the objects kept as raw JSON.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    pub uid: String,
    #[serde(default)]
    pub kind: GroupVersionKind,
    #[serde(default)]
    pub resource: GroupVersionResource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_resource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_kind: Option<GroupVersionKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_resource: Option<GroupVersionResource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_sub_resource: Option<String>,
    /// Empty on CREATE with `generateName`.
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: String,
    pub operation: Operation,
    #[serde(default)]
    pub user_info: Value,
    /// The new object, without `metadata.managedFields` (never read, never patched; dropped while
    /// parsing so it costs no allocation).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "without_managed_fields"
    )]
    pub object: Option<Value>,
    /// The old object, likewise without `metadata.managedFields`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "without_managed_fields"
    )]
    pub old_object: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
}

impl AdmissionRequest {
    /// True when nothing will be persisted: `request.dryRun`, or `options.dryRun` non-empty.
    pub fn is_dry_run(&self) -> bool {
        self.dry_run == Some(true)
            || self
                .options
                .as_ref()
                .and_then(|o| o.get("dryRun"))
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
    }

    /// The sub-resource, `None` when empty.
    pub fn sub_resource(&self) -> Option<&str> {
        self.sub_resource.as_deref().filter(|s| !s.is_empty())
    }
}

/// Deserializes an object, skipping `metadata.managedFields` without building it.
fn without_managed_fields<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Value>, D::Error> {
    deserializer.deserialize_option(OptionalObject)
}

struct OptionalObject;

impl<'de> serde::de::Visitor<'de> for OptionalObject {
    type Value = Option<Value>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a Kubernetes object or null")
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer
            .deserialize_any(ObjectVisitor { top_level: true })
            .map(Some)
    }
}

/// Builds a `Value`, leaving out `managedFields` of the top-level `metadata`; non-objects are kept as
/// they are (handlers reject them with a clear message).
struct ObjectVisitor {
    top_level: bool,
}

impl<'de> serde::de::Visitor<'de> for ObjectVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = match (self.top_level, key.as_str()) {
                (true, "metadata") => map.next_value_seed(Metadata)?,
                _ => map.next_value::<Value>()?,
            };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

/// `metadata` without `managedFields`.
struct Metadata;

impl<'de> serde::de::DeserializeSeed<'de> for Metadata {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(MetadataVisitor)
    }
}

struct MetadataVisitor;

impl<'de> serde::de::Visitor<'de> for MetadataVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("object metadata")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "managedFields" {
                map.next_value::<serde::de::IgnoredAny>()?;
            } else {
                out.insert(key, map.next_value()?);
            }
        }
        Ok(Value::Object(out))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        ObjectVisitor { top_level: false }.visit_seq(seq)
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

/// Why a body is not a usable AdmissionReview. The server answers these with HTTP 400.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReviewError {
    #[error("request body is empty")]
    Empty,
    #[error("request body is not a valid AdmissionReview: {0}")]
    Malformed(String),
    #[error(
        "unsupported AdmissionReview apiVersion {0:?}: expected admission.k8s.io/v1 or admission.k8s.io/v1beta1"
    )]
    UnsupportedVersion(String),
    #[error("unexpected kind {0:?}: expected AdmissionReview")]
    WrongKind(String),
    #[error("AdmissionReview has no request")]
    MissingRequest,
    #[error("AdmissionReview request has an empty uid")]
    MissingUid,
}

/// A decoded review: the request and the apiVersion to mirror in the answer.
#[derive(Clone, Debug)]
pub struct Review {
    pub api_version: String,
    pub request: AdmissionRequest,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReviewEnvelope {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    request: Option<AdmissionRequest>,
}

const V1: &str = "admission.k8s.io/v1";
const V1BETA1: &str = "admission.k8s.io/v1beta1";

impl Review {
    /// Decodes and checks an AdmissionReview body.
    pub fn parse(body: &[u8]) -> Result<Review, ReviewError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Err(ReviewError::Empty);
        }
        let env: ReviewEnvelope =
            serde_json::from_slice(body).map_err(|e| ReviewError::Malformed(e.to_string()))?;
        if env.api_version != V1 && env.api_version != V1BETA1 {
            return Err(ReviewError::UnsupportedVersion(env.api_version));
        }
        if env.kind != "AdmissionReview" {
            return Err(ReviewError::WrongKind(env.kind));
        }
        let request = env.request.ok_or(ReviewError::MissingRequest)?;
        if request.uid.is_empty() {
            return Err(ReviewError::MissingUid);
        }
        Ok(Review {
            api_version: env.api_version,
            request,
        })
    }
}

/// `metav1.Status` as used in an admission response.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ResponseStatus {
    pub code: u16,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// `AdmissionReview.response`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    pub uid: String,
    pub allowed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ResponseStatus>,
    /// Standard base64 of the JSON patch bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl AdmissionResponse {
    /// The decoded patch operations, if any (for tests and `kruise admit -f`).
    pub fn patch_operations(&self) -> Result<Vec<json_patch::PatchOperation>, String> {
        let Some(b64) = &self.patch else {
            return Ok(Vec::new());
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| e.to_string())?;
        serde_json::from_slice(&bytes).map_err(|e| e.to_string())
    }
}

/// The full answer: `{apiVersion, kind: AdmissionReview, response}`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ReviewResponse {
    pub api_version: String,
    pub kind: String,
    pub response: AdmissionResponse,
}

impl ReviewResponse {
    /// Wraps a response, mirroring the request's apiVersion.
    pub fn new(api_version: &str, response: AdmissionResponse) -> Self {
        ReviewResponse {
            api_version: api_version.to_string(),
            kind: "AdmissionReview".into(),
            response,
        }
    }
}

/// Standard base64 (with padding) of a JSON patch, as `[]byte` is encoded by Go.
pub fn encode_patch(ops: &[json_patch::PatchOperation]) -> String {
    // Serialising a list of patch operations cannot fail: every value is already JSON.
    let bytes = serde_json::to_vec(ops).unwrap_or_else(|_| b"[]".to_vec());
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(v: Value) -> Vec<u8> {
        serde_json::to_vec(&v).unwrap()
    }

    #[test]
    fn parses_a_v1_review_and_keeps_raw_objects() {
        let review = Review::parse(&body(json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u1", "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "resource": {"group": "", "version": "v1", "resource": "pods"},
                "namespace": "ns", "operation": "CREATE", "userInfo": {"username": "me"},
                "object": {"kind": "Pod", "spec": {"futureField": 1}}, "dryRun": false,
                "options": {"kind": "CreateOptions"}}
        })))
        .unwrap();
        assert_eq!(review.api_version, "admission.k8s.io/v1");
        assert_eq!(review.request.operation, Operation::Create);
        assert_eq!(review.request.object.unwrap()["spec"]["futureField"], 1);
        assert_eq!(review.request.name, "");
    }

    #[test]
    fn rejects_bad_envelopes_with_typed_errors() {
        assert_eq!(Review::parse(b"").unwrap_err(), ReviewError::Empty);
        assert!(matches!(
            Review::parse(b"{not json").unwrap_err(),
            ReviewError::Malformed(_)
        ));
        let v2 = json!({"apiVersion": "admission.k8s.io/v2", "kind": "AdmissionReview", "request": {"uid": "x", "operation": "CREATE"}});
        assert!(matches!(
            Review::parse(&body(v2)).unwrap_err(),
            ReviewError::UnsupportedVersion(_)
        ));
        let wrong = json!({"apiVersion": "admission.k8s.io/v1", "kind": "Pod"});
        assert!(matches!(
            Review::parse(&body(wrong)).unwrap_err(),
            ReviewError::WrongKind(_)
        ));
        let none = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"});
        assert_eq!(
            Review::parse(&body(none)).unwrap_err(),
            ReviewError::MissingRequest
        );
        let nouid = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "", "operation": "DELETE"}});
        assert_eq!(Review::parse(&body(nouid)).unwrap_err(), ReviewError::MissingUid);
        let deep = "[".repeat(10_000);
        assert!(matches!(
            Review::parse(deep.as_bytes()).unwrap_err(),
            ReviewError::Malformed(_)
        ));
    }

    #[test]
    fn bytes_that_are_not_utf8_json_are_malformed() {
        let valid = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","object":{"metadata":{"name":"p"}}}}"#;
        assert!(Review::parse(valid).is_ok());
        // The pod name's `p` replaced by a byte that starts no UTF-8 sequence.
        let mut invalid = valid.to_vec();
        let at = invalid.windows(3).position(|w| w == b"\"p\"").unwrap() + 1;
        invalid[at] = 0xff;
        assert!(matches!(
            Review::parse(&invalid).unwrap_err(),
            ReviewError::Malformed(_)
        ));
        // A lone surrogate escape is not a string serde_json accepts either.
        let surrogate = String::from_utf8(valid.to_vec())
            .unwrap()
            .replace(r#""name":"p""#, r#""name":"\ud800""#);
        assert!(matches!(
            Review::parse(surrogate.as_bytes()).unwrap_err(),
            ReviewError::Malformed(_)
        ));
    }

    #[test]
    fn a_response_already_in_the_body_and_unknown_fields_are_ignored() {
        let r = Review::parse(&body(json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "surprise": {"a": 1},
            "request": {"uid": "u", "operation": "CREATE", "newField": true, "object": {"metadata": {"name": "p"}}},
            "response": {"uid": "u", "allowed": false, "status": {"message": "forged"}}})))
        .unwrap();
        assert_eq!(r.request.uid, "u");
        assert_eq!(r.request.object.unwrap(), json!({"metadata": {"name": "p"}}));
    }

    #[test]
    fn a_duplicate_key_in_the_envelope_is_malformed() {
        let dup = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a","uid":"b","operation":"CREATE"}}"#;
        assert!(matches!(
            Review::parse(dup).unwrap_err(),
            ReviewError::Malformed(_)
        ));
    }

    #[test]
    fn managed_fields_are_dropped_and_everything_else_kept() {
        let r = Review::parse(&body(
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u", "operation": "UPDATE",
                "object": {"metadata": {"name": "p", "managedFields": [{"manager": "kubectl"}],
                                        "labels": {"a": "b"}},
                           "spec": {"managedFields": 1, "x": [1, 2.5, null, true, "s"]}},
                "oldObject": {"metadata": {"managedFields": []}, "kind": "Pod"}}}),
        ))
        .unwrap();
        let object = r.request.object.unwrap();
        assert_eq!(
            object,
            json!({"metadata": {"name": "p", "labels": {"a": "b"}},
            "spec": {"managedFields": 1, "x": [1, 2.5, null, true, "s"]}})
        );
        assert_eq!(
            r.request.old_object.unwrap(),
            json!({"metadata": {}, "kind": "Pod"})
        );
        let null = Review::parse(&body(
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u", "operation": "DELETE", "object": null, "oldObject": "odd"}}),
        ))
        .unwrap();
        assert_eq!(null.request.object, None);
        assert_eq!(null.request.old_object, Some(json!("odd")));
    }

    #[test]
    fn unknown_operation_is_tolerated() {
        let r = Review::parse(&body(
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u", "operation": "PATCH"}}),
        ))
        .unwrap();
        assert_eq!(r.request.operation, Operation::Unknown);
    }

    #[test]
    fn dry_run_from_flag_or_options() {
        let mut req: AdmissionRequest =
            serde_json::from_value(json!({"uid": "u", "operation": "DELETE"})).unwrap();
        assert!(!req.is_dry_run());
        req.options = Some(json!({"dryRun": ["All"]}));
        assert!(req.is_dry_run());
        req.options = None;
        req.dry_run = Some(true);
        assert!(req.is_dry_run());
    }

    #[test]
    fn patch_is_a_standard_base64_string_on_the_wire() {
        let ops: Vec<json_patch::PatchOperation> =
            serde_json::from_value(json!([{"op": "add", "path": "/metadata/labels", "value": {"a": "b?>"}}]))
                .unwrap();
        let resp = AdmissionResponse {
            uid: "u".into(),
            allowed: true,
            status: None,
            patch: Some(encode_patch(&ops)),
            patch_type: Some("JSONPatch".into()),
            warnings: vec![],
        };
        let wire = serde_json::to_value(ReviewResponse::new("admission.k8s.io/v1", resp)).unwrap();
        let patch = wire["response"]["patch"]
            .as_str()
            .expect("patch must be a JSON string");
        assert_eq!(
            patch,
            "W3sib3AiOiJhZGQiLCJwYXRoIjoiL21ldGFkYXRhL2xhYmVscyIsInZhbHVlIjp7ImEiOiJiPz4ifX1d"
        );
        assert!(
            !patch.contains('-') && !patch.contains('_'),
            "must not be base64url"
        );
        assert_eq!(wire["response"]["patchType"], "JSONPatch");
        assert_eq!(wire["kind"], "AdmissionReview");
    }
}
