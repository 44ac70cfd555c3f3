//! `kubectl kruise rollout approve|pause|resume|undo` and `describe rollout` on Kruise Rollouts in the
//! playground, through the real kubectl. kruise-rs runs no Rollout controller: the Rollout CRD is a
//! test fixture and each test writes the Rollout's status as the controller would
//! (`kubectl patch --subresource=status`).

use crate::common;

use common::{Cluster, Output, cloneset, start, wait_for};

const CRD: &str = include_str!("../fixtures/rollouts-crd.yaml");

/// The CRD with v1alpha1 only (an older Kruise Rollout install).
fn crd_v1alpha1_only() -> String {
    let (alpha, _) = CRD.split_once("    - name: v1beta1").unwrap();
    alpha.replace("storage: false", "storage: true")
}

fn install(c: &Cluster, crd: &str) {
    c.apply(crd);
    wait_for("the Rollout CRD to be served", || {
        c.run(&["get", "rollouts"], None).code == 0
    });
}

fn set_status(c: &Cluster, rollout: &str, status: &str) {
    c.ok(&[
        "patch",
        "rollout",
        rollout,
        "--subresource=status",
        "--type=merge",
        "-p",
        &format!(r#"{{"status": {status}}}"#),
    ]);
}

fn kruise(c: &Cluster, args: &[&str]) -> Output {
    let mut all = vec!["kruise"];
    all.extend_from_slice(args);
    c.run(&all, None)
}

fn fails(out: &Output, stderr: &str) {
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stderr, format!("{stderr}\n"), "{out:?}");
    assert_eq!(out.stdout, "", "{out:?}");
}

fn succeeds(out: &Output, stdout: &str) {
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, format!("{stdout}\n"), "{out:?}");
}

const ROLLOUT: &str = "apiVersion: rollouts.kruise.io/v1beta1
kind: Rollout
metadata:
  name: demo
spec:
  workloadRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: web}
  strategy:
    canary:
      steps:
        - {replicas: 1, traffic: 20%}
        - {replicas: 50%}
        - {replicas: 100%}
      trafficRoutings:
        - service: web
          ingress: {classType: nginx, name: web}
";

/// A CloneSet `web` at its second revision (nginx:1.27 → nginx:1.28), three pods ready.
fn cloneset_at_second_revision(c: &Cluster) {
    c.apply(&cloneset(
        "web",
        3,
        "nginx:1.27",
        "{rollingUpdate: {podUpdatePolicy: InPlaceIfPossible, maxUnavailable: 1}}",
    ));
    let settled = || {
        wait_for("the CloneSet to settle", || {
            c.jsonpath(
                "cloneset/web",
                "{.status.updatedReadyReplicas} {.status.readyReplicas} {.status.availableReplicas}",
            ) == "3 3 3"
                && c.jsonpath("cloneset/web", "{.status.observedGeneration}")
                    == c.jsonpath("cloneset/web", "{.metadata.generation}")
        })
    };
    settled();
    c.ok(&[
        "patch",
        "cloneset",
        "web",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.28"}]}}}}"#,
    ]);
    settled();
}

