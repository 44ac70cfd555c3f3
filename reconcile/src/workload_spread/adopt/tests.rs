use super::*;

fn node(labels: Value, taints: Value) -> Node {
    serde_json::from_value(json!({"metadata": {"name": "n1", "labels": labels}, "spec": {"taints": taints}}))
        .unwrap()
}

fn spread(subsets: Value, annotations: Value) -> WorkloadSpread {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
        "metadata": {"name": "ws", "namespace": "ns", "annotations": annotations},
        "spec": {"subsets": subsets},
    }))
    .unwrap()
}

fn pod(labels: Value) -> PodRecord {
    serde_json::from_value(
        json!({"metadata": {"name": "p", "namespace": "ns", "labels": labels},
        "spec": {"nodeName": "n1", "containers": [{"name": "main"}]}}),
    )
    .unwrap()
}

fn term(expressions: Value) -> NodeSelectorTerm {
    serde_json::from_value(json!({"matchExpressions": expressions})).unwrap()
}

#[test]
fn node_selector_terms_follow_kubernetes_operators() {
    let n = node(json!({"zone": "a", "cpu": "8"}), json!([]));
    let cases = [
        (
            json!([{"key": "zone", "operator": "In", "values": ["a", "b"]}]),
            true,
        ),
        (json!([{"key": "zone", "operator": "In", "values": ["b"]}]), false),
        (
            json!([{"key": "zone", "operator": "NotIn", "values": ["b"]}]),
            true,
        ),
        (
            json!([{"key": "gpu", "operator": "NotIn", "values": ["x"]}]),
            true,
        ),
        (json!([{"key": "zone", "operator": "Exists"}]), true),
        (json!([{"key": "zone", "operator": "DoesNotExist"}]), false),
        (json!([{"key": "cpu", "operator": "Gt", "values": ["4"]}]), true),
        (json!([{"key": "cpu", "operator": "Lt", "values": ["4"]}]), false),
        (json!([{"key": "zone", "operator": "Gt", "values": ["4"]}]), false),
        (
            json!([{"key": "zone", "operator": "In", "values": ["a"]}, {"key": "cpu", "operator": "Exists"}]),
            true,
        ),
        (json!([]), false),
    ];
    for (expressions, expected) in cases {
        assert_eq!(
            term_matches(&term(expressions.clone()), &n),
            expected,
            "{expressions}"
        );
    }
    let by_name: NodeSelectorTerm = serde_json::from_value(
        json!({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}),
    )
    .unwrap();
    assert!(term_matches(&by_name, &n));
}

#[test]
fn a_subset_fits_when_it_tolerates_every_taint_and_its_required_term_matches() {
    let tainted = node(
        json!({"zone": "a"}),
        json!([{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]),
    );
    let ws = spread(
        json!([
            {"name": "plain"},
            {"name": "tolerant", "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "x"}]},
            {"name": "wrong-value", "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "y"}]},
            {"name": "exists-all", "tolerations": [{"operator": "Exists"}]},
            {"name": "other-effect", "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}]},
            {"name": "zone-b", "tolerations": [{"operator": "Exists"}],
                "requiredNodeSelector": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}},
        ]),
        Value::Null,
    );
    let fits: Vec<bool> = ws.spec.subsets.iter().map(|s| fits(s, &tainted)).collect();
    assert_eq!(fits, [false, true, false, true, false, false]);
    assert!(fits_untainted(&ws));
}

fn fits_untainted(ws: &WorkloadSpread) -> bool {
    fits(&ws.spec.subsets[0], &node(json!({}), Value::Null))
}

#[test]
fn the_best_scoring_subset_wins_and_the_first_wins_ties() {
    let n = node(json!({"zone": "a", "ssd": "true"}), json!([]));
    let missing =
        |a: i64, b: i64, c: i64| BTreeMap::from([("a".into(), a), ("b".into(), b), ("c".into(), c)]);
    let subsets = json!([
        {"name": "a"},
        {"name": "b", "patch": {"metadata": {"labels": {"tier": "gold"}}}},
        {"name": "c", "preferredNodeSelector": [{"weight": 1, "preference": {"matchExpressions": [
            {"key": "ssd", "operator": "Exists"}]}}]},
        {"name": "d", "requiredNodeSelector": {"matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["b"]}]},
            "preferredNodeSelector": [{"weight": 100, "preference": {"matchExpressions": [
                {"key": "ssd", "operator": "Exists"}]}}]},
    ]);
    let ws = spread(subsets, Value::Null);
    let plain = pod(json!({}));
    let gold = pod(json!({"tier": "gold"}));
    // The preferred node score (100) beats a reflected patch (10) and missing replicas (1); d does not fit.
    assert_eq!(choose(&ws, &gold, &n, &missing(1, 1, 0)), Some(2));
    let no_pref = spread(
        json!([{"name": "a"}, {"name": "b", "patch": {"metadata": {"labels": {"tier": "gold"}}}}]),
        Value::Null,
    );
    // The reflected patch (10) beats missing replicas (1).
    assert_eq!(choose(&no_pref, &gold, &n, &missing(1, 0, 0)), Some(1));
    assert_eq!(choose(&no_pref, &plain, &n, &missing(1, 0, 0)), Some(0));
    // Missing replicas decide between equals; ties go to the first.
    assert_eq!(choose(&no_pref, &plain, &n, &missing(0, 1, 0)), Some(1));
    assert_eq!(choose(&no_pref, &plain, &n, &missing(0, 0, 0)), Some(0));
    // Nothing fits.
    let none = spread(
        json!([{"name": "a", "requiredNodeSelector": {"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["z"]}]}}]),
        Value::Null,
    );
    assert_eq!(choose(&none, &plain, &n, &missing(1, 1, 1)), None);
}

#[test]
fn the_adoption_patch_carries_the_matched_annotation_and_the_subset_metadata() {
    let subsets = json!([{"name": "a", "patch": {"metadata": {"labels": {"tier": "gold"}, "annotations": {"x": "1"}},
        "spec": {"priorityClassName": "high"}}}]);
    let ws = spread(subsets.clone(), Value::Null);
    assert_eq!(
        adoption_patch(&ws, &ws.spec.subsets[0]),
        json!({"metadata": {"labels": {"tier": "gold"}, "annotations": {"x": "1",
            MATCHED_WORKLOADSPREAD_ANNOTATION: r#"{"name":"ws","subset":"a"}"#}}})
    );
    let ignoring = spread(subsets, json!({IGNORE_PATCH_EXISTING_PODS_METADATA: "true"}));
    assert_eq!(
        adoption_patch(&ignoring, &ignoring.spec.subsets[0]),
        json!({"metadata": {"annotations": {MATCHED_WORKLOADSPREAD_ANNOTATION: r#"{"name":"ws","subset":"a"}"#}}})
    );
}
