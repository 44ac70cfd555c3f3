use kruise_core::view::MemoryView;
use serde_json::{Value, json};

use super::*;

fn view() -> MemoryView {
    let mut v = MemoryView::default();
    v.add(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"type": "virtual-kubelet"}}}))
        .unwrap();
    v.add(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}}))
        .unwrap();
    v.add(pod("web-0", "n1")).unwrap();
    v.add(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "pending", "namespace": "shop", "uid": "u-p"},
        "spec": {"containers": [{"name": "app"}]}, "status": {"phase": "Pending"}}))
        .unwrap();
    v.add(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "done", "namespace": "shop", "uid": "u-d"},
        "spec": {"nodeName": "n2", "containers": [{"name": "app"}]}, "status": {"phase": "Succeeded"}}))
        .unwrap();
    v.add(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "lost", "namespace": "shop", "uid": "u-l"},
        "spec": {"nodeName": "gone", "containers": [{"name": "app"}]}, "status": {"phase": "Running"}}))
        .unwrap();
    v
}

fn pod(name: &str, node: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": name, "namespace": "shop", "uid": "uid-1"},
    "spec": {"nodeName": node, "terminationGracePeriodSeconds": 20, "containers": [
        {"name": "app", "ports": [{"name": "http", "containerPort": 8080}],
         "lifecycle": {"preStop": {"httpGet": {"path": "/quit", "port": "http"}}}},
        {"name": "sidecar", "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 1"]}}}},
        {"name": "plain", "ports": [{"containerPort": 9000}], "lifecycle": {"preStop": {"sleep": {"seconds": 3}}}},
        {"name": "fresh"},
    ]},
    "status": {"phase": "Running", "containerStatuses": [
        {"name": "app", "containerID": "containerd://aaa", "restartCount": 2, "ready": true},
        {"name": "sidecar", "containerID": "containerd://bbb", "restartCount": 0, "ready": true},
        {"name": "plain", "containerID": "containerd://ccc", "restartCount": 0, "ready": true},
        {"name": "fresh", "restartCount": 0, "ready": false},
    ]}})
}

fn crr(version: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("apps.kruise.io/{version}"), "kind": "ContainerRecreateRequest",
        "metadata": {"name": "r", "namespace": "shop"}, "spec": spec})
}

fn request(operation: &str, object: &Value, old: Option<&Value>) -> AdmissionRequest {
    let version = object["apiVersion"].as_str().unwrap().rsplit_once('/').unwrap().1;
    let mut review = json!({"uid": "1", "operation": operation, "name": "r", "namespace": "shop",
        "kind": {"group": "apps.kruise.io", "version": version, "kind": "ContainerRecreateRequest"},
        "resource": {"group": "apps.kruise.io", "version": version, "resource": "containerrecreaterequests"},
        "userInfo": {"username": "u"}, "object": object});
    if let Some(old) = old {
        review["oldObject"] = old.clone();
    }
    serde_json::from_value(review).unwrap()
}

/// Runs the webhook and applies its patch, or returns the denial's code and message.
fn admit(object: &Value) -> Result<Value, (u16, String)> {
    admit_with(object, &Settings::default())
}

fn admit_with(object: &Value, settings: &Settings) -> Result<Value, (u16, String)> {
    let d = mutate(&request("CREATE", object, None), &view(), settings);
    match d.denial {
        Some(denial) => Err((denial.code, denial.message)),
        None => Ok(patch::apply(object, &d.patch).expect("the patch applies")),
    }
}