#[test]
fn approve_pause_resume_fast_undo_and_the_unsupported_verbs_of_a_v1beta1_rollout() {
    let c = start();
    install(&c, CRD);
    c.apply(ROLLOUT);

    // Nothing in progress yet.
    fails(
        &kruise(&c, &["rollout", "approve", "rollout/demo"]),
        r#"error: rollouts.rollouts.kruise.io "demo" no need to approve: not in canary or blue-green progress"#,
    );
    set_status(
        &c,
        "demo",
        r#"{"currentStepIndex": 1, "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepUpgrade"}}"#,
    );
    fails(
        &kruise(&c, &["rollout", "approve", "rollouts.kruise.io/demo"]),
        r#"error: rollouts.rollouts.kruise.io "demo" does not allow to approve, because current canary state is not 'StepPaused'"#,
    );
    set_status(
        &c,
        "demo",
        r#"{"canaryStatus": {"currentStepState": "StepPaused"}}"#,
    );
    succeeds(
        &kruise(&c, &["rollout", "approve", "rollout", "demo"]),
        "rollout.rollouts.kruise.io/demo approved",
    );
    assert_eq!(
        c.jsonpath("rollout/demo", "{.status.canaryStatus.currentStepState}"),
        "StepReady"
    );
    // Written through the status subresource: the rest of the status is kept.
    assert_eq!(
        c.jsonpath("rollout/demo", "{.status.canaryStatus.currentStepIndex}"),
        "1"
    );

    // pause / resume: spec.strategy.paused.
    succeeds(
        &kruise(&c, &["rollout", "pause", "rollout.rollouts.kruise.io/demo"]),
        "rollout.rollouts.kruise.io/demo paused",
    );
    assert_eq!(c.jsonpath("rollout/demo", "{.spec.strategy.paused}"), "true");
    fails(
        &kruise(&c, &["rollout", "pause", "rollout/demo"]),
        r#"error: rollouts.rollouts.kruise.io "demo" is already paused"#,
    );
    succeeds(
        &kruise(&c, &["rollout", "resume", "rollouts/demo"]),
        "rollout.rollouts.kruise.io/demo resumed",
    );
    assert_eq!(c.jsonpath("rollout/demo", "{.spec.strategy.paused}"), "false");
    fails(
        &kruise(&c, &["rollout", "resume", "rollout/demo"]),
        r#"error: rollouts.rollouts.kruise.io "demo" is not paused"#,
    );

    // undo --fast from step 3: step 2 (50 %, no traffic) rather than step 1 (it sends 20 %).
    set_status(
        &c,
        "demo",
        r#"{"currentStepIndex": 3, "canaryStatus": {"currentStepIndex": 3, "currentStepState": "StepPaused"}}"#,
    );
    // A dry run decides and writes nothing (kruise-tools writes anyway).
    succeeds(
        &kruise(
            &c,
            &["rollout", "undo", "rollout/demo", "--fast", "--dry-run=client"],
        ),
        "rollout.rollouts.kruise.io/demo rolled back (dry run)",
    );
    succeeds(
        &kruise(
            &c,
            &["rollout", "undo", "rollout/demo", "--fast", "--dry-run=server"],
        ),
        "rollout.rollouts.kruise.io/demo rolled back (server dry run)",
    );
    assert_eq!(
        c.jsonpath("rollout/demo", "{.status.canaryStatus.nextStepIndex}"),
        ""
    );
    succeeds(
        &kruise(&c, &["rollout", "undo", "rollout/demo", "--fast"]),
        "rollout.rollouts.kruise.io/demo rolled back",
    );
    assert_eq!(
        c.jsonpath("rollout/demo", "{.status.canaryStatus.nextStepIndex}"),
        "2"
    );
    set_status(
        &c,
        "demo",
        r#"{"currentStepIndex": 1, "canaryStatus": {"currentStepIndex": 1}}"#,
    );
    fails(
        &kruise(&c, &["rollout", "undo", "rollout/demo", "--fast"]),
        r#"error: rollouts.rollouts.kruise.io "demo" already at the first step"#,
    );

    // `get all` lists Rollouts when the server serves them.
    let all = c.ok(&["kruise", "get", "all"]);
    assert!(all.contains("rollout.rollouts.kruise.io/demo"), "{all}");

    // The verbs a Rollout does not support, in kruise-tools' words.
    fails(
        &kruise(&c, &["rollout", "status", "rollout/demo"]),
        "error: no status viewer has been implemented for Rollout.rollouts.kruise.io",
    );
    fails(
        &kruise(&c, &["rollout", "history", "rollout/demo"]),
        r#"error: no history viewer has been implemented for "Rollout.rollouts.kruise.io""#,
    );
    fails(
        &kruise(&c, &["rollout", "restart", "rollout/demo"]),
        r#"error: rollouts.rollouts.kruise.io "demo" restarting is not supported"#,
    );

    // A built-in workload is undone by kubectl's own `rollout undo`; its errors come back as printed.
    c.apply(
        "apiVersion: rollouts.kruise.io/v1beta1
kind: Rollout
metadata:
  name: shop
spec:
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: shop}
  strategy: {canary: {steps: [{replicas: 1}]}}
",
    );
    fails(
        &kruise(&c, &["rollout", "undo", "rollout/shop"]),
        r#"Error from server (NotFound): deployments.apps "shop" not found"#,
    );
    let dir = tempfile::tempdir().unwrap();
    let recorder = common::recording_kubectl(dir.path(), 0);
    let out = c.run_env(
        &[("KUBECTL", recorder.to_str().unwrap())],
        &[
            "kruise",
            "rollout",
            "undo",
            "rollout/shop",
            "--to-revision=2",
            "--dry-run=server",
        ],
        None,
    );
    succeeds(
        &out,
        "rollout\nundo\ndeployments.v1.apps/shop\n--to-revision=2\n--dry-run=server",
    );

    fails(
        &kruise(&c, &["rollout", "approve", "rollout/absent"]),
        r#"Error from server (NotFound): rollouts.rollouts.kruise.io "absent" not found"#,
    );
}

