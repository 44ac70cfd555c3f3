//! Answering a CRD `ConversionReview` (what the API server posts to `/convert`).

use kube::core::Status;
use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use serde_json::Value;

use super::convert_object;

/// Converts every object of a request to its `desiredAPIVersion`, in order.
///
/// Like controller-runtime, one failing object fails the whole request: the response then
/// carries a `Failure` status with the error message and no objects.
pub fn convert_request(mut request: ConversionRequest) -> ConversionResponse {
    let objects = std::mem::take(&mut request.objects);
    let mut converted = Vec::with_capacity(objects.len());
    for object in &objects {
        match convert_object(object, &request.desired_api_version) {
            Ok(value) => converted.push(value),
            Err(err) => {
                return ConversionResponse::for_request(request)
                    .failure(Status::failure(&err.to_string(), ""));
            }
        }
    }
    ConversionResponse::for_request(request).success(converted)
}

/// Answers a whole `ConversionReview` JSON body with the response review JSON.
///
/// A body that is not a review with a request gets a `Failure` response with an empty uid.
pub fn convert_review(review: &Value) -> Value {
    let response = match serde_json::from_value::<ConversionReview>(review.clone()) {
        Ok(review) => match ConversionRequest::from_review(review) {
            Ok(request) => convert_request(request),
            Err(err) => ConversionResponse::invalid(Status::failure(&err.to_string(), "")),
        },
        Err(err) => {
            ConversionResponse::invalid(Status::failure(&format!("invalid ConversionReview: {err}"), ""))
        }
    };
    let mut out = serde_json::to_value(response.into_review()).unwrap_or(Value::Null);
    // A response built without a request has no type meta; always answer as a v1 review.
    if let Some(map) = out.as_object_mut() {
        map.insert(
            "apiVersion".into(),
            Value::String("apiextensions.k8s.io/v1".into()),
        );
        map.insert("kind".into(), Value::String("ConversionReview".into()));
    }
    out
}
