//! `kubectl kruise exec`, `expose` and kubectl's passthrough commands against the playground.
//!
//! The playground serves no `pods/exec` (it runs no containers to enter), so `exec` is checked up to
//! the `kubectl exec` command line it runs — the pod its resolution picked in the cluster, the
//! SidecarSet's working container — through a recording stand-in for the plugin's kubectl, whose exit
//! code must come back; and once with the real kubectl, whose failure comes back as it is.

use crate::common;

use common::{Cluster, recording_kubectl, start, wait_for};

fn sidecarset(image: &str) -> String {
    format!(
        "apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {{name: logger}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  updateStrategy: {{maxUnavailable: 1}}
  containers:
    - name: logger
      image: {image}
      upgradeStrategy: {{upgradeType: HotUpgrade, hotUpgradeEmptyImage: logger-empty:1}}
"
    )
}

const WEB: &str = "apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: web, labels: {team: shop}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: main
          image: nginx:1.27
          ports: [{containerPort: 8080}, {containerPort: 9090, protocol: UDP}]
";

fn web_pods(c: &Cluster) -> Vec<String> {
    c.ok(&[
        "get",
        "pods",
        "-l",
        "app=web",
        "-o",
        "jsonpath={.items[*].metadata.name}",
    ])
    .split_whitespace()
    .map(str::to_string)
    .collect()
}

fn working(c: &Cluster, pod: &str) -> String {
    c.jsonpath(
        &format!("pod/{pod}"),
        "{.metadata.annotations.kruise\\.io/sidecarset-working-hotupgrade-container}",
    )
}

