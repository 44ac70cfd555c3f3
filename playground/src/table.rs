//! `meta.k8s.io/v1 Table` output (what `kubectl get` asks for): NAME and AGE for every kind, the
//! pod columns of kube-apiserver's printers (READY, STATUS, RESTARTS, AGE, IP, NODE), and a CRD's
//! `additionalPrinterColumns`. Row objects are `PartialObjectMetadata`.

use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::meta;
use crate::printers::human_duration;
use crate::resources::ResourceDef;

fn age(obj: &Value, path: &str) -> String {
    match meta::get_path(obj, path)
        .and_then(Value::as_str)
        .and_then(meta::parse_time)
    {
        Some(t) => human_duration((OffsetDateTime::now_utc() - t).whole_seconds()),
        None => "<unknown>".into(),
    }
}

const AGE_DESCRIPTION: &str =
    "CreationTimestamp is a timestamp representing the server time when this object was created.";

fn col(name: &str, type_: &str, priority: i64, description: &str) -> Value {
    json!({"name": name, "type": type_, "format": if name == "Name" { "name" } else { "" },
        "description": description, "priority": priority})
}

/// The pod's STATUS column: the phase, or the waiting/terminated reason of a container, or
/// `Terminating`.
fn pod_status(pod: &Value) -> String {
    if meta::is_deleting(pod) {
        return "Terminating".into();
    }
    let mut reason = pod["status"]["reason"]
        .as_str()
        .or(pod["status"]["phase"].as_str())
        .unwrap_or("Unknown")
        .to_string();
    for c in pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if let Some(r) = c["state"]["waiting"]["reason"].as_str() {
            reason = r.into();
        } else if let Some(r) = c["state"]["terminated"]["reason"].as_str() {
            reason = r.into();
        }
    }
    reason
}

fn pod_cells(pod: &Value) -> Vec<Value> {
    let total = pod["spec"]["containers"].as_array().map_or(0, Vec::len);
    let statuses = pod["status"]["containerStatuses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let ready = statuses.iter().filter(|c| c["ready"] == true).count();
    let restarts: i64 = statuses.iter().filter_map(|c| c["restartCount"].as_i64()).sum();
    let text = |v: &Value| {
        v.as_str()
            .filter(|s| !s.is_empty())
            .unwrap_or("<none>")
            .to_string()
    };
    vec![
        json!(meta::name(pod)),
        json!(format!("{ready}/{total}")),
        json!(pod_status(pod)),
        json!(restarts.to_string()),
        json!(age(pod, ".metadata.creationTimestamp")),
        json!(text(&pod["status"]["podIP"])),
        json!(text(&pod["spec"]["nodeName"])),
        json!(text(&pod["status"]["nominatedNodeName"])),
        json!(readiness_gates(pod)),
    ]
}

/// `<true gates>/<gates>` (kubectl's READINESS GATES column), or `<none>` without gates.
fn readiness_gates(pod: &Value) -> String {
    let Some(gates) = pod["spec"]["readinessGates"].as_array().filter(|g| !g.is_empty()) else {
        return "<none>".into();
    };
    let conditions = pod["status"]["conditions"].as_array();
    let passed = gates
        .iter()
        .filter(|g| {
            conditions.is_some_and(|cs| {
                cs.iter()
                    .any(|c| c["type"] == g["conditionType"] && c["status"] == "True")
            })
        })
        .count();
    format!("{passed}/{}", gates.len())
}

/// The `PartialObjectMetadata` of an object (managedFields dropped, as in Table rows).
pub fn partial(obj: &Value) -> Value {
    let mut m = obj["metadata"].clone();
    m.as_object_mut().map(|mm| mm.remove("managedFields"));
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": m})
}

/// The Table of `items`.
pub fn table(def: &ResourceDef, items: &[Value], rv: &str) -> Value {
    let name_col = col("Name", "string", 0, "Name must be unique within a namespace.");
    let (columns, rows): (Vec<Value>, Vec<Vec<Value>>) = if def.plural == "pods" && def.group.is_empty() {
        let cols = vec![
            name_col,
            col(
                "Ready",
                "string",
                0,
                "The aggregate readiness state of this pod for accepting traffic.",
            ),
            col(
                "Status",
                "string",
                0,
                "The aggregate status of the containers in this pod.",
            ),
            col(
                "Restarts",
                "string",
                0,
                "The number of times the containers in this pod have been restarted.",
            ),
            col(
                "Age",
                "string",
                0,
                "CreationTimestamp is a timestamp representing the server time when this object was created.",
            ),
            col("IP", "string", 1, "IP address allocated to the pod."),
            col("Node", "string", 1, "Name of the Node where the Pod is running."),
            col(
                "Nominated Node",
                "string",
                1,
                "Name of the node where the pod was nominated.",
            ),
            col("Readiness Gates", "string", 1, "Pod Readiness Gates"),
        ];
        (cols, items.iter().map(pod_cells).collect())
    } else if !def.builtin {
        let mut cols = vec![name_col];
        cols.extend(
            def.printer_columns
                .iter()
                .map(|c| col(&c.name, &c.type_, c.priority, "")),
        );
        let rows = items
            .iter()
            .map(|o| {
                let mut cells = vec![json!(meta::name(o))];
                for c in &def.printer_columns {
                    let cell = if c.type_ == "date" {
                        json!(age(o, &c.json_path))
                    } else {
                        meta::get_path(o, &c.json_path).cloned().unwrap_or(Value::Null)
                    };
                    cells.push(cell);
                }
                cells
            })
            .collect();
        (cols, rows)
    } else {
        let (before, after) = crate::printers::columns(&def.group, &def.plural).unwrap_or_default();
        let mut cols = vec![name_col];
        cols.extend(before.iter().map(|(h, p, _)| col(h, "string", *p, "")));
        cols.push(col("Age", "string", 0, AGE_DESCRIPTION));
        cols.extend(after.iter().map(|(h, p, _)| col(h, "string", *p, "")));
        let rows = items
            .iter()
            .map(|o| {
                let mut cells = vec![json!(meta::name(o))];
                cells.extend(before.iter().map(|(_, _, f)| f(o)));
                cells.push(json!(age(o, ".metadata.creationTimestamp")));
                cells.extend(after.iter().map(|(_, _, f)| f(o)));
                cells
            })
            .collect();
        (cols, rows)
    };
    let rows: Vec<Value> = rows
        .into_iter()
        .zip(items)
        .map(|(cells, o)| json!({"cells": cells, "object": partial(o)}))
        .collect();
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": rv},
        "columnDefinitions": columns, "rows": rows})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_gates_count_the_true_ones() {
        let gates = json!([{"conditionType": "InPlaceUpdateReady"}, {"conditionType": "KruisePodReady"}]);
        let pod = json!({"spec": {"readinessGates": gates},
            "status": {"conditions": [{"type": "InPlaceUpdateReady", "status": "True"},
                                      {"type": "KruisePodReady", "status": "False"}]}});
        assert_eq!(readiness_gates(&pod), "1/2");
        assert_eq!(readiness_gates(&json!({"spec": {}})), "<none>");
    }
}
