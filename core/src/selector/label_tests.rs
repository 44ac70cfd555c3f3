use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::*;

fn sel(v: Value) -> LabelSelector {
    serde_json::from_value(v).unwrap()
}

fn labels(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn expr(key: &str, op: &str, values: Value) -> LabelSelector {
    sel(json!({"matchExpressions": [{"key": key, "operator": op, "values": values}]}))
}

#[test]
fn null_selects_nothing_and_empty_everything() {
    let l = labels(json!({"app": "web", "tier": "fe"}));
    assert!(!selects(None, &l).unwrap());
    assert!(selects(Some(&sel(json!({}))), &l).unwrap());
    assert!(!selects_non_empty(Some(&sel(json!({}))), &l).unwrap());
    assert!(!selects_non_empty(None, &l).unwrap());
    assert!(selects_non_empty(Some(&sel(json!({"matchLabels": {"app": "web"}}))), &l).unwrap());
    assert!(!selects(Some(&sel(json!({"matchLabels": {"app": "db"}}))), &l).unwrap());
    let null = Selector::parse(None);
    assert!(null.is_null() && null.is_null_or_empty() && !null.matches_labels(&l));
    let empty_sel = sel(json!({"matchLabels": {}}));
    let empty = Selector::parse(Some(&empty_sel));
    assert!(!empty.is_null() && empty.is_null_or_empty() && empty.matches_labels(&l));
}

#[test]
fn operators_as_openkruise_evaluates_them() {
    let l = labels(json!({"app": "web", "n": 1}));
    type Case = (&'static str, &'static str, Value, Result<bool, &'static str>);
    let cases: &[Case] = &[
        ("In", "app", json!(["web", "x"]), Ok(true)),
        ("In", "app", json!(["x"]), Ok(false)),
        ("In", "app", json!([]), Ok(false)),
        ("NotIn", "app", json!(["web"]), Ok(false)),
        ("NotIn", "other", json!(["web"]), Ok(true)),
        ("NotIn", "app", json!([]), Ok(true)),
        ("Exists", "app", json!(["ignored"]), Ok(true)),
        ("Exists", "n", json!(null), Ok(false)),
        ("DoesNotExist", "app", json!(null), Ok(false)),
        ("DoesNotExist", "n", json!(null), Ok(true)),
        (
            "Foo",
            "app",
            json!([]),
            Err("\"Foo\" is not a valid pod selector operator"),
        ),
    ];
    for (op, key, values, want) in cases {
        let got = selects(Some(&expr(key, op, values.clone())), &l).map_err(|e| e.to_string());
        assert_eq!(got, want.map_err(String::from), "{key} {op} {values}");
    }
}

#[test]
fn an_unknown_operator_is_an_error_even_after_a_failed_label() {
    let s = sel(json!({"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "k", "operator": "Bad"}]}));
    assert!(Selector::parse(Some(&s)).evaluate(&labels(json!({}))).is_err());
}

#[test]
fn apimachinery_refuses_every_invalid_part() {
    let cases: &[(&str, Value, bool)] = &[
        (
            "labels and expressions",
            json!({"matchLabels": {"app": "x"}, "matchExpressions": [{"key": "t", "operator": "NotIn", "values": ["a"]}]}),
            true,
        ),
        (
            "a prefixed key",
            json!({"matchLabels": {"apps.kruise.io/x": "v"}}),
            true,
        ),
        ("an empty value", json!({"matchLabels": {"app": ""}}), true),
        (
            "an unknown operator",
            json!({"matchExpressions": [{"key": "a", "operator": "Foo"}]}),
            false,
        ),
        (
            "In without values",
            json!({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}),
            false,
        ),
        (
            "NotIn without values",
            json!({"matchExpressions": [{"key": "a", "operator": "NotIn"}]}),
            false,
        ),
        (
            "Exists with values",
            json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}),
            false,
        ),
        ("a bad key", json!({"matchLabels": {"bad key": "v"}}), false),
        ("a bad value", json!({"matchLabels": {"app": "-v"}}), false),
        (
            "a bad expression value",
            json!({"matchExpressions": [{"key": "a", "operator": "In", "values": ["a b"]}]}),
            false,
        ),
    ];
    for (name, v, valid) in cases {
        let s = sel(v.clone());
        let parsed = Selector::parse(Some(&s));
        assert_eq!(parsed.valid().is_ok(), *valid, "{name}");
        assert_eq!(
            Selector::from_json(Some(v)),
            parsed,
            "{name}: the JSON form parses the same"
        );
    }
}

#[test]
fn the_valid_part_still_matches_and_errors_are_named() {
    let pod = [("app", "web"), ("tier", "front")];
    let get = |k: &str| pod.iter().find(|(l, _)| *l == k).map(|(_, v)| *v);
    let bad = sel(json!({"matchLabels": {"app": "web"}, "matchExpressions": [
        {"key": "a", "operator": "Foo"}, {"key": "b", "operator": "In", "values": []}]}));
    let parsed = Selector::parse(Some(&bad));
    let error = parsed.error().unwrap();
    assert!(
        error.contains("\"Foo\" is not a valid pod selector operator"),
        "{error}"
    );
    assert!(
        error.contains("matchExpressions[key=b]: operator In needs at least one value"),
        "{error}"
    );
    assert!(parsed.matches(get), "the valid part still matches");
    assert!(!parsed.is_null_or_empty());
    assert_eq!(parsed.requirements().len(), 1);
}

#[test]
fn borrowed_and_owned_parse_alike() {
    let s = sel(
        json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}),
    );
    let borrowed = Selector::parse(Some(&s));
    let owned: Selector<'static> = borrowed.clone().into_owned();
    assert_eq!(owned, borrowed);
    let l: BTreeMap<String, String> = [("app".to_string(), "web".to_string())].into();
    assert!(owned.matches_labels(&l));
    assert!(owned.matches_labels(&Some(&l)));
    assert!(!owned.matches_labels(&None::<&BTreeMap<String, String>>));
}

#[test]
fn selector_string_is_sorted_like_kubernetes() {
    let s = sel(json!({"matchLabels": {"app": "demo"}, "matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["web", "api"]},
        {"key": "canary", "operator": "DoesNotExist"},
        {"key": "zone", "operator": "NotIn", "values": ["b", "a"]},
        {"key": "gpu", "operator": "Exists"}]}));
    assert_eq!(
        Selector::parse(Some(&s)).to_selector_string().unwrap(),
        "app=demo,!canary,gpu,tier in (api,web),zone notin (a,b)"
    );
    assert!(
        Selector::parse(Some(&expr("a", "Near", json!([]))))
            .to_selector_string()
            .is_err()
    );
}
