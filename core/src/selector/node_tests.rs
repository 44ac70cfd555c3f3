use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::*;

fn term(v: Value) -> NodeSelectorTerm {
    serde_json::from_value(v).unwrap()
}

fn node_labels() -> BTreeMap<String, String> {
    [("zone", "a"), ("cpus", "8"), ("gpu", "")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn expr(key: &str, op: &str, values: Value) -> NodeSelectorTerm {
    term(json!({"matchExpressions": [{"key": key, "operator": op, "values": values}]}))
}

#[test]
fn label_operators() {
    let cases: &[(&str, &str, Value, Result<bool, ()>)] = &[
        ("zone", "In", json!(["a", "b"]), Ok(true)),
        ("zone", "In", json!(["b"]), Ok(false)),
        ("zone", "NotIn", json!(["b"]), Ok(true)),
        ("missing", "NotIn", json!(["b"]), Ok(true)),
        ("zone", "NotIn", json!(["a"]), Ok(false)),
        ("gpu", "Exists", json!(null), Ok(true)),
        ("gpu", "DoesNotExist", json!(null), Ok(false)),
        ("missing", "DoesNotExist", json!(null), Ok(true)),
        ("cpus", "Gt", json!(["4"]), Ok(true)),
        ("cpus", "Gt", json!(["8"]), Ok(false)),
        ("cpus", "Lt", json!(["16"]), Ok(true)),
        ("zone", "Gt", json!(["1"]), Ok(false)),
        ("missing", "Lt", json!(["1"]), Ok(false)),
        ("cpus", "Gt", json!(["x"]), Err(())),
        ("cpus", "Gt", json!(["1", "2"]), Err(())),
        ("zone", "In", json!([]), Err(())),
        ("gpu", "Exists", json!(["x"]), Err(())),
        ("zone", "Near", json!(["a"]), Err(())),
        ("bad key", "Exists", json!(null), Err(())),
    ];
    for (key, op, values, want) in cases {
        let got = term_matches(&expr(key, op, values.clone()), &node_labels(), "n1").map_err(|_| ());
        assert_eq!(got, *want, "{key} {op} {values}");
    }
}

#[test]
fn fields_know_only_the_node_name() {
    let field = |op: &str, values: Value| {
        term(json!({"matchFields": [{"key": "metadata.name", "operator": op, "values": values}]}))
    };
    let labels = node_labels();
    assert_eq!(term_matches(&field("In", json!(["n1"])), &labels, "n1"), Ok(true));
    assert_eq!(
        term_matches(&field("In", json!(["n2"])), &labels, "n1"),
        Ok(false)
    );
    assert_eq!(
        term_matches(&field("NotIn", json!(["n2"])), &labels, "n1"),
        Ok(true)
    );
    assert_eq!(
        term_matches(&field("In", json!(["n2"])), &labels, ""),
        Ok(true),
        "a node without a name is not compared"
    );
    assert!(term_matches(&field("In", json!(["a", "b"])), &labels, "n1").is_err());
    assert!(term_matches(&field("Exists", json!(["n1"])), &labels, "n1").is_err());
    let other = term(json!({"matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["x"]}]}));
    assert!(term_matches(&other, &labels, "n1").is_err());
}

#[test]
fn terms_are_ored_and_empty_terms_select_nothing() {
    let labels = node_labels();
    assert_eq!(matches(&[], &labels, "n1"), Ok(false));
    assert_eq!(matches(&[term(json!({}))], &labels, "n1"), Ok(false));
    let both = term(json!({
        "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}],
        "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}));
    assert_eq!(
        matches(std::slice::from_ref(&both), &labels, "n1"),
        Ok(false),
        "ANDed within a term"
    );
    let zone_b = expr("zone", "In", json!(["b"]));
    let zone_a = expr("zone", "In", json!(["a"]));
    assert_eq!(matches(&[zone_b.clone(), zone_a], &labels, "n1"), Ok(true));
    let invalid = expr("zone", "Near", json!(["a"]));
    assert_eq!(
        matches(
            &[invalid.clone(), expr("zone", "Exists", json!(null))],
            &labels,
            "n1"
        ),
        Ok(true),
        "an invalid term does not hide a matching one"
    );
    let err = matches(&[invalid, zone_b], &labels, "n1").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("[0].matchExpressions[0].operator: Unsupported value: \"Near\""),
        "{err}"
    );
}
