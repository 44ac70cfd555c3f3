//! `kubectl kruise create …`, `get all` and `completion` through the real kubectl, in the playground.

use crate::common;

use common::{cloneset, start, wait_for};

#[test]
fn create_jobs_and_a_container_recreate_request() {
    let c = start();
    assert_eq!(
        c.ok(&[
            "kruise",
            "create",
            "job",
            "pi",
            "--image=busybox",
            "--",
            "echo",
            "hi"
        ]),
        "job.batch/pi created\n"
    );
    assert_eq!(
        c.jsonpath("job/pi", "{.spec.template.spec.containers[0].command}"),
        r#"["echo","hi"]"#
    );
    c.ok(&[
        "create",
        "cronjob",
        "nightly",
        "--image=busybox",
        "--schedule=@daily",
    ]);
    assert_eq!(
        c.ok(&["kruise", "create", "job", "now", "--from=cronjob/nightly"]),
        "job.batch/now created\n"
    );
    assert_eq!(
        c.jsonpath(
            "job/now",
            "{.metadata.annotations.cronjob\\.kubernetes\\.io/instantiate}"
        ),
        "manual"
    );
    assert_eq!(
        c.jsonpath("job/now", "{.metadata.ownerReferences[0].name}"),
        "nightly"
    );
    let none = c.run(&["kruise", "create", "job", "x"], None);
    assert_eq!(
        (none.code, none.stderr.as_str()),
        (1, "error: either --image or --from must be specified\n")
    );
    let both = c.run(
        &[
            "kruise",
            "create",
            "job",
            "x",
            "--from=cronjob/nightly",
            "--",
            "sh",
        ],
        None,
    );
    assert_eq!(both.stderr, "error: cannot specify --from and command\n");

    // A CRR names only the containers asked for (kruise-tools recreated all of them).
    c.apply(
        "apiVersion: v1
kind: Pod
metadata: {name: two}
spec:
  containers:
    - {name: web, image: nginx, ports: [{containerPort: 80}]}
    - {name: log, image: fluent-bit}
",
    );
    let crr = c.ok(&[
        "kruise",
        "create",
        "crr",
        "r1",
        "--pod=two",
        "--containers=log",
        "-u",
        "5",
        "--dry-run=client",
        "-o",
        "json",
    ]);
    let crr: serde_json::Value = serde_json::from_str(&crr).unwrap();
    assert_eq!(crr["spec"]["containers"], serde_json::json!([{"name": "log"}]));
    assert_eq!(crr["spec"]["strategy"]["unreadyGracePeriodSeconds"], 5);
    let missing = c.run(&["kruise", "create", "crr", "r2", "--pod=ghost"], None);
    assert_eq!(
        (missing.code, missing.stderr.as_str()),
        (1, "error: pod default/ghost not found\n")
    );
}

#[test]
fn get_all_lists_the_kruise_kinds_with_kubectls_tables() {
    let c = start();
    c.apply(&cloneset("web", 1, "nginx:1.27", "{}"));
    c.apply(
        "apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: log-agent}
spec:
  selector: {matchLabels: {app: web}}
  containers: [{name: log-agent, image: fluent-bit:3.1}]
",
    );
    wait_for("the CloneSet's pod", || {
        c.jsonpath("cloneset/web", "{.status.readyReplicas}") == "1"
    });
    let out = c.ok(&["kruise", "get", "all"]);
    let sections: Vec<&str> = out.split("\n\n").collect();
    assert_eq!(sections.len(), 2, "{out}");
    assert!(
        sections[0].starts_with("NAME                          DESIRED   UPDATED"),
        "{out}"
    );
    assert!(
        sections[0].contains("\ncloneset.apps.kruise.io/web   1         1"),
        "{out}"
    );
    assert!(sections[1].starts_with("NAME"), "{out}");
    assert!(
        sections[1].contains("sidecarset.apps.kruise.io/log-agent"),
        "{out}"
    );
    // SidecarSets are cluster-scoped: listed whatever the namespace.
    let other = c.ok(&["kruise", "get", "all", "-n", "kube-system"]);
    assert!(
        other.starts_with("NAME") && other.contains("sidecarset.apps.kruise.io/log-agent"),
        "{other}"
    );
    assert!(!other.contains("cloneset"), "{other}");
}

