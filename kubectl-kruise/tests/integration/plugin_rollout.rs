//! `kubectl kruise rollout …` on a CloneSet in the playground, through the real kubectl.

use crate::common;

use common::{Cluster, cloneset, start, wait_for};

fn settled(c: &Cluster, name: &str, replicas: &str) {
    wait_for("the CloneSet to settle", || {
        c.jsonpath(&format!("cloneset/{name}"), "{.status.updatedReadyReplicas}") == replicas
    });
}

#[test]
fn status_waits_for_an_in_place_update_then_history_undo_pause_resume_restart() {
    let c = start();
    c.apply(&cloneset(
        "web",
        3,
        "nginx:1.27",
        "{rollingUpdate: {podUpdatePolicy: InPlaceIfPossible, maxUnavailable: 1}}",
    ));
    settled(&c, "web", "3");
    let first = c.jsonpath("cloneset/web", "{.status.updateRevision}");

    // An in-place update: kruise-tools would say "partitioned roll out complete" at once.
    c.ok(&[
        "patch",
        "cloneset",
        "web",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.28"}]}}}}"#,
    ]);
    let out = c.run(
        &["kruise", "rollout", "status", "cloneset/web", "--timeout", "60s"],
        None,
    );
    assert_eq!(out.code, 0, "{out:?}");
    let second = c.jsonpath("cloneset/web", "{.status.updateRevision}");
    assert_ne!(first, second);
    let last = out.stdout.lines().last().unwrap_or_default();
    assert_eq!(
        last,
        format!("CloneSet rolling update complete 3 pods at revision {second}...")
    );
    // Done means done: every pod is on the new revision and ready when the command returns.
    assert_eq!(c.jsonpath("cloneset/web", "{.status.updatedReadyReplicas}"), "3");
    assert_eq!(
        c.ok(&[
            "get",
            "pods",
            "-l",
            "app=web",
            "-o",
            "jsonpath={.items[*].spec.containers[0].image}"
        ]),
        "nginx:1.28 nginx:1.28 nginx:1.28"
    );
    // --watch=false prints once.
    let once = c.run(
        &["kruise", "rollout", "status", "cloneset/web", "--watch=false"],
        None,
    );
    assert_eq!(
        once.stdout,
        format!("CloneSet rolling update complete 3 pods at revision {second}...\n")
    );

    // history: kubectl's table.
    let history = c.ok(&["kruise", "rollout", "history", "cloneset/web"]);
    assert_eq!(
        history,
        "cloneset.apps.kruise.io/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
    );
    let one = c.ok(&["kruise", "rollout", "history", "cloneset/web", "--revision", "1"]);
    assert!(
        one.starts_with("cloneset.apps.kruise.io/web with revision #1\nPod Template:\n"),
        "{one}"
    );
    assert!(one.contains("Image:        nginx:1.27"), "{one}");
    let missing = c.run(
        &["kruise", "rollout", "history", "cloneset/web", "--revision", "9"],
        None,
    );
    assert_eq!(
        (missing.code, missing.stderr.as_str()),
        (1, "error: unable to find the specified revision\n")
    );

    // undo: back to revision 1's template, replaced as a whole.
    let undo = c.ok(&["kruise", "rollout", "undo", "cloneset/web"]);
    assert_eq!(undo, "cloneset.apps.kruise.io/web rolled back\n");
    assert_eq!(
        c.jsonpath("cloneset/web", "{.spec.template.spec.containers[0].image}"),
        "nginx:1.27"
    );
    assert!(!c.ok(&["get", "cloneset", "web", "-o", "json"]).contains("$patch"));
    let out = c.run(
        &["kruise", "rollout", "status", "cloneset/web", "--timeout", "60s"],
        None,
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        c.ok(&[
            "get",
            "pods",
            "-l",
            "app=web",
            "-o",
            "jsonpath={.items[*].spec.containers[0].image}"
        ]),
        "nginx:1.27 nginx:1.27 nginx:1.27"
    );
    // As for Deployments, the restored template's revision is renumbered as the newest.
    assert_eq!(
        c.ok(&["kruise", "rollout", "history", "cloneset/web"]),
        "cloneset.apps.kruise.io/web \nREVISION  CHANGE-CAUSE\n2         <none>\n3         <none>\n\n"
    );
    let again = c.ok(&["kruise", "rollout", "undo", "cloneset/web", "--to-revision", "3"]);
    assert_eq!(
        again,
        "cloneset.apps.kruise.io/web skipped rollback (current template already matches revision 3)\n"
    );

    // pause / resume, and kubectl's refusals.
    assert_eq!(
        c.ok(&["kruise", "rollout", "pause", "cloneset/web"]),
        "cloneset.apps.kruise.io/web paused\n"
    );
    assert_eq!(
        c.jsonpath("cloneset/web", "{.spec.updateStrategy.rollingUpdate.paused}"),
        "true"
    );
    let twice = c.run(&["kruise", "rollout", "pause", "cloneset", "web"], None);
    assert_eq!(
        (twice.code, twice.stderr.as_str()),
        (1, "error: clonesets.apps.kruise.io \"web\" is already paused\n")
    );
    assert_eq!(
        c.ok(&["kruise", "rollout", "resume", "cloneset/web"]),
        "cloneset.apps.kruise.io/web resumed\n"
    );
    let not_paused = c.run(&["kruise", "rollout", "resume", "cloneset/web"], None);
    assert_eq!(
        not_paused.stderr,
        "error: clonesets.apps.kruise.io \"web\" is not paused\n"
    );

    // restart: the template annotation kubectl.kubernetes.io/restartedAt, no env; no node agent
    // serves these pods, so they cannot restart in place and are recreated.
    let uids = || {
        c.ok(&[
            "get",
            "pods",
            "-l",
            "app=web",
            "-o",
            "jsonpath={.items[*].metadata.uid}",
        ])
    };
    let before = uids();
    assert_eq!(
        c.ok(&["kruise", "rollout", "restart", "cloneset/web"]),
        "cloneset.apps.kruise.io/web restarted\n"
    );
    let at = c.jsonpath(
        "cloneset/web",
        "{.spec.template.metadata.annotations.kubectl\\.kubernetes\\.io/restartedAt}",
    );
    assert!(at.ends_with('Z') && at.len() == 20, "an RFC 3339 time: {at:?}");
    assert_eq!(
        c.jsonpath("cloneset/web", "{.spec.template.spec.containers[0].env}"),
        "",
        "no env"
    );
    let out = c.run(
        &["kruise", "rollout", "status", "cloneset/web", "--timeout", "60s"],
        None,
    );
    assert_eq!(out.code, 0, "{out:?}");
    wait_for("every pod to be recreated", || {
        let after = uids();
        after.split(' ').count() == 3 && after.split(' ').all(|u| !before.contains(u))
    });
    // -d: the CloneSet named, and its updated pods by readiness.
    let detail = c.ok(&[
        "kruise",
        "rollout",
        "status",
        "cloneset/web",
        "-d",
        "--watch=false",
    ]);
    let lines: Vec<&str> = detail.lines().collect();
    assert!(
        lines[0].starts_with("CloneSet web rolling update complete 3 pods at revision "),
        "{detail}"
    );
    let ready = lines[1]
        .strip_prefix("Updated ready pods: [")
        .and_then(|l| l.strip_suffix(']'))
        .unwrap();
    assert_eq!(ready.split(' ').count(), 3, "{detail}");
    assert_eq!(lines[2], "Updated not ready pods: []");
}

