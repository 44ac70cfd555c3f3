//! The install manifests into a fresh playground with the real kubectl: `manifests/` as plain files
//! (`kubectl apply -f`) and as a kustomize base (`kubectl apply -k`), and each overlay under
//! `overlays/`. kubectl must be on PATH: without it these fail.

use crate::common;

use std::path::Path;

use common::kubectl::{Served, kubectl, ok, serve as serve_with};

fn serve() -> Served {
    serve_with(&["--kubelet-delay-ms", "100"])
}

fn repo(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// Applies with kubectl, which must succeed and report every object created, configured or unchanged;
/// returns how many objects it reported.
fn apply(k: &Path, args: &[&str]) -> usize {
    let mut full = vec!["apply"];
    full.extend_from_slice(args);
    let (success, out, err) = kubectl(k, &full, None);
    assert!(success, "kubectl {full:?}: {err}");
    // The playground comes with kruise-rs installed (by its own client, not by kubectl apply), so
    // kubectl notes on those objects that it adds its last-applied annotation; nothing else may warn.
    let unexpected = err.lines().any(|l| {
        !l.trim().is_empty() && !l.contains("missing the kubectl.kubernetes.io/last-applied-configuration")
    });
    assert!(!unexpected, "kubectl {full:?} warned: {err}");
    for line in out.lines() {
        assert!(
            line.ends_with(" created") || line.ends_with(" configured") || line.ends_with(" unchanged"),
            "{out}"
        );
    }
    out.lines().count()
}

/// How many objects `kubectl kustomize DIR` renders.
fn rendered(k: &Path, dir: &str) -> usize {
    ok(k, &["kustomize", &repo(dir)])
        .lines()
        .filter(|l| l.starts_with("kind: "))
        .count()
}

fn get(k: &Path, args: &[&str]) -> (bool, String) {
    let mut full = vec!["get"];
    full.extend_from_slice(args);
    let (success, out, err) = kubectl(k, &full, None);
    (success, if success { out } else { err })
}

/// A field of the manager's Deployment, by JSONPath.
fn manager(k: &Path, path: &str) -> String {
    let (_, out) = get(
        k,
        &[
            "-n",
            "kruise-system",
            "deployment/kruise-controller-manager",
            "-o",
            &format!("jsonpath={path}"),
        ],
    );
    out
}

#[test]
fn plain_files_install_in_one_command() {
    let pg = serve();
    let k = pg.kubeconfig.as_path();
    // 00-namespace.yaml sorts first, so the namespace exists before the objects in it.
    let applied = apply(k, &["-f", &repo("manifests/"), "-f", &repo("manifests/crds/")]);
    assert_eq!(applied, rendered(k, "manifests"), "the base and the files agree");
    for kind in [
        "role",
        "rolebinding",
        "clusterrole",
        "clusterrolebinding",
        "resourcequota",
        "pdb",
    ] {
        let (success, out) = get(k, &[kind, "-A", "-o", "name"]);
        assert!(success && !out.is_empty(), "{kind}: {out}");
    }
}

#[test]
fn the_kustomize_base_installs() {
    let pg = serve();
    let k = pg.kubeconfig.as_path();
    let applied = apply(k, &["-k", &repo("manifests/")]);
    assert_eq!(applied, rendered(k, "manifests"));
    let replicas = manager(k, "{.spec.replicas}");
    assert_eq!(replicas, "2");
}

/// A field of the node agent's DaemonSet, by JSONPath (`None` when it is not there).
fn daemon(k: &Path, path: &str) -> Option<String> {
    let (found, out) = get(
        k,
        &[
            "-n",
            "kruise-daemon",
            "daemonset/kruise-daemon",
            "-o",
            &format!("jsonpath={path}"),
        ],
    );
    found.then_some(out)
}

#[test]
fn the_node_agent_gets_a_pod_on_every_node_and_its_overlay_leaves_it_out() {
    let pg = serve();
    let k = pg.kubeconfig.as_path();
    apply(k, &["-k", &repo("manifests/")]);
    let nodes = ok(k, &["get", "nodes", "-o", "name"]).lines().count();
    assert!(nodes > 0);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let scheduled = daemon(k, "{.status.desiredNumberScheduled}").expect("the DaemonSet exists");
        if scheduled == nodes.to_string() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{scheduled} of {nodes} nodes scheduled"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let env = daemon(
        k,
        "{.spec.template.spec.containers[0].env[0].valueFrom.fieldRef.fieldPath}",
    );
    assert_eq!(env.as_deref(), Some("spec.nodeName"));

    let pg = serve();
    let k = pg.kubeconfig.as_path();
    let applied = apply(k, &["-k", &repo("overlays/without-node-agent")]);
    assert_eq!(
        applied,
        rendered(k, "manifests") - 7,
        "all but the agent's DaemonSet, ServiceAccount, namespace and RBAC (two roles, two bindings)"
    );
    assert_eq!(daemon(k, "{.metadata.name}"), None);
    let (found, _) = get(k, &["namespace", "kruise-daemon"]);
    assert!(!found);
}