/// `kubectl kruise ARGS` once its output starts with `head` (within 30 s).
fn described(c: &Cluster, args: &[&str], head: &str) -> Output {
    let start = std::time::Instant::now();
    loop {
        let out = kruise(c, args);
        if out.code == 0 && out.stdout.starts_with(head) {
            return out;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "expected to start with:\n{head}\ngot: {out:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn undo_rolls_the_referenced_workload_back_once_and_describe_shows_the_release() {
    let c = start();
    install(&c, CRD);
    cloneset_at_second_revision(&c);
    c.apply(ROLLOUT);
    let generation = c.jsonpath("rollout/demo", "{.metadata.generation}");
    let revision = c.jsonpath("cloneset/web", "{.status.updateRevision}");
    let stable = c.jsonpath("cloneset/web", "{.status.currentRevision}");
    set_status(
        &c,
        "demo",
        &format!(
            r#"{{"observedGeneration": {generation}, "phase": "Progressing", "message": "Rollout is in step(1/3), and you need manually confirm to enter the next step",
                "currentStepIndex": 1, "currentStepState": "StepPaused",
                "canaryStatus": {{"currentStepIndex": 1, "currentStepState": "StepPaused",
                                 "stableRevision": "{stable}", "canaryRevision": "{revision}", "podTemplateHash": "{revision}"}}}}"#
        ),
    );
    let pods = c.ok(&[
        "get",
        "pods",
        "-l",
        "app=web",
        "-o",
        "jsonpath={.items[*].metadata.name}",
    ]);
    let pods: Vec<&str> = pods.split(' ').collect();
    assert_eq!(pods.len(), 3, "{pods:?}");
    c.ok(&["label", "pod", pods[0], "rollouts.kruise.io/rollout-batch-id=1"]);

    // describe: the current batch's pods only; --all: every pod of the CloneSet.
    let expected_head = format!(
        "\
Name:              demo
Namespace:         default
Status:            Progressing
Message:           Rollout is in step(1/3), and you need manually confirm to enter the next step
Strategy:          Canary
 Step:             1/3
 Steps:
  -  Replicas:     1
     Traffic:      20%
     State:        StepPaused
  -  Replicas:     50%
  -  Replicas:     100%
Traffic Routings:
  -  Service:      web
     Ingress:
      classType:   nginx
      name:        web
Images:            nginx:1.28
Current Revision:  {stable}
Update Revision:   {revision}
Replicas:
 Desired:          3
 Updated:          3
 Current:          3
 Ready:            3
 Available:        3
"
    );
    // The counts are the CloneSet's status at the time: described until it shows the settled one.
    let out = described(&c, &["describe", "rollout", "demo", "--no-color"], &expected_head);
    let table: Vec<&str> = out.stdout[expected_head.len()..].lines().collect();
    assert_eq!(table.len(), 2, "{table:?}");
    let header = table[0].split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(header, "NAME READY BATCH ID REVISION AGE RESTARTS STATUS");
    let row: Vec<&str> = table[1].split_whitespace().collect();
    // REVISION: the pod's pod-template-hash (which CloneSet pods carry too), else its
    // controller-revision-hash.
    let hash = c.jsonpath(
        &format!("pod/{}", pods[0]),
        "{.metadata.labels.pod-template-hash}",
    );
    assert!(!hash.is_empty());
    assert_eq!(
        (row[0], row[1], row[2], row[3], row[6]),
        (pods[0], "1/1", "1", hash.as_str(), "Running"),
        "{table:?}"
    );
    let all = described(
        &c,
        &["describe", "rollout", "rollout/demo", "--no-color", "--all"],
        &expected_head,
    );
    let rows: Vec<&str> = all.stdout[expected_head.len()..].lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "{}", all.stdout);
    // By batch id as text: the pods outside any batch ("") first.
    assert!(rows[2].starts_with(pods[0]), "{rows:?}");
    // Colours unless --no-color.
    let coloured = kruise(&c, &["describe", "rollout", "demo"]);
    assert!(
        coloured
            .stdout
            .contains("Status:            \x1b[33m⚠\x1b[0m Progressing\n")
    );
    fails(
        &kruise(&c, &["describe", "rollout", "absent"]),
        r#"Error from server (NotFound): rollouts.rollouts.kruise.io "absent" not found"#,
    );

    // -w prints the Rollout again when it changes, until --timeout.
    let child = std::process::Command::new("kubectl")
        .env("KUBECONFIG", &c.kubeconfig)
        .env("PATH", common::plugin_path())
        .args([
            "kruise",
            "describe",
            "rollout",
            "demo",
            "-w",
            "--no-color",
            "--timeout",
            "4",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    set_status(&c, "demo", r#"{"message": "Rollout is in step(2/3)"}"#);
    let watched = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&watched.stdout);
    assert_eq!(watched.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&watched.stderr),
        "error: timed out waiting for the condition\n"
    );
    let last = stdout.rsplit("Name:").next().unwrap_or_default();
    assert!(
        last.contains("Message:           Rollout is in step(2/3)\n"),
        "{stdout}"
    );

    // undo: the CloneSet the Rollout references, once although it is also named directly.
    succeeds(
        &kruise(&c, &["rollout", "undo", "rollout/demo", "cloneset/web"]),
        "cloneset.apps.kruise.io/web rolled back",
    );
    assert_eq!(
        c.jsonpath("cloneset/web", "{.spec.template.spec.containers[0].image}"),
        "nginx:1.27"
    );
}