#[test]
fn create_fills_labels_defaults_and_each_containers_context_from_the_pod() {
    for version in ["v1alpha1", "v1beta1"] {
        let got = admit(&crr(version, json!({"podName": "web-0", "containers": [{"name": "app"}, {"name": "sidecar"}, {"name": "plain"}]})))
            .unwrap();
        assert_eq!(
            got["metadata"]["labels"],
            json!({"crr.apps.kruise.io/active": "true", "crr.apps.kruise.io/node-name": "n1",
                "crr.apps.kruise.io/pod-uid": "uid-1", "type": "virtual-kubelet"})
        );
        assert_eq!(
            got["spec"]["strategy"],
            json!({"failurePolicy": "Fail", "terminationGracePeriodSeconds": 20})
        );
        assert_eq!(
            got["spec"]["containers"],
            json!([
                {"name": "app", "preStop": {"httpGet": {"path": "/quit", "port": "http"}},
                 "ports": [{"name": "http", "containerPort": 8080}],
                 "statusContext": {"containerID": "containerd://aaa", "restartCount": 2}},
                {"name": "sidecar", "preStop": {"exec": {"command": ["sh", "-c", "sleep 1"]}},
                 "statusContext": {"containerID": "containerd://bbb", "restartCount": 0}},
                {"name": "plain", "statusContext": {"containerID": "containerd://ccc", "restartCount": 0}},
            ])
        );
        // The result decodes as the stored type.
        let typed: kruise_api::apps_v1beta1::ContainerRecreateRequest = serde_json::from_value(
            json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "ContainerRecreateRequest",
                "metadata": got["metadata"], "spec": got["spec"]}),
        )
        .unwrap();
        assert_eq!(typed.spec.containers.len(), 3);
    }
}

#[test]
fn a_users_strategy_and_grace_are_kept() {
    let got = admit(&crr("v1beta1", json!({"podName": "web-0", "containers": [{"name": "sidecar"}],
        "strategy": {"failurePolicy": "Ignore", "terminationGracePeriodSeconds": 0, "orderedRecreate": true}})))
    .unwrap();
    assert_eq!(
        got["spec"]["strategy"],
        json!({"failurePolicy": "Ignore", "terminationGracePeriodSeconds": 0, "orderedRecreate": true})
    );
}

#[test]
fn fields_the_tool_prefilled_with_the_pods_values_are_accepted() {
    let got = admit(&crr("v1alpha1", json!({"podName": "web-0", "containers": [
        {"name": "app", "preStop": {"httpGet": {"path": "/quit", "port": "http"}}, "ports": [{"name": "http", "containerPort": 8080}]}]})))
    .unwrap();
    assert_eq!(
        got["spec"]["containers"][0]["statusContext"]["containerID"],
        "containerd://aaa"
    );
    let e = admit(&crr(
        "v1alpha1",
        json!({"podName": "web-0", "containers": [
        {"name": "app", "preStop": {"exec": {"command": ["true"]}}}]}),
    ))
    .unwrap_err();
    assert_eq!(e, (400, READ_ONLY.into()));
    let e = admit(&crr(
        "v1alpha1",
        json!({"podName": "web-0", "containers": [
        {"name": "sidecar", "statusContext": {"containerID": "containerd://old", "restartCount": 0}}]}),
    ))
    .unwrap_err();
    assert_eq!(e, (400, READ_ONLY.into()));
}

