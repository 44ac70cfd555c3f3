//! UnitedDeployment end to end in the playground, driven with the real kubectl: the webhooks default
//! and admit the UD, its controller runs one workload per zone subset, the playground's StatefulSet
//! and CloneSet controllers run the pods, the scheduler places them by the subsets' node terms.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::kubectl::{kubectl, ok, serve, wait_for};
use serde_json::Value;

const SUBSET: &str = "apps.kruise.io/subset-name";
const REVISION: &str = "apps.kruise.io/controller-revision-hash";

fn json(k: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&ok(k, &all)).unwrap()
}

fn items(k: &Path, args: &[&str]) -> Vec<Value> {
    json(k, args)["items"].as_array().cloned().unwrap_or_default()
}

/// Subset name → the `spec.replicas` of its workload of `kind`.
fn workload_replicas(k: &Path, kind: &str) -> BTreeMap<String, i64> {
    items(k, &["get", kind, "-l", SUBSET])
        .iter()
        .map(|w| {
            (
                w["metadata"]["labels"][SUBSET].as_str().unwrap_or("").to_string(),
                w["spec"]["replicas"].as_i64().unwrap_or(-1),
            )
        })
        .collect()
}

fn expect(pairs: &[(&str, i64)]) -> BTreeMap<String, i64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// Running pods of the UD: (subset, node zone, revision label).
fn pods(k: &Path) -> Vec<(String, String, String)> {
    let zones: BTreeMap<String, String> = items(k, &["get", "nodes"])
        .iter()
        .map(|n| {
            (
                n["metadata"]["name"].as_str().unwrap_or("").to_string(),
                n["metadata"]["labels"]["topology.kubernetes.io/zone"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    items(k, &["get", "pods", "-l", "app=web"])
        .iter()
        .filter(|p| p["status"]["phase"] == "Running" && p["metadata"]["deletionTimestamp"].is_null())
        .map(|p| {
            let node = p["spec"]["nodeName"].as_str().unwrap_or("");
            (
                p["metadata"]["labels"][SUBSET].as_str().unwrap_or("").to_string(),
                zones.get(node).cloned().unwrap_or_default(),
                p["metadata"]["labels"][REVISION]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect()
}

const ZONED: &str = r#"
apiVersion: apps.kruise.io/v1beta1
kind: UnitedDeployment
metadata:
  name: web
spec:
  replicas: 6
  selector:
    matchLabels: {app: web}
  template:
    statefulSetTemplate:
      metadata:
        labels: {app: web}
      spec:
        podManagementPolicy: Parallel
        template:
          metadata:
            labels: {app: web}
          spec:
            containers:
            - name: main
              image: nginx:1
  topology:
    subsets:
    - name: zone-a
      replicas: 1
      nodeSelectorTerm:
        matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [playground-a]}]
    - name: zone-b
      replicas: 2
      nodeSelectorTerm:
        matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [playground-b]}]
    - name: zone-c
      nodeSelectorTerm:
        matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [playground-c]}]
  updateStrategy:
    manualUpdate:
      partitions: {zone-a: 1}
"#;

#[test]
fn three_zone_subsets_a_template_change_under_a_partition_and_kubectl_scale() {
    zoned("statefulSetTemplate", "statefulsets.apps");
}

#[test]
fn the_same_with_advanced_statefulset_subsets() {
    zoned("advancedStatefulSetTemplate", "statefulsets.apps.kruise.io");
}

/// The three-zone UD of [`ZONED`] with its template under `template` (`statefulSetTemplate` or
/// `advancedStatefulSetTemplate`), whose workloads are `resource`: placement, a partitioned template
/// change, `kubectl scale`, a refused UD.
fn zoned(template: &str, resource: &str) {
    let zoned = ZONED.replace("statefulSetTemplate", template);
    let pg = serve(&[]);
    let k = pg.kubeconfig.as_path();
    let (applied, _, err) = kubectl(k, &["apply", "-f", "-"], Some(&zoned));
    assert!(applied, "{err}");
    wait_for("three workloads with 1, 2 and 3 replicas", || {
        workload_replicas(k, resource) == expect(&[("zone-a", 1), ("zone-b", 2), ("zone-c", 3)])
    });
    wait_for("six running pods", || pods(k).len() == 6);
    for (subset, zone, _) in pods(k) {
        assert_eq!(
            subset.replace("zone-", "playground-"),
            zone,
            "a pod of {subset} runs in {zone}"
        );
    }
    let ud = json(k, &["get", "ud", "web"]);
    assert_eq!(ud["spec"]["revisionHistoryLimit"], 10, "defaulted by the webhook");
    wait_for("the status counts six ready pods", || {
        let s = &json(k, &["get", "ud", "web"])["status"];
        s["replicas"] == 6 && s["readyReplicas"] == 6 && s["updatedReplicas"] == 6
    });
    let first = json(k, &["get", "ud", "web"])["status"]["updatedRevision"]
        .as_str()
        .unwrap()
        .to_string();

    // A template change reaches zone-b and zone-c; zone-a's only pod is held back by its partition.
    ok(
        k,
        &[
            "patch",
            "ud",
            "web",
            "--type",
            "json",
            "-p",
            &format!(
                r#"[{{"op":"replace","path":"/spec/template/{template}/spec/template/spec/containers/0/image","value":"nginx:2"}}]"#
            ),
        ],
    );
    wait_for("zone-b and zone-c at the new revision, zone-a not", || {
        let now = pods(k);
        now.len() == 6
            && now
                .iter()
                .all(|(subset, _, rev)| (subset == "zone-a") == (rev == &first))
    });
    let s = &json(k, &["get", "ud", "web"])["status"];
    assert_ne!(s["updatedRevision"], first);
    assert_eq!(
        s["currentRevision"], first,
        "one pod is still at the old revision"
    );

    // kubectl scale goes through the scale subresource; zone-c takes the rest.
    ok(k, &["scale", "ud", "web", "--replicas", "9"]);
    wait_for("zone-c scaled to 6", || {
        workload_replicas(k, resource) == expect(&[("zone-a", 1), ("zone-b", 2), ("zone-c", 6)])
    });
    let table = ok(k, &["get", "ud"]);
    assert!(
        table.contains("DESIRED") && table.contains("CURRENT") && table.contains("UPDATED"),
        "{table}"
    );

    // A bad UD is refused by the validating webhook.
    let bad = zoned
        .replace("replicas: 2\n", "replicas: 9\n")
        .replace("name: web\n", "name: bad\n");
    let (applied, _, err) = kubectl(k, &["apply", "-f", "-"], Some(&bad));
    assert!(!applied);
    assert!(
        err.contains("should not be greater than UnitedDeployment replicas"),
        "{err}"
    );
}

const ELASTIC: &str = r#"
apiVersion: apps.kruise.io/v1beta1
kind: UnitedDeployment
metadata:
  name: web
spec:
  replicas: 7
  selector:
    matchLabels: {app: web}
  template:
    cloneSetTemplate:
      metadata:
        labels: {app: web}
      spec:
        template:
          metadata:
            labels: {app: web}
          spec:
            containers:
            - name: main
              image: nginx:1
  topology:
    subsets:
    - {name: a, minReplicas: 1, maxReplicas: 2}
    - {name: b, minReplicas: 1, maxReplicas: 2}
    - {name: c, minReplicas: 1}
"#;

#[test]
fn min_max_allocation_with_cloneset_subsets() {
    let pg = serve(&[]);
    let k = pg.kubeconfig.as_path();
    let (applied, _, err) = kubectl(k, &["apply", "-f", "-"], Some(ELASTIC));
    assert!(applied, "{err}");
    wait_for("CloneSets with 2, 2 and 3 replicas", || {
        workload_replicas(k, "clonesets.apps.kruise.io") == expect(&[("a", 2), ("b", 2), ("c", 3)])
    });
    wait_for("seven running pods", || pods(k).len() == 7);
    ok(k, &["scale", "ud", "web", "--replicas", "1"]);
    wait_for("later subsets emptied first", || {
        workload_replicas(k, "clonesets.apps.kruise.io") == expect(&[("a", 1), ("b", 0), ("c", 0)])
    });
    wait_for("one pod left", || pods(k).len() == 1);
}

const ADAPTIVE: &str = r#"
apiVersion: apps.kruise.io/v1beta1
kind: UnitedDeployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    deploymentTemplate:
      metadata:
        labels: {app: web}
      spec:
        template:
          metadata:
            labels: {app: web}
          spec:
            containers:
            - name: main
              image: nginx:1
  topology:
    scheduleStrategy:
      type: Adaptive
      adaptive: {rescheduleCriticalSeconds: 1, unschedulableDuration: 300}
    subsets:
    - name: zone-a
      maxReplicas: 1
      nodeSelectorTerm:
        matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [playground-a]}]
    - name: nowhere
      maxReplicas: 2
      nodeSelectorTerm:
        matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [no-such-zone]}]
    - name: zone-c
      nodeSelectorTerm:
        matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [playground-c]}]
