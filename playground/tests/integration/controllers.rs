//! The built-in controllers of the simulated data plane — StatefulSet, DaemonSet, Job, CronJob,
//! the volume binder, pod exits and the scheduler's node filters — driven with kube-rs clients.
//! Expected values follow k8s.io/kubernetes: `pkg/controller/{statefulset,daemon,job,cronjob}`,
//! `pkg/controller/volume/persistentvolume`, `pkg/kubelet` (`getPhase`) and the scheduler plugins
//! `NodeUnschedulable`, `NodeAffinity`, `TaintToleration`.

use crate::common;

use std::time::Duration;

use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{Node, PersistentVolume, PersistentVolumeClaim, Pod};
use kruise_playground::PlaygroundOptions;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use common::{start_nodes as start, value};

async fn pods_with(pods: &Api<Pod>, selector: &str) -> Vec<Value> {
    let lp = ListParams::default().labels(selector);
    pods.list(&lp).await.unwrap().items.iter().map(value).collect()
}

fn statefulset(replicas: i64, policy: &str) -> StatefulSet {
    serde_json::from_value(json!({
        "metadata": {"name": "db"},
        "spec": {"replicas": replicas, "serviceName": "db", "podManagementPolicy": policy,
                 "selector": {"matchLabels": {"app": "db"}},
                 "template": {"metadata": {"labels": {"app": "db"}},
                              "spec": {"containers": [{"name": "db", "image": "postgres:16"}]}},
                 "volumeClaimTemplates": [{"metadata": {"name": "data"},
                     "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}}}]}
    }))
    .unwrap()
}

/// OrderedReady: `db-0` alone until it is Running and Ready (`processReplica` waits on it).
#[tokio::test]
async fn statefulset_ordinals_claims_and_status() {
    let pg = start(2).await;
    let client = pg.client().await.unwrap();
    let sets: Api<StatefulSet> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    sets.create(&PostParams::default(), &statefulset(3, "OrderedReady"))
        .await
        .unwrap();
    let first = common::eventually("db-0", || async { pods.get_opt("db-0").await.unwrap() }).await;
    // Created alone: db-1 waits until db-0 is Ready.
    assert!(pods.get_opt("db-1").await.unwrap().is_none());
    let p = value(&first);
    assert_eq!(
        p["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"],
        "db-0"
    );
    assert_eq!(p["metadata"]["labels"]["apps.kubernetes.io/pod-index"], "0");
    assert_eq!(p["spec"]["hostname"], "db-0");
    assert_eq!(p["spec"]["subdomain"], "db");
    let volume = p["spec"]["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "data")
        .cloned();
    assert_eq!(volume.unwrap()["persistentVolumeClaim"]["claimName"], "data-db-0");
    let set = common::eventually("3 ready replicas", || async {
        let s = value(&sets.get("db").await.unwrap());
        (s["status"]["readyReplicas"] == 3).then_some(s)
    })
    .await;
    let revision = set["status"]["updateRevision"].as_str().unwrap().to_string();
    assert_eq!(set["status"]["currentRevision"], revision.as_str());
    assert_eq!(set["status"]["currentReplicas"], 3);
    assert_eq!(set["status"]["updatedReplicas"], 3);
    assert_eq!(set["status"]["availableReplicas"], 3);
    assert_eq!(set["status"]["observedGeneration"], 1);
    assert!(revision.starts_with("db-"));
    let all = pods_with(&pods, "app=db").await;
    assert!(
        all.iter()
            .all(|p| p["metadata"]["labels"]["controller-revision-hash"] == revision.as_str())
    );
    let revisions: Api<ControllerRevision> = Api::default_namespaced(client.clone());
    let rev = value(&revisions.get(&revision).await.unwrap());
    assert_eq!(rev["revision"], 1);
    assert_eq!(rev["data"]["spec"]["template"]["$patch"], "replace");
    // Every claim is bound to a made-up volume.
    let claims: Api<PersistentVolumeClaim> = Api::default_namespaced(client.clone());
    let claim = common::eventually("data-db-2 bound", || async {
        let c = value(&claims.get_opt("data-db-2").await.unwrap()?);
        (c["status"]["phase"] == "Bound").then_some(c)
    })
    .await;
    assert_eq!(
        claim["metadata"]["labels"]["app"], "db",
        "the set's selector labels"
    );
    assert_eq!(claim["status"]["capacity"]["storage"], "2Gi");

    // A rolling update with partition 1: db-2 then db-1 move, db-0 stays (highest ordinal first).
    let patch = json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 1}},
        "template": {"spec": {"containers": [{"name": "db", "image": "postgres:17"}]}}}});
    sets.patch("db", &PatchParams::default(), &Patch::Strategic(patch))
        .await
        .unwrap();
    let set = common::eventually("2 pods updated", || async {
        let s = value(&sets.get("db").await.unwrap());
        (s["status"]["updatedReplicas"] == 2 && s["status"]["readyReplicas"] == 3).then_some(s)
    })
    .await;
    let update = set["status"]["updateRevision"].as_str().unwrap();
    assert_ne!(update, revision);
    assert_eq!(
        set["status"]["currentRevision"],
        revision.as_str(),
        "partitioned: not complete"
    );
    let image = |p: &Pod| p.spec.as_ref().unwrap().containers[0].image.clone().unwrap();
    assert_eq!(image(&pods.get("db-0").await.unwrap()), "postgres:16");
    assert_eq!(image(&pods.get("db-2").await.unwrap()), "postgres:17");
    // Scale down removes the highest ordinal; its claim stays (whenScaled: Retain).
    sets.patch(
        "db",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 2}})),
    )
    .await
    .unwrap();
    common::eventually("db-2 gone", || async {
        pods.get_opt("db-2").await.unwrap().is_none().then_some(())
    })
    .await;
    assert!(claims.get_opt("data-db-2").await.unwrap().is_some());
}