#[test]
fn the_single_replica_overlay_has_one_replica_and_no_disruption_budget() {
    let pg = serve();
    let k = pg.kubeconfig.as_path();
    let applied = apply(k, &["-k", &repo("overlays/single-replica")]);
    assert_eq!(applied, rendered(k, "manifests") - 1, "all but the PDB");
    let replicas = manager(k, "{.spec.replicas}");
    assert_eq!(replicas, "1");
    let (found, out) = get(k, &["-n", "kruise-system", "pdb", "kruise-controller-manager"]);
    assert!(!found && out.contains("NotFound"), "{out}");
}

#[test]
fn the_cert_manager_overlay_mounts_the_issued_certificate_and_asks_for_ca_injection() {
    let pg = serve();
    let k = pg.kubeconfig.as_path();
    apply(k, &["-f", &repo("tests/data/cert-manager-crds.yaml")]);
    let applied = apply(k, &["-k", &repo("overlays/cert-manager")]);
    assert_eq!(applied, rendered(k, "overlays/cert-manager"));
    let args = manager(k, "{.spec.template.spec.containers[0].args}");
    assert!(
        args.contains("--cert-mode=external") && !args.contains("self-signed"),
        "{args}"
    );
    let mounts = manager(k, "{.spec.template.spec.containers[0].volumeMounts[*].mountPath}");
    assert_eq!(mounts, "/tmp/kruise-webhook-certs /tmp");
    let secret = manager(k, "{.spec.template.spec.volumes[0].secret.secretName}");
    assert_eq!(secret, "kruise-webhook-tls");
    let (_, issued) = get(
        k,
        &[
            "-n",
            "kruise-system",
            "certificate",
            "kruise-webhook-tls",
            "-o",
            "jsonpath={.spec.secretName}",
        ],
    );
    assert_eq!(issued, "kruise-webhook-tls");
    let inject = "jsonpath={.metadata.annotations.cert-manager\\.io/inject-ca-from}";
    for object in [
        "crd/clonesets.apps.kruise.io",
        "crd/statefulsets.apps.kruise.io",
        "validatingwebhookconfiguration/kruise-validating-webhook-configuration",
        "mutatingwebhookconfiguration/kruise-mutating-webhook-configuration",
    ] {
        let (_, from) = get(k, &[object, "-o", inject]);
        assert_eq!(from, "kruise-system/kruise-webhook-tls", "{object}");
    }
    // The self-signed mode's Secret and caBundle permissions are not installed.
    let (found, out) = get(k, &["-n", "kruise-system", "role", "kruise-rs-webhook-certs"]);
    assert!(!found && out.contains("NotFound"), "{out}");
    let (found, out) = get(k, &["clusterrole", "kruise-rs-webhook-config"]);
    assert!(!found && out.contains("NotFound"), "{out}");
}
