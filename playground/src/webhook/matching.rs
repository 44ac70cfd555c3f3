//! Which webhooks a request selects, as kube-apiserver's `webhook/predicates`: rules (groups,
//! versions, resources with subresources, operations, scope), namespaceSelector and objectSelector.

use serde_json::Value;

use crate::api::admission::{Attributes, Operation};
use crate::meta;
use crate::selectors::LabelSelector;
use crate::store::ResKey;

/// The operation as AdmissionReview and webhook rules spell it.
pub fn operation_name(op: Operation) -> &'static str {
    match op {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
    }
}

fn strings(v: &Value) -> impl Iterator<Item = &str> {
    v.as_array().into_iter().flatten().filter_map(Value::as_str)
}

fn contains_or_star(list: &Value, wanted: &str) -> bool {
    strings(list).any(|s| s == "*" || s == wanted)
}

/// Whether `resources` of a rule names the resource and subresource (`pods`, `pods/eviction`,
/// `pods/*`, `*/status`, `*`, `*/*`).
fn resource_matches(pattern: &str, resource: &str, subresource: &str) -> bool {
    match pattern.split_once('/') {
        None => (pattern == "*" || pattern == resource) && subresource.is_empty(),
        Some((res, sub)) => {
            (res == "*" || res == resource) && (sub == "*" || sub == subresource) && !subresource.is_empty()
                || pattern == "*/*"
        }
    }
}

/// Whether one `rules[]` entry (RuleWithOperations) matches the request.
pub fn rule_matches(rule: &Value, a: &Attributes<'_>) -> bool {
    let sub = a.subresource.unwrap_or_default();
    let scope_ok = match rule["scope"].as_str().unwrap_or("*") {
        "Cluster" => !a.resource.namespaced,
        "Namespaced" => a.resource.namespaced,
        _ => true,
    };
    scope_ok
        && contains_or_star(&rule["operations"], operation_name(a.operation))
        && contains_or_star(&rule["apiGroups"], &a.resource.group)
        && contains_or_star(&rule["apiVersions"], &a.resource.version)
        && strings(&rule["resources"]).any(|r| resource_matches(r, &a.resource.plural, sub))
}

fn selector_matches(selector: Option<&Value>, labels: &[(String, String)]) -> Result<bool, String> {
    Ok(LabelSelector::from_object(selector)?.matches(labels))
}

/// The namespaceSelector: namespaces are matched on their own labels, other cluster-scoped
/// objects always match, namespaced ones on their namespace's labels (with
/// `kubernetes.io/metadata.name`).
pub fn namespace_matches(webhook: &Value, a: &Attributes<'_>) -> Result<bool, String> {
    let selector = webhook.get("namespaceSelector");
    if a.resource.group.is_empty() && a.resource.plural == "namespaces" {
        let obj = a.object.or(a.old_object).cloned().unwrap_or_default();
        return selector_matches(selector, &meta::labels(&obj));
    }
    if a.namespace.is_empty() {
        return Ok(true);
    }
    let ns = a
        .api
        .store
        .get(&ResKey::new("", "namespaces"), "", a.namespace)
        .unwrap_or_default();
    selector_matches(selector, &meta::labels(&ns))
}

/// The objectSelector: matches if the new or the old object's labels match.
pub fn object_matches(webhook: &Value, a: &Attributes<'_>) -> Result<bool, String> {
    let selector = webhook.get("objectSelector");
    let objects: Vec<&Value> = [a.object, a.old_object].into_iter().flatten().collect();
    if objects.is_empty() {
        return selector_matches(selector, &[]);
    }
    for obj in objects {
        if selector_matches(selector, &meta::labels(obj))? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether the webhook's rules and selectors select the request.
pub fn selects(webhook: &Value, a: &Attributes<'_>) -> Result<bool, String> {
    let by_rule = webhook["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|r| rule_matches(r, a));
    Ok(by_rule && namespace_matches(webhook, a)? && object_matches(webhook, a)?)
}

#[cfg(test)]
mod tests {
    use super::resource_matches;

    #[test]
    fn resources_and_subresources() {
        assert!(resource_matches("pods", "pods", ""));
        assert!(!resource_matches("pods", "pods", "eviction"));
        assert!(resource_matches("pods/eviction", "pods", "eviction"));
        assert!(!resource_matches("pods/eviction", "pods", ""));
        assert!(resource_matches("pods/*", "pods", "status"));
        assert!(!resource_matches("pods/*", "pods", ""));
        assert!(resource_matches("*", "deployments", ""));
        assert!(!resource_matches("*", "deployments", "scale"));
        assert!(resource_matches("*/scale", "deployments", "scale"));
        assert!(resource_matches("*/*", "pods", ""));
        assert!(resource_matches("*/*", "pods", "status"));
    }
}
