//! `kruise playground` driven with the real kubectl, as the README's demo does: a sidecar injected
//! into a pod, a protected namespace kept, an eviction past a PodUnavailableBudget refused.
//! kubectl must be on PATH: without it these tests fail.

use crate::common;

use common::kubectl::{Served, kubectl, ok, serve as serve_with, wait_for};

fn serve() -> Served {
    serve_with(&[])
}

fn example(name: &str) -> String {
    format!("{}/examples/playground/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn kubectl_sees_the_sidecar_injected() {
    let pg = serve();
    let k = pg.kubeconfig.as_path();
    ok(k, &["label", "namespace", "default", "sidecar-injection=enabled"]);
    ok(k, &["apply", "-f", &example("sidecarset.yaml")]);
    ok(k, &["create", "-f", &example("pod.yaml")]);
    let names = ok(
        k,
        &["get", "pod", "web", "-o", "jsonpath={.spec.containers[*].name}"],
    );
    assert_eq!(names, "web log-agent");
    wait_for("the pod to be Running 2/2", || {
        let out = ok(k, &["get", "pod", "web", "--no-headers"]);
        out.contains("2/2") && out.contains("Running")
    });
}

#[test]
fn kubectl_cannot_delete_a_protected_namespace() {
    let pg = serve();
    let k = pg.kubeconfig.as_path();
    ok(k, &["create", "namespace", "payments"]);
    ok(
        k,
        &[
            "label",
            "namespace",
            "payments",
            "policy.kruise.io/delete-protection=Always",
        ],
    );
    let (success, _, err) = kubectl(k, &["delete", "namespace", "payments"], None);
    assert!(!success);
    assert_eq!(
        err.trim(),
        "Error from server (Forbidden): admission webhook \"vnamespace.kb.io\" denied the request: \
         forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always"
    );
    ok(k, &["get", "namespace", "payments"]);
}

#[test]
fn kubectl_eviction_past_the_budget_is_429() {
    // Replacement pods take 3 s to be Ready: the second eviction finds the budget spent.
    let pg = serve_with(&["--kubelet-delay-ms", "3000"]);
    let k = pg.kubeconfig.as_path();
    ok(k, &["apply", "-f", &example("pub.yaml")]);
    wait_for("kruise-rs to see the PUB", || {
        ok(
            k,
            &[
                "get",
                "pub",
                "shop",
                "-o",
                "jsonpath={.status.observedGeneration}",
            ],
        ) == "1"
    });
    ok(k, &["apply", "-f", &example("deployment.yaml")]);
    wait_for("3 available replicas", || {
        ok(
            k,
            &[
                "get",
                "deployment",
                "web",
                "-o",
                "jsonpath={.status.availableReplicas}",
            ],
        ) == "3"
    });
    wait_for("the PUB to allow one", || {
        ok(
            k,
            &[
                "get",
                "pub",
                "shop",
                "-o",
                "jsonpath={.status.unavailableAllowed}",
            ],
        ) == "1"
    });
    let pods = ok(
        k,
        &[
            "get",
            "pods",
            "-l",
            "app=shop",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
    );
    let pods: Vec<&str> = pods.split_whitespace().collect();
    let evict = |pod: &str| {
        let path = format!("/api/v1/namespaces/default/pods/{pod}/eviction");
        let body = format!(r#"{{"apiVersion":"policy/v1","kind":"Eviction","metadata":{{"name":"{pod}"}}}}"#);
        kubectl(k, &["create", "--raw", &path, "-f", "-"], Some(&body))
    };
    let (first, _, err) = evict(pods[0]);
    assert!(first, "first eviction: {err}");
    let (second, _, err) = evict(pods[1]);
    assert!(!second);
    assert_eq!(
        err.trim(),
        "Error from server (TooManyRequests): admission webhook \"vpodeviction.kb.io\" denied the request: \
         podunavailablebudget.policy.kruise.io \"shop\" is forbidden: pub unavailable allowed is negative"
    );
}

#[test]
fn kubectl_updates_a_cloneset_in_place_and_scales_it() {
    let pg = serve_with(&["--kubelet-delay-ms", "100"]);
    let k = pg.kubeconfig.as_path();
    ok(k, &["apply", "-f", &example("cloneset.yaml")]);
    let field = |path: &str| {
        ok(
            k,
            &["get", "cloneset", "web", "-o", &format!("jsonpath={{{path}}}")],
        )
    };
    wait_for("4 ready pods", || field(".status.readyReplicas") == "4");
    let pods = |path: &str| {
        let out = ok(
            k,
            &[
                "get",
                "pods",
                "-l",
                "app=web-cloneset",
                "-o",
                &format!("jsonpath={{{path}}}"),
            ],
        );
        let mut items: Vec<String> = out.split_whitespace().map(str::to_string).collect();
        items.sort();
        items
    };
    let uids = pods(".items[*].metadata.uid");
    let new_image = r#"{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}"#;
    ok(
        k,
        &["patch", "cloneset", "web", "--type", "merge", "-p", new_image],
    );
    wait_for("2 pods updated past the partition", || {
        field(".status.updatedReadyReplicas") == "2" && field(".status.readyReplicas") == "4"
    });
    let images = pods(".items[*].spec.containers[0].image");
    assert_eq!(
        images.iter().filter(|i| *i == "nginx:1.28").count(),
        2,
        "{images:?}"
    );
    assert_eq!(
        pods(".items[*].metadata.uid"),
        uids,
        "updated in place: the same pods"
    );
    ok(k, &["scale", "cloneset", "web", "--replicas=6"]);
    wait_for("6 ready pods", || field(".status.readyReplicas") == "6");
    let table = ok(k, &["get", "cloneset", "web"]);
    assert!(table.starts_with("NAME"), "{table}");
    assert!(table.contains("DESIRED"), "OpenKruise's printer columns: {table}");
}
