//! Custom resources between versions, as apiextensions-apiserver's
//! `pkg/apiserver/conversion` (`webhook_converter.go`, `nop_converter.go`) does it.
//!
//! Where kube-apiserver converts (`pkg/apiserver/customresource_handler.go`): a request handler of
//! a version keeps that version as its in-memory form (`HubGroupVersion: kind.GroupVersion()`),
//! so decoding, defaulting, admission (mutating, schema validation, validating) all see the
//! object in the request's version; the storage codec converts it to the storage version when it
//! is written, and every object read from storage (get, list, watch, the old object of an
//! update, the result of a write) is converted to the request's version. The playground does the
//! same: [`Api::to_storage`] before a store write, [`Api::present`] on everything served.
//! Built-in kinds never convert (one version each here).
//!
//! - `strategy: None` rewrites `apiVersion` only;
//! - `strategy: Webhook` posts one ConversionReview (the first of `conversionReviewVersions`
//!   kube-apiserver knows: `v1` or `v1beta1`) with every object not yet in the desired version,
//!   over HTTPS verified against `caBundle` (services resolve as for admission webhooks), with
//!   kube-apiserver's 30 s client timeout (`?timeout=30s`). The answer is checked as kube does
//!   (uid, result, count, apiVersion, kind, name, namespace, uid) and the original metadata is
//!   restored except labels and annotations.
//!
//! A failure is kube-apiserver's error text (`conversion webhook for <group>/<version>,
//! Kind=<Kind> failed: …`), answered as `ErrorToAPIStatus` answers an error that is not a Status:
//! 500 with an empty reason; a write whose conversion fails stores nothing.

use serde_json::{Map, Value, json};

use crate::api::Api;
use crate::crd::{Conversion, CrdInfo};
use crate::error::ApiError;
use crate::meta;
use crate::resources::ResourceDef;
use crate::webhook::call::Target;

/// kube-apiserver's timeout for conversion webhook calls.
const TIMEOUT_SECONDS: u64 = 30;

/// A conversion failure as `ErrorToAPIStatus` answers a plain error: 500, no reason.
fn failure(message: String) -> ApiError {
    ApiError {
        code: 500,
        reason: "",
        message,
        details: None,
    }
}

/// `<group>/<version>, Kind=<Kind>` (`schema.GroupVersionKind.String()`).
fn gvk(obj: &Value) -> String {
    format!(
        "{}, Kind={}",
        obj["apiVersion"].as_str().unwrap_or_default(),
        obj["kind"].as_str().unwrap_or_default()
    )
}

impl Api {
    /// An object (as stored) in the version `def` serves, with its `apiVersion` and `kind`.
    pub async fn present(&self, def: &ResourceDef, obj: Value) -> Result<Value, ApiError> {
        let mut out = self.present_all(def, vec![obj]).await?;
        Ok(out.pop().unwrap_or_default())
    }

    /// Objects (as stored) in the version `def` serves: one conversion call for all of them.
    pub async fn present_all(&self, def: &ResourceDef, objs: Vec<Value>) -> Result<Vec<Value>, ApiError> {
        let Some(info) = def.crd.as_deref() else {
            if crate::events::is_events_api(def) {
                return Ok(objs.into_iter().map(crate::events::from_core).collect());
            }
            return Ok(objs
                .into_iter()
                .map(|o| crate::handlers::output(def, o))
                .collect());
        };
        let mut objs = objs;
        for o in &mut objs {
            if o["kind"].as_str().is_none_or(str::is_empty) {
                o["kind"] = json!(def.kind);
            }
        }
        convert(self, info, objs, &def.api_version()).await
    }

    /// An object of `def`'s version in the CRD's storage version (unchanged for built-ins).
    pub async fn to_storage(&self, def: &ResourceDef, obj: Value) -> Result<Value, ApiError> {
        let Some(info) = def.crd.as_deref() else {
            if crate::events::is_events_api(def) {
                return Ok(crate::events::to_core(obj));
            }
            return Ok(obj);
        };
        let desired = format!("{}/{}", def.group, info.storage_version);
        let mut out = convert(self, info, vec![obj], &desired).await?;
        Ok(out.pop().unwrap_or_default())
    }
}

