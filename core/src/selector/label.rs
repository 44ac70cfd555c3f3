//! Label selectors parsed once into requirements that match without allocating
//! (docs/selectors.md).
//!
//! Three readings share the parse:
//! * apimachinery's `metav1.LabelSelectorAsSelector`: `null` selects nothing, `{}` everything, and
//!   any invalid part (unknown operator, bad key or value, `In`/`NotIn` without values,
//!   `Exists`/`DoesNotExist` with values) makes the selector an error ([`Selector::valid`]);
//! * OpenKruise's `ValidatedLabelSelectorAsSelector` (`pkg/util/selector.go`), used where the
//!   selector was validated on admission: only an unknown operator is an error, everything else is
//!   evaluated as written (`In` without values matches nothing) ([`Selector::evaluate`]);
//! * the SidecarSet index: the valid requirements match, the invalid ones are reported
//!   ([`Selector::matches`], [`Selector::error`]) so that a SidecarSet is named in a warning
//!   instead of silently never matching.

use std::borrow::Cow;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::Value;

use super::{LabelSource, is_label_value, is_qualified_name};

/// One parsed requirement (`matchLabels` entries are `In` with one value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Requirement<'a> {
    In(Cow<'a, str>, Cow<'a, [String]>),
    NotIn(Cow<'a, str>, Cow<'a, [String]>),
    Exists(Cow<'a, str>),
    DoesNotExist(Cow<'a, str>),
}

impl Requirement<'_> {
    /// The label key.
    pub fn key(&self) -> &str {
        match self {
            Requirement::In(k, _)
            | Requirement::NotIn(k, _)
            | Requirement::Exists(k)
            | Requirement::DoesNotExist(k) => k,
        }
    }

    fn matches<'l>(&self, get: &impl Fn(&str) -> Option<&'l str>) -> bool {
        match self {
            Requirement::In(k, values) => get(k).is_some_and(|v| values.iter().any(|x| x == v)),
            Requirement::NotIn(k, values) => get(k).is_none_or(|v| !values.iter().any(|x| x == v)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
        }
    }

    fn into_owned(self) -> Requirement<'static> {
        let own = |k: Cow<'_, str>| Cow::Owned(k.into_owned());
        match self {
            Requirement::In(k, v) => Requirement::In(own(k), Cow::Owned(v.into_owned())),
            Requirement::NotIn(k, v) => Requirement::NotIn(own(k), Cow::Owned(v.into_owned())),
            Requirement::Exists(k) => Requirement::Exists(own(k)),
            Requirement::DoesNotExist(k) => Requirement::DoesNotExist(own(k)),
        }
    }

    /// apimachinery's `Requirement.String()`: `k=v` for a single-valued `matchLabels` entry,
    /// `k in (a,b)`, `k notin (a,b)`, `k`, `!k`; values sorted.
    fn to_text(&self, from_match_labels: bool) -> String {
        let sorted = |values: &[String]| {
            let mut v = values.to_vec();
            v.sort();
            v.join(",")
        };
        match self {
            Requirement::In(k, v) if from_match_labels => format!("{k}={}", v[0]),
            Requirement::In(k, v) => format!("{k} in ({})", sorted(v)),
            Requirement::NotIn(k, v) => format!("{k} notin ({})", sorted(v)),
            Requirement::Exists(k) => k.to_string(),
            Requirement::DoesNotExist(k) => format!("!{k}"),
        }
    }
}

/// An operator OpenKruise's validated selector refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a valid pod selector operator")]
pub struct InvalidOperator(pub String);

/// The outcome of evaluating a (non-null) selector against a label set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    /// The selector has no requirement at all (`{}`): "everything", which several callers treat
    /// as "no match".
    Empty,
    /// The labels satisfy every requirement.
    Matches,
    /// Some requirement fails.
    NoMatch,
}

/// A parsed label selector.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector<'a> {
    /// `None` for a `null` selector. Valid requirements, `matchLabels` first.
    requirements: Option<Vec<Requirement<'a>>>,
    /// How many of `requirements` come from `matchLabels`.
    match_labels: usize,
    /// Requirements with a known operator but an invalid key, value or value count, each with
    /// whether it comes from `matchLabels`.
    flawed: Vec<(Requirement<'a>, bool)>,
    /// The first unknown operator.
    unknown_operator: Option<String>,
    /// What is wrong, in order.
    errors: Vec<String>,
}

