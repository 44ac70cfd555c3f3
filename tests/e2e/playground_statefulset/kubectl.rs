//! The same set driven with the real kubectl (which must be on PATH), written as v1alpha1.

use crate::common::kubectl::{ok, serve, wait_for};
use crate::playground_statefulset::env::SHARED_STATUS;

fn example(name: &str) -> String {
    format!("{}/examples/playground/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn kubectl_applies_a_v1alpha1_set_updates_it_in_place_and_scales_it() {
    let pg = serve(&["--kubelet-delay-ms", "100"]);
    let k = pg.kubeconfig.as_path();
    ok(k, &["apply", "-f", &example("statefulset-v1alpha1.yaml")]);
    let field = |path: &str| ok(k, &["get", "asts", "db", "-o", &format!("jsonpath={{{path}}}")]);
    wait_for("3 ready pods", || field(".status.readyReplicas") == "3");
    let pods = |path: &str| {
        ok(
            k,
            &[
                "get",
                "pods",
                "-l",
                "app=db-asts",
                "-o",
                &format!("jsonpath={{{path}}}"),
            ],
        )
        .split_whitespace()
        .map(str::to_string)
        .collect::<Vec<_>>()
    };
    assert_eq!(pods(".items[*].metadata.name"), ["db-0", "db-1", "db-2"]);
    let claims = ok(k, &["get", "pvc", "-o", "jsonpath={.items[*].metadata.name}"]);
    assert_eq!(claims, "data-db-0 data-db-1 data-db-2");
    let uids = pods(".items[*].metadata.uid");
    let new_image = r#"{"spec":{"template":{"spec":{"containers":[{"name":"db","image":"nginx:1.28"}]}}}}"#;
    ok(k, &["patch", "asts", "db", "--type", "merge", "-p", new_image]);
    wait_for("2 pods updated past the partition", || {
        field(".status.updatedReadyReplicas") == "2" && field(".status.readyReplicas") == "3"
    });
    assert_eq!(
        pods(".items[*].spec.containers[0].image"),
        ["nginx:1.27", "nginx:1.28", "nginx:1.28"]
    );
    assert_eq!(pods(".items[*].metadata.uid"), uids, "in place: the same pods");
    ok(k, &["scale", "asts", "db", "--replicas=4"]);
    wait_for("4 ready pods", || field(".status.readyReplicas") == "4");
    assert_eq!(pods(".items[*].metadata.name"), ["db-0", "db-1", "db-2", "db-3"]);
    let table = ok(k, &["get", "asts", "db"]);
    assert!(table.contains("DESIRED"), "OpenKruise's printer columns: {table}");
    // Read back in each version: the same status. The plural, not `asts`: kubectl (1.32) drops the
    // version when it expands a short name, so `asts.v1alpha1.apps.kruise.io` reads the preferred one.
    let read = |resource: &str| {
        let json = ok(k, &["get", resource, "db", "-o", "json"]);
        serde_json::from_str::<serde_json::Value>(&json).unwrap()
    };
    let alpha = read("statefulsets.v1alpha1.apps.kruise.io");
    let beta = read("statefulsets.v1beta1.apps.kruise.io");
    assert_eq!(alpha["apiVersion"], "apps.kruise.io/v1alpha1");
    assert_eq!(beta["apiVersion"], "apps.kruise.io/v1beta1");
    let (alpha, beta) = (&alpha["status"], &beta["status"]);
    assert_eq!(alpha["readyReplicas"], 4, "{alpha}");
    for key in SHARED_STATUS {
        assert_eq!(alpha[key], beta[key], "status.{key} as v1alpha1 and v1beta1");
    }
    assert!(
        alpha.get("updatedReadyReplicas").is_none(),
        "v1beta1 only: {alpha}"
    );
}
