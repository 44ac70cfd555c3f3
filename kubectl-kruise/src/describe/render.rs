//! `describe rollout`'s text, from the Rollout, its workload and pods as read: kruise-tools' layout
//! (a 19-column label, the steps with the current one marked, the traffic routings, the workload's
//! images, revisions, replica counts and a pod table).
//!
//! Unlike kruise-tools, a Rollout without progress yet, a v1alpha1 Rollout and a blue-green Rollout
//! without `blueGreenStatus` are shown (it panics on them), `--no-color` also leaves the current step
//! uncoloured, and an Advanced DaemonSet's desired count is `desiredNumberScheduled`.

use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use crate::rollout::kruise_rollout::{self, BATCH_ID_LABEL, Style, WorkloadRef};

const GREEN: &str = "\x1b[32m";
const RESET: &str = "\x1b[0m";

/// What the description shows of the Rollout itself.
#[derive(Clone, Debug, Default)]
pub struct Info {
    pub name: String,
    pub namespace: String,
    pub phase: String,
    pub message: String,
    /// `status.observedGeneration == metadata.generation`: status and replicas are shown only then.
    pub observed: bool,
    /// `Canary`, `BlueGreen` or empty.
    pub strategy: String,
    pub steps: Vec<Value>,
    pub traffic_routings: Vec<Value>,
    /// A TrafficRouting object's name (v1beta1 `trafficRoutingRef`, v1alpha1 annotation).
    pub traffic_routing_ref: String,
    pub step_index: i64,
    pub step_state: String,
    pub workload: Option<WorkloadRef>,
    pub stable_revision: String,
    pub update_revision: String,
}

fn text(value: &Value, pointer: &str) -> String {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn array(value: &Value, pointer: &str) -> Vec<Value> {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Reads a Rollout of either version.
pub fn info(rollout: &Value) -> Info {
    let style = Style::of(rollout);
    let progress = format!("/status/{}", style.unwrap_or(Style::Canary).status_key());
    let strategy = format!("/spec/strategy/{}", style.unwrap_or(Style::Canary).strategy_key());
    let generation = rollout.pointer("/metadata/generation").and_then(Value::as_i64);
    let observed = rollout
        .pointer("/status/observedGeneration")
        .and_then(Value::as_i64);
    let update_revision = match style {
        Some(Style::BlueGreen) => text(rollout, &format!("{progress}/updatedRevision")),
        _ => text(rollout, &format!("{progress}/canaryRevision")),
    };
    let traffic_routing_ref = if kruise_rollout::is_v1alpha1(rollout) {
        text(
            rollout,
            "/metadata/annotations/rollouts.kruise.io~1trafficrouting",
        )
    } else {
        text(rollout, &format!("{strategy}/trafficRoutingRef"))
    };
    Info {
        name: text(rollout, "/metadata/name"),
        namespace: text(rollout, "/metadata/namespace"),
        phase: text(rollout, "/status/phase"),
        message: text(rollout, "/status/message"),
        observed: observed.unwrap_or(0) == generation.unwrap_or(0),
        strategy: match style {
            Some(Style::Canary) => "Canary",
            Some(Style::BlueGreen) => "BlueGreen",
            None => "",
        }
        .to_string(),
        steps: array(rollout, &format!("{strategy}/steps")),
        traffic_routings: array(rollout, &format!("{strategy}/trafficRoutings")),
        traffic_routing_ref,
        step_index: rollout
            .pointer(&format!("{progress}/currentStepIndex"))
            .and_then(Value::as_i64)
            .unwrap_or(0),
        step_state: text(rollout, &format!("{progress}/currentStepState")),
        workload: kruise_rollout::workload_ref(rollout).ok(),
        stable_revision: text(rollout, &format!("{progress}/stableRevision")),
        update_revision,
    }
}

/// The workload's images and replica counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Workload {
    pub images: Vec<String>,
    pub desired: i64,
    pub updated: i64,
    pub current: i64,
    pub ready: i64,
    pub available: i64,
}

/// Reads a Deployment, StatefulSet, CloneSet, Advanced StatefulSet or (Advanced) DaemonSet.
pub fn workload(object: &Value) -> Result<Workload, String> {
    let number = |pointer: &str| object.pointer(pointer).and_then(Value::as_i64).unwrap_or(0);
    let images = array(object, "/spec/template/spec/containers")
        .iter()
        .map(|c| text(c, "/image"))
        .collect();
    let kind = text(object, "/kind");
    let workload = match kind.as_str() {
        "Deployment" | "StatefulSet" | "CloneSet" => Workload {
            images,
            desired: object
                .pointer("/spec/replicas")
                .and_then(Value::as_i64)
                .unwrap_or(1),
            updated: number("/status/updatedReplicas"),
            current: number("/status/replicas"),
            ready: number("/status/readyReplicas"),
            available: number("/status/availableReplicas"),
        },
        "DaemonSet" => Workload {
            images,
            desired: number("/status/desiredNumberScheduled"),
            updated: number("/status/updatedNumberScheduled"),
            current: number("/status/currentNumberScheduled"),
            ready: number("/status/numberReady"),
            available: number("/status/numberAvailable"),
        },
        other => return Err(format!("unsupported workload kind {other}")),
    };
    Ok(workload)
}

/// One line of the pod table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodRow {
    pub name: String,
    pub ready: String,
    ready_count: usize,
    pub batch: String,
    pub revision: String,
    pub age: String,
    pub restarts: String,
    pub status: String,
}

