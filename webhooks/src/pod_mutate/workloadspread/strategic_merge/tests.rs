use super::*;
use serde_json::json;

fn smp(original: Value, patch: Value) -> Result<Value, MergeError> {
    let mut out = original;
    merge(&mut out, patch.as_object().unwrap(), Schema::Pod)?;
    Ok(out)
}

#[test]
fn maps_merge_and_null_deletes() {
    let out = smp(
        json!({"metadata": {"labels": {"a": "1", "b": "2"}}}),
        json!({"metadata": {"labels": {"b": null, "c": "3"}, "annotations": {"x": "y"}}}),
    )
    .unwrap();
    assert_eq!(
        out,
        json!({"metadata": {"labels": {"a": "1", "c": "3"}, "annotations": {"x": "y"}}})
    );
}

#[test]
fn containers_merge_by_name_and_new_ones_go_first() {
    let out = smp(
        json!({"spec": {"containers": [
            {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}]},
            {"name": "b", "image": "b:1"}]}}),
        json!({"spec": {"containers": [
            {"name": "b", "resources": {"limits": {"cpu": "1"}}},
            {"name": "a", "env": [{"name": "Y", "value": "2"}]}]}}),
    )
    .unwrap();
    // Both are patch items: patch order wins.
    assert_eq!(
        out["spec"]["containers"],
        json!([
            {"name": "b", "image": "b:1", "resources": {"limits": {"cpu": "1"}}},
            {"name": "a", "image": "a:1", "env": [{"name": "Y", "value": "2"}, {"name": "X", "value": "1"}]}
        ])
    );
    let out = smp(
        json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}),
        json!({"spec": {"containers": [{"name": "c"}]}}),
    )
    .unwrap();
    assert_eq!(
        out["spec"]["containers"],
        json!([{"name": "c"}, {"name": "a"}, {"name": "b"}])
    );
    let out = smp(
        json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}}),
        json!({"spec": {"containers": [{"name": "b", "image": "x"}]}}),
    )
    .unwrap();
    assert_eq!(
        out["spec"]["containers"],
        json!([{"name": "a"}, {"name": "b", "image": "x"}, {"name": "c"}])
    );
}

#[test]
fn tolerations_are_replaced_and_finalizers_merge_as_a_set() {
    let out = smp(
        json!({"metadata": {"finalizers": ["a", "b"]}, "spec": {"tolerations": [{"key": "a"}]}}),
        json!({"metadata": {"finalizers": ["c", "a"]}, "spec": {"tolerations": [{"key": "b"}]}}),
    )
    .unwrap();
    assert_eq!(out["spec"]["tolerations"], json!([{"key": "b"}]));
    assert_eq!(out["metadata"]["finalizers"], json!(["c", "a", "b"]));
}

#[test]
fn directives() {
    let pod = json!({"spec": {
        "containers": [{"name": "a"}, {"name": "b"}],
        "affinity": {"nodeAffinity": {"x": 1}, "podAffinity": {"y": 2}},
        "volumes": [{"name": "v", "emptyDir": {}}]}});
    let out = smp(
        pod.clone(),
        json!({"spec": {"containers": [{"name": "a", "$patch": "delete"}],
            "affinity": {"$patch": "replace", "podAntiAffinity": {}}}}),
    )
    .unwrap();
    assert_eq!(out["spec"]["containers"], json!([{"name": "b"}]));
    assert_eq!(out["spec"]["affinity"], json!({"podAntiAffinity": {}}));
    let out = smp(
        pod.clone(),
        json!({"spec": {"containers": [{"name": "z"}, {"$patch": "replace"}]}}),
    )
    .unwrap();
    assert_eq!(out["spec"]["containers"], json!([{"name": "z"}]));
    let out = smp(pod.clone(), json!({"spec": {"affinity": {"$patch": "delete"}}})).unwrap();
    assert_eq!(out["spec"]["affinity"], json!({}));
    let out = smp(
        pod.clone(),
        json!({"spec": {"volumes": [{"name": "v", "hostPath": {"path": "/x"}, "$retainKeys": ["name", "hostPath"]}]}}),
    )
    .unwrap();
    assert_eq!(
        out["spec"]["volumes"],
        json!([{"name": "v", "hostPath": {"path": "/x"}}])
    );
    let out = smp(
        json!({"metadata": {"finalizers": ["a", "b", "c"]}}),
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}}),
    )
    .unwrap();
    assert_eq!(out["metadata"]["finalizers"], json!(["a", "c"]));
    let out = smp(
        pod,
        json!({"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]}}),
    )
    .unwrap();
    assert_eq!(out["spec"]["containers"], json!([{"name": "b"}, {"name": "a"}]));
}

#[test]
fn errors() {
    let pod = json!({"spec": {"containers": [{"name": "a"}]}});
    assert!(smp(pod.clone(), json!({"spec": {"containers": [{"image": "x"}]}})).is_err());
    assert!(
        smp(
            pod.clone(),
            json!({"spec": {"containers": [{"name": "a", "$patch": "merge"}]}})
        )
        .is_err()
    );
    assert!(
        smp(
            json!({"spec": {"affinity": {}}}),
            json!({"spec": {"affinity": {"$patch": "bogus"}}})
        )
        .is_err()
    );
    assert!(smp(pod, json!({"spec": {"containers": [{"name": "b"}, "x"]}})).is_err());
}

#[test]
fn diff_round_trips() {
    let before = json!({"a": {"b": [1, 2], "c": "x", "d": [{"n": 1}], "f": [3]}, "k~/": 1});
    let after = json!({"a": {"b": [1, 2, 3], "e": true, "d": [{"n": 2}], "f": [1, 2, 3]}, "k~/": 2});
    let mut ops = Vec::new();
    diff(&before, &after, &mut Vec::new(), &mut ops);
    assert_eq!(patch::apply(&before, &ops).unwrap(), after);
    assert!(
        ops.iter()
            .all(|op| !matches!(op, PatchOperation::Replace(r) if r.path.as_str() == "/a"))
    );
}
