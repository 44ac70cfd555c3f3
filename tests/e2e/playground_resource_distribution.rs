//! ResourceDistribution end to end in the playground, driven with the real kubectl: kruise-rs's
//! validating webhook admits the distribution and its controller keeps the copies in every targeted
//! namespace in sync.

use crate::common;

use std::path::Path;

use common::kubectl::{kubectl, ok, serve, wait_for};
use serde_json::Value;

const HASH: &str = "kruise.io/resourcedistribution.resource.hashcode";
const FROM: &str = "kruise.io/resourcedistribution.resource.from";

const CONFIG_MAP_DISTRIBUTION: &str = r#"
apiVersion: apps.kruise.io/v1beta1
kind: ResourceDistribution
metadata:
  name: app-settings
spec:
  resource:
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: app-settings
      labels: {team: platform}
    data:
      log-level: info
  targets:
    namespaceSelector:
      matchLabels: {env: prod}
"#;

fn namespace(k: &Path, name: &str, labels: &[&str]) {
    ok(k, &["create", "namespace", name]);
    if !labels.is_empty() {
        let mut args = vec!["label", "namespace", name];
        args.extend(labels);
        ok(k, &args);
    }
}

/// The object as JSON, or `None` when it does not exist.
fn get(k: &Path, kind: &str, namespace: &str, name: &str) -> Option<Value> {
    let (found, out, _) = kubectl(k, &["get", kind, name, "-n", namespace, "-o", "json"], None);
    found.then(|| serde_json::from_str(&out).unwrap())
}

fn status(k: &Path, name: &str) -> Value {
    let out = ok(k, &["get", "resourcedistribution", name, "-o", "json"]);
    serde_json::from_str::<Value>(&out).unwrap()["status"].clone()
}

fn condition<'a>(status: &'a Value, type_: &str) -> &'a Value {
    status["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == type_))
        .unwrap_or(&Value::Null)
}

fn level(k: &Path, namespace: &str) -> Option<String> {
    get(k, "configmap", namespace, "app-settings")
        .map(|c| c["data"]["log-level"].as_str().unwrap_or("").to_string())
}

#[test]
fn a_config_map_follows_the_namespace_selector_and_stays_in_sync() {
    let pg = serve(&[]);
    let k = pg.kubeconfig.as_path();
    namespace(k, "shop", &["env=prod"]);
    namespace(k, "web", &["env=prod"]);
    namespace(k, "dev", &["env=dev"]);
    // Someone else's ConfigMap of the same name in a targeted namespace.
    namespace(k, "legacy", &["env=prod"]);
    ok(
        k,
        &[
            "create",
            "configmap",
            "app-settings",
            "-n",
            "legacy",
            "--from-literal=log-level=theirs",
        ],
    );
    let (applied, _, err) = kubectl(k, &["apply", "-f", "-"], Some(CONFIG_MAP_DISTRIBUTION));
    assert!(applied, "{err}");

    wait_for("copies in shop and web", || {
        level(k, "shop").as_deref() == Some("info") && level(k, "web").as_deref() == Some("info")
    });
    assert_eq!(level(k, "dev"), None, "dev is not labelled env=prod");
    let copy = get(k, "configmap", "shop", "app-settings").unwrap();
    assert_eq!(copy["metadata"]["annotations"][FROM], "app-settings");
    assert_eq!(
        copy["metadata"]["annotations"][HASH].as_str().map(str::len),
        Some(64)
    );
    assert_eq!(copy["metadata"]["labels"]["team"], "platform");
    assert_eq!(
        copy["metadata"]["ownerReferences"][0]["kind"],
        "ResourceDistribution"
    );

    // The conflicting ConfigMap is left alone and reported.
    wait_for("the conflict in the status", || {
        let s = status(k, "app-settings");
        condition(&s, "ConflictOccurred")["failedNamespaces"] == serde_json::json!(["legacy"])
            && s["desired"] == 3
            && s["succeeded"] == 2
            && s["failed"] == 1
    });
    assert_eq!(level(k, "legacy").as_deref(), Some("theirs"));
    let s = status(k, "app-settings");
    assert_eq!(s["conditions"].as_array().map(Vec::len), Some(6));
    assert_eq!(condition(&s, "NamespaceNotExists")["status"], "False");
    let table = ok(k, &["get", "distributor"]);
    assert!(
        table.contains("TOTAL") && table.contains("SUCCEED") && table.contains("FAILED"),
        "{table}"
    );

    // A namespace labelled later gets a copy; one whose label goes loses it.
    ok(k, &["label", "namespace", "dev", "env=prod", "--overwrite"]);
    wait_for("a copy in the newly labelled namespace", || {
        level(k, "dev").as_deref() == Some("info")
    });
    ok(k, &["label", "namespace", "web", "env-"]);
    wait_for("the copy gone from the unlabelled namespace", || {
        level(k, "web").is_none()
    });

    // A hand edit is reverted; a deleted copy comes back.
    ok(
        k,
        &[
            "patch",
            "configmap",
            "app-settings",
            "-n",
            "shop",
            "--type",
            "merge",
            "-p",
            r#"{"data":{"log-level":"debug"}}"#,
        ],
    );
    wait_for("the hand edit reverted", || {
        level(k, "shop").as_deref() == Some("info")
    });
    ok(k, &["delete", "configmap", "app-settings", "-n", "dev"]);
    wait_for("the deleted copy recreated", || {
        level(k, "dev").as_deref() == Some("info")
    });

    // A template change reaches every copy.
    ok(
        k,
        &[
            "patch",
            "resourcedistribution",
            "app-settings",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"resource":{"data":{"log-level":"warn"}}}}"#,
        ],
    );
    wait_for("the new data in every copy", || {
        level(k, "shop").as_deref() == Some("warn") && level(k, "dev").as_deref() == Some("warn")
    });
    assert_eq!(level(k, "legacy").as_deref(), Some("theirs"));
}

