//! Field errors worded as apimachinery's `field.Error`, and their aggregate as `ErrorList.ToAggregate()`
//! prints it.
//!
//! One error reads `<path>: <type>[: <bad value>][: <detail>]`, e.g. `spec.replicas: Invalid value: -1: must be
//! greater than or equal to 0` or `spec.selector: Required value`. The bad value is printed as Go prints it:
//! numbers and booleans bare, strings quoted, `null` for nil, and structs in Go syntax (`%#v`), for which
//! [`GoValue`] carries a rendering built by the caller (see [`go_label_selector`], [`go_int_or_string`]).
//! A list of several distinct errors reads `[err1, err2]`; duplicates are dropped, one error is printed
//! without brackets.

use std::fmt;

use serde_json::Value;

/// A field path as `field.Path` prints it: `spec.containers[0].name`, `metadata.annotations[key]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path(String);

impl Path {
    /// A root element (`spec`, `metadata`); it may itself contain dots or commas, as OpenKruise's
    /// `NewPath("selector, targetRef")` does.
    pub fn new(root: &str) -> Path {
        Path(root.to_string())
    }

    /// `self.name`.
    #[must_use]
    pub fn child(&self, name: &str) -> Path {
        if self.0.is_empty() {
            return Path(name.to_string());
        }
        Path(format!("{}.{name}", self.0))
    }

    /// `self[i]`.
    #[must_use]
    pub fn index(&self, i: usize) -> Path {
        Path(format!("{}[{i}]", self.0))
    }

    /// `self[key]`.
    #[must_use]
    pub fn key(&self, key: &str) -> Path {
        Path(format!("{}[{key}]", self.0))
    }

    /// The first element only (`field.Path.Root()`): `spec` for `spec.template.x`.
    #[must_use]
    pub fn root(&self) -> Path {
        let end = self.0.find(['.', '[']).unwrap_or(self.0.len());
        Path(self.0[..end].to_string())
    }

    /// The rendered path.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A bad value, printed as apimachinery prints `field.Error.BadValue`.
#[derive(Clone, Debug, PartialEq)]
pub enum GoValue {
    /// A Go string: printed quoted (`%q`).
    Str(String),
    /// An integer: printed bare.
    Int(i64),
    /// A boolean: printed bare.
    Bool(bool),
    /// A nil pointer or interface: `null`.
    Null,
    /// A pre-rendered value printed as is (a Go `%#v` struct or a `String()` result).
    Raw(String),
}

impl fmt::Display for GoValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GoValue::Str(s) => f.write_str(&go_quote(s)),
            GoValue::Int(i) => write!(f, "{i}"),
            GoValue::Bool(b) => write!(f, "{b}"),
            GoValue::Null => f.write_str("null"),
            GoValue::Raw(s) => f.write_str(s),
        }
    }
}

impl From<&str> for GoValue {
    fn from(s: &str) -> Self {
        GoValue::Str(s.to_string())
    }
}

impl From<String> for GoValue {
    fn from(s: String) -> Self {
        GoValue::Str(s)
    }
}

impl From<i64> for GoValue {
    fn from(i: i64) -> Self {
        GoValue::Int(i)
    }
}

/// The kinds of `field.Error` kruise-rs produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorType {
    NotFound,
    Required,
    Duplicate,
    Invalid,
    NotSupported,
    Forbidden,
    TooLong,
    Internal,
}

impl ErrorType {
    fn as_str(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::Internal => "Internal error",
        }
    }
}

