use super::*;
use serde_json::json;

#[test]
fn names() {
    assert!(dns1123_label("abc-1").is_empty());
    assert_eq!(dns1123_label("a.b"), ["must not contain dots"]);
    assert_eq!(
        dns1123_label("Abc")[0],
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    );
    assert!(qualified_name("example.com/My_name.1").is_empty());
    assert_eq!(qualified_name("/x"), ["prefix part must be non-empty"]);
    assert!(!qualified_name("a/b/c").is_empty());
    assert!(label_value("").is_empty());
    assert!(!label_value("-x").is_empty());
    assert!(port_name("http").is_empty());
    assert!(!port_name("80").is_empty());
}

#[test]
fn selector_checks() {
    let bad = json!({"matchExpressions": [{"key": "a", "operator": "Foo"}]});
    let errs = validate_label_selector(Some(&bad), &Path::new("spec").child("selector"));
    assert_eq!(
        errs[0].to_string(),
        "spec.selector.matchExpressions[0].operator: Invalid value: \"Foo\": not a valid selector operator"
    );
    assert!(selector_conversion_fails(Some(&bad)));
    let ok = json!({"matchLabels": {"app": "x"}, "matchExpressions": [{"key": "t", "operator": "NotIn", "values": ["a"]}]});
    assert!(!selector_conversion_fails(Some(&ok)));
    let labels = BTreeMap::from([("app".to_string(), "x".to_string())]);
    assert!(selector_matches(&ok, &labels));
    assert!(selector_is_empty(&json!({"matchLabels": {}})));
}

#[test]
fn overlap() {
    let a = json!({"matchLabels": {"app": "a"}});
    let b = json!({"matchLabels": {"app": "b"}});
    let any = json!({"matchExpressions": [{"key": "app", "operator": "Exists"}]});
    assert!(!selectors_overlap(Some(&a), Some(&b)));
    assert!(selectors_overlap(Some(&a), Some(&any)));
    assert!(selectors_overlap(
        Some(&a),
        Some(&json!({"matchLabels": {"tier": "x"}}))
    ));
    assert!(selectors_loose_overlap(Some(&a), Some(&a)));
    assert!(!selectors_loose_overlap(Some(&a), Some(&b)));
    assert!(!selectors_loose_overlap(
        Some(&a),
        Some(&json!({"matchLabels": {"app": "a", "x": "y"}}))
    ));
}

#[test]
fn int_or_percent() {
    let p = Path::new("spec").child("maxUnavailable");
    assert!(validate_positive_int_or_percent(&json!("50%"), &p).is_empty());
    assert_eq!(
        validate_positive_int_or_percent(&json!(-1), &p)[0].to_string(),
        "spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0"
    );
    assert_eq!(
        is_not_more_than_100_percent(&json!("101%"), &p)[0].to_string(),
        "spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"101%\"}: must not be greater than 100%"
    );
    assert_eq!(scaled_value(Some(&json!("20%")), 3, true), Ok(1));
    assert_eq!(scaled_value(Some(&json!("20%")), 3, false), Ok(0));
    assert!(scaled_value(Some(&json!("x")), 3, true).is_err());
}