/// A pod as the table shows it, `now` in Unix seconds.
pub fn pod_row(pod: &Pod, now: i64) -> PodRow {
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    let statuses = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.clone())
        .unwrap_or_default();
    let ready_count = statuses.iter().filter(|c| c.ready).count();
    let containers = pod.spec.as_ref().map_or(0, |s| s.containers.len());
    let restarts: i64 = statuses.iter().map(|c| i64::from(c.restart_count)).sum();
    let label = |key: &str| labels.get(key).cloned().unwrap_or_default();
    let revision = Some(label("pod-template-hash"))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| label("controller-revision-hash"));
    let status = if pod.metadata.deletion_timestamp.is_some() {
        "Terminating".to_string()
    } else {
        pod.status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or_default()
    };
    let created = pod
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or(now, |t| t.0.as_second());
    PodRow {
        name: pod.metadata.name.clone().unwrap_or_default(),
        ready: format!("{ready_count}/{containers}"),
        ready_count,
        batch: label(BATCH_ID_LABEL),
        revision,
        age: human_duration(now - created),
        restarts: restarts.to_string(),
        status,
    }
}

/// Batch id first, then the pods with more ready containers.
pub fn sort_pods(rows: &mut [PodRow]) {
    rows.sort_by(|a, b| a.batch.cmp(&b.batch).then(b.ready_count.cmp(&a.ready_count)));
}

