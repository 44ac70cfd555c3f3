//! AdvancedCronJob end to end in `kruise playground --clock manual`, driven with the real kubectl: the
//! test moves the shared clock past minute boundaries (`kubectl create --raw /playground/clock`)
//! instead of waiting for them; kruise-rs's controller creates the children, the playground's Job
//! controller, scheduler and kubelet run them.
//!
//! Every step first puts the clock one second past a minute boundary, so the next boundary the
//! system clock would reach is 59 s of real time away: only the test's own moves schedule runs.

use crate::common;

use std::collections::BTreeMap;
use std::io::BufReader;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use common::kubectl::{kubectl, ok, serve, wait_for};
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

fn pod(command: &[&str]) -> Value {
    json!({"spec": {"restartPolicy": "Never",
        "containers": [{"name": "work", "image": "busybox:1.36", "command": command}]}})
}

/// An AdvancedCronJob `*/1 * * * *` creating Jobs labelled `acj=<name>` that run `command`.
fn job_acj(name: &str, command: &[&str], spec: Value) -> Value {
    let mut acj = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "AdvancedCronJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedule": "*/1 * * * *",
            "template": {"jobTemplate": {"metadata": {"labels": {"acj": name}},
                "spec": {"template": pod(command)}}}}});
    for (k, v) in spec.as_object().into_iter().flatten() {
        acj["spec"][k] = v.clone();
    }
    acj
}

fn apply(k: &Path, objects: &[Value]) {
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    let (success, _, err) = kubectl(k, &["apply", "-f", "-"], Some(&list.to_string()));
    assert!(success, "kubectl apply failed: {err}");
}

/// The playground clock's time, in unix seconds.
fn clock_now(k: &Path) -> i64 {
    let state: Value = serde_json::from_str(&ok(k, &["get", "--raw", "/playground/clock"])).unwrap();
    assert_eq!(state["manual"], true, "{state}");
    let now: Timestamp = state["now"].as_str().unwrap().parse().unwrap();
    now.as_second()
}

/// Moves the clock to one second past the next minute boundary; returns that boundary.
fn pass_a_minute(k: &Path) -> i64 {
    let now = clock_now(k);
    let boundary = (now / 60 + 1) * 60;
    let body = json!({"advanceSeconds": boundary + 1 - now}).to_string();
    let (success, _, err) = kubectl(
        k,
        &["create", "--raw", "/playground/clock", "-f", "-"],
        Some(&body),
    );
    assert!(success, "advancing the clock failed: {err}");
    boundary
}