/// Parallel: every ordinal at once.
#[tokio::test]
async fn parallel_statefulsets_create_all_pods_at_once() {
    let pg = common::start_with(PlaygroundOptions {
        nodes: 1,
        kubelet_delay: Duration::from_secs(5),
        ..PlaygroundOptions::default()
    })
    .await;
    let client = pg.client().await.unwrap();
    let sets: Api<StatefulSet> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client);
    sets.create(&PostParams::default(), &statefulset(3, "Parallel"))
        .await
        .unwrap();
    common::eventually("3 pods before any is ready", || async {
        (pods_with(&pods, "app=db").await.len() == 3).then_some(())
    })
    .await;
}

fn daemonset() -> DaemonSet {
    serde_json::from_value(json!({
        "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
                 "template": {"metadata": {"labels": {"app": "agent"}},
                              "spec": {"containers": [{"name": "agent", "image": "fluentd:1"}]}}}
    }))
    .unwrap()
}

/// One pod per eligible node, pinned with `matchFields`; a tainted node gets none, a cordoned one
/// keeps its pod (the controller adds the `unschedulable` toleration).
#[tokio::test]
async fn daemonset_one_pod_per_eligible_node() {
    let pg = start(3).await;
    let client = pg.client().await.unwrap();
    let nodes: Api<Node> = Api::all(client.clone());
    common::eventually("3 nodes", || async {
        (nodes.list(&ListParams::default()).await.unwrap().items.len() == 3).then_some(())
    })
    .await;
    let taint = json!({"spec": {"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]}});
    nodes
        .patch("playground-node-3", &PatchParams::default(), &Patch::Merge(taint))
        .await
        .unwrap();
    let cordon = json!({"spec": {"unschedulable": true}});
    nodes
        .patch(
            "playground-node-2",
            &PatchParams::default(),
            &Patch::Merge(cordon),
        )
        .await
        .unwrap();
    let sets: Api<DaemonSet> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    sets.create(&PostParams::default(), &daemonset()).await.unwrap();
    let ds = common::eventually("2 daemon pods ready", || async {
        let d = value(&sets.get("agent").await.unwrap());
        (d["status"]["numberReady"] == 2).then_some(d)
    })
    .await;
    assert_eq!(ds["status"]["desiredNumberScheduled"], 2);
    assert_eq!(ds["status"]["currentNumberScheduled"], 2);
    assert_eq!(ds["status"]["updatedNumberScheduled"], 2);
    assert_eq!(ds["status"]["numberMisscheduled"], 0);
    let mut on: Vec<String> = vec![];
    for p in pods_with(&pods, "app=agent").await {
        let node = p["spec"]["nodeName"].as_str().unwrap().to_string();
        let term = &p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
        assert_eq!(
            term,
            &json!([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}])
        );
        let tolerations = p["spec"]["tolerations"].as_array().unwrap();
        assert!(
            tolerations
                .iter()
                .any(|t| t["key"] == "node.kubernetes.io/unschedulable")
        );
        assert!(p["metadata"]["labels"]["controller-revision-hash"].is_string());
        assert_eq!(p["metadata"]["labels"]["pod-template-generation"], "1");
        on.push(node);
    }
    on.sort();
    assert_eq!(on, ["playground-node-1", "playground-node-2"]);
    // Untainting the node gives it a pod.
    nodes
        .patch(
            "playground-node-3",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"taints": null}})),
        )
        .await
        .unwrap();
    common::eventually("3 daemon pods ready", || async {
        let d = value(&sets.get("agent").await.unwrap());
        (d["status"]["numberReady"] == 3).then_some(())
    })
    .await;
    // A rolling update replaces every pod (maxUnavailable 1).
    let patch =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "agent", "image": "fluentd:2"}]}}}});
    sets.patch("agent", &PatchParams::default(), &Patch::Strategic(patch))
        .await
        .unwrap();
    common::eventually("3 updated and available", || async {
        let d = value(&sets.get("agent").await.unwrap());
        let s = &d["status"];
        (s["observedGeneration"] == 2 && s["updatedNumberScheduled"] == 3 && s["numberAvailable"] == 3)
            .then_some(())
    })
    .await;
    let images: Vec<Value> = pods_with(&pods, "app=agent")
        .await
        .iter()
        .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
        .map(|p| p["spec"]["containers"][0]["image"].clone())
        .collect();
    assert_eq!(images, ["fluentd:2", "fluentd:2", "fluentd:2"]);
}

