//! Table columns of built-in kinds, after kube-apiserver's printers
//! (`pkg/printers/internalversion`): the priority-0 columns of the common kinds. Kinds not listed
//! print NAME and AGE.

use serde_json::{Value, json};

/// One column: header, priority, cell.
pub type Column = (&'static str, i64, fn(&Value) -> Value);

/// `duration.HumanDuration` of apimachinery, as AGE cells show it.
pub fn human_duration(secs: i64) -> String {
    let s = secs.max(0);
    let (m, h, d) = (s / 60, s / 3600, s / 86400);
    if s < 120 {
        format!("{s}s")
    } else if m < 10 {
        units(m, "m", s % 60, "s")
    } else if m < 180 {
        format!("{m}m")
    } else if h < 8 {
        units(h, "h", m % 60, "m")
    } else if h < 48 {
        format!("{h}h")
    } else if h < 24 * 8 {
        units(d, "d", h % 24, "h")
    } else if h < 24 * 365 * 2 {
        format!("{d}d")
    } else {
        format!("{}y", d / 365)
    }
}

/// `5m` or `5m30s`: the remainder is left out when zero.
fn units(n: i64, unit: &str, rest: i64, rest_unit: &str) -> String {
    if rest == 0 {
        format!("{n}{unit}")
    } else {
        format!("{n}{unit}{rest}{rest_unit}")
    }
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

fn count(v: &Value) -> Value {
    json!(v.as_object().map_or(0, |m| m.len()) + v.as_array().map_or(0, Vec::len))
}

fn text_or(v: &Value, none: &str) -> Value {
    json!(v.as_str().filter(|s| !s.is_empty()).unwrap_or(none))
}

fn containers(o: &Value, field: &str) -> Value {
    let list: Vec<&str> = o["spec"]["template"]["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c[field].as_str())
        .collect();
    json!(list.join(","))
}

/// `k=v,k2=v2`, or `<none>`.
fn labels_or_none(v: &Value) -> Value {
    let pairs: Vec<String> = v
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    joined_or_none(pairs)
}

fn joined_or_none(items: Vec<String>) -> Value {
    json!(if items.is_empty() {
        "<none>".to_string()
    } else {
        items.join(",")
    })
}

fn selector(o: &Value) -> Value {
    labels_or_none(&o["spec"]["selector"]["matchLabels"])
}

/// `ready/desired` replicas.
fn ready_replicas(o: &Value) -> Value {
    json!(format!(
        "{}/{}",
        int(&o["status"]["readyReplicas"]),
        int(&o["spec"]["replicas"])
    ))
}

/// The wide columns of a kind with a pod template: its containers, images and, optionally, selector.
fn template_columns(with_selector: bool) -> Vec<Column> {
    let mut columns: Vec<Column> = vec![
        ("Containers", 1, |o| containers(o, "name")),
        ("Images", 1, |o| containers(o, "image")),
    ];
    if with_selector {
        columns.push(("Selector", 1, selector));
    }
    columns
}

fn service_ports(o: &Value) -> Value {
    let ports: Vec<String> = o["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let proto = p["protocol"].as_str().unwrap_or("TCP");
            match p["nodePort"].as_i64() {
                Some(n) => format!("{}:{n}/{proto}", int(&p["port"])),
                None => format!("{}/{proto}", int(&p["port"])),
            }
        })
        .collect();
    joined_or_none(ports)
}

fn node_status(o: &Value) -> Value {
    let ready = o["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Ready")
        .map(|c| c["status"] == "True");
    let mut s = match ready {
        Some(true) => "Ready".to_string(),
        _ => "NotReady".to_string(),
    };
    if o["spec"]["unschedulable"] == true {
        s.push_str(",SchedulingDisabled");
    }
    json!(s)
}

fn since(v: &Value) -> Option<i64> {
    let t = v.as_str().and_then(crate::meta::parse_time)?;
    Some((time::OffsetDateTime::now_utc() - t).whole_seconds())
}

fn access_modes(v: &Value) -> Value {
    let short: Vec<&str> = v
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| match m.as_str()? {
            "ReadWriteOnce" => Some("RWO"),
            "ReadOnlyMany" => Some("ROX"),
            "ReadWriteMany" => Some("RWX"),
            "ReadWriteOncePod" => Some("RWOP"),
            _ => None,
        })
        .collect();
    json!(short.join(","))
}

fn has_condition(o: &Value, kind: &str) -> bool {
    o["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

/// `printJob`'s STATUS column.
fn job_status(o: &Value) -> Value {
    let status = if has_condition(o, "Complete") {
        "Complete"
    } else if has_condition(o, "Failed") {
        "Failed"
    } else if !o["metadata"]["deletionTimestamp"].is_null() {
        "Terminating"
    } else if has_condition(o, "Suspended") {
        "Suspended"
    } else if has_condition(o, "FailureTarget") {
        "FailureTarget"
    } else if has_condition(o, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    json!(status)
}

/// `printJob`'s COMPLETIONS column.
fn job_completions(o: &Value) -> Value {
    let succeeded = int(&o["status"]["succeeded"]);
    let parallelism = int(&o["spec"]["parallelism"]);
    json!(match o["spec"]["completions"].as_i64() {
        Some(c) => format!("{succeeded}/{c}"),
        None if parallelism > 1 => format!("{succeeded}/1 of {parallelism}"),
        None => format!("{succeeded}/1"),
    })
}

/// `printJob`'s DURATION column: start to completion, or to now while running.
fn job_duration(o: &Value) -> Value {
    let (Some(start), end) = (
        since(&o["status"]["startTime"]),
        since(&o["status"]["completionTime"]),
    ) else {
        return json!("");
    };
    json!(human_duration(start - end.unwrap_or(0)))
}

/// The columns (between NAME and AGE, plus wide ones after AGE) of a built-in kind; `None` for
/// kinds printed as NAME and AGE.
pub fn columns(group: &str, plural: &str) -> Option<(Vec<Column>, Vec<Column>)> {
    let (before, wide): (Vec<Column>, Vec<Column>) = match (group, plural) {
        ("", "namespaces") => (
            vec![("Status", 0, |o| text_or(&o["status"]["phase"], ""))],
            vec![],
        ),
        ("", "configmaps") => (
            vec![("Data", 0, |o| {
                json!(int(&count(&o["data"])) + int(&count(&o["binaryData"])))
            })],
            vec![],
        ),
        ("", "secrets") => (
            vec![
                ("Type", 0, |o| text_or(&o["type"], "")),
                ("Data", 0, |o| count(&o["data"])),
            ],
            vec![],
        ),
        ("", "serviceaccounts") => (vec![("Secrets", 0, |o| count(&o["secrets"]))], vec![]),
        ("", "services") => (
            vec![
                ("Type", 0, |o| text_or(&o["spec"]["type"], "ClusterIP")),
                ("Cluster-IP", 0, |o| text_or(&o["spec"]["clusterIP"], "<none>")),
                ("External-IP", 0, |_| json!("<none>")),
                ("Port(s)", 0, service_ports),
            ],
            vec![("Selector", 1, |o| labels_or_none(&o["spec"]["selector"]))],
        ),
        ("", "nodes") => (
            vec![("Status", 0, node_status), ("Roles", 0, |_| json!("<none>"))],
            vec![("Version", 0, |o| {
                text_or(&o["status"]["nodeInfo"]["kubeletVersion"], "")
            })],
        ),
        ("apps", "deployments") => (
            vec![
                ("Ready", 0, ready_replicas),
                ("Up-to-date", 0, |o| json!(int(&o["status"]["updatedReplicas"]))),
                ("Available", 0, |o| json!(int(&o["status"]["availableReplicas"]))),
            ],
            template_columns(true),
        ),
        ("apps", "replicasets") => (
            vec![
                ("Desired", 0, |o| json!(int(&o["spec"]["replicas"]))),
                ("Current", 0, |o| json!(int(&o["status"]["replicas"]))),
                ("Ready", 0, |o| json!(int(&o["status"]["readyReplicas"]))),
            ],
            template_columns(true),
        ),
        ("apps", "statefulsets") => (vec![("Ready", 0, ready_replicas)], template_columns(false)),
        ("apps", "daemonsets") => (
            vec![
                ("Desired", 0, |o| {
                    json!(int(&o["status"]["desiredNumberScheduled"]))
                }),
                ("Current", 0, |o| {
                    json!(int(&o["status"]["currentNumberScheduled"]))
                }),
                ("Ready", 0, |o| json!(int(&o["status"]["numberReady"]))),
                ("Up-to-date", 0, |o| {
                    json!(int(&o["status"]["updatedNumberScheduled"]))
                }),
                ("Available", 0, |o| json!(int(&o["status"]["numberAvailable"]))),
                ("Node Selector", 0, |o| {
                    labels_or_none(&o["spec"]["template"]["spec"]["nodeSelector"])
                }),
            ],
            template_columns(true),
        ),
        ("batch", "jobs") => (
            vec![
                ("Status", 0, job_status),
                ("Completions", 0, job_completions),
                ("Duration", 0, job_duration),
            ],
            template_columns(true),
        ),
        ("batch", "cronjobs") => (
            vec![
                ("Schedule", 0, |o| text_or(&o["spec"]["schedule"], "")),
                ("Timezone", 0, |o| text_or(&o["spec"]["timeZone"], "<none>")),
                ("Suspend", 0, |o| {
                    json!(if o["spec"]["suspend"] == true {
                        "True"
                    } else {
                        "False"
                    })
                }),
                ("Active", 0, |o| count(&o["status"]["active"])),
                ("Last Schedule", 0, |o| {
                    json!(since(&o["status"]["lastScheduleTime"]).map_or("<none>".into(), human_duration))
                }),
            ],
            vec![],
        ),
        ("", "persistentvolumes") => (
            vec![
                ("Capacity", 0, |o| text_or(&o["spec"]["capacity"]["storage"], "")),
                ("Access Modes", 0, |o| access_modes(&o["spec"]["accessModes"])),
                ("Reclaim Policy", 0, |o| {
                    text_or(&o["spec"]["persistentVolumeReclaimPolicy"], "")
                }),
                ("Status", 0, |o| text_or(&o["status"]["phase"], "")),
                ("Claim", 0, |o| {
                    let r = &o["spec"]["claimRef"];
                    json!(match (r["namespace"].as_str(), r["name"].as_str()) {
                        (Some(ns), Some(n)) => format!("{ns}/{n}"),
                        _ => String::new(),
                    })
                }),
                ("StorageClass", 0, |o| text_or(&o["spec"]["storageClassName"], "")),
                ("VolumeAttributesClass", 0, |o| {
                    text_or(&o["spec"]["volumeAttributesClassName"], "<unset>")
                }),
                ("Reason", 0, |o| text_or(&o["status"]["reason"], "")),
            ],
            vec![("VolumeMode", 1, |o| text_or(&o["spec"]["volumeMode"], ""))],
        ),
        ("", "persistentvolumeclaims") => (
            vec![
                ("Status", 0, |o| text_or(&o["status"]["phase"], "")),
                ("Volume", 0, |o| text_or(&o["spec"]["volumeName"], "")),
                ("Capacity", 0, |o| {
                    text_or(&o["status"]["capacity"]["storage"], "")
                }),
                ("Access Modes", 0, |o| access_modes(&o["status"]["accessModes"])),
                ("StorageClass", 0, |o| text_or(&o["spec"]["storageClassName"], "")),
                ("VolumeAttributesClass", 0, |o| {
                    text_or(&o["spec"]["volumeAttributesClassName"], "<unset>")
                }),
            ],
            vec![("VolumeMode", 1, |o| text_or(&o["spec"]["volumeMode"], ""))],
        ),
        ("apps", "controllerrevisions") => (vec![("Revision", 0, |o| json!(int(&o["revision"])))], vec![]),
        ("coordination.k8s.io", "leases") => (
            vec![("Holder", 0, |o| text_or(&o["spec"]["holderIdentity"], ""))],
            vec![],
        ),
        ("admissionregistration.k8s.io", _) => (vec![("Webhooks", 0, |o| count(&o["webhooks"]))], vec![]),
        _ => return None,
    };
    Some((before, wide))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_match_apimachinery() {
        for (s, want) in [
            (5, "5s"),
            (119, "119s"),
            (150, "2m30s"),
            (600, "10m"),
            (3 * 3600 + 120, "3h2m"),
            (50 * 3600, "2d2h"),
            (800 * 86400, "2y"),
        ] {
            assert_eq!(human_duration(s), want, "{s}");
        }
    }
}
