//! More of the kubectl commands users run, checked against kubectl's own output for a real
//! cluster: `describe` (`kubectl/pkg/describe/describe.go`), `patch` in each patch type and the
//! no-op case (`kubectl/pkg/cmd/patch`: "patched", "patched (no change)"), `replace`
//! (`kubectl/pkg/cmd/replace`), `expose` (`kubectl/pkg/cmd/expose`), `taint`
//! (`kubectl/pkg/cmd/taint`), `api-resources` and `api-versions` (discovery), `get -o yaml`,
//! `explain` of built-in kinds (`kubectl/pkg/explain/v2`, its plaintext template).
//! These tests fail (not skip) without kubectl on PATH.

use crate::common;

use common::Kubectl;

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: 'nginx:1.27', ports: [{containerPort: 80}]}]}
";

async fn start() -> kruise_playground::Playground {
    common::start_nodes(2).await
}

#[tokio::test]
async fn patch_types_replace_and_describe() {
    let pg = start().await;
    let kubectl = Kubectl::new(&pg);
    kubectl.apply(DEPLOYMENT).await;
    let patched = "deployment.apps/web patched\n";
    let strategic = r#"{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}"#;
    assert_eq!(
        kubectl.ok(&["patch", "deployment", "web", "-p", strategic]).await,
        patched
    );
    // No change: kubectl compares the object it read with the one the server answers (on an
    // object no controller writes meanwhile).
    kubectl
        .apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n")
        .await;
    assert_eq!(
        kubectl
            .ok(&["patch", "configmap", "c", "-p", r#"{"data":{"a":"b"}}"#])
            .await,
        "configmap/c patched (no change)\n"
    );
    let merge = r#"{"metadata":{"labels":{"tier":"front"}}}"#;
    assert_eq!(
        kubectl
            .ok(&["patch", "deployment", "web", "--type=merge", "-p", merge])
            .await,
        patched
    );
    let json = r#"[{"op":"replace","path":"/spec/replicas","value":3}]"#;
    assert_eq!(
        kubectl
            .ok(&["patch", "deployment", "web", "--type=json", "-p", json])
            .await,
        patched
    );
    let got = kubectl
        .ok(&[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.replicas} {.metadata.labels.tier} {.spec.template.spec.containers[0].image}",
        ])
        .await;
    assert_eq!(got, "3 front nginx:1.28");
    // A JSON patch whose test fails is refused as kube-apiserver refuses it (422 Invalid).
    let failing = r#"[{"op":"test","path":"/spec/replicas","value":9}]"#;
    let out = kubectl
        .run(&["patch", "deployment", "web", "--type=json", "-p", failing])
        .await;
    assert!(!out.success);

    let replaced = DEPLOYMENT.replace("replicas: 2", "replicas: 1");
    let out = kubectl.run_stdin(&["replace", "-f", "-"], &replaced).await;
    assert!(out.success, "{}", out.stderr);
    assert_eq!(out.stdout, "deployment.apps/web replaced\n");

    common::eventually("1 ready", || async {
        let ready = kubectl
            .ok(&[
                "get",
                "deployment",
                "web",
                "-o",
                "jsonpath={.status.readyReplicas}",
            ])
            .await;
        (ready == "1").then_some(())
    })
    .await;
    let describe = kubectl.ok(&["describe", "deployment", "web"]).await;
    for line in [
        "Name:                   web",
        "Namespace:              default",
        "Selector:               app=web",
        "StrategyType:           RollingUpdate",
        "    Image:         nginx:1.27",
    ] {
        assert!(describe.contains(line), "{line:?} missing from:\n{describe}");
    }
    assert!(
        describe.lines().any(
            |l| l.starts_with("Replicas:") && l.contains("1 desired | 1 updated | 1 total | 1 available")
        ),
        "{describe}"
    );
    let pods = kubectl.ok(&["describe", "pods", "-l", "app=web"]).await;
    assert!(
        pods.lines()
            .any(|l| l.starts_with("Status:") && l.ends_with(" Running")),
        "{pods}"
    );
    assert!(
        pods.contains("node.kubernetes.io/not-ready:NoExecute op=Exists for 300s"),
        "{pods}"
    );
    pg.shutdown().await;
}

#[tokio::test]
async fn expose_taint_discovery_and_yaml() {
    let pg = start().await;
    let kubectl = Kubectl::new(&pg);
    kubectl.apply(DEPLOYMENT).await;
    assert_eq!(
        kubectl
            .ok(&["expose", "deployment", "web", "--port=8080", "--target-port=80"])
            .await,
        "service/web exposed\n"
    );
    let service = kubectl
        .ok(&[
            "get",
            "service",
            "web",
            "-o",
            "jsonpath={.spec.selector.app} {.spec.ports[0].port} {.spec.ports[0].targetPort}",
        ])
        .await;
    assert_eq!(service, "web 8080 80");
    common::eventually("node", || async {
        kubectl
            .run(&["get", "node", "playground-node-1"])
            .await
            .success
            .then_some(())
    })
    .await;
    assert_eq!(
        kubectl
            .ok(&["taint", "node", "playground-node-1", "team=a:NoSchedule"])
            .await,
        "node/playground-node-1 tainted\n"
    );
    assert_eq!(
        kubectl
            .ok(&["taint", "node", "playground-node-1", "team=a:NoSchedule-"])
            .await,
        "node/playground-node-1 untainted\n"
    );
    let resources = kubectl.ok(&["api-resources"]).await;
    let row = resources
        .lines()
        .find(|l| l.starts_with("deployments "))
        .unwrap_or_default();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells, ["deployments", "deploy", "apps/v1", "true", "Deployment"]);
    let versions = kubectl.ok(&["api-versions"]).await;
    for v in [
        "apps/v1",
        "batch/v1",
        "v1",
        "policy/v1",
        "rbac.authorization.k8s.io/v1",
    ] {
        assert!(versions.lines().any(|l| l == v), "{v} missing from {versions}");
    }
    let yaml = kubectl.ok(&["get", "deployment", "web", "-o", "yaml"]).await;
    assert!(
        yaml.starts_with("apiVersion: apps/v1\nkind: Deployment\n"),
        "{yaml}"
    );
    assert!(yaml.contains("\n  generation: 1\n"), "{yaml}");
    pg.shutdown().await;
}

#[tokio::test]
async fn explain_built_in_kinds() {
    let pg = common::start().await;
    let kubectl = Kubectl::new(&pg);
    let replicas = kubectl.ok(&["explain", "deployment.spec.replicas"]).await;
    for line in [
        "GROUP:      apps",
        "KIND:       Deployment",
        "VERSION:    v1",
        "FIELD: replicas <integer>",
    ] {
        assert!(
            replicas.lines().any(|l| l == line),
            "{line:?} missing from:\n{replicas}"
        );
    }
    assert!(replicas.contains("Number of desired pods."), "{replicas}");
    let containers = kubectl.ok(&["explain", "pods.spec.containers"]).await;
    assert!(
        containers.contains("FIELD: containers <[]Container>"),
        "{containers}"
    );
    assert!(containers.contains("  image\t<string>"), "{containers}");
    pg.shutdown().await;
}
