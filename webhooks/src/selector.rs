//! Label selectors evaluated the way OpenKruise's "validated selector"
//! does (docs/selectors.md#validated-selector).
//!
//! * a null selector selects nothing; `{}` selects everything — but several callers (SidecarSet, PUB)
//!   treat an empty selector as "no match", so [`evaluate`] reports [`Selection::Empty`] separately;
//! * an unknown operator is an error (`"Foo" is not a valid pod selector operator`);
//! * keys and values are not validated: `In` with no values matches nothing, `NotIn` with no values
//!   matches everything, `Exists` ignores values.
//!
//! Labels are read through [`LabelSource`], so a raw pod (`metadata.labels` as a JSON object) is matched
//! without decoding it.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::{Map, Value};

/// A set of labels to match against.
pub trait LabelSource {
    /// The value of label `key`, if present.
    fn label(&self, key: &str) -> Option<&str>;
}

impl LabelSource for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

/// A raw `metadata.labels` object. A non-string value counts as absent.
impl LabelSource for Map<String, Value> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }
}

impl<T: LabelSource> LabelSource for Option<&T> {
    fn label(&self, key: &str) -> Option<&str> {
        self.and_then(|labels| labels.label(key))
    }
}

/// The labels of a raw object (`metadata.labels`), or none.
pub fn raw_labels(object: &Value) -> Option<&Map<String, Value>> {
    object.get("metadata")?.get("labels")?.as_object()
}

/// The outcome of evaluating a (non-null) selector against a label set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    /// The selector has no requirement at all (`{}`): "everything", which several callers treat as
    /// "no match".
    Empty,
    /// The labels satisfy every requirement.
    Matches,
    /// Some requirement fails.
    NoMatch,
}

/// Why a selector cannot be evaluated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a valid pod selector operator")]
pub struct InvalidOperator(pub String);

/// Evaluates `selector` against `labels`.
pub fn evaluate(selector: &LabelSelector, labels: &impl LabelSource) -> Result<Selection, InvalidOperator> {
    let match_labels = selector.match_labels.as_ref();
    let expressions = selector.match_expressions.as_deref().unwrap_or_default();
    if match_labels.is_none_or(BTreeMap::is_empty) && expressions.is_empty() {
        return Ok(Selection::Empty);
    }
    let mut matched = match_labels
        .into_iter()
        .flatten()
        .all(|(key, value)| labels.label(key) == Some(value.as_str()));
    // Every operator is checked even after a failed requirement: an invalid selector is an error
    // whatever the labels are.
    for expr in expressions {
        let values = expr.values.as_deref().unwrap_or_default();
        let present = labels.label(&expr.key);
        let ok = match expr.operator.as_str() {
            "In" => present.is_some_and(|v| values.iter().any(|x| x == v)),
            "NotIn" => present.is_none_or(|v| !values.iter().any(|x| x == v)),
            "Exists" => present.is_some(),
            "DoesNotExist" => present.is_none(),
            other => return Err(InvalidOperator(other.to_string())),
        };
        matched &= ok;
    }
    Ok(if matched {
        Selection::Matches
    } else {
        Selection::NoMatch
    })
}

/// OpenKruise's plain "validated selector" match: null selects nothing, `{}` selects everything.
pub fn selects(selector: Option<&LabelSelector>, labels: &impl LabelSource) -> Result<bool, InvalidOperator> {
    match selector {
        None => Ok(false),
        Some(selector) => Ok(evaluate(selector, labels)? != Selection::NoMatch),
    }
}

/// The match used where an empty selector must select nothing (SidecarSet, PUB): null → false, `{}` →
/// false.
pub fn selects_non_empty(
    selector: Option<&LabelSelector>,
    labels: &impl LabelSource,
) -> Result<bool, InvalidOperator> {
    match selector {
        None => Ok(false),
        Some(selector) => Ok(evaluate(selector, labels)? == Selection::Matches),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sel(v: Value) -> LabelSelector {
        serde_json::from_value(v).unwrap()
    }

    fn labels(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn null_empty_and_requirements() {
        let l = labels(json!({"app": "web", "tier": "fe"}));
        assert!(!selects(None, &l).unwrap());
        assert!(selects(Some(&sel(json!({}))), &l).unwrap());
        assert!(!selects_non_empty(Some(&sel(json!({}))), &l).unwrap());
        assert!(selects_non_empty(Some(&sel(json!({"matchLabels": {"app": "web"}}))), &l).unwrap());
        assert!(!selects(Some(&sel(json!({"matchLabels": {"app": "db"}}))), &l).unwrap());
    }

    #[test]
    fn operators() {
        let l = labels(json!({"app": "web"}));
        let case = |op: &str, key: &str, values: Value| {
            selects(
                Some(&sel(
                    json!({"matchExpressions": [{"key": key, "operator": op, "values": values}]}),
                )),
                &l,
            )
        };
        assert!(case("In", "app", json!(["web", "x"])).unwrap());
        assert!(!case("In", "app", json!([])).unwrap());
        assert!(!case("NotIn", "app", json!(["web"])).unwrap());
        assert!(case("NotIn", "other", json!(["web"])).unwrap());
        assert!(case("NotIn", "app", json!([])).unwrap());
        assert!(case("Exists", "app", json!(["ignored"])).unwrap());
        assert!(!case("DoesNotExist", "app", json!(null)).unwrap());
        let err = case("Foo", "app", json!([])).unwrap_err();
        assert_eq!(err.to_string(), "\"Foo\" is not a valid pod selector operator");
    }

    #[test]
    fn an_invalid_operator_is_an_error_even_after_a_failed_label() {
        let l = labels(json!({}));
        let s =
            sel(json!({"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "k", "operator": "Bad"}]}));
        assert!(evaluate(&s, &l).is_err());
    }

    #[test]
    fn non_string_label_values_are_absent() {
        let l = labels(json!({"n": 1}));
        assert!(
            !selects(
                Some(&sel(
                    json!({"matchExpressions": [{"key": "n", "operator": "Exists"}]})
                )),
                &l
            )
            .unwrap()
        );
        let none: Option<&Map<String, Value>> = None;
        assert!(
            selects(
                Some(&sel(
                    json!({"matchExpressions": [{"key": "n", "operator": "DoesNotExist"}]})
                )),
                &none
            )
            .unwrap()
        );
    }
}