fn job(name: &str, completions: i64, parallelism: i64, restart: &str, command: Value) -> Job {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"completions": completions, "parallelism": parallelism, "backoffLimit": 1,
                 "template": {"spec": {"restartPolicy": restart,
                     "containers": [{"name": "work", "image": "busybox", "command": command}]}}}
    }))
    .unwrap()
}

fn condition<'a>(obj: &'a Value, kind: &str) -> Option<&'a Value> {
    obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
}

/// completions 3, parallelism 2: never more than 2 active; Complete with 3 succeeded.
#[tokio::test]
async fn jobs_complete_and_fail() {
    let pg = start(2).await;
    let client = pg.client().await.unwrap();
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    jobs.create(
        &PostParams::default(),
        &job("ok", 3, 2, "Never", json!(["sh", "-c", "sleep 0.2 && exit 0"])),
    )
    .await
    .unwrap();
    let created = value(&jobs.get("ok").await.unwrap());
    let uid = created["metadata"]["uid"].as_str().unwrap();
    // The API server's generated selector (`batch/job/strategy.go`).
    assert_eq!(
        created["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"],
        uid
    );
    assert_eq!(
        created["spec"]["template"]["metadata"]["labels"]["job-name"],
        "ok"
    );
    let most_active = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let done = common::eventually("job ok complete", || {
        let (jobs, pods, most_active) = (jobs.clone(), pods.clone(), most_active.clone());
        async move {
            let all = pods_with(&pods, "job-name=ok").await;
            let finished = |p: &&Value| matches!(p["status"]["phase"].as_str(), Some("Succeeded" | "Failed"));
            let active = all.iter().filter(|p| !finished(p)).count();
            most_active.fetch_max(active, std::sync::atomic::Ordering::Relaxed);
            let j = value(&jobs.get("ok").await.unwrap());
            condition(&j, "Complete").is_some().then_some(j)
        }
    })
    .await;
    let most_active = most_active.load(std::sync::atomic::Ordering::Relaxed);
    assert!(most_active <= 2, "parallelism 2, saw {most_active}");
    assert_eq!(done["status"]["succeeded"], 3);
    assert_eq!(done["status"]["active"], 0);
    assert!(done["status"]["completionTime"].is_string());
    let complete = condition(&done, "Complete").unwrap();
    assert_eq!(complete["status"], "True");
    assert_eq!(complete["reason"], "CompletionsReached");
    assert!(condition(&done, "SuccessCriteriaMet").is_some());
    let finished = pods_with(&pods, "job-name=ok").await;
    assert_eq!(finished.len(), 3);
    for p in &finished {
        assert_eq!(p["status"]["phase"], "Succeeded");
        let state = &p["status"]["containerStatuses"][0]["state"]["terminated"];
        assert_eq!(state["exitCode"], 0);
        assert_eq!(state["reason"], "Completed");
    }

    // backoffLimit 1: the second failed pod fails the Job.
    jobs.create(
        &PostParams::default(),
        &job("bad", 1, 1, "Never", json!(["false"])),
    )
    .await
    .unwrap();
    let failed = common::eventually("job bad failed", || async {
        let j = value(&jobs.get("bad").await.unwrap());
        condition(&j, "Failed").is_some().then_some(j)
    })
    .await;
    assert_eq!(failed["status"]["failed"], 2);
    let cond = condition(&failed, "Failed").unwrap();
    assert_eq!(cond["reason"], "BackoffLimitExceeded");
    assert_eq!(cond["message"], "Job has reached the specified backoff limit");
    let bad = pods_with(&pods, "job-name=bad").await;
    assert!(bad.iter().all(|p| p["status"]["phase"] == "Failed"));
    assert_eq!(
        bad[0]["status"]["containerStatuses"][0]["state"]["terminated"]["reason"],
        "Error"
    );
}