/// The names of the Jobs labelled `acj=<name>`.
fn jobs(k: &Path, name: &str) -> Vec<String> {
    let out = ok(
        k,
        &[
            "get",
            "jobs",
            "-l",
            &format!("acj={name}"),
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
    );
    let mut names: Vec<String> = out.split_whitespace().map(String::from).collect();
    names.sort();
    names
}

fn acj_field(k: &Path, name: &str, path: &str) -> String {
    ok(k, &["get", "acj", name, "-o", &format!("jsonpath={{{path}}}")])
}

fn job_complete(k: &Path, job: &str) -> bool {
    let (_, out, _) = kubectl(
        k,
        &[
            "get",
            "job",
            job,
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Complete\")].status}",
        ],
        None,
    );
    out == "True"
}

/// Records, from `kubectl get jobs -w --output-watch-events`, how often each Job name was ADDED
/// and the most Jobs that existed at once, per value of the `acj` label.
struct JobWatch {
    child: std::process::Child,
    added: Arc<Mutex<BTreeMap<String, usize>>>,
    most: Arc<Mutex<BTreeMap<String, usize>>>,
}

impl JobWatch {
    fn start(k: &Path) -> JobWatch {
        let mut child = Command::new("kubectl")
            .env("KUBECONFIG", k)
            .env("KUBECACHEDIR", k.parent().unwrap().join("kube-cache"))
            .args([
                "get",
                "jobs",
                "-w",
                "-o",
                "json",
                "--output-watch-events",
                "-l",
                "acj",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("kubectl on PATH");
        let stdout = child.stdout.take().unwrap();
        let added: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
        let most: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
        let (a, m) = (added.clone(), most.clone());
        std::thread::spawn(move || {
            let mut live: BTreeMap<String, BTreeMap<String, ()>> = BTreeMap::new();
            for event in serde_json::Deserializer::from_reader(BufReader::new(stdout)).into_iter::<Value>() {
                let Ok(event) = event else { break };
                let object = &event["object"];
                let name = object["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                let owner = object["metadata"]["labels"]["acj"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                let jobs = live.entry(owner.clone()).or_default();
                match event["type"].as_str() {
                    Some("ADDED") => {
                        *a.lock().unwrap().entry(name.clone()).or_default() += 1;
                        jobs.insert(name, ());
                    }
                    Some("DELETED") => {
                        jobs.remove(&name);
                    }
                    _ => {}
                }
                let mut most = m.lock().unwrap();
                let seen = most.entry(owner).or_default();
                *seen = (*seen).max(jobs.len());
            }
        });
        JobWatch { child, added, most }
    }

    /// How often `name` was ADDED so far.
    fn added(&self, name: &str) -> usize {
        self.added.lock().unwrap().get(name).copied().unwrap_or(0)
    }

    fn stop(mut self) -> (BTreeMap<String, usize>, BTreeMap<String, usize>) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let added = self.added.lock().unwrap().clone();
        let most = self.most.lock().unwrap().clone();
        (added, most)
    }
}

#[test]
fn each_minute_passed_creates_one_job_history_limits_hold_and_deleted_runs_never_return() {
    let pg = serve(&["--clock", "manual", "--kubelet-delay-ms", "100"]);
    let k = pg.kubeconfig.as_path();
    let watch = JobWatch::start(k);
    pass_a_minute(k);
    apply(
        k,
        &[
            job_acj("keep-one", &["true"], json!({"successfulJobsHistoryLimit": 1})),
            job_acj("keep-none", &["true"], json!({"successfulJobsHistoryLimit": 0})),
        ],
    );
    wait_for("the webhook defaults", || {
        acj_field(k, "keep-one", ".spec.concurrencyPolicy") == "Allow"
    });
    assert_eq!(acj_field(k, "keep-one", ".spec.failedJobsHistoryLimit"), "1");
    assert!(jobs(k, "keep-one").is_empty(), "no run before a minute passes");

    let mut runs = Vec::new();
    for _ in 0..3 {
        let boundary = pass_a_minute(k);
        let newest = format!("keep-one-{boundary}");
        runs.push(boundary);
        wait_for("the run of this minute, complete", || job_complete(k, &newest));
        // Older finished runs go; this one stays.
        wait_for("keep-one keeps one finished Job", || {
            jobs(k, "keep-one") == vec![newest.clone()]
        });
        wait_for("keep-none ran this minute and kept nothing", || {
            watch.added(&format!("keep-none-{boundary}")) == 1 && jobs(k, "keep-none").is_empty()
        });
        let last = acj_field(k, "keep-one", ".status.lastScheduleTime");
        assert_eq!(last.parse::<Timestamp>().unwrap().as_second(), boundary);
    }
    assert_eq!(acj_field(k, "keep-one", ".status.type"), "Job");

    // The newest finished run deleted by hand: it is not made again.
    let newest = format!("keep-one-{}", runs[2]);
    ok(k, &["delete", "job", &newest]);
    let boundary = pass_a_minute(k);
    runs.push(boundary);
    wait_for("the next minute's run", || {
        job_complete(k, &format!("keep-one-{boundary}"))
    });
    wait_for("keep-none ran this minute and kept nothing", || {
        watch.added(&format!("keep-none-{boundary}")) == 1 && jobs(k, "keep-none").is_empty()
    });
    let (added, _) = watch.stop();
    for acj in ["keep-one", "keep-none"] {
        for run in &runs {
            let name = format!("{acj}-{run}");
            assert_eq!(
                added.get(&name),
                Some(&1),
                "{name} created exactly once: {added:?}"
            );
        }
    }
    assert_eq!(added.len(), 2 * runs.len(), "no other Job: {added:?}");
}

#[test]
fn forbid_skips_while_a_run_is_active_paused_stops_and_a_broadcast_job_template_makes_broadcast_jobs() {
    let pg = serve(&["--clock", "manual", "--kubelet-delay-ms", "100"]);
    let k = pg.kubeconfig.as_path();
    let watch = JobWatch::start(k);
    pass_a_minute(k);
    let broadcast = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "AdvancedCronJob",
        "metadata": {"name": "broadcast", "namespace": "default"},
        "spec": {"schedule": "*/1 * * * *",
            "template": {"broadcastJobTemplate": {"metadata": {"labels": {"acj": "broadcast"}},
                "spec": {"template": pod(&["true"])}}}}});
    apply(
        k,
        &[
            // Runs until deleted (the simulated kubelet's `sleep infinity`).
            job_acj(
                "forbid",
                &["sleep", "infinity"],
                json!({"concurrencyPolicy": "Forbid"}),
            ),
            job_acj("paused", &["true"], json!({"paused": true})),
            broadcast,
        ],
    );
    let broadcast_jobs = || {
        ok(
            k,
            &[
                "get",
                "bcj",
                "-l",
                "acj=broadcast",
                "-o",
                "jsonpath={.items[*].metadata.name}",
            ],
        )
    };

    let first = pass_a_minute(k);
    wait_for("the first BroadcastJob", || {
        broadcast_jobs() == format!("broadcast-{first}")
    });
    let forbid_first = format!("forbid-{first}");
    wait_for("forbid's first run", || {
        jobs(k, "forbid") == vec![forbid_first.clone()]
    });
    assert_eq!(acj_field(k, "broadcast", ".status.type"), "BroadcastJob");
    let owner = ok(
        k,
        &[
            "get",
            "bcj",
            &format!("broadcast-{first}"),
            "-o",
            "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}",
        ],
    );
    assert_eq!(owner, "AdvancedCronJob/broadcast");

    // A second minute: forbid's run is still active, so it is skipped; paused makes nothing. The
    // second BroadcastJob shows the controller has passed every AdvancedCronJob for this minute.
    let second = pass_a_minute(k);
    wait_for("the second BroadcastJob", || {
        broadcast_jobs().split_whitespace().count() == 2
    });
    wait_for("forbid's active run in its status", || {
        acj_field(k, "forbid", ".status.active[*].name") == forbid_first
    });
    assert_eq!(jobs(k, "forbid"), vec![forbid_first.clone()]);
    assert!(jobs(k, "paused").is_empty(), "paused: no run");
    assert!(!job_complete(k, &forbid_first), "still running");

    // The active run gone, the skipped minute runs (no startingDeadlineSeconds), alone.
    ok(k, &["delete", "job", &forbid_first]);
    wait_for("the skipped minute runs", || {
        jobs(k, "forbid") == vec![format!("forbid-{second}")]
    });
    // Unpaused, the latest missed minute runs once.
    ok(
        k,
        &[
            "patch",
            "acj",
            "paused",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"paused":false}}"#,
        ],
    );
    wait_for("paused resumes with the latest missed run", || {
        jobs(k, "paused") == vec![format!("paused-{second}")]
    });
    let (added, most) = watch.stop();
    assert_eq!(
        most.get("forbid"),
        Some(&1),
        "Forbid never ran two at once: {most:?}"
    );
    assert_eq!(added.get(&format!("paused-{first}")), None);
    assert_eq!(added.get(&format!("paused-{second}")), Some(&1));
    assert_eq!(added.get(&format!("forbid-{second}")), Some(&1));
}

#[test]
fn the_clock_cannot_be_moved_without_clock_manual() {
    let pg = serve(&[]);
    let k = pg.kubeconfig.as_path();
    let state: Value = serde_json::from_str(&ok(k, &["get", "--raw", "/playground/clock"])).unwrap();
    assert_eq!(state["manual"], false);
    assert_eq!(state["offsetSeconds"], 0);
    let (success, _, err) = kubectl(
        k,
        &["create", "--raw", "/playground/clock", "-f", "-"],
        Some(r#"{"advanceSeconds": 60}"#),
    );
    assert!(!success);
    assert!(err.contains("--clock manual"), "{err}");
}