/// One field error.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    pub kind: ErrorType,
    pub field: String,
    pub value: Option<GoValue>,
    pub detail: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.kind.as_str())?;
        let shows_value = !matches!(
            self.kind,
            ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong | ErrorType::Internal
        );
        if shows_value && let Some(v) = &self.value {
            write!(f, ": {v}")?;
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// `field.Required(path, detail)`.
pub fn required(path: &Path, detail: impl Into<String>) -> FieldError {
    FieldError {
        kind: ErrorType::Required,
        field: path.to_string(),
        value: None,
        detail: detail.into(),
    }
}

/// `field.Invalid(path, value, detail)`.
pub fn invalid(path: &Path, value: impl Into<GoValue>, detail: impl Into<String>) -> FieldError {
    FieldError {
        kind: ErrorType::Invalid,
        field: path.to_string(),
        value: Some(value.into()),
        detail: detail.into(),
    }
}

/// `field.NotSupported(path, value, supported)`: `supported values: "a", "b"`.
pub fn not_supported(path: &Path, value: impl Into<GoValue>, supported: &[&str]) -> FieldError {
    let detail = if supported.is_empty() {
        String::new()
    } else {
        let quoted: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
        format!("supported values: {}", quoted.join(", "))
    };
    FieldError {
        kind: ErrorType::NotSupported,
        field: path.to_string(),
        value: Some(value.into()),
        detail,
    }
}

/// `field.Forbidden(path, detail)`.
pub fn forbidden(path: &Path, detail: impl Into<String>) -> FieldError {
    FieldError {
        kind: ErrorType::Forbidden,
        field: path.to_string(),
        value: None,
        detail: detail.into(),
    }
}

/// `field.Duplicate(path, value)`.
pub fn duplicate(path: &Path, value: impl Into<GoValue>) -> FieldError {
    FieldError {
        kind: ErrorType::Duplicate,
        field: path.to_string(),
        value: Some(value.into()),
        detail: String::new(),
    }
}

/// `field.NotFound(path, value)`.
pub fn not_found(path: &Path, value: impl Into<GoValue>) -> FieldError {
    FieldError {
        kind: ErrorType::NotFound,
        field: path.to_string(),
        value: Some(value.into()),
        detail: String::new(),
    }
}

/// `field.TooLong(path, value, max)`.
pub fn too_long(path: &Path, max: usize) -> FieldError {
    FieldError {
        kind: ErrorType::TooLong,
        field: path.to_string(),
        value: None,
        detail: format!("may not be more than {max} bytes"),
    }
}

/// `field.InternalError(path, err)`.
pub fn internal(path: &Path, detail: impl Into<String>) -> FieldError {
    FieldError {
        kind: ErrorType::Internal,
        field: path.to_string(),
        value: None,
        detail: detail.into(),
    }
}

/// A list of field errors.
pub type ErrorList = Vec<FieldError>;

/// The message of `ErrorList.ToAggregate().Error()`: duplicates dropped, one error bare, several as
/// `[e1, e2]`. `None` when the list is empty.
pub fn aggregate(errors: &[FieldError]) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    for e in errors {
        let msg = e.to_string();
        if !seen.contains(&msg) {
            seen.push(msg);
        }
    }
    match seen.len() {
        0 => None,
        1 => seen.pop(),
        _ => Some(format!("[{}]", seen.join(", "))),
    }
}

/// A string quoted as Go's `strconv.Quote` (and `%q`, `%#v`) quotes it.
pub use kruise_core::go::quote as go_quote;

/// Go's `%#v` of a `[]string` (`[]string(nil)` when absent).
pub fn go_string_slice(type_name: &str, values: Option<&Value>) -> String {
    match values.and_then(Value::as_array) {
        None => format!("[]{type_name}(nil)"),
        Some(items) => {
            let parts: Vec<String> = items.iter().map(|v| go_quote(v.as_str().unwrap_or(""))).collect();
            format!("[]{type_name}{{{}}}", parts.join(", "))
        }
    }
}

/// Go's `%#v` of a `map[string]string` (keys sorted, `map[string]string(nil)` when absent).
pub fn go_string_map(values: Option<&Value>) -> String {
    match values.and_then(Value::as_object) {
        None => "map[string]string(nil)".to_string(),
        Some(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", go_quote(k), go_quote(map[*k].as_str().unwrap_or(""))))
                .collect();
            format!("map[string]string{{{}}}", parts.join(", "))
        }
    }
}

/// Go's `%#v` of a `metav1.LabelSelector` read from JSON (the value behind the pointer; `null` when absent).
pub fn go_label_selector(selector: Option<&Value>) -> GoValue {
    let Some(sel) = selector.filter(|s| !s.is_null()) else {
        return GoValue::Null;
    };
    let exprs = match sel.get("matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(items) => {
            let parts: Vec<String> = items
                .iter()
                .map(|e| {
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
                        go_quote(str_at(e, "key")),
                        go_quote(str_at(e, "operator")),
                        go_string_slice("string", e.get("values").filter(|v| !v.is_null()))
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", parts.join(", "))
        }
    };
    GoValue::Raw(format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{}}}",
        go_string_map(sel.get("matchLabels").filter(|v| !v.is_null())),
        exprs
    ))
}