"#;

#[test]
fn adaptive_moves_pods_that_cannot_be_scheduled_to_the_next_subset() {
    let pg = serve(&[]);
    let k = pg.kubeconfig.as_path();
    let (applied, _, err) = kubectl(k, &["apply", "-f", "-"], Some(ADAPTIVE));
    assert!(applied, "{err}");
    // First (1, 2, 0); the two pods of `nowhere` stay pending, so after rescheduleCriticalSeconds the
    // subset is unschedulable and zone-c runs them.
    wait_for("the pending pods moved to zone-c", || {
        workload_replicas(k, "deployments.apps") == expect(&[("nowhere", 0), ("zone-a", 1), ("zone-c", 2)])
    });
    wait_for("three running pods", || pods(k).len() == 3);
    let s = json(k, &["get", "ud", "web"])["status"].clone();
    let nowhere = s["subsetStatuses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "nowhere")
        .unwrap()
        .clone();
    assert_eq!(nowhere["conditions"][0]["type"], "Schedulable");
    assert_eq!(nowhere["conditions"][0]["status"], "False");
    assert_eq!(nowhere["conditions"][0]["reason"], "reschedule");
}

const RESERVING: &str = r#"
apiVersion: apps.kruise.io/v1beta1
kind: UnitedDeployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    cloneSetTemplate:
      metadata:
        labels: {app: web}
      spec:
        template:
          metadata:
            labels: {app: web}
          spec:
            containers:
            - name: main
              image: nginx:1
  topology:
    scheduleStrategy:
      type: Adaptive
      adaptive: {rescheduleCriticalSeconds: 1, unschedulableDuration: 3, reserveUnschedulablePods: true}
    subsets:
    - name: later
      nodeSelectorTerm:
        matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [playground-x]}]
    - name: zone-c
      nodeSelectorTerm:
        matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [playground-c]}]