/// Converts `objs` to `desired` (`group/version`); objects already there are not sent.
pub async fn convert(
    api: &Api,
    info: &CrdInfo,
    mut objs: Vec<Value>,
    desired: &str,
) -> Result<Vec<Value>, ApiError> {
    let pending: Vec<usize> = (0..objs.len())
        .filter(|i| objs[*i]["apiVersion"].as_str() != Some(desired))
        .collect();
    if pending.is_empty() {
        return Ok(objs);
    }
    let webhook = match &info.conversion {
        Conversion::None => {
            for i in pending {
                objs[i]["apiVersion"] = json!(desired);
            }
            return Ok(objs);
        }
        Conversion::Webhook(w) => w,
    };
    let what = gvk(&objs[pending[0]]);
    let fail = |why: String| failure(format!("conversion webhook for {what} failed: {why}"));
    let review_version = webhook["conversionReviewVersions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|v| matches!(*v, "v1" | "v1beta1"))
        .ok_or_else(|| failure("no supported conversion review versions".into()))?;
    let uid = meta::uid();
    let sent: Vec<Value> = pending.iter().map(|i| objs[*i].clone()).collect();
    let review = json!({
        "apiVersion": format!("apiextensions.k8s.io/{review_version}"), "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": sent},
    });
    let config = json!({"clientConfig": webhook["clientConfig"], "timeoutSeconds": TIMEOUT_SECONDS});
    let target = Target::of(&config, api.webhook_address).map_err(|e| fail(call_why(e)))?;
    let answer = target.post(&review).await.map_err(|e| fail(call_why(e)))?;
    let converted = converted_objects(&answer, &uid, review_version).map_err(fail)?;
    if converted.len() != pending.len() {
        return Err(failure(format!(
            "conversion webhook for {what} returned {} objects, expected {}",
            converted.len(),
            pending.len()
        )));
    }
    let single = objs.len() == 1;
    for (index, (i, mut out)) in pending.into_iter().zip(converted).enumerate() {
        let original = &objs[i];
        let at = if single {
            "object".to_string()
        } else {
            format!("converted object at index {index}")
        };
        let invalid = |why: String| {
            failure(format!(
                "conversion webhook for {what} returned invalid {at}: {why}"
            ))
        };
        if out["apiVersion"].as_str() != Some(desired) {
            return Err(invalid(format!(
                "invalid groupVersion (expected {desired}, received {})",
                out["apiVersion"].as_str().unwrap_or_default()
            )));
        }
        if out["kind"] != original["kind"] {
            return Err(invalid(format!(
                "invalid kind (expected {}, received {})",
                original["kind"].as_str().unwrap_or_default(),
                out["kind"].as_str().unwrap_or_default()
            )));
        }
        for (field, label) in [("name", "name"), ("namespace", "namespace"), ("uid", "UID")] {
            let (e, a) = (&original["metadata"][field], &out["metadata"][field]);
            let (e, a) = (e.as_str().unwrap_or_default(), a.as_str().unwrap_or_default());
            if e != a {
                return Err(invalid(format!("must have the same {label}: {e} != {a}")));
            }
        }
        restore_metadata(original, &mut out).map_err(|why| {
            let at = if single {
                String::new()
            } else {
                format!(" in object at index {index}")
            };
            failure(format!(
                "conversion webhook for {what} returned invalid metadata{at}: {why}"
            ))
        })?;
        objs[i] = out;
    }
    Ok(objs)
}

fn call_why(e: crate::webhook::call::CallError) -> String {
    e.to_string()
        .strip_prefix("failed to call webhook: ")
        .map(String::from)
        .unwrap_or_else(|| e.to_string())
}

/// The converted objects of a ConversionReview answer (`getConvertedObjectsFromResponse`).
fn converted_objects(answer: &Value, uid: &str, review_version: &str) -> Result<Vec<Value>, String> {
    let expected = format!("apiextensions.k8s.io/{review_version}");
    let response = &answer["response"];
    if review_version == "v1" {
        if answer["apiVersion"].as_str() != Some(&expected) || answer["kind"] != "ConversionReview" {
            return Err(format!(
                "expected webhook response of {expected}, Kind=ConversionReview, got {}",
                gvk(answer)
            ));
        }
        if !response.is_object() {
            return Err("no response provided".into());
        }
        let got = response["uid"].as_str().unwrap_or_default();
        if got != uid {
            return Err(format!("expected response.uid={uid:?}, got {got:?}"));
        }
    } else if !response.is_object() {
        return Err("no response provided".into());
    }
    let result = &response["result"];
    if result["status"].as_str() != Some("Success") {
        return Err(match result["message"].as_str().filter(|m| !m.is_empty()) {
            Some(m) => m.to_string(),
            None => format!(
                "response.result.status was '{}', not 'Success'",
                result["status"].as_str().unwrap_or_default()
            ),
        });
    }
    Ok(response["convertedObjects"]
        .as_array()
        .cloned()
        .unwrap_or_default())
}