#[test]
fn exec_resolves_workloads_and_sidecarset_working_containers() {
    let c = start();
    let dir = tempfile::tempdir().unwrap();
    let fake = recording_kubectl(dir.path(), 3);
    let fake = fake.to_str().unwrap();
    c.apply(&sidecarset("logger:1"));
    c.apply(WEB);
    wait_for("two ready pods", || {
        c.jsonpath("cloneset/web", "{.status.readyReplicas}") == "2"
    });
    let pods = web_pods(&c);
    assert_eq!(working(&c, &pods[0]), r#"{"logger":"logger-1"}"#);

    // A CloneSet resolves to one of its pods; -S enters the working twin; the exit code comes back.
    let out = c.run_env(
        &[("KUBECTL", fake)],
        &[
            "kruise",
            "exec",
            "cloneset/web",
            "-S",
            "logger",
            "--",
            "sh",
            "-c",
            "exit 3",
        ],
        None,
    );
    assert_eq!(out.code, 3, "{out:?}");
    assert_eq!(out.stderr, "Enter working container logger-1 of SidecarSet.\n");
    let args: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(args[..2], ["exec", "--namespace=default"], "{args:?}");
    assert!(
        pods.contains(&args[2].to_string()),
        "{args:?} picks a pod of {pods:?}"
    );
    assert_eq!(args[3..], ["--container=logger-1", "--", "sh", "-c", "exit 3"]);

    // A hot upgrade moves the work to the other twin; -S follows it.
    c.apply(&sidecarset("logger:2"));
    wait_for("logger-2 working in both pods", || {
        web_pods(&c)
            .iter()
            .all(|p| working(&c, p) == r#"{"logger":"logger-2"}"#)
    });
    let out = c.run_env(
        &[("KUBECTL", fake)],
        &[
            "kruise", "exec", &pods[1], "-S", "logger", "-i", "-t", "--", "date",
        ],
        None,
    );
    assert_eq!(out.code, 3, "{out:?}");
    assert_eq!(out.stderr, "Enter working container logger-2 of SidecarSet.\n");
    assert_eq!(
        out.stdout,
        format!(
            "exec\n--namespace=default\n{}\n--container=logger-2\n--stdin\n--tty\n--\ndate\n",
            pods[1]
        )
    );
    // A pod that is not there: the API's answer, kubectl not run.
    let out = c.run_env(
        &[("KUBECTL", fake)],
        &["kruise", "exec", "pod/web-x", "-c", "main", "--", "date"],
        None,
    );
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (1, "Error from server (NotFound): pods \"web-x\" not found\n")
    );

    // A built-in workload resolves through its selector too.
    c.ok(&["create", "deployment", "shop", "--image=nginx:1.27"]);
    let out = c.run_env(
        &[("KUBECTL", fake)],
        &["kruise", "exec", "deploy/shop", "-c", "nginx", "--", "true"],
        None,
    );
    assert_eq!(out.code, 3, "{out:?}");
    let args: Vec<&str> = out.stdout.lines().collect();
    assert!(args[2].starts_with("shop-"), "{args:?}");
    assert_eq!(args[3..], ["--container=nginx", "--", "true"]);

    // kubectl's errors.
    let none = c.run(&["kruise", "exec", "cloneset/web"], None);
    assert_eq!(
        (none.code, none.stderr.as_str()),
        (
            1,
            "error: you must specify at least one command for the container\n"
        )
    );
    let sidecar = c.run(&["kruise", "exec", "sidecarset/logger", "--", "date"], None);
    assert_eq!(sidecar.code, 1);
    assert!(
        sidecar
            .stderr
            .starts_with("error: cannot attach to SidecarSet.apps.kruise.io"),
        "{sidecar:?}"
    );

    // The real kubectl: the playground has no pods/exec, and kubectl's failure is the plugin's.
    let real = c.run(&["kruise", "exec", &pods[0], "-c", "main", "--", "date"], None);
    let direct = c.run(&["exec", &pods[0], "-c", "main", "--", "date"], None);
    assert_ne!(real.code, 0, "{real:?}");
    assert_eq!(
        (real.code, real.stderr.as_str()),
        (direct.code, direct.stderr.as_str()),
        "{real:?} {direct:?}"
    );
}

#[test]
fn expose_makes_a_service_for_a_cloneset_and_passthrough_commands_are_kubectls() {
    let c = start();
    c.apply(WEB);

    // Ports, protocols, selector and labels from the CloneSet.
    assert_eq!(
        c.ok(&["kruise", "expose", "cloneset", "web"]),
        "service/web exposed\n"
    );
    assert_eq!(c.jsonpath("svc/web", "{.spec.selector}"), r#"{"app":"web"}"#);
    assert_eq!(c.jsonpath("svc/web", "{.metadata.labels}"), r#"{"team":"shop"}"#);
    assert_eq!(
        c.jsonpath(
            "svc/web",
            "{range .spec.ports[*]}{.name} {.port} {.protocol} {.targetPort};{end}"
        ),
        "port-1 8080 TCP 8080;port-2 9090 UDP 9090;"
    );
    // Flags win; -n after the type works as for kubectl.
    assert_eq!(
        c.ok(&[
            "kruise",
            "expose",
            "cloneset/web",
            "--port=80",
            "--target-port",
            "8080",
            "--name",
            "web-http",
            "-n",
            "default",
            "--type=NodePort",
        ]),
        "service/web-http exposed\n"
    );
    assert_eq!(
        c.jsonpath(
            "svc/web-http",
            "{.spec.type} {.spec.ports[0].port} {.spec.ports[0].targetPort}"
        ),
        "NodePort 80 8080"
    );
    let dry = c.ok(&[
        "kruise",
        "expose",
        "cloneset",
        "web",
        "--name",
        "x",
        "--dry-run=client",
        "-o",
        "json",
    ]);
    let dry: serde_json::Value = serde_json::from_str(&dry).unwrap();
    assert_eq!(dry["metadata"]["name"], "x");
    assert_eq!(
        c.run(&["get", "svc", "x"], None).code,
        1,
        "a client dry run creates nothing"
    );
    // The Advanced StatefulSet and DaemonSet cannot be exposed, as in kruise-tools.
    for (kind, text) in [
        ("asts/db", "error: cannot expose a StatefulSet.apps.kruise.io\n"),
        ("ads/agent", "error: cannot expose a DaemonSet.apps.kruise.io\n"),
    ] {
        let out = c.run(&["kruise", "expose", kind, "--port=80"], None);
        assert_eq!((out.code, out.stderr.as_str()), (1, text));
    }
    // Built-in kinds: kubectl's expose.
    c.ok(&["create", "deployment", "shop", "--image=nginx:1.27"]);
    assert_eq!(
        c.ok(&["kruise", "expose", "deployment", "shop", "--port=80"]),
        "service/shop exposed\n"
    );
    assert_eq!(c.jsonpath("svc/shop", "{.spec.selector}"), r#"{"app":"shop"}"#);

    // Passthrough: kubectl's own output, stdin and exit code.
    assert_eq!(
        c.ok(&["kruise", "version", "--client"]),
        c.ok(&["version", "--client"])
    );
    assert!(
        c.ok(&["kruise", "api-versions"])
            .lines()
            .any(|l| l == "apps.kruise.io/v1alpha1")
    );
    assert_eq!(
        c.ok(&["kruise", "config", "current-context"]),
        c.ok(&["config", "current-context"])
    );
    assert_eq!(
        c.ok(&["kruise", "scale", "cloneset/web", "--replicas=3"]),
        "cloneset.apps.kruise.io/web scaled\n"
    );
    assert_eq!(c.jsonpath("cloneset/web", "{.spec.replicas}"), "3");
    assert_eq!(
        c.ok(&[
            "kruise",
            "patch",
            "cloneset",
            "web",
            "--type=merge",
            "-p",
            r#"{"spec":{"minReadySeconds":5}}"#
        ]),
        "cloneset.apps.kruise.io/web patched\n"
    );
    let applied = c.run(
        &["kruise", "apply", "-f", "-"],
        Some(&WEB.replace("replicas: 2", "replicas: 1")),
    );
    assert_eq!(
        (applied.code, applied.stdout.as_str()),
        (0, "cloneset.apps.kruise.io/web configured\n"),
        "{applied:?}"
    );
    assert_eq!(
        c.ok(&[
            "kruise",
            "wait",
            "--for=jsonpath={.spec.replicas}=1",
            "cloneset/web",
            "--timeout=30s"
        ]),
        "cloneset.apps.kruise.io/web condition met\n"
    );
    let missing = c.run(&["kruise", "patch", "cloneset", "nope", "-p", "{}"], None);
    assert_eq!(missing.code, 1);
    assert!(missing.stderr.contains("\"nope\" not found"), "{missing:?}");
    // The arguments go to kubectl as given and its exit code comes back.
    let dir = tempfile::tempdir().unwrap();
    let fake = recording_kubectl(dir.path(), 4);
    let out = c.run_env(
        &[("KUBECTL", fake.to_str().unwrap())],
        &["kruise", "diff", "-f", "web.yaml", "--server-side", "-n", "shop"],
        None,
    );
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (4, "diff\n-f\nweb.yaml\n--server-side\n-n\nshop\n")
    );
}