#[test]
fn a_partitioned_rollout_stops_at_the_partition_and_errors_are_kubectls() {
    let c = start();
    c.apply(&cloneset(
        "part",
        4,
        "nginx:1.27",
        "{rollingUpdate: {partition: 50%, maxUnavailable: 2}}",
    ));
    settled(&c, "part", "4");
    c.ok(&[
        "patch",
        "cloneset",
        "part",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.28"}]}}}}"#,
    ]);
    let out = c.run(
        &["kruise", "rollout", "status", "clone/part", "--timeout", "60s"],
        None,
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout.lines().last().unwrap_or_default(),
        "partitioned roll out complete: 2 new pods have been updated..."
    );

    let missing = c.run(&["kruise", "rollout", "status", "cloneset/nope"], None);
    assert_eq!(
        (missing.code, missing.stderr.as_str()),
        (
            1,
            "Error from server (NotFound): clonesets.apps.kruise.io \"nope\" not found\n"
        )
    );
    let two = c.run(&["kruise", "rollout", "status", "cloneset", "a", "b"], None);
    assert_eq!(two.code, 1);
    assert!(two.stderr.contains("2 resources were found"), "{}", two.stderr);
    // Waiting with a timeout that passes: exit 1.
    c.ok(&["kruise", "rollout", "pause", "cloneset/part"]);
    c.ok(&[
        "patch",
        "cloneset",
        "part",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.29"}]}}}}"#,
    ]);
    let stuck = c.run(
        &["kruise", "rollout", "status", "cloneset/part", "--timeout", "2s"],
        None,
    );
    assert_eq!(
        (stuck.code, stuck.stderr.as_str()),
        (1, "error: timed out waiting for the condition\n")
    );
}