impl<'a> Selector<'a> {
    /// Parses `selector` (`None` is a `null` selector), borrowing its strings.
    pub fn parse(selector: Option<&'a LabelSelector>) -> Selector<'a> {
        let Some(selector) = selector else {
            return Selector::default();
        };
        let mut parsed = Selector {
            requirements: Some(Vec::new()),
            ..Selector::default()
        };
        for (k, v) in selector.match_labels.iter().flatten() {
            parsed.push_label(Cow::Borrowed(k.as_str()), Cow::Borrowed(std::slice::from_ref(v)));
        }
        for expr in selector.match_expressions.iter().flatten() {
            let values = Cow::Borrowed(expr.values.as_deref().unwrap_or_default());
            parsed.push_expression(Cow::Borrowed(expr.key.as_str()), &expr.operator, values);
        }
        parsed
    }

    /// Parses a selector in its JSON form (`null` or missing is a `null` selector; non-string
    /// entries read as empty strings).
    pub fn from_json(selector: Option<&'a Value>) -> Selector<'a> {
        let Some(selector) = selector.filter(|s| !s.is_null()) else {
            return Selector::default();
        };
        let mut parsed = Selector {
            requirements: Some(Vec::new()),
            ..Selector::default()
        };
        let text = |v: &'a Value| v.as_str().unwrap_or_default();
        for (k, v) in selector
            .get("matchLabels")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            parsed.push_label(Cow::Borrowed(k.as_str()), Cow::Owned(vec![text(v).to_string()]));
        }
        for expr in selector
            .get("matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let values: Vec<String> = expr
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(String::from))
                .collect();
            let key = expr.get("key").map_or("", text);
            let operator = expr.get("operator").map_or("", text);
            parsed.push_expression(Cow::Borrowed(key), operator, Cow::Owned(values));
        }
        parsed
    }

    fn push_label(&mut self, key: Cow<'a, str>, value: Cow<'a, [String]>) {
        let problems = self.check(&key, &value);
        let requirement = Requirement::In(key, value);
        if problems {
            self.flawed.push((requirement, true));
        } else if let Some(r) = self.requirements.as_mut() {
            r.insert(self.match_labels, requirement);
            self.match_labels += 1;
        }
    }

    fn push_expression(&mut self, key: Cow<'a, str>, operator: &str, values: Cow<'a, [String]>) {
        let (needs_values, requirement) = match operator {
            "In" => (true, Requirement::In(key.clone(), values.clone())),
            "NotIn" => (true, Requirement::NotIn(key.clone(), values.clone())),
            "Exists" => (false, Requirement::Exists(key.clone())),
            "DoesNotExist" => (false, Requirement::DoesNotExist(key.clone())),
            other => {
                self.errors.push(InvalidOperator(other.to_string()).to_string());
                self.unknown_operator.get_or_insert_with(|| other.to_string());
                return;
            }
        };
        let mut problems = self.check(&key, &values);
        if needs_values && values.is_empty() {
            self.errors.push(format!(
                "matchExpressions[key={key}]: operator {operator} needs at least one value"
            ));
            problems = true;
        } else if !needs_values && !values.is_empty() {
            self.errors.push(format!(
                "matchExpressions[key={key}]: operator {operator} takes no values"
            ));
            problems = true;
        }
        if problems {
            self.flawed.push((requirement, false));
        } else if let Some(r) = self.requirements.as_mut() {
            r.push(requirement);
        }
    }

    /// Records what is wrong with `key` and `values`; true when something is.
    fn check(&mut self, key: &str, values: &[String]) -> bool {
        let before = self.errors.len();
        if !is_qualified_name(key) {
            self.errors.push(format!("{key:?} is not a valid label key"));
        }
        for v in values.iter().filter(|v| !is_label_value(v)) {
            self.errors.push(format!("{v:?} is not a valid label value"));
        }
        self.errors.len() > before
    }

