//! `kubectl kruise set …` and `scaledown` in the playground, through the real kubectl.

use crate::common;

use common::{cloneset, start, wait_for};

#[test]
fn set_image_env_resources_serviceaccount_on_a_cloneset_and_image_on_a_sidecarset() {
    let c = start();
    c.apply(&cloneset(
        "web",
        2,
        "nginx:1.27",
        "{rollingUpdate: {podUpdatePolicy: InPlaceIfPossible}}",
    ));
    let out = c.ok(&["kruise", "set", "image", "cloneset/web", "main=nginx:1.28"]);
    assert_eq!(out, "cloneset.apps.kruise.io/web image updated\n");
    // The same line kubectl prints for its own kinds.
    c.ok(&["create", "deployment", "shop", "--image=nginx:1.27"]);
    assert_eq!(
        c.ok(&["set", "image", "deployment/shop", "nginx=nginx:1.28"]),
        "deployment.apps/shop image updated\n"
    );
    assert_eq!(
        c.ok(&["kruise", "set", "image", "deployment/shop", "nginx=nginx:1.29"]),
        "deployment.apps/shop image updated\n"
    );
    assert_eq!(
        c.jsonpath("deployment/shop", "{.spec.template.spec.containers[0].image}"),
        "nginx:1.29"
    );

    let wrong = c.run(&["kruise", "set", "image", "cloneset/web", "nope=x"], None);
    assert_eq!(
        (wrong.code, wrong.stderr.as_str()),
        (1, "error: unable to find container named \"nope\"\n")
    );

    assert_eq!(
        c.ok(&[
            "kruise",
            "set",
            "env",
            "cloneset/web",
            "LOG_LEVEL=debug",
            "-e",
            "MODE=fast"
        ]),
        "cloneset.apps.kruise.io/web env updated\n"
    );
    assert_eq!(
        c.ok(&["kruise", "set", "env", "cloneset/web", "--list"]),
        "# clonesets.apps.kruise.io/web, container main\nLOG_LEVEL=debug\nMODE=fast\n"
    );
    c.ok(&["kruise", "set", "env", "cloneset/web", "MODE-"]);
    assert_eq!(
        c.jsonpath("cloneset/web", "{.spec.template.spec.containers[0].env[*].name}"),
        "LOG_LEVEL"
    );

    assert_eq!(
        c.ok(&[
            "kruise",
            "set",
            "resources",
            "cloneset/web",
            "-c",
            "main",
            "--limits",
            "cpu=200m,memory=512Mi",
            "--requests",
            "cpu=100m"
        ]),
        "cloneset.apps.kruise.io/web resource requirements updated\n"
    );
    assert_eq!(
        c.jsonpath(
            "cloneset/web",
            "{.spec.template.spec.containers[0].resources.limits.memory}"
        ),
        "512Mi"
    );
    assert_eq!(
        c.ok(&["kruise", "set", "serviceaccount", "cloneset/web", "default"]),
        "cloneset.apps.kruise.io/web serviceaccount updated\n"
    );
    assert_eq!(
        c.jsonpath("cloneset/web", "{.spec.template.spec.serviceAccountName}"),
        "default"
    );
    // A client dry run changes nothing and prints the object.
    let dry = c.ok(&[
        "kruise",
        "set",
        "image",
        "cloneset/web",
        "main=nginx:9",
        "--dry-run=client",
        "-o",
        "json",
    ]);
    assert!(dry.contains("nginx:9"), "{dry}");
    assert_eq!(
        c.jsonpath("cloneset/web", "{.spec.template.spec.containers[0].image}"),
        "nginx:1.28"
    );

    c.apply(
        "apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: log-agent}
spec:
  selector: {matchLabels: {app: web}}
  containers:
    - {name: log-agent, image: fluent-bit:3.0}
",
    );
    assert_eq!(
        c.ok(&[
            "kruise",
            "set",
            "image",
            "sidecarset/log-agent",
            "log-agent=fluent-bit:3.1"
        ]),
        "sidecarset.apps.kruise.io/log-agent image updated\n"
    );
    assert_eq!(
        c.jsonpath("sidecarset/log-agent", "{.spec.containers[0].image}"),
        "fluent-bit:3.1"
    );
}

#[test]
fn scaledown_deletes_the_named_pods_and_lowers_replicas() {
    let c = start();
    c.apply(&cloneset("web", 3, "nginx:1.27", "{}"));
    wait_for("3 pods", || {
        c.ok(&["get", "pods", "-l", "app=web", "-o", "name"])
            .lines()
            .count()
            == 3
    });
    let pods = c.ok(&[
        "get",
        "pods",
        "-l",
        "app=web",
        "-o",
        "jsonpath={.items[*].metadata.name}",
    ]);
    let victim = pods.split(' ').next().unwrap().to_string();
    let out = c.ok(&["kruise", "scaledown", "cloneset/web", "--pods", &victim]);
    assert_eq!(
        out,
        format!("# web delete pods [{victim}] successfully\ncloneset.apps.kruise.io/web scaled down\n")
    );
    assert_eq!(c.jsonpath("cloneset/web", "{.spec.replicas}"), "2");
    wait_for("the pod to be deleted and no replacement made", || {
        let now = c.ok(&[
            "get",
            "pods",
            "-l",
            "app=web",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ]);
        now.split(' ').count() == 2 && !now.split(' ').any(|p| p == victim)
    });

    let no_pods = c.run(&["kruise", "scaledown", "cloneset/web"], None);
    assert_eq!(
        (no_pods.code, no_pods.stderr.as_str()),
        (1, "error: must specify one pod name\n")
    );
    let foreign = c.run(
        &["kruise", "scaledown", "cloneset/web", "--pods", "someone-else"],
        None,
    );
    assert_eq!(
        foreign.stderr,
        "error: pod someone-else is not a pod of this CloneSet\n"
    );
    let kind = c.run(&["kruise", "scaledown", "asts/db", "--pods", "db-0"], None);
    assert_eq!(
        kind.stderr,
        "error: currently only supported CloneSet selective pods deletion\n"
    );
}
