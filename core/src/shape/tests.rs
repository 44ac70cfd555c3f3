use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use super::*;

/// A pod with most kinds of fields: strings, integers of both widths, booleans, int-or-string ports,
/// quantities, timestamps, maps, lists of structs, nested probes, volumes and a status.
fn rich_pod() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-0", "namespace": "shop", "generateName": "web-",
            "labels": {"app": "web"}, "annotations": {"a": "b"},
            "creationTimestamp": "2026-11-28T06:00:00Z",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1",
                                 "uid": "u", "controller": true, "blockOwnerDeletion": true}],
            "finalizers": ["f"], "generation": 3
        },
        "spec": {
            "containers": [{
                "name": "app", "image": "nginx:1.25", "args": ["-g"], "command": ["nginx"],
                "env": [{"name": "A", "value": "1"},
                        {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                        {"name": "C", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu",
                                                                          "divisor": "1m"}}}],
                "ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}],
                "resources": {"limits": {"cpu": "500m", "memory": 1073741824},
                              "requests": {"cpu": 1}},
                "livenessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 10,
                                  "terminationGracePeriodSeconds": 30},
                "readinessProbe": {"tcpSocket": {"port": 80}, "initialDelaySeconds": 1},
                "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}},
                "securityContext": {"runAsUser": 1000, "privileged": false,
                                    "capabilities": {"add": ["NET_ADMIN"]}},
                "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": true}],
                "stdin": false, "tty": false
            }],
            "initContainers": [{"name": "init", "image": "busybox", "restartPolicy": "Always"}],
            "volumes": [
                {"name": "data", "emptyDir": {"sizeLimit": "1Gi"}},
                {"name": "cfg", "configMap": {"name": "cfg", "defaultMode": 420,
                                               "items": [{"key": "k", "path": "p"}]}},
                {"name": "proj", "projected": {"sources": [{"serviceAccountToken":
                    {"path": "token", "expirationSeconds": 3607}}]}}
            ],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In",
                                                             "values": ["a"]}]}]}},
                "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                    "weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {"matchLabels": {"app": "web"}}}}]}},
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 300}],
            "nodeSelector": {"disk": "ssd"},
            "terminationGracePeriodSeconds": 30, "activeDeadlineSeconds": 600,
            "priority": 0, "enableServiceLinks": true, "hostNetwork": false,
            "dnsConfig": {"options": [{"name": "ndots", "value": "2"}]},
            "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                           "whenUnsatisfiable": "DoNotSchedule"}],
            "overhead": {"cpu": "10m"}
        },
        "status": {
            "phase": "Running", "podIP": "10.0.0.1", "startTime": "2026-11-28T06:00:01Z",
            "conditions": [{"type": "Ready", "status": "True",
                            "lastTransitionTime": "2026-11-28T06:00:02Z"}],
            "containerStatuses": [{"name": "app", "image": "nginx:1.25", "imageID": "sha256:1",
                                   "ready": true, "restartCount": 0, "started": true,
                                   "state": {"running": {"startedAt": "2026-11-28T06:00:02Z"}}}]
        }
    })
}

fn decodes(value: &Value) -> bool {
    decode::check::<Pod>(value).is_ok()
}

/// Every JSON pointer of `value`.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            pointers(
                v,
                format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                out,
            )
        }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, v)| pointers(v, format!("{at}/{i}"), out)),
        _ => {}
    }
    out.push(at);
}

fn replacements() -> Vec<Value> {
    vec![
        json!("x"),
        json!("80"),
        json!("2026-11-28T06:00:00Z"),
        json!("bm90LWI2NA=="),
        json!(5),
        json!(-1),
        json!(1.5),
        json!(1.0),
        json!(3_000_000_000u64),
        json!(u64::MAX),
        json!(true),
        Value::Null,
        json!([]),
        json!(["x"]),
        json!([1]),
        json!({}),
        json!({"a": "b"}),
        json!({"name": "x"}),
    ]
}

#[test]
fn the_pod_shape_models_every_node_and_stays_small() {
    let shape = Shape::pod();
    assert!(shape.is_complete());
    // Built once per process; a bound so that a schema change that blows it up is noticed.
    assert!(shape.nodes.len() < 4000, "{} nodes", shape.nodes.len());
}

#[test]
fn valid_pods_are_admitted_without_the_typed_decoder() {
    let shape = Shape::pod();
    let bench: Value =
        serde_json::from_str(include_str!("../../../benches/data/pod-create-review.json")).unwrap();
    for pod in [
        rich_pod(),
        bench["request"]["object"].clone(),
        json!({}),
        json!({"spec": null}),
    ] {
        assert!(decodes(&pod), "{pod}");
        assert!(shape.admits(&pod), "{pod}");
    }
}