    /// The same selector owning its strings (to keep in an index).
    pub fn into_owned(self) -> Selector<'static> {
        Selector {
            requirements: self
                .requirements
                .map(|r| r.into_iter().map(Requirement::into_owned).collect()),
            match_labels: self.match_labels,
            flawed: self
                .flawed
                .into_iter()
                .map(|(r, labels)| (r.into_owned(), labels))
                .collect(),
            unknown_operator: self.unknown_operator,
            errors: self.errors,
        }
    }

    /// A `null` selector.
    pub fn is_null(&self) -> bool {
        self.requirements.is_none()
    }

    /// `null`, or `{}` with no requirement at all (OpenKruise's SidecarSet and PUB selectors then
    /// match no pod).
    pub fn is_null_or_empty(&self) -> bool {
        self.requirements
            .as_ref()
            .is_none_or(|r| r.is_empty() && self.errors.is_empty())
    }

    /// The valid requirements (empty for `null`).
    pub fn requirements(&self) -> &[Requirement<'a>] {
        self.requirements.as_deref().unwrap_or_default()
    }

    /// Whether anything is invalid.
    pub fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }

    /// What is invalid, joined by `"; "`.
    pub fn error(&self) -> Option<String> {
        (!self.errors.is_empty()).then(|| self.errors.join("; "))
    }

    /// apimachinery's `LabelSelectorAsSelector`: the selector when every part is valid.
    pub fn valid(&self) -> Result<&Self, String> {
        match self.error() {
            Some(e) => Err(e),
            None => Ok(self),
        }
    }

    /// Whether the valid requirements all match (`null` matches nothing, `{}` everything).
    pub fn matches<'l>(&self, get: impl Fn(&str) -> Option<&'l str>) -> bool {
        self.requirements
            .as_ref()
            .is_some_and(|r| r.iter().all(|req| req.matches(&get)))
    }

    /// [`Selector::matches`] against a [`LabelSource`].
    pub fn matches_labels(&self, labels: &impl LabelSource) -> bool {
        self.matches(|k| labels.label(k))
    }

    /// OpenKruise's validated-selector evaluation of a non-null selector: an unknown operator is an
    /// error whatever the labels; every other requirement is evaluated as written.
    pub fn evaluate(&self, labels: &impl LabelSource) -> Result<Selection, InvalidOperator> {
        if let Some(op) = &self.unknown_operator {
            return Err(InvalidOperator(op.clone()));
        }
        if self.requirements().is_empty() && self.flawed.is_empty() {
            return Ok(Selection::Empty);
        }
        let get = |k: &str| labels.label(k);
        let mut all = self
            .requirements()
            .iter()
            .chain(self.flawed.iter().map(|(r, _)| r));
        Ok(if all.all(|r| r.matches(&get)) {
            Selection::Matches
        } else {
            Selection::NoMatch
        })
    }

    /// `ValidatedLabelSelectorAsSelector(...).String()`: requirements sorted by key (`matchLabels`
    /// before expressions on the same key), joined by `,`; only an unknown operator is an error.
    pub fn to_selector_string(&self) -> Result<String, InvalidOperator> {
        if let Some(op) = &self.unknown_operator {
            return Err(InvalidOperator(op.clone()));
        }
        let valid = self
            .requirements()
            .iter()
            .enumerate()
            .map(|(i, r)| (r, i < self.match_labels));
        let mut parts: Vec<(&str, bool, String)> = valid
            .chain(self.flawed.iter().map(|(r, labels)| (r, *labels)))
            .map(|(r, labels)| (r.key(), !labels, r.to_text(labels)))
            .collect();
        parts.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        Ok(parts.into_iter().map(|(_, _, t)| t).collect::<Vec<_>>().join(","))
    }
}

/// OpenKruise's plain validated-selector match: `null` selects nothing, `{}` everything.
pub fn selects(selector: Option<&LabelSelector>, labels: &impl LabelSource) -> Result<bool, InvalidOperator> {
    match selector {
        None => Ok(false),
        Some(s) => Ok(Selector::parse(Some(s)).evaluate(labels)? != Selection::NoMatch),
    }
}

/// The match used where an empty selector must select nothing (SidecarSet, PUB): `null` and `{}`
/// select nothing.
pub fn selects_non_empty(
    selector: Option<&LabelSelector>,
    labels: &impl LabelSource,
) -> Result<bool, InvalidOperator> {
    match selector {
        None => Ok(false),
        Some(s) => Ok(Selector::parse(Some(s)).evaluate(labels)? == Selection::Matches),
    }
}

#[cfg(test)]
#[path = "label_tests.rs"]
mod tests;