#[test]
fn built_in_kinds_are_kubectls_own_rollout() {
    let c = start();
    c.ok(&[
        "create",
        "deployment",
        "shop",
        "--image=nginx:1.27",
        "--replicas=2",
    ]);
    let ours = c.run(
        &[
            "kruise",
            "rollout",
            "status",
            "deployment/shop",
            "--timeout",
            "60s",
        ],
        None,
    );
    assert_eq!(ours.code, 0, "{ours:?}");
    let theirs = c.ok(&["rollout", "status", "deployment/shop", "--watch=false"]);
    assert_eq!(ours.stdout.lines().last(), theirs.lines().last());
    let history = c.ok(&["kruise", "rollout", "history", "deploy", "shop"]);
    assert_eq!(history, c.ok(&["rollout", "history", "deploy", "shop"]));
}

/// What does not need the Advanced StatefulSet controller: edits of the spec through the plugin.
#[test]
fn advanced_statefulset_set_pause_resume_restart() {
    let c = start();
    c.apply(
        "apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: main, image: postgres:16}]
",
    );
    assert_eq!(
        c.ok(&["kruise", "set", "image", "asts/db", "main=postgres:17"]),
        "statefulset.apps.kruise.io/db image updated\n"
    );
    assert_eq!(
        c.jsonpath("asts/db", "{.spec.template.spec.containers[0].image}"),
        "postgres:17"
    );
    assert_eq!(
        c.ok(&["kruise", "rollout", "pause", "statefulsets.apps.kruise.io/db"]),
        "statefulset.apps.kruise.io/db paused\n"
    );
    assert_eq!(
        c.jsonpath("asts/db", "{.spec.updateStrategy.rollingUpdate.paused}"),
        "true"
    );
    assert_eq!(
        c.ok(&["kruise", "rollout", "resume", "asts/db"]),
        "statefulset.apps.kruise.io/db resumed\n"
    );
    assert_eq!(
        c.ok(&["kruise", "rollout", "restart", "asts/db"]),
        "statefulset.apps.kruise.io/db restarted\n"
    );
    assert!(
        !c.jsonpath(
            "asts/db",
            "{.spec.template.metadata.annotations.kubectl\\.kubernetes\\.io/restartedAt}"
        )
        .is_empty()
    );
    assert_eq!(
        c.jsonpath("asts/db", "{.spec.template.spec.containers[0].env}"),
        ""
    );
    // `statefulset` alone is the built-in kind, handed to kubectl.
    let native = c.run(&["kruise", "rollout", "history", "statefulset/db"], None);
    assert_eq!(native.code, 1);
    assert!(
        native.stderr.contains("statefulsets.apps \"db\" not found"),
        "{}",
        native.stderr
    );
}

/// With the Advanced StatefulSet controller running: status waits for the in-place update, history
/// lists the controller's revisions, undo restores the first template and the pods follow.
#[test]
fn advanced_statefulset_status_history_undo() {
    let c = start();
    c.apply(
        "apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata: {name: cache}
spec:
  replicas: 3
  serviceName: cache
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec:
      readinessGates: [{conditionType: InPlaceUpdateReady}]
      containers: [{name: main, image: redis:7.2}]
  updateStrategy:
    rollingUpdate: {podUpdatePolicy: InPlaceIfPossible, maxUnavailable: 1}
",
    );
    wait_for("the set to be ready", || {
        c.jsonpath("asts/cache", "{.status.readyReplicas}") == "3"
    });
    let uids = c.ok(&[
        "get",
        "pods",
        "-l",
        "app=cache",
        "-o",
        "jsonpath={.items[*].metadata.uid}",
    ]);
    c.ok(&["kruise", "set", "image", "asts/cache", "main=redis:7.4"]);
    let out = c.run(
        &["kruise", "rollout", "status", "asts/cache", "--timeout", "60s"],
        None,
    );
    assert_eq!(out.code, 0, "{out:?}");
    let second = c.jsonpath("asts/cache", "{.status.updateRevision}");
    assert_eq!(
        out.stdout.lines().last().unwrap_or_default(),
        format!("Advanced StatefulSet rolling update complete 3 pods at revision {second}...")
    );
    let images = || {
        c.ok(&[
            "get",
            "pods",
            "-l",
            "app=cache",
            "-o",
            "jsonpath={.items[*].spec.containers[0].image}",
        ])
    };
    assert_eq!(images(), "redis:7.4 redis:7.4 redis:7.4");
    // In place: the same pods.
    assert_eq!(
        c.ok(&[
            "get",
            "pods",
            "-l",
            "app=cache",
            "-o",
            "jsonpath={.items[*].metadata.uid}"
        ]),
        uids
    );
    assert_eq!(
        c.ok(&["kruise", "rollout", "history", "asts/cache"]),
        "statefulset.apps.kruise.io/cache \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
    );
    assert_eq!(
        c.ok(&["kruise", "rollout", "undo", "asts/cache"]),
        "statefulset.apps.kruise.io/cache rolled back\n"
    );
    let out = c.run(
        &["kruise", "rollout", "status", "asts/cache", "--timeout", "60s"],
        None,
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(images(), "redis:7.2 redis:7.2 redis:7.2");
}
