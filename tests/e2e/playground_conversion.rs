//! `kruise playground` with the real kubectl: custom resources written in v1alpha1 are stored in
//! v1beta1 and read back in either version through kruise-rs's `/convert`, as kube-apiserver
//! does it (apiextensions-apiserver's `pkg/apiserver/conversion`); schemas are enforced; every
//! sample under `examples/` applies as is (the install manifests: `tests/e2e/playground_install.rs`); a
//! PodDisruptionBudget blocks `kubectl drain`. kubectl must be on PATH: without it these fail.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::kubectl::{Served, kubectl, ok, serve as serve_with, wait_for};

fn serve() -> Served {
    serve_with(&["--kubelet-delay-ms", "100"])
}

fn repo(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// The CloneSet of OpenKruise's in-place update blog posts, in v1alpha1.
const BLOG_CLONESET: &str = "apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: sample
spec:
  replicas: 5
  selector:
    matchLabels: {app: sample}
  template:
    metadata:
      labels: {app: sample}
    spec:
      containers:
      - name: nginx
        image: nginx:alpine
  updateStrategy:
    type: InPlaceIfPossible
    partition: 3
";

#[test]
fn a_v1alpha1_cloneset_is_patched_scaled_and_read_in_both_versions() {
    let pg = serve();
    let k = pg.kubeconfig.as_path();
    // A watch in v1beta1 (kubectl's preferred version) started before the v1alpha1 write.
    let mut watch = Command::new("kubectl")
        .env("KUBECONFIG", k)
        .args(["get", "clonesets.v1beta1.apps.kruise.io", "--watch", "-o", "json"])
        .args(["--output-watch-events"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (success, out, err) = kubectl(k, &["apply", "-f", "-"], Some(BLOG_CLONESET));
    assert!(success, "{err}");
    assert_eq!(out, "cloneset.apps.kruise.io/sample created\n");
    let get = |version: &str, path: &str| {
        ok(
            k,
            &[
                "get",
                &format!("clonesets.{version}.apps.kruise.io"),
                "sample",
                "-o",
                &format!("jsonpath={{{path}}}"),
            ],
        )
    };
    wait_for("5 ready pods", || get("v1beta1", ".status.readyReplicas") == "5");
    // The v1beta1 form of the v1alpha1 strategy: kruise-rs's conversion (api/src/conversion),
    // OpenKruise's v1beta1 moves the policy under `rollingUpdate`.
    assert_eq!(
        get("v1beta1", ".spec.updateStrategy.rollingUpdate.podUpdatePolicy"),
        "InPlaceIfPossible"
    );
    assert_eq!(
        get("v1beta1", ".spec.updateStrategy.rollingUpdate.partition"),
        "3"
    );
    assert_eq!(get("v1alpha1", ".spec.updateStrategy.type"), "InPlaceIfPossible");
    assert_eq!(get("v1alpha1", ".apiVersion"), "apps.kruise.io/v1alpha1");
    assert_eq!(get("v1beta1", ".apiVersion"), "apps.kruise.io/v1beta1");
    // The issue's failing commands: kubectl patches and scales in v1beta1 (the preferred version).
    let image = r#"{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}}}"#;
    ok(
        k,
        &["patch", "cloneset", "sample", "--type", "merge", "-p", image],
    );
    wait_for("2 pods updated past the partition", || {
        get("v1beta1", ".status.updatedReadyReplicas") == "2"
    });
    ok(k, &["scale", "cloneset", "sample", "--replicas=6"]);
    wait_for("6 ready pods", || get("v1beta1", ".status.readyReplicas") == "6");
    // Same content in both versions (conversion is lossless for these fields).
    assert_eq!(get("v1alpha1", ".spec.updateStrategy.partition"), "3");
    for path in [
        ".spec.replicas",
        ".spec.template.spec.containers[0].image",
        ".metadata.uid",
        ".metadata.resourceVersion",
        ".status.replicas",
    ] {
        assert_eq!(get("v1alpha1", path), get("v1beta1", path), "{path}");
    }
    assert_eq!(get("v1alpha1", ".spec.replicas"), "6");
    // The watcher saw the v1alpha1-written object as v1beta1.
    let _ = watch.kill();
    let out = watch.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(r#"{"type":"ADDED","object":{"apiVersion":"apps.kruise.io/v1beta1""#),
        "{text}"
    );
    // (The v1alpha1 apiVersion only appears escaped, in kubectl's last-applied annotation.)
    assert!(
        !text.contains(r#""apiVersion":"apps.kruise.io/v1alpha1""#),
        "{text}"
    );
}

#[test]
fn a_down_conversion_webhook_is_a_500_and_nothing_is_stored() {
    let pg = serve();
    let k = pg.kubeconfig.as_path();
    // Point the CloneSet CRD's conversion webhook at a closed port.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "https://127.0.0.1:{}/convert",
        closed.local_addr().unwrap().port()
    );
    drop(closed);
    let patch = format!(
        r#"{{"spec":{{"conversion":{{"webhook":{{"clientConfig":{{"service":null,"url":"{url}"}}}}}}}}}}"#
    );
    ok(
        k,
        &[
            "patch",
            "crd",
            "clonesets.apps.kruise.io",
            "--type",
            "merge",
            "-p",
            &patch,
        ],
    );
    let (success, _, err) = kubectl(k, &["create", "-f", "-"], Some(BLOG_CLONESET));
    assert!(!success);
    // kube-apiserver: webhook_converter.go's error, answered by ErrorToAPIStatus as a 500
    // without a reason (kubectl prints "Error from server: …").
    let prefix = format!(
        "Error from server: error when creating \"STDIN\": conversion webhook for apps.kruise.io/v1alpha1, \
         Kind=CloneSet failed: Post \"{url}?timeout=30s\": "
    );
    assert!(err.starts_with(&prefix), "{err}");
    let (_, out, err) = kubectl(k, &["get", "clonesets.v1beta1.apps.kruise.io"], None);
    assert_eq!(
        (out.as_str(), err.trim()),
        ("", "No resources found in default namespace.")
    );
}

#[test]
fn a_schema_violation_is_a_422_with_the_field_path() {
    let pg = serve();
    let k = pg.kubeconfig.as_path();
    // protectTotalReplicas has `minimum: 1` in the CRD. The schema is checked after mutating and
    // before validating admission (kube's strategy Validate), so kruise-rs's validating webhook
    // never sees it. Wording of apiextensions-apiserver's ValidateCustomResource (kube-openapi).
    let bad = "apiVersion: policy.kruise.io/v1beta1
kind: PodUnavailableBudget
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  maxUnavailable: 1
  protectTotalReplicas: 0
";
    let (success, _, err) = kubectl(k, &["create", "-f", "-"], Some(bad));
    assert!(!success);
    assert!(
        err.contains(
            "spec.protectTotalReplicas: Invalid value: 0: \
             spec.protectTotalReplicas in body should be greater than or equal to 1"
        ),
        "{err}"
    );
    // An unknown field with kubectl's default --validate=strict: the schema-coercing decoder's 400.
    let unknown = BLOG_CLONESET.replace("replicas: 5", "replicas: 5\n  replicaz: 5");
    let (success, _, err) = kubectl(k, &["create", "-f", "-"], Some(&unknown));
    assert!(!success);
    assert!(
        err.contains(r#"CloneSet in version "v1alpha1" cannot be handled as a CloneSet: strict decoding error: unknown field "spec.replicaz""#),
        "{err}"
    );
}

/// Every YAML file under `dir`, recursively.
fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

#[test]
fn every_example_applies() {
    let pg = serve();
    let k = pg.kubeconfig.as_path();
    // Namespaces the samples use.
    for ns in ["shop", "payments", "web"] {
        let _ = kubectl(k, &["create", "namespace", ns], None);
    }
    let mut files = vec![];
    yaml_files(Path::new(&repo("examples")), &mut files);
    files.sort();
    // Each file through kubectl's default (strict) validation and the server's schemas. kruise-rs's
    // own webhooks may refuse a sample on its semantics (a podsToDelete or revision naming objects
    // that do not exist here, examples/manifests/bad-label.yaml on purpose): that is admission, not
    // schema; anything else (client-side validation, strict decoding, a schema 422) fails.
    let mut failures = vec![];
    for f in &files {
        let file = f.to_string_lossy();
        let (success, _, err) = kubectl(k, &["apply", "--dry-run=server", "-f", &file], None);
        let admission_only = err
            .lines()
            .filter(|l| !l.trim().is_empty())
            .all(|l| l.contains("admission webhook"));
        if file.ends_with("config-samples/apps_v1alpha1_sidecarset.yaml") {
            // Verbatim upstream sample misspelling two fields of resourcesPolicy (see
            // examples/openkruise-samples/README.md): kube-apiserver refuses it too.
            assert!(!success);
            assert!(
                err.contains(r#"SidecarSet in version "v1alpha1" cannot be handled as a SidecarSet: strict decoding error: unknown field "spec.containers[1].resourcesPolicy.resourceExpr", unknown field "spec.containers[1].resourcesPolicy.targetContainerMode""#),
                "{err}"
            );
            continue;
        }
        if file.ends_with("config-samples/apps_v1beta1_statefulset.yaml") {
            // Verbatim upstream scaffold (unknown `spec.foo`, no selector or template; see
            // examples/openkruise-samples/README.md): kube-apiserver's schema refuses it too.
            assert!(!success, "{file} was accepted");
            continue;
        }
        if !success && !admission_only {
            failures.push(format!("{file}: {err}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn explain_reads_our_crd_schemas() {
    let pg = serve();
    let k = pg.kubeconfig.as_path();
    let out = ok(k, &["explain", "cloneset.spec.updateStrategy.rollingUpdate"]);
    // kubectl explain prints GROUP, KIND, VERSION and the field's schema (OpenAPI v3).
    assert!(out.contains("GROUP:      apps.kruise.io"), "{out}");
    assert!(out.contains("KIND:       CloneSet"), "{out}");
    assert!(out.contains("VERSION:    v1beta1"), "{out}");
    assert!(out.contains("partition"), "{out}");
    assert!(out.contains("podUpdatePolicy"), "{out}");
}

#[test]
fn drain_is_blocked_by_a_pod_disruption_budget() {
    let pg = serve();
    let k = pg.kubeconfig.as_path();
    let objects = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: web}}
";
    let (success, _, err) = kubectl(k, &["apply", "-f", "-"], Some(objects));
    assert!(success, "{err}");
    wait_for("2 available replicas", || {
        ok(
            k,
            &[
                "get",
                "deployment",
                "web",
                "-o",
                "jsonpath={.status.availableReplicas}",
            ],
        ) == "2"
    });
    wait_for("the budget observed", || {
        ok(
            k,
            &["get", "pdb", "web", "-o", "jsonpath={.status.currentHealthy}"],
        ) == "2"
    });
    let node = ok(
        k,
        &[
            "get",
            "pods",
            "-l",
            "app=web",
            "-o",
            "jsonpath={.items[0].spec.nodeName}",
        ],
    );
    let (success, _, err) = kubectl(
        k,
        &[
            "drain",
            &node,
            "--ignore-daemonsets",
            "--timeout=3s",
            "--pod-selector=app=web",
        ],
        None,
    );
    assert!(!success);
    // kubectl drain retries on kube-apiserver's 429 from eviction.go, printing its message.
    assert!(
        err.contains("Cannot evict pod as it would violate the pod's disruption budget."),
        "{err}"
    );
    assert_eq!(
        ok(k, &["get", "pods", "-l", "app=web", "-o", "name"])
            .lines()
            .count(),
        2
    );
}
