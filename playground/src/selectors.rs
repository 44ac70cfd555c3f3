//! Label selectors (`=`, `==`, `!=`, `in`, `notin`, `key`, `!key`) and field selectors
//! (`metadata.name`, `metadata.namespace`, `spec.nodeName`, `status.phase`, … with `=`, `==`, `!=`).

use serde_json::Value;

use crate::error::ApiError;
use crate::meta;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed label selector; empty matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(Vec<Requirement>);

/// Splits on commas outside parentheses.
fn split_terms(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (vec![], String::new(), 0);
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.into_iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

fn set_values(rest: &str) -> Option<Vec<String>> {
    let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(inner.split(',').map(|v| v.trim().to_string()).collect())
}

impl LabelSelector {
    /// Parses `labelSelector`.
    pub fn parse(s: &str) -> Result<Self, ApiError> {
        let bad = |t: &str| {
            ApiError::bad_request(format!(
                "unable to parse requirement: found '{t}', expected: identifier"
            ))
        };
        let mut reqs = vec![];
        for term in split_terms(s) {
            let req = if let Some(key) = term.strip_prefix('!') {
                Requirement::NotExists(key.trim().to_string())
            } else if let Some((k, v)) = term.split_once("!=") {
                Requirement::NotEq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = term.split_once("==") {
                Requirement::Eq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = term.split_once('=') {
                Requirement::Eq(k.trim().into(), v.trim().into())
            } else if let Some((k, rest)) = term.split_once(" notin ") {
                Requirement::NotIn(k.trim().into(), set_values(rest).ok_or_else(|| bad(&term))?)
            } else if let Some((k, rest)) = term.split_once(" in ") {
                Requirement::In(k.trim().into(), set_values(rest).ok_or_else(|| bad(&term))?)
            } else if term.contains(' ') || term.contains('(') {
                return Err(bad(&term));
            } else {
                Requirement::Exists(term.clone())
            };
            reqs.push(req);
        }
        Ok(LabelSelector(reqs))
    }

    /// A `metav1.LabelSelector` object (`matchLabels`, `matchExpressions` with `In`, `NotIn`,
    /// `Exists`, `DoesNotExist`); `None` or `{}` matches everything. An unknown operator is an error.
    pub fn from_object(selector: Option<&Value>) -> Result<Self, String> {
        let mut reqs = vec![];
        let Some(selector) = selector else {
            return Ok(LabelSelector(reqs));
        };
        if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
            for (k, v) in labels {
                reqs.push(Requirement::Eq(
                    k.clone(),
                    v.as_str().unwrap_or_default().to_string(),
                ));
            }
        }
        for expr in selector
            .get("matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = expr["key"].as_str().unwrap_or_default().to_string();
            let values: Vec<String> = expr["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
            reqs.push(match expr["operator"].as_str().unwrap_or_default() {
                "In" => Requirement::In(key, values),
                "NotIn" => Requirement::NotIn(key, values),
                "Exists" => Requirement::Exists(key),
                "DoesNotExist" => Requirement::NotExists(key),
                other => return Err(format!("{other:?} is not a valid label selector operator")),
            });
        }
        Ok(LabelSelector(reqs))
    }

    /// Whether the labels match.
    pub fn matches(&self, labels: &[(String, String)]) -> bool {
        let get = |k: &str| labels.iter().find(|(lk, _)| lk == k).map(|(_, v)| v.as_str());
        self.0.iter().all(|r| match r {
            Requirement::Eq(k, v) => get(k) == Some(v),
            Requirement::NotEq(k, v) => get(k) != Some(v),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| vs.iter().all(|v| v != x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::NotExists(k) => get(k).is_none(),
        })
    }
}

/// A parsed field selector; empty matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    /// Parses `fieldSelector`; only the fields kube-apiserver indexes for the kinds are accepted.
    pub fn parse(s: &str, kind: &str) -> Result<Self, ApiError> {
        let mut out = vec![];
        for term in split_terms(s) {
            let (field, eq, value) = if let Some((k, v)) = term.split_once("!=") {
                (k, false, v)
            } else if let Some((k, v)) = term.split_once("==") {
                (k, true, v)
            } else if let Some((k, v)) = term.split_once('=') {
                (k, true, v)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{term}'; can't understand '{term}'"
                )));
            };
            let field = field.trim();
            let supported = matches!(field, "metadata.name" | "metadata.namespace")
                || (kind == "Pod"
                    && matches!(
                        field,
                        "spec.nodeName"
                            | "status.phase"
                            | "spec.schedulerName"
                            | "spec.restartPolicy"
                            | "status.podIP"
                    ))
                || (kind == "Event" && field.starts_with("involvedObject."))
                || (kind == "Secret" && field == "type");
            if !supported {
                let msg = format!("field label not supported: {field}");
                return Err(ApiError::bad_request(format!(
                    "Unable to find \"/v1, Resource={kind}\" that match label selector \"\", field selector \"{s}\": {msg}"
                )));
            }
            out.push((field.to_string(), eq, value.trim().to_string()));
        }
        Ok(FieldSelector(out))
    }

    /// Whether the object matches.
    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(field, eq, value)| {
            let actual = match field.as_str() {
                "metadata.name" => meta::name(obj).to_string(),
                "metadata.namespace" => meta::namespace(obj).to_string(),
                f => meta::get_path(obj, f)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            };
            (actual == *value) == *eq
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn label_operators() {
        let labels = l(&[("app", "web"), ("tier", "front")]);
        for (sel, want) in [
            ("", true),
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app in (web, db)", true),
            ("app notin (web,db)", false),
            ("tier", true),
            ("!tier", false),
            ("missing notin (x)", true),
            ("app=web,tier=back", false),
        ] {
            assert_eq!(LabelSelector::parse(sel).unwrap().matches(&labels), want, "{sel}");
        }
    }

    #[test]
    fn field_selectors() {
        let pod = serde_json::json!({"metadata": {"name": "a", "namespace": "ns"}, "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}});
        let s = FieldSelector::parse("spec.nodeName=n1,status.phase!=Pending", "Pod").unwrap();
        assert!(s.matches(&pod));
        assert!(
            !FieldSelector::parse("metadata.name=b", "Pod")
                .unwrap()
                .matches(&pod)
        );
        assert!(FieldSelector::parse("spec.nodeName=n1", "ConfigMap").is_err());
    }
}