/// Go's `%#v` of an `intstr.IntOrString` value (`null` when absent).
pub fn go_int_or_string(value: Option<&Value>) -> GoValue {
    match value {
        None | Some(Value::Null) => GoValue::Null,
        Some(Value::String(s)) => GoValue::Raw(format!(
            "intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}",
            go_quote(s)
        )),
        Some(v) => GoValue::Raw(format!(
            "intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}",
            v.as_i64().unwrap_or(0)
        )),
    }
}

/// `IntOrString.String()`: the number or the string, `<nil>` when absent.
pub fn int_or_string_text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "<nil>".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.as_i64().unwrap_or(0).to_string(),
    }
}

/// Go's `%#v` of a `TargetReference{APIVersion, Kind, Name}` struct of package `pkg` (`null` when absent).
pub fn go_target_reference(pkg: &str, target: Option<&Value>) -> GoValue {
    match target.filter(|t| !t.is_null()) {
        None => GoValue::Null,
        Some(t) => GoValue::Raw(format!(
            "{pkg}.TargetReference{{APIVersion:{}, Kind:{}, Name:{}}}",
            go_quote(str_at(t, "apiVersion")),
            go_quote(str_at(t, "kind")),
            go_quote(str_at(t, "name"))
        )),
    }
}

/// A string member, `""` when absent or not a string.
pub fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_are_worded_as_apimachinery_words_them() {
        let spec = Path::new("spec");
        assert_eq!(
            required(&spec.child("selector"), "").to_string(),
            "spec.selector: Required value"
        );
        assert_eq!(
            invalid(&spec.child("replicas"), -1, "must be greater than or equal to 0").to_string(),
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        );
        assert_eq!(
            not_supported(&spec.child("x").index(0), "y", &["a", "b"]).to_string(),
            "spec.x[0]: Unsupported value: \"y\": supported values: \"a\", \"b\""
        );
        assert_eq!(forbidden(&spec, "nope").to_string(), "spec: Forbidden: nope");
        assert_eq!(
            duplicate(&spec.child("containers").index(1).child("name"), "a").to_string(),
            "spec.containers[1].name: Duplicate value: \"a\""
        );
        assert_eq!(
            Path::new("metadata").child("annotations").key("a/b").to_string(),
            "metadata.annotations[a/b]"
        );
        assert_eq!(spec.child("a").index(2).root().to_string(), "spec");
    }

    #[test]
    fn aggregate_drops_duplicates_and_brackets_several() {
        let p = Path::new("spec");
        let a = required(&p, "a");
        let b = required(&p, "b");
        assert_eq!(aggregate(&[]), None);
        assert_eq!(
            aggregate(&[a.clone(), a.clone()]).unwrap(),
            "spec: Required value: a"
        );
        assert_eq!(
            aggregate(&[a.clone(), b, a]).unwrap(),
            "[spec: Required value: a, spec: Required value: b]"
        );
    }

    #[test]
    fn go_renderings() {
        assert_eq!(go_quote("a\"b\\\n\u{1}é"), "\"a\\\"b\\\\\\n\\x01é\"");
        assert_eq!(
            go_label_selector(Some(&json!({}))).to_string(),
            "v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
        );
        assert_eq!(
            go_label_selector(Some(&json!({"matchLabels": {"b": "2", "a": "1"},
                "matchExpressions": [{"key": "k", "operator": "Foo"}]})))
            .to_string(),
            "v1.LabelSelector{MatchLabels:map[string]string{\"a\":\"1\", \"b\":\"2\"}, MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:\"k\", Operator:\"Foo\", Values:[]string(nil)}}}"
        );
        assert_eq!(go_label_selector(None).to_string(), "null");
        assert_eq!(
            go_int_or_string(Some(&json!("5x"))).to_string(),
            "intstr.IntOrString{Type:1, IntVal:0, StrVal:\"5x\"}"
        );
        assert_eq!(
            go_int_or_string(Some(&json!(0))).to_string(),
            "intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}"
        );
    }
}
