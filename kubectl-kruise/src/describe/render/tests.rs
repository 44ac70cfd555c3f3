use serde_json::json;

use super::*;

fn canary() -> Value {
    json!({
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "demo", "namespace": "shop", "generation": 2},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "strategy": {"canary": {
                "steps": [
                    {"replicas": 1, "traffic": "5%",
                     "matches": [{"headers": [{"name": "user", "value": "beta"}]}]},
                    {"replicas": "50%"},
                    {"replicas": "100%"}
                ],
                "trafficRoutings": [{"service": "web", "ingress": {"classType": "nginx", "name": "web"}}]
            }}
        },
        "status": {
            "observedGeneration": 2,
            "phase": "Progressing",
            "message": "Rollout is in step(1/3), and you need manually confirm to enter the next step",
            "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused",
                             "stableRevision": "web-6d4b", "canaryRevision": "web-7f9c",
                             "podTemplateHash": "7f9c"}
        }
    })
}

fn fetched() -> Fetched {
    Fetched {
        referenced_routings: None,
        workload: Ok((
            Workload {
                images: vec!["nginx:1.28".into(), "fluent-bit:3".into()],
                desired: 4,
                updated: 1,
                current: 4,
                ready: 4,
                available: 4,
            },
            vec![PodRow {
                name: "web-abcde".into(),
                ready: "2/2".into(),
                ready_count: 2,
                batch: "1".into(),
                revision: "web-7f9c".into(),
                age: "42s".into(),
                restarts: "0".into(),
                status: "Running".into(),
            }],
        )),
    }
}

#[test]
fn a_paused_canary_step_as_kruise_tools_lays_it_out() {
    let text = render(&info(&canary()), &fetched(), false);
    let expected = "\
Name:              demo
Namespace:         shop
Status:            Progressing
Message:           Rollout is in step(1/3), and you need manually confirm to enter the next step
Strategy:          Canary
 Step:             1/3
 Steps:
  -  Replicas:     1
     Traffic:      5%
     Matches:
      - Headers:
       - Name:     user
         Value:    beta
         Type:     Exact
     State:        StepPaused
  -  Replicas:     50%
  -  Replicas:     100%
Traffic Routings:
  -  Service:      web
     Ingress:
      classType:   nginx
      name:        web
Images:            nginx:1.28
                   fluent-bit:3
Current Revision:  web-6d4b
Update Revision:   web-7f9c
Replicas:
 Desired:          4
 Updated:          1
 Current:          4
 Ready:            4
 Available:        4
NAME       READY  BATCH ID  REVISION  AGE  RESTARTS  STATUS
web-abcde  2/2    1         web-7f9c  42s  0         Running
";
    assert_eq!(text, expected);
}

#[test]
fn colours_mark_the_phase_the_current_step_and_pod_states() {
    let text = render(&info(&canary()), &fetched(), true);
    assert!(
        text.contains("Status:            \x1b[33m⚠\x1b[0m Progressing\n"),
        "{text}"
    );
    assert!(text.contains(" Steps:\n\x1b[32m  -  Replicas:     1\n"), "{text}");
    assert!(
        text.contains("     State:        StepPaused\n\x1b[0m  -  Replicas:     50%"),
        "{text}"
    );
    assert!(text.ends_with("\x1b[32m✔\x1b[0m Running\n"), "{text}");
}

#[test]
fn unobserved_generations_hide_status_and_replicas_and_errors_are_lines() {
    let mut rollout = canary();
    rollout["metadata"]["generation"] = json!(3);
    let fetched = Fetched {
        referenced_routings: Some(Err("trafficroutings.rollouts.kruise.io \"tr\" not found".into())),
        workload: Err("unsupported workload kind Widget".into()),
    };
    let text = render(&info(&rollout), &fetched, false);
    assert!(!text.contains("Status:"), "{text}");
    assert!(text.ends_with(
        "Error getting TrafficRoutingRef: trafficroutings.rollouts.kruise.io \"tr\" not found\nError getting resources: unsupported workload kind Widget\n"
    ), "{text}");
}