"#;

/// Subset name → pods labelled reserved ("true") or not ("false").
fn reserved_labels(k: &Path) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in items(k, &["get", "pods", "-l", "app=web"]) {
        if !p["metadata"]["deletionTimestamp"].is_null() {
            continue;
        }
        let labels = &p["metadata"]["labels"];
        let subset = labels[SUBSET].as_str().unwrap_or("").to_string();
        let reserved = labels["apps.kruise.io/united-deployment-reserved-pod"]
            .as_str()
            .unwrap_or("none")
            .to_string();
        out.entry(subset).or_default().push(reserved);
    }
    out.values_mut().for_each(|v| v.sort());
    out
}

#[test]
fn reservation_keeps_pending_pods_runs_temporary_ones_and_hands_back_on_recovery() {
    let pg = serve(&[]);
    let k = pg.kubeconfig.as_path();
    let (applied, _, err) = kubectl(k, &["apply", "-f", "-"], Some(RESERVING));
    assert!(applied, "{err}");
    // No node is in zone playground-x: `later`'s two pods stay pending, are reserved (kept, labelled)
    // and zone-c runs two temporary pods.
    wait_for(
        "two reserved pods in `later`, two temporary pods in zone-c",
        || {
            workload_replicas(k, "clonesets.apps.kruise.io") == expect(&[("later", 2), ("zone-c", 2)])
                && reserved_labels(k).get("later") == Some(&vec!["true".to_string(), "true".to_string()])
                && pods(k).iter().filter(|(s, _, _)| s == "zone-c").count() == 2
        },
    );
    let status = json(k, &["get", "ud", "web"])["status"].clone();
    assert_eq!(status["reservedPods"], 2, "{status}");
    assert_eq!(status["replicas"], 2, "reserved pods are not counted: {status}");
    assert!(
        status["labelSelector"]
            .as_str()
            .unwrap_or("")
            .ends_with("apps.kruise.io/united-deployment-reserved-pod=false"),
        "{status}"
    );
    // A node joins zone playground-x: the reserved pods run, leave the reserved state after
    // unschedulableDuration, and the temporary pods go.
    let node = items(
        k,
        &["get", "nodes", "-l", "topology.kubernetes.io/zone=playground-b"],
    )[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    ok(
        k,
        &[
            "label",
            "node",
            &node,
            "topology.kubernetes.io/zone=playground-x",
            "--overwrite",
        ],
    );
    wait_for("`later` runs both pods, zone-c none, nothing reserved", || {
        workload_replicas(k, "clonesets.apps.kruise.io") == expect(&[("later", 2), ("zone-c", 0)])
            && reserved_labels(k).get("later") == Some(&vec!["false".to_string(), "false".to_string()])
            && pods(k).iter().filter(|(s, _, _)| s == "later").count() == 2
    });
    let status = json(k, &["get", "ud", "web"])["status"].clone();
    assert_eq!(status["reservedPods"].as_i64().unwrap_or(0), 0, "{status}");
}

const ORPHAN: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-zone-a-kept
  labels: {app: web, apps.kruise.io/subset-name: zone-a}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web, apps.kruise.io/subset-name: zone-a}
  template:
    metadata:
      labels: {app: web, apps.kruise.io/subset-name: zone-a}
    spec:
      containers:
      - name: main
        image: nginx:1