/// The original metadata with the converted labels and annotations (`restoreObjectMeta`).
fn restore_metadata(original: &Value, converted: &mut Value) -> Result<(), String> {
    let answered = match converted.get("metadata") {
        None => return Err("missing metadata in converted object".into()),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err("invalid metadata of type in converted object".into()),
    };
    let mut restored: Map<String, Value> = original["metadata"].as_object().cloned().unwrap_or_default();
    for field in ["labels", "annotations"] {
        match answered.get(field) {
            None | Some(Value::Null) => {
                restored.remove(field);
            }
            Some(Value::Object(m)) => {
                if let Some((k, _)) = m.iter().find(|(_, v)| !v.is_string()) {
                    return Err(format!("metadata.{field}[{k}] must be a string"));
                }
                restored.insert(field.into(), Value::Object(m.clone()));
            }
            Some(_) => return Err(format!("invalid metadata.{field} in converted object")),
        }
    }
    converted["metadata"] = Value::Object(restored);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_checked_as_kube_does() {
        let ok = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": "u", "result": {"status": "Success"}, "convertedObjects": [{"a": 1}]}});
        assert_eq!(converted_objects(&ok, "u", "v1").unwrap(), vec![json!({"a": 1})]);
        assert_eq!(
            converted_objects(&ok, "x", "v1").unwrap_err(),
            r#"expected response.uid="x", got "u""#
        );
        let refused = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": "u", "result": {"status": "Failure", "message": "no way"}}});
        assert_eq!(converted_objects(&refused, "u", "v1").unwrap_err(), "no way");
        let wrong = json!({"apiVersion": "v1", "kind": "Status"});
        assert_eq!(
            converted_objects(&wrong, "u", "v1").unwrap_err(),
            "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got v1, Kind=Status"
        );
    }

    #[test]
    fn metadata_is_restored_but_labels_and_annotations() {
        let original = json!({"metadata": {"name": "a", "uid": "1", "labels": {"x": "1"}, "generation": 3}});
        let mut converted =
            json!({"metadata": {"name": "a", "uid": "1", "labels": {"y": "2"}, "generation": 9}});
        restore_metadata(&original, &mut converted).unwrap();
        assert_eq!(
            converted,
            json!({"metadata": {"name": "a", "uid": "1", "labels": {"y": "2"}, "generation": 3}})
        );
    }

    #[tokio::test]
    async fn strategy_none_rewrites_the_api_version_only() {
        let api = Api::new(10, vec![]);
        let info = CrdInfo {
            name: "foos.x.io".into(),
            storage_version: "v2".into(),
            served_versions: vec!["v1".into(), "v2".into()],
            conversion: Conversion::None,
            schema: None,
        };
        let objs = vec![json!({"apiVersion": "x.io/v1", "kind": "Foo", "spec": {"a": 1}})];
        let out = convert(&api, &info, objs, "x.io/v2").await.unwrap();
        assert_eq!(
            out,
            vec![json!({"apiVersion": "x.io/v2", "kind": "Foo", "spec": {"a": 1}})]
        );
    }

    #[tokio::test]
    async fn an_unreachable_webhook_is_a_500_naming_the_kind() {
        let api = Api::new(10, vec![]);
        let info = CrdInfo {
            name: "foos.x.io".into(),
            storage_version: "v2".into(),
            served_versions: vec!["v1".into(), "v2".into()],
            conversion: Conversion::Webhook(json!({"conversionReviewVersions": ["v1"],
                "clientConfig": {"service": {"name": "conv", "namespace": "sys", "path": "/convert", "port": 443}}})),
            schema: None,
        };
        let objs = vec![json!({"apiVersion": "x.io/v1", "kind": "Foo", "metadata": {"name": "a"}})];
        let e = convert(&api, &info, objs, "x.io/v2").await.unwrap_err();
        assert_eq!(e.code, 500);
        assert_eq!(
            e.message,
            "conversion webhook for x.io/v1, Kind=Foo failed: Post \"https://conv.sys.svc:443/convert?timeout=30s\": \
             dial tcp: lookup conv.sys.svc: no such host"
        );
    }
}