#[test]
fn blue_green_v1alpha1_and_rollouts_without_progress_are_read() {
    let blue = json!({
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "metadata": {"name": "bg"},
        "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "shop"},
                 "strategy": {"blueGreen": {"steps": [{"replicas": "100%", "traffic": "0%"}, {"replicas": "100%", "traffic": "100%"}]}}},
        "status": {"blueGreenStatus": {"currentStepIndex": 2, "currentStepState": "StepReady",
                                       "stableRevision": "a", "updatedRevision": "b"}}
    });
    let i = info(&blue);
    assert_eq!(
        (i.strategy.as_str(), i.step_index, i.step_state.as_str()),
        ("BlueGreen", 2, "StepReady")
    );
    assert_eq!(
        (i.stable_revision.as_str(), i.update_revision.as_str()),
        ("a", "b")
    );
    let alpha = json!({
        "apiVersion": "rollouts.kruise.io/v1alpha1",
        "metadata": {"name": "old", "annotations": {"rollouts.kruise.io/trafficrouting": "tr"}},
        "spec": {"objectRef": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "shop"}},
                 "strategy": {"canary": {"steps": [{"weight": 20, "replicas": 1}]}}}
    });
    let i = info(&alpha);
    assert_eq!(i.traffic_routing_ref, "tr");
    assert_eq!(i.workload.as_ref().map(|w| w.name.as_str()), Some("shop"));
    assert_eq!((i.step_index, i.observed), (0, true));
    let fetched = Fetched {
        referenced_routings: None,
        workload: Ok((Workload::default(), vec![])),
    };
    assert!(render(&i, &fetched, false).contains("  -  Replicas:     1\n     Traffic:      20%\n"));
}

#[test]
fn workload_counts_by_kind() {
    let cloneset = json!({"kind": "CloneSet", "spec": {"replicas": 5, "template": {"spec": {"containers": [{"image": "nginx"}]}}},
                          "status": {"replicas": 5, "updatedReplicas": 2, "readyReplicas": 4, "availableReplicas": 3}});
    assert_eq!(
        workload(&cloneset).unwrap(),
        Workload {
            images: vec!["nginx".into()],
            desired: 5,
            updated: 2,
            current: 5,
            ready: 4,
            available: 3
        }
    );
    let daemon = json!({"kind": "DaemonSet", "spec": {}, "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3,
                        "updatedNumberScheduled": 1, "numberReady": 2, "numberAvailable": 2}});
    assert_eq!(workload(&daemon).unwrap().desired, 3);
    assert_eq!(
        workload(&json!({"kind": "Job"})).unwrap_err(),
        "unsupported workload kind Job"
    );
}

#[test]
fn pods_sort_by_batch_then_ready_and_ages_read_as_kubectl() {
    let pod = |name: &str, batch: &str, ready: bool| -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "creationTimestamp": "2026-11-30T00:00:00Z",
                         "labels": {"rollouts.kruise.io/rollout-batch-id": batch, "controller-revision-hash": "web-7f9c"}},
            "spec": {"containers": [{"name": "main"}]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "main", "ready": ready, "restartCount": 2,
                        "image": "nginx", "imageID": ""}]}
        }))
        .unwrap()
    };
    let created = 1_795_996_800; // 2026-11-30T00:00:00Z
    let mut rows: Vec<PodRow> = [pod("c", "2", true), pod("a", "1", false), pod("b", "1", true)]
        .iter()
        .map(|p| pod_row(p, created + 600))
        .collect();
    sort_pods(&mut rows);
    let names: Vec<_> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["b", "a", "c"]);
    assert_eq!((rows[0].ready.as_str(), rows[1].ready.as_str()), ("1/1", "0/1"));
    assert_eq!((rows[0].age.as_str(), rows[0].restarts.as_str()), ("10m", "2"));
    assert_eq!(rows[0].revision, "web-7f9c");
    for (seconds, text) in [
        (-5, "<invalid>"),
        (-1, "0s"),
        (119, "119s"),
        (150, "2m30s"),
        (3600 * 5 + 60, "5h1m"),
        (3600 * 30, "30h"),
        (86400 * 3, "3d"),
        (86400 * 400, "400d"),
        (86400 * 800, "2y70d"),
    ] {
        assert_eq!(human_duration(seconds), text, "{seconds}");
    }
}