#[test]
fn create_refusals_carry_openkruises_messages() {
    let cases = [
        (
            json!({"podName": "", "containers": [{"name": "app"}]}),
            "podName can not be empty",
        ),
        (
            json!({"podName": "web-0", "containers": []}),
            "containers list can not be null",
        ),
        (
            json!({"podName": "web-0", "containers": [{"name": "app"}], "activeDeadlineSeconds": 2}),
            "activeDeadlineSeconds can not be less than 3s",
        ),
        (
            json!({"podName": "web-0", "containers": [{"name": "app"}], "strategy": {"terminationGracePeriodSeconds": -1}}),
            "terminationGracePeriodSeconds must be non-negative integer",
        ),
        (
            json!({"podName": "web-0", "containers": [{"name": "app"}], "strategy": {"unreadyGracePeriodSeconds": -1}}),
            "unreadyGracePeriodSeconds must be non-negative integer",
        ),
        (
            json!({"podName": "web-0", "containers": [{"name": "app"}], "strategy": {"failurePolicy": "Retry"}}),
            "unknown failurePolicy Retry",
        ),
        (
            json!({"podName": "nope", "containers": [{"name": "app"}]}),
            "no found Pod named nope",
        ),
        (
            json!({"podName": "done", "containers": [{"name": "app"}]}),
            "not allowed to recreate containers in an inactive Pod",
        ),
        (
            json!({"podName": "pending", "containers": [{"name": "app"}]}),
            "not allowed to recreate containers in a pending Pod",
        ),
        (
            json!({"podName": "lost", "containers": [{"name": "app"}]}),
            "failed to get Node gone: nodes \"gone\" not found",
        ),
        (
            json!({"podName": "web-0", "containers": [{"name": "app"}, {"name": "app"}]}),
            "can not recreate app multi times",
        ),
        (
            json!({"podName": "web-0", "containers": [{"name": "missing"}]}),
            "container missing not found in Pod",
        ),
        (
            json!({"podName": "web-0", "containers": [{"name": "fresh"}]}),
            "no containerID in fresh containerStatus, maybe the container has not been initialized",
        ),
    ];
    for (spec, message) in cases {
        assert_eq!(
            admit(&crr("v1beta1", spec.clone())),
            Err((400, message.into())),
            "{spec}"
        );
    }
}

#[test]
fn the_kruise_daemon_gate_off_forbids_requests() {
    let off = Settings::default().with(Gate::KruiseDaemon, false);
    let e = admit_with(
        &crr(
            "v1beta1",
            json!({"podName": "web-0", "containers": [{"name": "app"}]}),
        ),
        &off,
    )
    .unwrap_err();
    assert_eq!(e, (403, "feature-gate KruiseDaemon is not enabled".into()));
}

#[test]
fn updates_keep_the_spec_and_the_identity_labels() {
    let created = admit(&crr(
        "v1alpha1",
        json!({"podName": "web-0", "containers": [{"name": "app"}]}),
    ))
    .unwrap();
    let update = |changed: &Value| {
        let d = mutate(
            &request("UPDATE", changed, Some(&created)),
            &view(),
            &Settings::default(),
        );
        assert!(d.patch.is_empty());
        d.denial.map(|x| (x.code, x.message))
    };
    let mut status_only = created.clone();
    status_only["status"] = json!({"phase": "Recreating"});
    status_only["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .remove("crr.apps.kruise.io/active");
    assert_eq!(update(&status_only), None);
    let mut spec = created.clone();
    spec["spec"]["activeDeadlineSeconds"] = json!(10);
    assert_eq!(
        update(&spec),
        Some((403, "spec of ContainerRecreateRequest is immutable".into()))
    );
    for key in ["crr.apps.kruise.io/pod-uid", "crr.apps.kruise.io/node-name"] {
        let mut l = created.clone();
        l["metadata"]["labels"][key] = json!("other");
        assert_eq!(
            update(&l),
            Some((403, format!("not allowed to update immutable label {key}")))
        );
    }
    let mut acquired = created.clone();
    acquired["metadata"]["annotations"] =
        json!({"crr.apps.kruise.io/unready-acquired": "2026-01-01T00:00:00Z"});
    let mut moved = acquired.clone();
    moved["metadata"]["annotations"]["crr.apps.kruise.io/unready-acquired"] = json!("2026-01-01T00:00:09Z");
    let d = mutate(
        &request("UPDATE", &moved, Some(&acquired)),
        &view(),
        &Settings::default(),
    );
    assert_eq!(
        d.denial.map(|x| x.message),
        Some("not allowed to update immutable annotation crr.apps.kruise.io/unready-acquired".into())
    );
    assert_eq!(update(&acquired), None, "setting it the first time is allowed");
}