/// The guarantee the fast path rests on: whatever the walk admits, the typed decoder accepts. Every
/// node of a rich pod is replaced by values of every JSON type in turn.
#[test]
fn whatever_is_admitted_decodes() {
    let shape = Shape::pod();
    let pod = rich_pod();
    let mut all = Vec::new();
    pointers(&pod, String::new(), &mut all);
    let (mut admitted, mut refused, mut fallbacks) = (0, 0, 0);
    for pointer in all.iter().filter(|p| !p.is_empty()) {
        for replacement in replacements() {
            let mut changed = pod.clone();
            *changed.pointer_mut(pointer).unwrap() = replacement.clone();
            let decodes = decodes(&changed);
            if shape.admits(&changed) {
                assert!(decodes, "admitted but does not decode: {pointer} = {replacement}");
                admitted += 1;
            } else if decodes {
                fallbacks += 1;
            } else {
                refused += 1;
            }
        }
    }
    // The walk decides most cases itself; the typed decoder is left only the few it does not model.
    assert!(
        admitted > 500 && refused > 2000,
        "{admitted} admitted, {refused} refused, {fallbacks} left to the decoder"
    );
    assert!(fallbacks * 20 < admitted, "{fallbacks} fallbacks of {admitted}");
}

#[test]
fn the_resource_names_itself_or_nothing() {
    let shape = Shape::pod();
    for (pod, admitted) in [
        (json!({"apiVersion": "v1", "kind": "Pod"}), true),
        (json!({"apiVersion": "apps/v1", "kind": "Pod"}), false),
        (json!({"apiVersion": "v1", "kind": "Deployment"}), false),
        (json!({"apiVersion": null}), false),
        (json!([]), false),
        (json!("pod"), false),
    ] {
        assert_eq!(shape.admits(&pod), admitted, "{pod}");
        assert_eq!(decodes(&pod), admitted, "{pod}");
    }
}

#[test]
fn check_names_the_field_when_the_walk_refuses() {
    let shape = Shape::pod();
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "spec": {"containers": "app"}});
    let err = shape.check::<Pod>(&pod).unwrap_err();
    assert_eq!(err.path.as_deref(), Some("spec.containers"), "{err}");
    assert_eq!(shape.check::<Pod>(&rich_pod()), Ok(()));
}

/// `Shape::pod` reads `shape/pod.shape`; it must be the shape compiled from k8s-openapi's schema.
/// After a k8s-openapi upgrade: `UPDATE_SHAPES=1 cargo test -p kruise-core stored_pod_shape`.
#[test]
fn the_stored_pod_shape_is_the_compiled_one() {
    let compiled = Shape::of::<Pod>();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/shape/pod.shape");
    if std::env::var_os("UPDATE_SHAPES").is_some() {
        std::fs::write(path, compiled.to_text()).unwrap();
    }
    let stored = std::fs::read_to_string(path).unwrap();
    assert!(
        stored == compiled.to_text(),
        "{path} is stale: UPDATE_SHAPES=1 cargo test -p kruise-core stored_pod_shape"
    );
    assert_eq!(Shape::pod(), compiled);
    assert_eq!(Shape::from_text(&stored), Ok(compiled));
}

#[test]
fn a_shape_text_is_read_back() {
    let shape = Shape::from_text(
        "# a comment\nshape v1 Pod 0\n\n0 struct metadata=1 spec=3\n1 map 2\n2 string\n3 list 4\n4 int32\n",
    )
    .unwrap();
    assert!(shape.admits(&json!({"kind": "Pod", "metadata": {"a": "b"}, "spec": [1, 2]})));
    assert!(!shape.admits(&json!({"metadata": {"a": 1}})));
    assert!(!shape.admits(&json!({"spec": [3_000_000_000u64]})));
    assert!(!shape.admits(&json!({"kind": "Node"})));
    assert_eq!(Shape::from_text(&shape.to_text()), Ok(shape));
}

#[test]
fn a_broken_shape_text_is_refused_with_its_line() {
    for (text, line, message) in [
        ("", 1, "no `shape` line"),
        (
            "shape v1 Pod\n",
            1,
            "expected `shape <apiVersion> <kind> <root node>`",
        ),
        ("shape v1 Pod x\n", 1, "`x` is not a node number"),
        (
            "shape v1 Pod 0\n0 struct a=1\n",
            2,
            "node 1 is referred to but not defined",
        ),
        (
            "shape v1 Pod 1\n0 string\n",
            2,
            "node 1 is referred to but not defined",
        ),
        ("shape v1 Pod 0\n1 string\n", 2, "expected node 0"),
        ("shape v1 Pod 0\n0 struct a=0 a=0\n", 2, "field `a` twice"),
        (
            "shape v1 Pod 0\n0 struct a\n",
            2,
            "expected `name=node`, found `a`",
        ),
        (
            "shape v1 Pod 0\n0 list\n",
            2,
            "`list` without the node of its values",
        ),
        ("shape v1 Pod 0\n0 string 3\n", 2, "unexpected `3`"),
        ("shape v1 Pod 0\n0 float\n", 2, "unknown node kind `float`"),
        ("shape v1 Pod 0\n0\n", 2, "a node without a kind"),
    ] {
        let err = Shape::from_text(text).unwrap_err();
        assert_eq!(
            err,
            ShapeTextError {
                line,
                message: message.into()
            },
            "{text:?}"
        );
    }
}