#[test]
fn a_secret_is_distributed_and_invalid_distributions_are_refused() {
    let pg = serve(&[]);
    let k = pg.kubeconfig.as_path();
    namespace(k, "a", &[]);
    namespace(k, "b", &[]);
    let secret = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: ResourceDistribution
metadata:
  name: registry-token
spec:
  resource:
    apiVersion: v1
    kind: Secret
    metadata: {name: registry-token}
    type: Opaque
    stringData: {token: s3cret}
  targets:
    allNamespaces: true
    excludedNamespaces:
      list: [{name: b}]
"#;
    let (applied, _, err) = kubectl(k, &["apply", "-f", "-"], Some(secret));
    assert!(applied, "{err}");
    wait_for("the Secret in namespace a", || {
        get(k, "secret", "a", "registry-token").is_some_and(|s| s["data"]["token"] == "czNjcmV0")
    });
    assert!(get(k, "secret", "b", "registry-token").is_none(), "b is excluded");
    assert!(
        get(k, "secret", "kube-system", "registry-token").is_none(),
        "never a system namespace"
    );
    wait_for("a status without failures", || {
        let s = status(k, "registry-token");
        s["failed"].as_i64().unwrap_or(0) == 0
            && s["desired"].as_i64().unwrap_or(0) >= 2
            && s["conditions"]
                .as_array()
                .is_some_and(|c| c.iter().all(|c| c["status"] == "False"))
    });

    // The webhook refuses what OpenKruise refuses.
    let pod = r#"
apiVersion: apps.kruise.io/v1beta1
kind: ResourceDistribution
metadata: {name: pods}
spec:
  resource: {apiVersion: v1, kind: Pod, metadata: {name: p}}
  targets: {allNamespaces: true}
"#;
    let (created, _, err) = kubectl(k, &["apply", "-f", "-"], Some(pod));
    assert!(!created);
    assert!(err.contains("unknown or unsupported resource GroupKind"), "{err}");
    let (renamed, _, err) = kubectl(
        k,
        &[
            "patch",
            "resourcedistribution",
            "registry-token",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"resource":{"metadata":{"name":"other"}}}}"#,
        ],
        None,
    );
    assert!(!renamed);
    assert!(
        err.contains("resource apiVersion, kind, and name are immutable"),
        "{err}"
    );

    // Deleting the distribution removes its copies (garbage collection by the owner reference).
    ok(k, &["delete", "resourcedistribution", "registry-token"]);
    wait_for("the copy garbage collected", || {
        get(k, "secret", "a", "registry-token").is_none()
    });
}