#[test]
fn a_server_serving_v1alpha1_only_approves_canaries_and_refuses_pause_and_fast_undo() {
    let c = start();
    install(&c, &crd_v1alpha1_only());
    c.apply(
        "apiVersion: rollouts.kruise.io/v1alpha1
kind: Rollout
metadata:
  name: old
spec:
  objectRef:
    workloadRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: web}
  strategy:
    canary:
      steps:
        - {weight: 20, replicas: 1}
        - {replicas: 2}
",
    );
    fails(
        &kruise(&c, &["rollout", "approve", "rollout/old"]),
        r#"error: rollouts.rollouts.kruise.io "old" does not allow to approve, because current canary state is not 'StepPaused'"#,
    );
    set_status(
        &c,
        "old",
        r#"{"canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused"}}"#,
    );
    succeeds(
        &kruise(&c, &["rollout", "approve", "rollout/old"]),
        "rollout.rollouts.kruise.io/old approved",
    );
    assert_eq!(
        c.jsonpath("rollout/old", "{.status.canaryStatus.currentStepState}"),
        "StepReady"
    );
    fails(
        &kruise(&c, &["rollout", "pause", "rollout/old"]),
        r#"error: rollouts.rollouts.kruise.io "old" pausing is not supported"#,
    );
    fails(
        &kruise(&c, &["rollout", "undo", "rollout/old", "--fast"]),
        r#"error: rollouts.rollouts.kruise.io "old" rollback is not supported on given object"#,
    );
    // The workload is absent: describe says so in its own line, after the Rollout's.
    let out = kruise(&c, &["describe", "rollout", "old", "--no-color"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains(
            " Step:             1/2\n Steps:\n  -  Replicas:     1\n     Traffic:      20%\n     State:        StepReady\n  -  Replicas:     2\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with(
            "Error getting resources: Error from server (NotFound): clonesets.apps.kruise.io \"web\" not found\n"
        ),
        "{}",
        out.stdout
    );
}