"#;

const TWO_ZONES: &str = r#"
apiVersion: apps.kruise.io/v1beta1
kind: UnitedDeployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    deploymentTemplate:
      metadata:
        labels: {app: web}
      spec:
        template:
          metadata:
            labels: {app: web}
          spec:
            containers:
            - name: main
              image: nginx:1
  topology:
    subsets:
    - name: zone-a
      nodeSelectorTerm:
        matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [playground-a]}]
    - name: zone-c
      nodeSelectorTerm:
        matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [playground-c]}]
"#;

/// Deployment name → (uid, the uid of its controller, if any).
fn deployments(k: &Path) -> BTreeMap<String, (String, Option<String>)> {
    items(k, &["get", "deployments.apps"])
        .iter()
        .map(|d| {
            let controller = d["metadata"]["ownerReferences"]
                .as_array()
                .and_then(|o| o.iter().find(|o| o["controller"] == true))
                .and_then(|o| o["uid"].as_str())
                .map(str::to_string);
            (
                d["metadata"]["name"].as_str().unwrap_or("").to_string(),
                (
                    d["metadata"]["uid"].as_str().unwrap_or("").to_string(),
                    controller,
                ),
            )
        })
        .collect()
}

#[test]
fn an_orphan_workload_is_adopted_and_one_that_leaves_the_selector_is_released() {
    let pg = serve(&[]);
    let k = pg.kubeconfig.as_path();
    let (created, _, err) = kubectl(k, &["apply", "-f", "-"], Some(ORPHAN));
    assert!(created, "{err}");
    let orphan_uid = deployments(k)["web-zone-a-kept"].0.clone();
    let (applied, _, err) = kubectl(k, &["apply", "-f", "-"], Some(TWO_ZONES));
    assert!(applied, "{err}");
    let ud_uid = json(k, &["get", "ud", "web"])["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_string();
    // The orphan is adopted as zone-a's workload (same uid), zone-c gets a new one.
    wait_for("the orphan adopted, zone-c created", || {
        let all = deployments(k);
        all.len() == 2
            && all.get("web-zone-a-kept") == Some(&(orphan_uid.clone(), Some(ud_uid.clone())))
            && workload_replicas(k, "deployments.apps") == expect(&[("zone-a", 1), ("zone-c", 1)])
    });
    // zone-a's workload leaves the selector: it is released, and zone-a gets a new workload.
    ok(
        k,
        &[
            "label",
            "deployment",
            "web-zone-a-kept",
            "app=other",
            "--overwrite",
        ],
    );
    wait_for("the old workload released, a new one for zone-a", || {
        let all = deployments(k);
        let released = all
            .get("web-zone-a-kept")
            .is_some_and(|(uid, c)| uid == &orphan_uid && c.is_none());
        let zone_a = all
            .iter()
            .filter(|(name, (_, c))| *name != "web-zone-a-kept" && c.as_deref() == Some(ud_uid.as_str()))
            .count();
        released && zone_a == 2
    });
}