/// apimachinery's `HumanDuration`, as kubectl prints ages.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return match seconds % 60 {
            0 => format!("{minutes}m"),
            s => format!("{minutes}m{s}s"),
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        return match minutes % 60 {
            0 => format!("{hours}h"),
            m => format!("{hours}h{m}m"),
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        return match hours % 24 {
            0 => format!("{}d", hours / 24),
            h => format!("{}d{h}h", hours / 24),
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        return match (hours / 24) % 365 {
            0 => format!("{}y", hours / 24 / 365),
            d => format!("{}y{d}d", hours / 24 / 365),
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// Where the pods and routings come from, as the description shows them.
pub struct Fetched {
    /// The TrafficRouting object's routings, or why they could not be read.
    pub referenced_routings: Option<Result<Vec<Value>, String>>,
    /// The workload and its pods (sorted), or why they could not be read.
    pub workload: Result<(Workload, Vec<PodRow>), String>,
}

struct Out {
    text: String,
    color: bool,
}

impl Out {
    fn row(&mut self, label: &str, value: impl std::fmt::Display) {
        let line = format!("{label:<19}{value}");
        self.line(&line);
    }

    fn line(&mut self, line: &str) {
        self.text.push_str(line.trim_end());
        self.text.push('\n');
    }

    fn icon(&self, phase: &str) -> &'static str {
        if !self.color {
            return "";
        }
        match phase {
            "Healthy" | "Running" => "\x1b[32m✔\x1b[0m",
            "Progressing" | "Pending" | "Initial" => "\x1b[33m⚠\x1b[0m",
            "Disabled" | "Unknown" | "Terminating" | "Disabling" | "Failed" => "\x1b[31m✘\x1b[0m",
            _ => "",
        }
    }

    fn with_icon(&self, phase: &str) -> String {
        match self.icon(phase) {
            "" => phase.to_string(),
            icon => format!("{icon} {phase}"),
        }
    }
}

/// An int-or-string as Go prints it.
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn steps(out: &mut Out, info: &Info) {
    for (i, step) in info.steps.iter().enumerate() {
        let current = i as i64 + 1 == info.step_index;
        if current && out.color {
            out.text.push_str(GREEN);
        }
        if let Some(replicas) = step.get("replicas").filter(|v| !v.is_null()) {
            out.row("  -  Replicas: ", plain(replicas));
        }
        if let Some(traffic) = step.get("traffic").and_then(Value::as_str) {
            out.row("     Traffic: ", traffic);
        } else if let Some(weight) = step.get("weight").and_then(Value::as_i64) {
            out.row("     Traffic: ", format!("{weight}%"));
        }
        let matches = array(step, "/matches");
        if !matches.is_empty() {
            out.line("     Matches: ");
            for m in &matches {
                out.line("      - Headers: ");
                for header in array(m, "/headers") {
                    out.row("       - Name:", text(&header, "/name"));
                    out.row("         Value:", text(&header, "/value"));
                    let kind = Some(text(&header, "/type"))
                        .filter(|t| !t.is_empty())
                        .unwrap_or_else(|| "Exact".to_string());
                    out.row("         Type:", kind);
                }
            }
        }
        if current {
            out.row("     State:", &info.step_state);
            if out.color {
                out.text.push_str(RESET);
            }
        }
    }
}

fn routings(out: &mut Out, list: &[Value]) {
    if list.is_empty() {
        return;
    }
    out.line("Traffic Routings:");
    for routing in list {
        out.row("  -  Service: ", text(routing, "/service"));
        if let Some(ingress) = routing.get("ingress").filter(|v| v.is_object()) {
            out.line("     Ingress: ");
            out.row("      classType: ", text(ingress, "/classType"));
            out.row("      name: ", text(ingress, "/name"));
        }
        if let Some(gateway) = routing.get("gateway").filter(|v| v.is_object()) {
            out.line("     Gateway: ");
            out.row("      HttpRouteName: ", text(gateway, "/httpRouteName"));
        }
        let custom = array(routing, "/customNetworkRefs");
        if !custom.is_empty() {
            out.line("     CustomNetworkRefs: ");
            for r in &custom {
                out.row("      name: ", text(r, "/name"));
                out.row("      kind: ", text(r, "/kind"));
                out.row("      apiVersion: ", text(r, "/apiVersion"));
            }
        }
    }
}

fn pods(out: &mut Out, rows: &[PodRow]) {
    let header = [
        "NAME", "READY", "BATCH ID", "REVISION", "AGE", "RESTARTS", "STATUS",
    ];
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|p| {
            [
                p.name.clone(),
                p.ready.clone(),
                p.batch.clone(),
                p.revision.clone(),
                p.age.clone(),
                p.restarts.clone(),
                out.with_icon(&p.status),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut line = |cells: [&str; 7]| {
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                text.push_str(cell);
            } else {
                text.push_str(&format!("{cell:<width$}", width = widths[i] + 2));
            }
        }
        out.line(&text);
    };
    line(header);
    for row in &cells {
        line(row.each_ref().map(String::as_str));
    }
}

/// The whole description.
pub fn render(info: &Info, fetched: &Fetched, color: bool) -> String {
    let mut out = Out {
        text: String::new(),
        color,
    };
    out.row("Name:", &info.name);
    out.row("Namespace:", &info.namespace);
    if info.observed {
        let status = out.with_icon(&info.phase);
        out.row("Status:", status);
        if !info.message.is_empty() {
            out.row("Message:", &info.message);
        }
    }
    out.row("Strategy:", &info.strategy);
    if !info.strategy.is_empty() {
        out.row(" Step:", format!("{}/{}", info.step_index, info.steps.len()));
        out.line(" Steps:");
        steps(&mut out, info);
        routings(&mut out, &info.traffic_routings);
    }
    match &fetched.referenced_routings {
        Some(Ok(list)) => routings(&mut out, list),
        Some(Err(e)) => out.line(&format!("Error getting TrafficRoutingRef: {e}")),
        None => {}
    }
    let (workload, rows) = match &fetched.workload {
        Ok(w) => w,
        Err(e) => {
            out.line(&format!("Error getting resources: {e}"));
            return out.text;
        }
    };
    for (i, image) in workload.images.iter().enumerate() {
        out.row(if i == 0 { "Images:" } else { "" }, image);
    }
    out.row("Current Revision:", &info.stable_revision);
    out.row("Update Revision:", &info.update_revision);
    if info.observed {
        out.line("Replicas:");
        out.row(" Desired:", workload.desired);
        out.row(" Updated:", workload.updated);
        out.row(" Current:", workload.current);
        out.row(" Ready:", workload.ready);
        out.row(" Available:", workload.available);
    }
    if !rows.is_empty() {
        pods(&mut out, rows);
    }
    out.text
}

#[cfg(test)]
mod tests;