/// Pod exits: restartPolicy decides (`kubelet` `getPhase`, `ShouldContainerBeRestarted`).
#[tokio::test]
async fn pod_exits_follow_the_restart_policy() {
    let pg = start(1).await;
    let pods: Api<Pod> = Api::default_namespaced(pg.client().await.unwrap());
    let create = |name: &str, restart: &str, command: Value| {
        serde_json::from_value::<Pod>(
            json!({"metadata": {"name": name}, "spec": {"restartPolicy": restart,
            "containers": [{"name": "c", "image": "busybox", "command": command}]}}),
        )
        .unwrap()
    };
    let pp = PostParams::default();
    pods.create(
        &pp,
        &create("three", "Never", json!(["sh", "-c", "sleep 0.1; exit 3"])),
    )
    .await
    .unwrap();
    pods.create(&pp, &create("retry", "OnFailure", json!(["false"])))
        .await
        .unwrap();
    pods.create(&pp, &create("again", "Always", json!(["true"])))
        .await
        .unwrap();
    pods.create(
        &pp,
        &create("serve", "Never", json!(["nginx", "-g", "daemon off;"])),
    )
    .await
    .unwrap();
    let three = common::eventually("three failed", || async {
        let p = value(&pods.get("three").await.unwrap());
        (p["status"]["phase"] == "Failed").then_some(p)
    })
    .await;
    assert_eq!(
        three["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"],
        3
    );
    let ready = three["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .cloned();
    assert_eq!(ready.unwrap()["reason"], "PodCompleted");
    for name in ["retry", "again"] {
        let p = common::eventually("restarted twice", || async {
            let p = value(&pods.get(name).await.unwrap());
            (p["status"]["containerStatuses"][0]["restartCount"].as_i64() >= Some(2)).then_some(p)
        })
        .await;
        assert_eq!(
            p["status"]["phase"], "Running",
            "{name} is restarted, not finished"
        );
        assert!(p["status"]["containerStatuses"][0]["lastState"]["terminated"].is_object());
    }
    let serve = value(&pods.get("serve").await.unwrap());
    assert_eq!(serve["status"]["phase"], "Running", "an unknown command runs on");
}

/// A CronJob whose last run was two minutes ago starts the Job of the latest minute.
#[tokio::test]
async fn cronjobs_start_jobs_on_schedule() {
    let pg = start(1).await;
    let client = pg.client().await.unwrap();
    let cronjobs: Api<CronJob> = Api::default_namespaced(client.clone());
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let cj: CronJob = serde_json::from_value(json!({
        "metadata": {"name": "tick"},
        "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "t", "image": "busybox", "command": ["true"]}]}}}}}
    }))
    .unwrap();
    let created = value(&cronjobs.create(&PostParams::default(), &cj).await.unwrap());
    assert_eq!(
        created["spec"]["concurrencyPolicy"], "Allow",
        "SetDefaults_CronJob"
    );
    assert_eq!(created["spec"]["successfulJobsHistoryLimit"], 3);
    let past = time::OffsetDateTime::now_utc() - time::Duration::minutes(2);
    let status = json!({"status": {"lastScheduleTime": kruise_playground::meta::timestamp(past)}});
    cronjobs
        .patch_status("tick", &PatchParams::default(), &Patch::Merge(status))
        .await
        .unwrap();
    let job = common::eventually("a job", || async {
        jobs.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .next()
            .map(|j| value(&j))
    })
    .await;
    let now_minutes = time::OffsetDateTime::now_utc().unix_timestamp() / 60;
    let name = job["metadata"]["name"].as_str().unwrap();
    let minutes: i64 = name.strip_prefix("tick-").unwrap().parse().unwrap();
    assert!((now_minutes - 1..=now_minutes).contains(&minutes), "{name}");
    assert!(job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"].is_string());
    assert_eq!(job["metadata"]["ownerReferences"][0]["kind"], "CronJob");
    let cj = common::eventually("job done, recorded", || async {
        let c = value(&cronjobs.get("tick").await.unwrap());
        c["status"]["lastSuccessfulTime"].is_string().then_some(c)
    })
    .await;
    assert_eq!(
        cj["status"]["lastScheduleTime"],
        job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
    );
    assert!(cj["status"]["active"].is_null());
}

/// A claim is bound to a made-up volume; deleting the claim releases and (reclaim policy
/// Delete) deletes the volume.
#[tokio::test]
async fn claims_bind_and_release_volumes() {
    let pg = start(1).await;
    let client = pg.client().await.unwrap();
    let claims: Api<PersistentVolumeClaim> = Api::default_namespaced(client.clone());
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    let claim: PersistentVolumeClaim = serde_json::from_value(json!({"metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
                 "resources": {"requests": {"storage": "1Gi"}}}}))
    .unwrap();
    let uid = claims
        .create(&PostParams::default(), &claim)
        .await
        .unwrap()
        .metadata
        .uid
        .unwrap();
    let bound = common::eventually("bound", || async {
        let c = value(&claims.get("data").await.unwrap());
        (c["status"]["phase"] == "Bound").then_some(c)
    })
    .await;
    let pv_name = format!("pvc-{uid}");
    assert_eq!(bound["spec"]["volumeName"], pv_name.as_str());
    assert_eq!(
        bound["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"],
        "yes"
    );
    let pv = value(&volumes.get(&pv_name).await.unwrap());
    assert_eq!(pv["status"]["phase"], "Bound");
    assert_eq!(pv["spec"]["claimRef"]["name"], "data");
    assert_eq!(pv["spec"]["storageClassName"], "standard");
    assert_eq!(pv["spec"]["capacity"]["storage"], "1Gi");
    claims.delete("data", &DeleteParams::default()).await.unwrap();
    common::eventually("volume deleted", || async {
        volumes.get_opt(&pv_name).await.unwrap().is_none().then_some(())
    })
    .await;
}

/// Nodes carry zone and hostname labels; cordoned and NotReady nodes get kube's taints and take
/// no new pods.
#[tokio::test]
async fn cordoned_and_not_ready_nodes_are_tainted() {
    let pg = start(3).await;
    let client = pg.client().await.unwrap();
    let nodes: Api<Node> = Api::all(client.clone());
    let zones = common::eventually("3 nodes", || async {
        let list = nodes.list(&ListParams::default()).await.unwrap().items;
        (list.len() == 3).then(|| {
            list.iter()
                .map(|n| value(n)["metadata"]["labels"]["topology.kubernetes.io/zone"].clone())
                .collect::<Vec<_>>()
        })
    })
    .await;
    assert_eq!(zones, ["playground-a", "playground-b", "playground-c"]);
    let node1 = value(&nodes.get("playground-node-1").await.unwrap());
    assert_eq!(
        node1["metadata"]["labels"]["kubernetes.io/hostname"],
        "playground-node-1"
    );
    nodes
        .patch(
            "playground-node-1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"unschedulable": true}})),
        )
        .await
        .unwrap();
    let not_ready = json!({"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}]}});
    nodes
        .patch_status(
            "playground-node-2",
            &PatchParams::default(),
            &Patch::Merge(not_ready),
        )
        .await
        .unwrap();
    let taints = |n: &Value| -> Vec<String> {
        n["spec"]["taints"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| format!("{}:{}", t["key"].as_str().unwrap(), t["effect"].as_str().unwrap()))
            .collect()
    };
    common::eventually("taints", || async {
        let one = taints(&value(&nodes.get("playground-node-1").await.unwrap()));
        let two = taints(&value(&nodes.get("playground-node-2").await.unwrap()));
        (one == ["node.kubernetes.io/unschedulable:NoSchedule"]
            && two
                == [
                    "node.kubernetes.io/not-ready:NoSchedule",
                    "node.kubernetes.io/not-ready:NoExecute",
                ])
        .then_some(())
    })
    .await;
    let pods: Api<Pod> = Api::default_namespaced(client);
    for i in 0..4 {
        let pod: Pod = serde_json::from_value(json!({"metadata": {"name": format!("p{i}")},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}))
        .unwrap();
        pods.create(&PostParams::default(), &pod).await.unwrap();
    }
    let placed = common::eventually("4 scheduled", || async {
        let all = pods.list(&ListParams::default()).await.unwrap().items;
        let nodes: Vec<String> = all
            .iter()
            .filter_map(|p| p.spec.as_ref()?.node_name.clone())
            .collect();
        (nodes.len() == 4).then_some(nodes)
    })
    .await;
    assert!(placed.iter().all(|n| n == "playground-node-3"), "{placed:?}");
}
