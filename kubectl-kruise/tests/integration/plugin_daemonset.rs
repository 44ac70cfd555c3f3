//! `kubectl kruise rollout …` on an Advanced DaemonSet in the playground (its controller running),
//! through the real kubectl.

use crate::common;

use common::{Cluster, start, wait_for};

const AGENT: &str = "apiVersion: apps.kruise.io/v1beta1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: main, image: agent:1}]
";

/// `rollout status` until kubectl's DaemonSet line says done.
fn rolled_out(c: &Cluster) {
    let out = c.run(
        &["kruise", "rollout", "status", "ads/agent", "--timeout", "60s"],
        None,
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout.lines().last().unwrap_or_default(),
        "daemon set \"agent\" successfully rolled out"
    );
}

/// Waits until the controller has observed the Advanced DaemonSet's current generation.
fn observed(c: &Cluster) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let generation = c.jsonpath("ads/agent", "{.metadata.generation}");
        if c.jsonpath("ads/agent", "{.status.observedGeneration}") == generation {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "generation {generation} never observed"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

fn images(c: &Cluster) -> String {
    c.ok(&[
        "get",
        "pods",
        "-l",
        "app=agent",
        "-o",
        "jsonpath={.items[*].spec.containers[0].image}",
    ])
}

/// kruise-tools has no Advanced DaemonSet viewer; ours waits for the rollout with kubectl's DaemonSet
/// lines, and set, pause and resume take the kind.
#[test]
fn advanced_daemonset_status_set_pause_resume() {
    let c = start();
    c.apply(AGENT);
    rolled_out(&c);
    assert_eq!(
        c.ok(&["kruise", "rollout", "pause", "ads/agent"]),
        "daemonset.apps.kruise.io/agent paused\n"
    );
    assert_eq!(
        c.jsonpath("ads/agent", "{.spec.updateStrategy.rollingUpdate.paused}"),
        "true"
    );
    assert_eq!(
        c.ok(&["kruise", "set", "image", "ads/agent", "main=agent:2"]),
        "daemonset.apps.kruise.io/agent image updated\n"
    );
    // Paused: the viewer waits, and says so once (after the controller has seen the new template: until
    // then it says it waits for the spec update to be observed).
    observed(&c);
    let waiting = c.run(
        &["kruise", "rollout", "status", "ads/agent", "--watch=false"],
        None,
    );
    assert_eq!(waiting.code, 0, "{waiting:?}");
    assert!(
        waiting
            .stdout
            .starts_with("Waiting for daemon set \"agent\" rollout to finish: 0 out of 3 new pods"),
        "{waiting:?}"
    );
    assert_eq!(
        c.ok(&["kruise", "rollout", "resume", "daemonsets.apps.kruise.io/agent"]),
        "daemonset.apps.kruise.io/agent resumed\n"
    );
    rolled_out(&c);
    assert_eq!(images(&c), "agent:2 agent:2 agent:2");
}

/// History lists the ControllerRevisions the Advanced DaemonSet controller writes, as for a CloneSet;
/// undo puts the former template back, the pods follow, and the restored revision is renumbered.
#[test]
fn advanced_daemonset_history_and_undo() {
    let c = start();
    c.apply(AGENT);
    rolled_out(&c);
    // One revision: nothing to go back to.
    let none = c.run(&["kruise", "rollout", "undo", "ads/agent"], None);
    assert_eq!(
        (none.code, none.stderr.as_str()),
        (1, "error: no last revision to roll back to\n")
    );
    c.ok(&["kruise", "set", "image", "ads/agent", "main=agent:2"]);
    rolled_out(&c);
    assert_eq!(images(&c), "agent:2 agent:2 agent:2");

    assert_eq!(
        c.ok(&["kruise", "rollout", "history", "ads/agent"]),
        "daemonset.apps.kruise.io/agent \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
    );
    let one = c.ok(&[
        "kruise",
        "rollout",
        "history",
        "daemonsets.apps.kruise.io/agent",
        "--revision=1",
    ]);
    assert!(
        one.starts_with(
            "daemonset.apps.kruise.io/agent with revision #1\nPod Template:\n  Labels:       app=agent\n"
        ),
        "{one}"
    );
    assert!(one.contains("    Image:        agent:1\n"), "{one}");
    let missing = c.run(
        &["kruise", "rollout", "history", "ads/agent", "--revision", "7"],
        None,
    );
    assert_eq!(
        (missing.code, missing.stderr.as_str()),
        (1, "error: unable to find the specified revision\n")
    );

    // --dry-run=client: the template it would restore, nothing written.
    let dry = c.ok(&["kruise", "rollout", "undo", "ads/agent", "--dry-run=client"]);
    assert!(
        dry.starts_with("daemonset.apps.kruise.io/agent will roll back to Pod Template:\n"),
        "{dry}"
    );
    assert!(dry.contains("Image:        agent:1"), "{dry}");
    assert_eq!(
        c.jsonpath("ads/agent", "{.spec.template.spec.containers[0].image}"),
        "agent:2"
    );
    let unknown = c.run(
        &["kruise", "rollout", "undo", "ads/agent", "--to-revision", "9"],
        None,
    );
    assert_eq!(
        (unknown.code, unknown.stderr.as_str()),
        (1, "error: unable to find specified revision 9 in history\n")
    );

    assert_eq!(
        c.ok(&["kruise", "rollout", "undo", "ads/agent"]),
        "daemonset.apps.kruise.io/agent rolled back\n"
    );
    assert_eq!(
        c.jsonpath("ads/agent", "{.spec.template.spec.containers[0].image}"),
        "agent:1"
    );
    rolled_out(&c);
    wait_for("every pod back on agent:1", || {
        images(&c) == "agent:1 agent:1 agent:1"
    });
    // The controller reused revision 1's ControllerRevision and numbered it as the newest.
    wait_for("the restored revision to be renumbered", || {
        c.ok(&["kruise", "rollout", "history", "ads/agent"])
            == "daemonset.apps.kruise.io/agent \nREVISION  CHANGE-CAUSE\n2         <none>\n3         <none>\n\n"
    });
    assert_eq!(
        c.ok(&["kruise", "rollout", "undo", "ads/agent", "--to-revision=3"]),
        "daemonset.apps.kruise.io/agent skipped rollback (current template already matches revision 3)\n"
    );
}
