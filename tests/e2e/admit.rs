//! `kruise admit`: stream semantics, exit codes, the manifest mode, and identical answers to the server.

use crate::common;

use std::process::{Command, Output};

use common::admit::admit;
use serde_json::Value;

fn lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn answers_a_stream_in_order_one_line_each() {
    let mut input = common::review("delete-namespace-shop.json");
    input.extend(common::review("delete-namespace-default.json"));
    let out = admit(
        &[
            "--webhook",
            "/validate-namespace",
            "--objects",
            "examples/cluster",
        ],
        &input,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers = lines(&out);
    assert_eq!(answers.len(), 2);
    assert_eq!(
        answers[0]["response"]["uid"],
        "7f0b2c4e-1d3a-4b8e-9c61-2f5d8a7e3b10"
    );
    assert_eq!(answers[0]["response"]["allowed"], false);
    assert_eq!(
        answers[1]["response"]["uid"],
        "4b1d7c90-2e3f-41a8-b6d5-0a9c8e7f6d21"
    );
    assert_eq!(answers[1]["response"]["allowed"], true);
}

#[test]
fn state_decides_the_answer() {
    // Without the pods of examples/cluster, a Cascading namespace may go.
    let input = common::review("delete-namespace-shop.json");
    let out = admit(&["--webhook", "/validate-namespace"], &input);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(lines(&out)[0]["response"]["allowed"], true);
}

#[test]
fn malformed_input_names_the_document_and_exits_2() {
    let mut input = common::review("delete-namespace-default.json");
    input.extend(b"\n{\"apiVersion\": \"admission.k8s.io/v1\", \"kind\": \"AdmissionReview\"}\n");
    let out = admit(
        &[
            "--webhook",
            "/validate-namespace",
            "--objects",
            "examples/cluster",
        ],
        &input,
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(lines(&out).len(), 1, "the first review is still answered");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("document 2: AdmissionReview has no request"),
        "{stderr}"
    );

    let out = admit(&["--webhook", "/validate-namespace"], b"{\"not json");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("document 1: not valid JSON"));

    let out = admit(&["--webhook", "/mutate-nothing"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no webhook is served at /mutate-nothing"));

    let out = admit(
        &["--webhook", "/validate-namespace", "--objects", "does/not/exist"],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does/not/exist"));
}

#[test]
fn manifest_mode_prints_admitted_objects_and_fails_on_denial() {
    let out = admit(
        &[
            "--objects",
            "examples/cluster",
            "-f",
            "examples/manifests/app.yaml",
        ],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let objects: Vec<Value> = serde_saphyr::from_multiple(&String::from_utf8_lossy(&out.stdout)).unwrap();
    let kinds: Vec<_> = objects
        .iter()
        .filter(|o| !o.is_null())
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["Service", "Deployment"]);

    let out = admit(&["-f", "examples/manifests/bad-label.yaml"], b"");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(r#"Service api: admission webhook "vservice.kb.io" denied the request"#)
            && stderr.contains(r#"Unsupported value: "Sometimes""#),
        "{stderr}"
    );
}

#[tokio::test]
async fn the_server_and_admit_give_identical_answers() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(dir.path()).await;
    let ca = std::fs::read_to_string(dir.path().join("ca.crt")).unwrap();
    let client = common::client(&ca, server.webhook_addr);
    for (path, review) in [
        ("/validate-namespace", "delete-namespace-shop.json"),
        ("/validate-namespace", "delete-namespace-default.json"),
        ("/validate-apps-deployment", "create-deployment-bad-label.json"),
    ] {
        let url = format!("https://localhost:{}{path}", server.webhook_addr.port());
        let served: Value = client
            .post(url)
            .header("content-type", "application/json")
            .body(common::review(review))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let offline = admit(
            &["--webhook", path, "--objects", "examples/cluster"],
            &common::review(review),
        );
        assert_eq!(offline.status.code(), Some(0));
        assert_eq!(lines(&offline), [served], "{review}");
    }
}

#[test]
fn conversion_reviews_offline() {
    let review = |uid: &str, desired: &str| {
        serde_json::to_vec(&serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": uid, "desiredAPIVersion": desired, "objects": [{
                "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet", "metadata": {"name": "s"},
                "spec": {"namespace": "shop", "selector": {"matchLabels": {"app": "web"}},
                         "containers": [{"name": "log", "image": "busybox"}]}}]}
        }))
        .unwrap()
    };
    let mut input = review("c1", "apps.kruise.io/v1beta1");
    input.extend(review("c2", "apps.kruise.io/v2"));
    let out = admit(&["--webhook", "/convert"], &input);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers = lines(&out);
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0]["response"]["uid"], "c1");
    assert_eq!(answers[0]["response"]["result"]["status"], "Success");
    let converted = &answers[0]["response"]["convertedObjects"][0];
    assert_eq!(
        converted["spec"]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"],
        "shop"
    );
    assert_eq!(answers[1]["response"]["result"]["status"], "Failure");
    assert!(
        answers[1]["response"]["result"]["message"]
            .as_str()
            .unwrap()
            .contains("apps.kruise.io/v2")
    );

    let out = admit(
        &["--webhook", "/convert"],
        b"{\"apiVersion\": \"apiextensions.k8s.io/v1\"}",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("document 1: ConversionReview has no request"));
}

