//! Label selectors as OpenKruise evaluates them ("validated selector", docs/selectors.md#validated-selector):
//! `null` matches
//! nothing, `{}` everything, an unknown operator is an error. We are stricter in one respect: `In` / `NotIn`
//! without values and invalid label keys are reported too (Kubernetes' own validation rejects them), so that an
//! invalid SidecarSet is named in a warning instead of silently never matching.
//!
//! A selector is parsed once (when the [`SidecarSetIndex`](super::SidecarSetIndex) is built) into
//! requirements that match without allocating.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// One parsed requirement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Requirement {
    /// `matchLabels` entries and `In`.
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

impl Requirement {
    pub(crate) fn key(&self) -> &str {
        match self {
            Requirement::In(k, _)
            | Requirement::NotIn(k, _)
            | Requirement::Exists(k)
            | Requirement::DoesNotExist(k) => k,
        }
    }

    fn matches<'a>(&self, get: &impl Fn(&str) -> Option<&'a str>) -> bool {
        match self {
            Requirement::In(k, values) => get(k).is_some_and(|v| values.iter().any(|x| x == v)),
            Requirement::NotIn(k, values) => get(k).is_none_or(|v| !values.iter().any(|x| x == v)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
        }
    }
}

/// A parsed selector: the requirements that could be parsed, and what was wrong with the others.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Selector {
    /// `None` for a `null` selector (matches nothing).
    pub(crate) requirements: Option<Vec<Requirement>>,
    /// Why some requirements were dropped; non-empty means the selector is invalid.
    pub(crate) errors: Vec<String>,
}

impl Selector {
    pub(crate) fn parse(selector: Option<&LabelSelector>) -> Selector {
        let Some(selector) = selector else {
            return Selector::default();
        };
        let mut requirements = Vec::new();
        let mut errors = Vec::new();
        for (k, v) in selector.match_labels.iter().flatten() {
            match check_key(k) {
                Ok(()) => requirements.push(Requirement::In(k.clone(), vec![v.clone()])),
                Err(e) => errors.push(e),
            }
        }
        for expr in selector.match_expressions.iter().flatten() {
            if let Err(e) = check_key(&expr.key) {
                errors.push(e);
                continue;
            }
            let values = expr.values.clone().unwrap_or_default();
            let requirement = match expr.operator.as_str() {
                "In" | "NotIn" if values.is_empty() => {
                    errors.push(format!(
                        "matchExpressions[key={}]: operator {} needs at least one value",
                        expr.key, expr.operator
                    ));
                    continue;
                }
                "In" => Requirement::In(expr.key.clone(), values),
                "NotIn" => Requirement::NotIn(expr.key.clone(), values),
                "Exists" => Requirement::Exists(expr.key.clone()),
                "DoesNotExist" => Requirement::DoesNotExist(expr.key.clone()),
                other => {
                    errors.push(format!("{other:?} is not a valid pod selector operator"));
                    continue;
                }
            };
            requirements.push(requirement);
        }
        Selector {
            requirements: Some(requirements),
            errors,
        }
    }

    /// True for `null` or `{}` (OpenKruise's SidecarSet selector then matches no pod).
    pub(crate) fn is_null_or_empty(&self) -> bool {
        self.requirements
            .as_ref()
            .is_none_or(|r| r.is_empty() && self.errors.is_empty())
    }

    /// Whether the valid requirements all match (a `null` selector matches nothing).
    pub(crate) fn matches<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.requirements
            .as_ref()
            .is_some_and(|r| r.iter().all(|req| req.matches(&get)))
    }

    pub(crate) fn error(&self) -> Option<String> {
        (!self.errors.is_empty()).then(|| self.errors.join("; "))
    }
}

/// A label key: an optional DNS-subdomain prefix and `/`, then a name of at most 63 characters made of
/// alphanumerics, `-`, `_` and `.`, starting and ending with an alphanumeric.
fn check_key(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let name_ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && name.as_bytes()[name.len() - 1].is_ascii_alphanumeric();
    let prefix_ok = prefix.is_none_or(|p| {
        !p.is_empty()
            && p.len() <= 253
            && p.split('.').all(|l| {
                !l.is_empty()
                    && l.len() <= 63
                    && l.bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                    && !l.starts_with('-')
                    && !l.ends_with('-')
            })
    });
    if name_ok && prefix_ok {
        Ok(())
    } else {
        Err(format!("{key:?} is not a valid label key"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> Selector {
        Selector::parse(Some(&serde_json::from_value(v).unwrap()))
    }

    #[test]
    fn semantics() {
        let labels = [("app", "web"), ("tier", "front")];
        let get = |k: &str| labels.iter().find(|(l, _)| *l == k).map(|(_, v)| *v);
        assert!(parse(json!({"matchLabels": {"app": "web"}})).matches(get));
        assert!(!parse(json!({"matchLabels": {"app": "db"}})).matches(get));
        assert!(
            parse(json!({"matchExpressions": [{"key": "x", "operator": "NotIn", "values": ["a"]}]}))
                .matches(get)
        );
        assert!(parse(json!({"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]})).matches(get));
        assert!(
            !parse(json!({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]})).matches(get)
        );
        assert!(Selector::parse(None).is_null_or_empty() && !Selector::parse(None).matches(get));
        assert!(parse(json!({})).is_null_or_empty());
        let bad = parse(
            json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "a", "operator": "Foo"}]}),
        );
        assert!(
            bad.error()
                .unwrap()
                .contains("\"Foo\" is not a valid pod selector operator")
        );
        assert!(bad.matches(get), "the valid part still matches");
        assert!(
            parse(json!({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}))
                .error()
                .is_some()
        );
        assert!(parse(json!({"matchLabels": {"bad key": "v"}})).error().is_some());
        assert!(
            parse(json!({"matchLabels": {"apps.kruise.io/x": "v"}}))
                .error()
                .is_none()
        );
    }
}
