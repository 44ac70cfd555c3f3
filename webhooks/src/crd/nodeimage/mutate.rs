//! NodeImage defaults (`/mutate-apps-kruise-io-nodeimage`), after OpenKruise's
//! `pkg/webhook/nodeimage/mutating`, the same for v1alpha1 and v1beta1: every tag of `spec.images`
//! gets `createdAt` (now, when absent), a `pullPolicy` (`{}` when absent) with `timeoutSeconds: 600`
//! and `backoffLimit: 3` when absent, and the tags of every image — in `spec.images` and in
//! `status.imageStatuses` — are sorted by tag string. `ttlSecondsAfterFinished` is not defaulted, so
//! the validating webhook still requires it. The patch is empty when nothing changes.

use k8s_openapi::jiff::Timestamp;
use kruise_api::apps_v1beta1::{NodeImageSpec, NodeImageStatus};
use serde_json::{Value, json};

use super::super::defaults::Mutator;
use super::super::{Which, check_decodes, check_version, judged, raw_object};
use super::{GROUP, KIND};
use crate::{Decision, patch, review::AdmissionRequest};

/// `/mutate-apps-kruise-io-nodeimage`: CREATE and UPDATE.
pub fn mutate(request: &AdmissionRequest) -> Decision {
    mutate_at(request, Timestamp::now())
}

/// [`mutate`] with `now` as the defaulted `createdAt`.
pub fn mutate_at(request: &AdmissionRequest, now: Timestamp) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    if let Err(d) = check_version(request) {
        return *d;
    }
    let object = match raw_object(request, Which::New, GROUP, KIND) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    // The parts this webhook reads must decode (a missing spec is an empty one, as in validation).
    let part = |name: &str| object.get(name).filter(|v| !v.is_null());
    if let Some(spec) = part("spec")
        && let Err(d) = check_decodes::<NodeImageSpec>(KIND, spec)
    {
        return *d;
    }
    if let Some(status) = part("status")
        && let Err(d) = check_decodes::<NodeImageStatus>(KIND, status)
    {
        return *d;
    }
    let mut m = Mutator::new(object);
    // metav1.Time: RFC 3339 in UTC, whole seconds.
    let created = Timestamp::from_second(now.as_second()).unwrap_or(now).to_string();
    for name in keys(&m.doc, &["spec", "images"]) {
        let tags = ["spec", "images", name.as_str(), "tags"];
        for i in 0..count(&m.doc, &tags) {
            let at = |field: &[&str]| -> Vec<String> {
                let index = i.to_string();
                tags.iter()
                    .copied()
                    .chain([index.as_str()])
                    .chain(field.iter().copied())
                    .map(str::to_owned)
                    .collect()
            };
            m.set_default(&at(&["createdAt"]), json!(created));
            m.set_default(&at(&["pullPolicy"]), json!({}));
            m.set_default(&at(&["pullPolicy", "timeoutSeconds"]), json!(600));
            m.set_default(&at(&["pullPolicy", "backoffLimit"]), json!(3));
        }
        sort_tags(&mut m, &tags);
    }
    for name in keys(&m.doc, &["status", "imageStatuses"]) {
        sort_tags(&mut m, &["status", "imageStatuses", name.as_str(), "tags"]);
    }
    Decision::patched(m.ops)
}

