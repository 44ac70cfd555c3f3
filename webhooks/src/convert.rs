//! The CRD conversion webhook (`/convert`): a `ConversionReview` (apiextensions.k8s.io/v1) in, every
//! object converted to `desiredAPIVersion` out, or a Failure result naming the object that could not be.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Why a body is not a usable ConversionReview (answered with HTTP 400).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConvertReviewError {
    #[error("request body is not a valid ConversionReview: {0}")]
    Malformed(String),
    #[error("unsupported ConversionReview apiVersion {0:?}: expected apiextensions.k8s.io/v1")]
    UnsupportedVersion(String),
    #[error("ConversionReview has no request")]
    MissingRequest,
    #[error("ConversionReview request has an empty uid")]
    MissingUid,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope {
    #[serde(default)]
    api_version: String,
    request: Option<ConversionRequest>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConversionRequest {
    #[serde(default)]
    uid: String,
    #[serde(rename = "desiredAPIVersion", default)]
    desired_api_version: String,
    #[serde(default)]
    objects: Vec<Value>,
}

/// The answer to a ConversionReview.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ConversionReviewResponse {
    pub api_version: String,
    pub kind: String,
    pub response: Value,
}

/// Converts every object of the review; the first object that cannot be converted fails the whole
/// review (the apiserver needs all or nothing).
pub fn convert_review(body: &[u8]) -> Result<ConversionReviewResponse, ConvertReviewError> {
    // serde_json does not check the UTF-8 of fields it skips (`kind`, unknown ones): JSON is UTF-8,
    // so a body that is not is refused whole (found by the `convert` fuzz target).
    std::str::from_utf8(body).map_err(|e| ConvertReviewError::Malformed(e.to_string()))?;
    let envelope: Envelope =
        serde_json::from_slice(body).map_err(|e| ConvertReviewError::Malformed(e.to_string()))?;
    if envelope.api_version != "apiextensions.k8s.io/v1" {
        return Err(ConvertReviewError::UnsupportedVersion(envelope.api_version));
    }
    let request = envelope.request.ok_or(ConvertReviewError::MissingRequest)?;
    if request.uid.is_empty() {
        return Err(ConvertReviewError::MissingUid);
    }
    // kube-apiserver always asks for `group/version`. A bare version or an empty group would be read
    // in the object's group, and the answer would hold objects in a version other than the one asked
    // for (found by the `convert` fuzz target): each object is refused instead.
    let desired_is_group_version = is_group_version(&request.desired_api_version);
    let converted: Result<Vec<Value>, String> = request
        .objects
        .iter()
        .map(|object| {
            if !desired_is_group_version {
                return Err(format!(
                    "desiredAPIVersion {:?} is not group/version",
                    request.desired_api_version
                ));
            }
            kruise_api::convert_object(object, &request.desired_api_version).map_err(|e| {
                let name = object
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("<unnamed>");
                let kind = object.get("kind").and_then(Value::as_str).unwrap_or("<no kind>");
                format!(
                    "cannot convert {kind} {name} to {}: {e}",
                    request.desired_api_version
                )
            })
        })
        .collect();
    let response = match converted {
        Ok(objects) => {
            json!({"uid": request.uid, "result": {"status": "Success"}, "convertedObjects": objects})
        }
        Err(message) => json!({
            "uid": request.uid,
            "result": {"status": "Failure", "message": message},
            "convertedObjects": [],
        }),
    };
    Ok(ConversionReviewResponse {
        api_version: "apiextensions.k8s.io/v1".into(),
        kind: "ConversionReview".into(),
        response,
    })
}

