//! Node selector terms (`v1.NodeSelectorTerm`) as Kubernetes matches them against a node
//! (`component-helpers/scheduling/corev1/nodeaffinity`, used by OpenKruise's WorkloadSpread):
//!
//! * the terms are ORed; a term without `matchExpressions` and `matchFields` matches nothing;
//! * `matchExpressions` are label requirements ANDed: `In`, `NotIn`, `Exists`, `DoesNotExist`,
//!   `Gt`, `Lt` (one integer value, compared with the label read as an integer);
//! * `matchFields` know only `metadata.name`, with `In`/`NotIn` and exactly one value; they are
//!   ignored for a node without a name;
//! * a term with an invalid requirement does not match and reports why; the terms fail with those
//!   reasons only when no other term matches.

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm};

use super::{LabelSource, is_label_value, is_qualified_name};

/// Why some terms could not be evaluated (each reason with its field path).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.join(", "))]
pub struct InvalidTerms(pub Vec<String>);

/// Whether `terms` select the node with `labels` and `name` (Kubernetes' `MatchNodeSelectorTerms`).
pub fn matches(
    terms: &[NodeSelectorTerm],
    labels: &impl LabelSource,
    name: &str,
) -> Result<bool, InvalidTerms> {
    let mut errors = Vec::new();
    for (i, term) in terms.iter().enumerate() {
        match term_matches(term, labels, name) {
            Ok(true) => return Ok(true),
            Ok(false) => {}
            Err(InvalidTerms(e)) => errors.extend(e.into_iter().map(|e| format!("[{i}].{e}"))),
        }
    }
    if errors.is_empty() {
        Ok(false)
    } else {
        Err(InvalidTerms(errors))
    }
}

/// Whether one term selects the node (an empty term selects nothing).
pub fn term_matches(
    term: &NodeSelectorTerm,
    labels: &impl LabelSource,
    name: &str,
) -> Result<bool, InvalidTerms> {
    let expressions = term.match_expressions.as_deref().unwrap_or_default();
    let fields = term.match_fields.as_deref().unwrap_or_default();
    if expressions.is_empty() && fields.is_empty() {
        return Ok(false);
    }
    let mut errors = Vec::new();
    let mut matched = true;
    for (i, r) in expressions.iter().enumerate() {
        match label_requirement(r, labels) {
            Ok(ok) => matched &= ok,
            Err(e) => errors.push(format!("matchExpressions[{i}].{e}")),
        }
    }
    for (i, r) in fields.iter().enumerate() {
        match field_requirement(r, name) {
            Ok(ok) => matched &= ok,
            Err(e) => errors.push(format!("matchFields[{i}].{e}")),
        }
    }
    if errors.is_empty() {
        Ok(matched)
    } else {
        Err(InvalidTerms(errors))
    }
}

fn values(r: &NodeSelectorRequirement) -> &[String] {
    r.values.as_deref().unwrap_or_default()
}

/// `strconv.ParseInt(s, 10, 64)`.
fn integer(s: &str) -> Option<i64> {
    s.parse().ok()
}

fn label_requirement(r: &NodeSelectorRequirement, labels: &impl LabelSource) -> Result<bool, String> {
    let values = values(r);
    if !is_qualified_name(&r.key) {
        return Err(format!("key: Invalid value: {:?}: not a valid label key", r.key));
    }
    let got = labels.label(&r.key);
    match r.operator.as_str() {
        "In" | "NotIn" => {
            if values.is_empty() {
                return Err(
                    "values: Required value: for 'in', 'notin' operators, values set can't be empty".into(),
                );
            }
            if let Some(bad) = values.iter().find(|v| !is_label_value(v)) {
                return Err(format!("values: Invalid value: {bad:?}: not a valid label value"));
            }
            let listed = got.is_some_and(|g| values.iter().any(|v| v == g));
            Ok(if r.operator == "In" { listed } else { !listed })
        }
        "Exists" | "DoesNotExist" => {
            if !values.is_empty() {
                return Err(
                    "values: Forbidden: values set must be empty for exists and does not exist".into(),
                );
            }
            Ok(got.is_some() == (r.operator == "Exists"))
        }
        "Gt" | "Lt" => {
            let [bound] = values else {
                return Err(
                    "values: Required value: for 'Gt', 'Lt' operators, exactly one value is required".into(),
                );
            };
            let Some(bound) = integer(bound) else {
                return Err(format!(
                    "values[0]: Invalid value: {bound:?}: for 'Gt', 'Lt' operators, the value must be an integer"
                ));
            };
            Ok(got
                .and_then(integer)
                .is_some_and(|v| if r.operator == "Gt" { v > bound } else { v < bound }))
        }
        other => Err(format!(
            "operator: Unsupported value: {other:?}: supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\""
        )),
    }
}

fn field_requirement(r: &NodeSelectorRequirement, name: &str) -> Result<bool, String> {
    if r.key != "metadata.name" {
        return Err(format!(
            "key: Invalid value: {:?}: not a valid field selector key",
            r.key
        ));
    }
    let [value] = values(r) else {
        return Err(format!(
            "values: Invalid value: {:?}: must have one element",
            values(r)
        ));
    };
    let equal = value == name;
    match r.operator.as_str() {
        // Kubernetes compares fields only for a node that has a name.
        _ if name.is_empty() && matches!(r.operator.as_str(), "In" | "NotIn") => Ok(true),
        "In" => Ok(equal),
        "NotIn" => Ok(!equal),
        other => Err(format!(
            "operator: Unsupported value: {other:?}: supported values: \"In\", \"NotIn\""
        )),
    }
}

#[cfg(test)]
#[path = "node_tests.rs"]
mod tests;