/// The keys of the object at `path`, in order.
fn keys(doc: &Value, path: &[&str]) -> Vec<String> {
    patch::get(doc, path)
        .and_then(Value::as_object)
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

/// The length of the array at `path` (0 when it is not one).
fn count(doc: &Value, path: &[&str]) -> usize {
    patch::get(doc, path)
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

/// Replaces the array of tags at `path` with itself sorted by `tag` (stable), when not sorted yet.
fn sort_tags(m: &mut Mutator, path: &[&str]) {
    let Some(tags) = patch::get(&m.doc, path).and_then(Value::as_array) else {
        return;
    };
    let tag = |v: &Value| {
        v.get("tag")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    if tags.windows(2).all(|w| tag(&w[0]) <= tag(&w[1])) {
        return;
    }
    let mut sorted = tags.clone();
    sorted.sort_by_key(tag);
    m.push(patch::replace(path.iter().copied(), Value::Array(sorted)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(version: &str, object: &Value) -> AdmissionRequest {
        let review = json!({"uid": "1", "operation": "CREATE", "name": "node-a",
            "kind": {"group": "apps.kruise.io", "version": version, "kind": "NodeImage"},
            "resource": {"group": "apps.kruise.io", "version": version, "resource": "nodeimages"},
            "userInfo": {"username": "u"}, "object": object});
        serde_json::from_value(review).unwrap()
    }

    fn node_image(version: &str, body: Value) -> Value {
        let mut o = json!({"apiVersion": format!("apps.kruise.io/{version}"), "kind": "NodeImage",
            "metadata": {"name": "node-a"}});
        o.as_object_mut()
            .unwrap()
            .extend(body.as_object().unwrap().clone());
        o
    }

    /// The object after the answer's patch, for a CREATE at 2026-11-30T06:00:00.5Z.
    fn mutated(version: &str, object: &Value) -> Value {
        let now: Timestamp = "2026-11-30T06:00:00.5Z".parse().unwrap();
        let d = mutate_at(&request(version, object), now);
        assert!(d.denial.is_none(), "{:?}", d.denial);
        patch::apply(object, &d.patch).unwrap()
    }

    #[test]
    fn tags_get_created_at_and_pull_policy_defaults_and_are_sorted() {
        for version in ["v1beta1", "v1alpha1"] {
            let object = node_image(
                version,
                json!({"spec": {"images": {"registry.example/team/app": {"tags": [
                    {"tag": "v2", "pullPolicy": {"ttlSecondsAfterFinished": 300, "timeoutSeconds": 30}},
                    {"tag": "v1", "createdAt": "2026-01-01T00:00:00Z", "version": 1}]}}}}),
            );
            let after = mutated(version, &object);
            assert_eq!(
                after["spec"]["images"]["registry.example/team/app"]["tags"],
                json!([
                    {"tag": "v1", "createdAt": "2026-01-01T00:00:00Z", "version": 1,
                        "pullPolicy": {"timeoutSeconds": 600, "backoffLimit": 3}},
                    {"tag": "v2", "createdAt": "2026-11-30T06:00:00Z",
                        "pullPolicy": {"ttlSecondsAfterFinished": 300, "timeoutSeconds": 30, "backoffLimit": 3}}
                ]),
                "{version}"
            );
        }
    }

    #[test]
    fn status_tags_are_sorted_too() {
        let object = node_image(
            "v1beta1",
            json!({"status": {"desired": 2, "imageStatuses": {"app": {"tags": [
                {"tag": "b", "phase": "Succeeded", "version": 0},
                {"tag": "a", "phase": "Pulling", "version": 0}]}}}}),
        );
        let after = mutated("v1beta1", &object);
        let tags: Vec<&str> = after["status"]["imageStatuses"]["app"]["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["tag"].as_str().unwrap())
            .collect();
        assert_eq!(tags, ["a", "b"]);
        assert_eq!(
            after["status"]["imageStatuses"]["app"]["tags"][0]["phase"],
            "Pulling"
        );
    }

    #[test]
    fn a_defaulted_sorted_node_image_is_left_alone() {
        let object = node_image(
            "v1beta1",
            json!({"spec": {"images": {"app": {"tags": [
                {"tag": "v1", "createdAt": "2026-01-01T00:00:00Z",
                    "pullPolicy": {"timeoutSeconds": 600, "backoffLimit": 3, "ttlSecondsAfterFinished": 300}},
                {"tag": "v2", "createdAt": "2026-01-01T00:00:00Z",
                    "pullPolicy": {"timeoutSeconds": 600, "backoffLimit": 3, "ttlSecondsAfterFinished": 300}}]}}}}),
        );
        let d = mutate_at(&request("v1beta1", &object), Timestamp::now());
        assert!(d.denial.is_none() && d.patch.is_empty(), "{:?}", d.patch);
        let empty = node_image("v1beta1", json!({"spec": {}}));
        assert!(
            mutate_at(&request("v1beta1", &empty), Timestamp::now())
                .patch
                .is_empty()
        );
    }

    #[test]
    fn an_undecodable_node_image_is_refused() {
        let object = node_image("v1beta1", json!({"spec": {"images": {"app": {"tags": "v1"}}}}));
        let d = mutate_at(&request("v1beta1", &object), Timestamp::now());
        assert_eq!(d.denial.map(|d| d.code), Some(400));
    }
}
