//! `spec.updateStrategy`, and the priority and scatter rules CloneSet shares.

use serde_json::Value;

use super::{items, present, validate_selector};
use crate::crd::field::{ErrorList, Path, go_quote, invalid, required, str_at};
use crate::crd::meta::{
    self, selector_conversion_fails, selector_is_empty, validate_positive_int_or_percent,
};

/// gogo-protobuf's `(*LabelSelector).String()`.
fn gogo_label_selector(sel: &Value) -> String {
    let mut labels: Vec<(String, String)> = meta::string_map(sel.get("matchLabels")).into_iter().collect();
    labels.sort();
    let labels: String = labels.iter().map(|(k, v)| format!("{k}: {v},")).collect();
    let exprs: String = items(sel, "matchExpressions")
        .iter()
        .map(|e| {
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                str_at(e, "key"),
                str_at(e, "operator"),
                meta::string_list(e.get("values")).join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}"
    )
}

/// Go's `%+v` of the update strategy (the value OpenKruise reports for "Partition and Selector cannot be
/// used together"); nested pointers without a `String()` method print as a placeholder address.
fn go_update_strategy(s: &Value) -> String {
    let intstr = |k: &str| match present(s, k) {
        None => "nil".to_string(),
        Some(v) => crate::crd::field::int_or_string_text(Some(v)),
    };
    let scatter: Vec<String> = items(s, "scatterStrategy")
        .iter()
        .map(|t| format!("{{Key:{} Value:{}}}", str_at(t, "key"), str_at(t, "value")))
        .collect();
    format!(
        "{{Type:{} Paused:{} Selector:{} Partition:{} MaxUnavailable:{} PriorityStrategy:{} ScatterStrategy:[{}]}}",
        str_at(s, "type"),
        s.get("paused").and_then(Value::as_bool).unwrap_or(false),
        present(s, "selector").map_or("nil".to_string(), gogo_label_selector),
        intstr("partition"),
        intstr("maxUnavailable"),
        if present(s, "priorityStrategy").is_some() {
            "0xc000000000"
        } else {
            "<nil>"
        },
        scatter.join(" ")
    )
}

/// `UpdatePriorityStrategy.FieldsValidation`.
pub fn priority_strategy_error(strategy: Option<&Value>) -> Option<String> {
    let s = strategy.filter(|s| !s.is_null())?;
    let weights = items(s, "weightPriority");
    if !weights.is_empty() && !items(s, "orderPriority").is_empty() {
        return Some("only one of weightPriority and orderPriority can be used".into());
    }
    for w in weights {
        let weight = w.get("weight").and_then(Value::as_i64).unwrap_or(0);
        if !(0..=100).contains(&weight) {
            return Some("weight must be valid number in the range 1-100".into());
        }
        let sel = w.get("matchSelector").unwrap_or(&Value::Null);
        if selector_is_empty(sel) {
            return Some("selector can not be empty".into());
        }
        if selector_conversion_fails(Some(sel)) {
            let bad_op = items(sel, "matchExpressions").iter().find_map(|e| {
                let op = str_at(e, "operator");
                (!matches!(op, "In" | "NotIn" | "Exists" | "DoesNotExist")).then_some(op)
            });
            return Some(match bad_op {
                Some(op) => format!(
                    "invalid selector {} is not a valid label selector operator",
                    go_quote(op)
                ),
                None => "invalid selector".into(),
            });
        }
    }
    for o in items(s, "orderPriority") {
        if str_at(o, "orderedKey").is_empty() {
            return Some("order key can not be empty".into());
        }
    }
    None
}

/// `UpdateScatterStrategy.FieldsValidation`.
pub fn scatter_strategy_error(strategy: Option<&Value>) -> Option<String> {
    let mut seen = std::collections::BTreeSet::new();
    for t in strategy.and_then(Value::as_array).map_or(&[][..], Vec::as_slice) {
        let (k, v) = (str_at(t, "key"), str_at(t, "value"));
        if k.is_empty() {
            return Some("key should not be empty".into());
        }
        if !seen.insert(format!("{k}:{v}")) {
            return Some(format!("duplicated key={k} value={v}"));
        }
    }
    None
}

pub(super) fn validate_update_strategy(s: &Value, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if str_at(s, "type") != "RollingUpdate" {
        return errs;
    }
    let partition_set = match present(s, "partition") {
        None => false,
        Some(Value::String(_)) => true,
        Some(v) => v.as_i64().unwrap_or(0) != 0,
    };
    if partition_set && present(s, "selector").is_some() {
        errs.push(invalid(
            &Path::new("updateStrategy"),
            go_update_strategy(s),
            "Partition and Selector cannot be used together",
        ));
    }
    if let Some(sel) = present(s, "selector") {
        errs.extend(validate_selector(sel, &path.child("selector")));
    }
    for key in ["partition", "maxUnavailable"] {
        if let Some(v) = present(s, key) {
            errs.extend(validate_positive_int_or_percent(v, &path.child(key)));
        }
    }
    if let Some(e) = priority_strategy_error(s.get("priorityStrategy")) {
        errs.push(required(&path.child("priorityStrategy"), e));
    }
    if let Some(e) = scatter_strategy_error(s.get("scatterStrategy")) {
        errs.push(required(&path.child("scatterStrategy"), e));
    }
    errs
}
