//! Label selectors: matching a label map, and the string form `status.labelSelector` carries.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// A selector that cannot be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid label selector operator {0:?}")]
pub struct InvalidSelector(pub String);

/// Whether `labels` satisfy the selector (an empty selector matches everything).
pub fn matches(
    selector: &LabelSelector,
    labels: Option<&BTreeMap<String, String>>,
) -> Result<bool, InvalidSelector> {
    Selector::new(selector).matches(labels)
}

/// A label selector read once, to match many label maps.
#[derive(Debug, Clone)]
pub struct Selector<'a> {
    labels: Vec<(&'a str, &'a str)>,
    requirements: Vec<Requirement<'a>>,
}

#[derive(Debug, Clone)]
struct Requirement<'a> {
    key: &'a str,
    /// The operator, or the unknown one (an error when a label map reaches it, as before reading once).
    op: Result<Op, &'a str>,
    values: &'a [String],
}

#[derive(Debug, Clone, Copy)]
enum Op {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

impl<'a> Selector<'a> {
    /// Reads `selector`.
    pub fn new(selector: &'a LabelSelector) -> Self {
        let labels = selector
            .match_labels
            .iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let requirements = selector
            .match_expressions
            .iter()
            .flatten()
            .map(|e| Requirement {
                key: &e.key,
                op: match e.operator.as_str() {
                    "In" => Ok(Op::In),
                    "NotIn" => Ok(Op::NotIn),
                    "Exists" => Ok(Op::Exists),
                    "DoesNotExist" => Ok(Op::DoesNotExist),
                    other => Err(other),
                },
                values: e.values.as_deref().unwrap_or_default(),
            })
            .collect();
        Selector { labels, requirements }
    }

    /// Whether `labels` satisfy the selector (an empty selector matches everything).
    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> Result<bool, InvalidSelector> {
        let get = |k: &str| labels.and_then(|l| l.get(k)).map(String::as_str);
        if self.labels.iter().any(|(k, v)| get(k) != Some(*v)) {
            return Ok(false);
        }
        for r in &self.requirements {
            let value = get(r.key);
            let ok = match r.op {
                Ok(Op::In) => value.is_some_and(|v| r.values.iter().any(|x| x == v)),
                Ok(Op::NotIn) => value.is_none_or(|v| !r.values.iter().any(|x| x == v)),
                Ok(Op::Exists) => value.is_some(),
                Ok(Op::DoesNotExist) => value.is_none(),
                Err(other) => return Err(InvalidSelector(other.to_owned())),
            };
            if !ok {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The selector as `metav1.LabelSelectorAsSelector(...).String()` prints it: requirements sorted by
/// key, `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, joined by `,`.
pub fn to_string(selector: &LabelSelector) -> Result<String, InvalidSelector> {
    let mut parts: Vec<(String, String)> = Vec::new();
    for (k, v) in selector.match_labels.iter().flatten() {
        parts.push((k.clone(), format!("{k}={v}")));
    }
    for e in selector.match_expressions.iter().flatten() {
        let mut values = e.values.clone().unwrap_or_default();
        values.sort();
        let k = &e.key;
        let text = match e.operator.as_str() {
            "In" => format!("{k} in ({})", values.join(",")),
            "NotIn" => format!("{k} notin ({})", values.join(",")),
            "Exists" => k.clone(),
            "DoesNotExist" => format!("!{k}"),
            other => return Err(InvalidSelector(other.to_owned())),
        };
        parts.push((k.clone(), text));
    }
    parts.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(parts.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    fn selector() -> LabelSelector {
        LabelSelector {
            match_labels: Some([("app".to_string(), "demo".to_string())].into()),
            match_expressions: Some(vec![
                LabelSelectorRequirement {
                    key: "tier".into(),
                    operator: "In".into(),
                    values: Some(vec!["web".into(), "api".into()]),
                },
                LabelSelectorRequirement {
                    key: "canary".into(),
                    operator: "DoesNotExist".into(),
                    values: None,
                },
            ]),
        }
    }

    #[test]
    fn selector_string_is_sorted_like_kubernetes() {
        assert_eq!(
            to_string(&selector()).unwrap(),
            "app=demo,!canary,tier in (api,web)"
        );
    }

    #[test]
    fn matching() {
        let l = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let cases = [
            (
                "all requirements met",
                l(&[("app", "demo"), ("tier", "api")]),
                true,
            ),
            (
                "wrong label value",
                l(&[("app", "other"), ("tier", "api")]),
                false,
            ),
            ("In value missing", l(&[("app", "demo")]), false),
            (
                "DoesNotExist key present",
                l(&[("app", "demo"), ("tier", "web"), ("canary", "")]),
                false,
            ),
        ];
        for (name, labels, want) in cases {
            assert_eq!(matches(&selector(), Some(&labels)).unwrap(), want, "{name}");
        }
        assert!(
            matches(&LabelSelector::default(), None).unwrap(),
            "empty selector matches all"
        );
    }

    #[test]
    fn an_unknown_operator_fails_only_the_label_maps_that_reach_it() {
        let mut bad = selector();
        bad.match_expressions.as_mut().unwrap()[0].operator = "Near".into();
        let sel = Selector::new(&bad);
        assert!(!sel.matches(None).unwrap(), "stopped by matchLabels first");
        let labels: BTreeMap<String, String> = [("app".to_string(), "demo".to_string())].into();
        assert_eq!(sel.matches(Some(&labels)), Err(InvalidSelector("Near".into())));
    }
}