#[test]
fn a_budget_is_spent_once_and_dry_runs_spend_nothing() {
    // PUB "web" allows one unavailable pod. A dry-run eviction spends nothing; the first real eviction
    // spends the budget (the status write is applied before the next review); the second is refused
    // with 429 so `kubectl drain` retries.
    let mut input = common::review("evict-web-7x2kq-dry-run.json");
    input.extend(common::review("evict-web-7x2kq.json"));
    input.extend(common::review("evict-web-9fj3c.json"));
    input.extend(common::review("evict-web-7x2kq.json"));
    let out = admit(
        &["--webhook", "/validate-pod", "--objects", "examples/cluster"],
        &input,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers = lines(&out);
    let allowed: Vec<_> = answers
        .iter()
        .map(|a| a["response"]["allowed"].as_bool().unwrap())
        .collect();
    // The repeated eviction of the already-disrupted pod is allowed: it is recorded, nothing more to spend.
    assert_eq!(allowed, [true, true, false, true]);
    let status = &answers[2]["response"]["status"];
    assert_eq!(status["code"], 429);
    assert_eq!(
        status["message"],
        "podunavailablebudget.policy.kruise.io \"web\" is forbidden: pub unavailable allowed is negative"
    );
}

#[test]
fn feature_gates_switch_deletion_protection_and_unknown_gates_are_refused() {
    let input = common::review("delete-namespace-shop.json");
    let args = |gates: &'static str| {
        [
            "--webhook",
            "/validate-namespace",
            "--objects",
            "examples/cluster",
            "--feature-gates",
            gates,
        ]
    };
    let on = admit(&args("ResourcesDeletionProtection=true"), &input);
    assert_eq!(lines(&on)[0]["response"]["allowed"], false);
    let off = admit(
        &args(" ResourcesDeletionProtection = false ,CloneSetPartitionRollback=true"),
        &input,
    );
    assert_eq!(
        off.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&off.stderr)
    );
    assert_eq!(lines(&off)[0]["response"]["allowed"], true);

    let unknown = admit(&args("ResourcesDeletionProtection=true,NoSuchGate=true"), &input);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(unknown.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        stderr.contains("unrecognized feature gate: NoSuchGate"),
        "{stderr}"
    );
    let not_bool = admit(&args("PodWebhook=yes"), &input);
    assert_eq!(not_bool.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&not_bool.stderr).contains("invalid value of PodWebhook=yes"));
}

#[test]
fn serve_refuses_an_unknown_feature_gate_before_starting() {
    let out = Command::new(env!("CARGO_BIN_EXE_kruise"))
        .args(["serve", "--port", "0", "--feature-gates", "Bogus=true"])
        .current_dir(common::repo())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unrecognized feature gate: Bogus"), "{stderr}");
}