/// Whether `api_version` is `group/version`, both non-empty.
fn is_group_version(api_version: &str) -> bool {
    api_version
        .split_once('/')
        .is_some_and(|(group, version)| !group.is_empty() && !version.is_empty() && !version.contains('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(desired: &str, objects: Value) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "c1", "desiredAPIVersion": desired, "objects": objects}
        }))
        .unwrap()
    }

    #[test]
    fn converts_a_v1alpha1_sidecarset_to_v1beta1_and_back() {
        let alpha = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
            "metadata": {"name": "s"},
            "spec": {"selector": {"matchLabels": {"app": "x"}},
                     "containers": [{"name": "log", "image": "busybox"}]}});
        let out = convert_review(&review("apps.kruise.io/v1beta1", json!([alpha.clone()]))).unwrap();
        assert_eq!(out.response["uid"], "c1");
        assert_eq!(out.response["result"]["status"], "Success");
        let beta = &out.response["convertedObjects"][0];
        assert_eq!(beta["apiVersion"], "apps.kruise.io/v1beta1");
        assert_eq!(beta["spec"]["containers"][0]["name"], "log");
        let back = convert_review(&review("apps.kruise.io/v1alpha1", json!([beta]))).unwrap();
        let back = &back.response["convertedObjects"][0];
        assert_eq!(back["apiVersion"], "apps.kruise.io/v1alpha1");
        assert_eq!(back["spec"], alpha["spec"]);
    }

    #[test]
    fn converts_an_advanced_statefulset_down_and_up_keeping_v1beta1_fields() {
        let beta = json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                     "reserveOrdinals": [1], "scaleStrategy": {"maxUnavailable": 2}}});
        let out = convert_review(&review("apps.kruise.io/v1alpha1", json!([beta.clone()]))).unwrap();
        assert_eq!(out.response["result"]["status"], "Success");
        let alpha = &out.response["convertedObjects"][0];
        assert_eq!(alpha["apiVersion"], "apps.kruise.io/v1alpha1");
        assert!(alpha["spec"].get("reserveOrdinals").is_none());
        let back = convert_review(&review("apps.kruise.io/v1beta1", json!([alpha]))).unwrap();
        assert_eq!(back.response["convertedObjects"][0], beta);
    }

    #[test]
    fn an_object_that_cannot_be_converted_fails_the_review_with_its_name() {
        let good = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "metadata": {"name": "fine"}, "spec": {"replicas": 1}});
        let bad = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "metadata": {"name": "broken"}, "spec": {"replicas": 1}});
        let out = convert_review(&review("apps.kruise.io/v9", json!([good, bad]))).unwrap();
        assert_eq!(out.response["result"]["status"], "Failure");
        let message = out.response["result"]["message"].as_str().unwrap();
        assert!(
            message.contains("cannot convert CloneSet fine to apps.kruise.io/v9"),
            "{message}"
        );
        assert_eq!(out.response["convertedObjects"], json!([]));
    }

    #[test]
    fn a_desired_version_that_is_not_group_version_fails_the_review() {
        let budget = json!({"apiVersion": "policy.kruise.io/v1alpha1", "kind": "PodUnavailableBudget",
            "metadata": {"name": "pub"}, "spec": {"maxUnavailable": 1}});
        for desired in [
            "/v1beta1",
            "v1beta1",
            "",
            "policy.kruise.io/",
            "policy.kruise.io/v1beta1/x",
        ] {
            let out = convert_review(&review(desired, json!([budget.clone()]))).unwrap();
            assert_eq!(out.response["result"]["status"], "Failure", "{desired:?}");
            let message = out.response["result"]["message"].as_str().unwrap();
            assert!(message.contains("is not group/version"), "{message}");
            assert_eq!(out.response["convertedObjects"], json!([]));
        }
        let out = convert_review(&review("policy.kruise.io/v1beta1", json!([budget]))).unwrap();
        assert_eq!(out.response["result"]["status"], "Success");
        assert_eq!(
            out.response["convertedObjects"][0]["apiVersion"],
            "policy.kruise.io/v1beta1"
        );
    }

    #[test]
    fn objects_are_converted_in_order_and_sidecarset_namespace_becomes_a_selector() {
        let objects = json!([
            {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet", "metadata": {"name": "a"},
             "spec": {"namespace": "n"}},
            {"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet", "metadata": {"name": "b"}, "spec": {}}
        ]);
        let out = convert_review(&review("apps.kruise.io/v1beta1", objects)).unwrap();
        let converted = out.response["convertedObjects"].as_array().unwrap();
        assert_eq!(converted.len(), 2);
        let selector = &converted[0]["spec"]["namespaceSelector"]["matchLabels"];
        assert_eq!(selector["kubernetes.io/metadata.name"], "n");
        assert_eq!(converted[1]["metadata"]["name"], "b");
    }

    #[test]
    fn malformed_reviews_are_errors() {
        assert!(matches!(
            convert_review(b"nope"),
            Err(ConvertReviewError::Malformed(_))
        ));
        let v1beta1 = br#"{"apiVersion":"apiextensions.k8s.io/v1beta1","request":{"uid":"x"}}"#;
        assert!(matches!(
            convert_review(v1beta1),
            Err(ConvertReviewError::UnsupportedVersion(_))
        ));
        let no_req = br#"{"apiVersion":"apiextensions.k8s.io/v1"}"#;
        assert_eq!(convert_review(no_req), Err(ConvertReviewError::MissingRequest));
    }

    #[test]
    fn bytes_that_are_not_utf8_are_malformed_even_in_skipped_fields() {
        let valid = br#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u","desiredAPIVersion":"apps.kruise.io/v1beta1","objects":[]}}"#;
        assert!(convert_review(valid).is_ok());
        // The last byte of `kind` replaced by one that starts no UTF-8 sequence (the fuzzer's input).
        let mut invalid = valid.to_vec();
        let at = invalid.windows(6).position(|w| w == b"Review").unwrap() + 5;
        invalid[at] = 0x80;
        assert!(matches!(
            convert_review(&invalid),
            Err(ConvertReviewError::Malformed(_))
        ));
    }
}