#[test]
fn completion_scripts_and_help_examples() {
    let c = start();
    for shell in ["bash", "zsh", "fish"] {
        let out = c.ok(&["kruise", "completion", shell]);
        assert!(
            out.contains("rollout") && out.contains("explain"),
            "{shell}: {out}"
        );
    }
    let help = c.ok(&["kruise", "rollout", "status", "--help"]);
    assert!(
        help.contains("Examples:\n  kubectl kruise rollout status cloneset/web"),
        "{help}"
    );
    let bad = c.run(&["kruise", "rollout", "frobnicate"], None);
    assert_eq!(bad.code, 1);
    assert!(bad.stderr.starts_with("error: "), "{}", bad.stderr);
}

#[test]
fn migrate_a_deployment_to_a_cloneset() {
    let c = start();
    c.ok(&[
        "create",
        "deployment",
        "shop",
        "--image=nginx:1.27",
        "--replicas=2",
    ]);
    wait_for("the Deployment", || {
        c.jsonpath("deployment/shop", "{.status.availableReplicas}") == "2"
    });
    let args = [
        "kruise",
        "migrate",
        "CloneSet",
        "--from",
        "Deployment",
        "--src-name",
        "shop",
        "--dst-name",
        "shop-cs",
    ];
    let created = c.ok(&[&args[..], &["--create"]].concat());
    assert_eq!(
        created,
        "Successfully created from Deployment/shop to CloneSet/shop-cs\n"
    );
    assert_eq!(c.jsonpath("cloneset/shop-cs", "{.spec.replicas}"), "0");
    let again = c.run(&[&args[..], &["--create"]].concat(), None);
    assert_eq!(
        (again.code, again.stderr.as_str()),
        (1, "error: cloneset shop-cs already exists\n")
    );

    let out = c.ok(&[&args[..], &["--timeout-seconds", "60"]].concat());
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "Migration progress: Deployment/shop scale in 0, CloneSet/shop-cs scale out 0"
    );
    assert_eq!(
        lines[lines.len() - 2..],
        [
            "Migration progress: Deployment/shop scale in 2, CloneSet/shop-cs scale out 2",
            "Successfully migrated 2 replicas from Deployment/shop to CloneSet/shop-cs"
        ]
    );
    assert_eq!(c.jsonpath("deployment/shop", "{.spec.replicas}"), "0");
    assert_eq!(c.jsonpath("cloneset/shop-cs", "{.spec.replicas}"), "2");

    let wrong = c.run(&["kruise", "migrate", "Deployment", "--from", "CloneSet"], None);
    assert_eq!(
        wrong.stderr,
        "error: currently only supported CloneSet as dst type\n"
    );
}

#[test]
fn connection_flags_are_kubectls() {
    let c = start();
    c.apply(&cloneset("web", 1, "nginx:1.27", "{}"));
    let plugin = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-kruise"))
            .env_remove("KUBECONFIG")
            .env("HOME", c.kubeconfig.parent().unwrap())
            .args(args)
            .output()
            .unwrap()
    };
    let path = c.kubeconfig.to_str().unwrap();
    let out = plugin(&[
        "rollout",
        "history",
        "cloneset/web",
        "--kubeconfig",
        path,
        "-n",
        "default",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("cloneset.apps.kruise.io/web \n"));
    let out = plugin(&[
        "rollout",
        "history",
        "cloneset/web",
        "--kubeconfig",
        path,
        "-n",
        "elsewhere",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error from server (NotFound): clonesets.apps.kruise.io \"web\" not found\n"
    );
    let out = plugin(&[
        "rollout",
        "history",
        "cloneset/web",
        "--kubeconfig",
        path,
        "--context",
        "nope",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: "));
}
