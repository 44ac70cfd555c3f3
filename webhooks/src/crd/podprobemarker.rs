//! PodProbeMarker validation (`/validate-apps-kruise-io-podprobemarker`), after OpenKruise's
//! `pkg/webhook/podprobemarker/validating`.
//!
//! Both `PodProbeMarkerGate` and `KruiseDaemon` must be on (else 403). The selector is required,
//! non-empty, valid and immutable. Each probe (`spec.probes[i]`): a name that is non-empty, unique,
//! without `#` and not a built-in pod condition; a container name; exactly one handler — exec with a
//! command, httpGet with a path and without host, tcpSocket without host, ports valid numbers or
//! names; non-negative timings; a podConditionType (a valid, unique label name) or a markerPolicy or
//! both; each policy state Succeeded or Failed, at most once, with labels or annotations that are valid.
//!
//! Deviations (`docs/podprobemarker.md`): every error is reported with its indexed path (OpenKruise
//! stops at the first and names only `spec.probes`); the answer is 422 `Invalid` like every CRD
//! (OpenKruise: 400); an httpGet without `scheme` means HTTP (OpenKruise refuses the empty scheme).

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Probe;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps_v1alpha1::{PodContainerProbe, PodProbeMarkerSpec, ProbeState};
use kruise_core::feature_gates::Gate;
use serde_json::Value;

use super::field::{
    ErrorList, Path, duplicate, forbidden, go_label_selector, invalid, not_supported, required,
};
use super::meta::{
    port_name, qualified_name, selector_is_empty, validate_annotations, validate_label_selector,
    validate_labels, validate_nonnegative,
};
use super::{Which, check_decodes, judged, raw_object, refuse, strip_nulls};
use crate::{Decision, Operation, Settings, review::AdmissionRequest, view::ClusterView};

const GROUP: &str = "apps.kruise.io";
const KIND: &str = "PodProbeMarker";

/// Pod conditions Kubernetes and OpenKruise own: not probe names.
const NATIVE_CONDITIONS: &[&str] = &[
    "PodScheduled",
    "Initialized",
    "Ready",
    "ContainersReady",
    "KruisePodReady",
    "InPlaceUpdateReady",
];

/// `/validate-apps-kruise-io-podprobemarker`: CREATE and UPDATE.
pub fn validate(request: &AdmissionRequest, _view: &impl ClusterView, settings: &Settings) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    for gate in [Gate::PodProbeMarkerGate, Gate::KruiseDaemon] {
        if !settings.enabled(gate) {
            return Decision::forbid(format!("feature-gate {} is not enabled", gate.name()));
        }
    }
    let new = match raw_object(request, Which::New, GROUP, KIND) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    let raw_spec = new.get("spec").cloned().unwrap_or(Value::Null);
    let spec: PodProbeMarkerSpec = match check_decodes(KIND, &raw_spec) {
        Ok(s) => s,
        Err(d) => return *d,
    };
    let mut errs = validate_spec(&raw_spec, &spec, &Path::new("spec"));
    if request.operation == Operation::Update {
        let old = match raw_object(request, Which::Old, GROUP, KIND) {
            Ok(o) => o,
            Err(d) => return *d,
        };
        let selector = |o: &Value| strip_nulls(o.pointer("/spec/selector").unwrap_or(&Value::Null));
        if selector(&new) != selector(&old) {
            errs.push(invalid(
                &Path::new("spec").child("selector"),
                go_label_selector(raw_spec.get("selector")),
                "selector must be immutable",
            ));
        }
    }
    refuse(&errs).unwrap_or_else(Decision::allow)
}

/// The rules on a PodProbeMarker's spec (`raw` is the spec as sent, `spec` the same decoded).
pub fn validate_spec(raw: &Value, spec: &PodProbeMarkerSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let selector = raw.get("selector").filter(|s| !s.is_null());
    match selector {
        None => errs.push(required(&path.child("selector"), "")),
        Some(s) => {
            errs.extend(validate_label_selector(Some(s), &path.child("selector")));
            if selector_is_empty(s) {
                errs.push(invalid(
                    &path.child("selector"),
                    go_label_selector(Some(s)),
                    "empty selector is not valid for podProbeMarker",
                ));
            }
        }
    }
    if spec.probes.is_empty() {
        errs.push(required(&path.child("probes"), "at least one probe"));
    }
    let mut names = BTreeSet::new();
    let mut conditions = BTreeSet::new();
    for (i, probe) in spec.probes.iter().enumerate() {
        let p = path.child("probes").index(i);
        errs.extend(validate_probe_identity(probe, &p, &mut names));
        errs.extend(validate_probe(&probe.probe, &p.child("probe")));
        if probe.pod_condition_type.is_empty() && probe.marker_policy.is_empty() {
            errs.push(required(
                &p,
                "podConditionType and markerPolicy cannot be empty at the same time",
            ));
        }
        let condition = probe.pod_condition_type.as_str();
        if !condition.is_empty() {
            let cp = p.child("podConditionType");
            errs.extend(
                qualified_name(condition)
                    .into_iter()
                    .map(|m| invalid(&cp, condition, m)),
            );
            if !conditions.insert(condition) {
                errs.push(duplicate(&cp, condition));
            }
        }
        let mut states = BTreeSet::new();
        for (j, policy) in probe.marker_policy.iter().enumerate() {
            let mp = p.child("markerPolicy").index(j);
            let state = policy.state.as_str();
            if !matches!(policy.state, ProbeState::Succeeded | ProbeState::Failed) {
                errs.push(not_supported(&mp.child("state"), state, &["Failed", "Succeeded"]));
            } else if !states.insert(state.to_string()) {
                errs.push(duplicate(&mp.child("state"), state));
            }
            if policy.labels.is_empty() && policy.annotations.is_empty() {
                errs.push(required(&mp, "labels or annotations"));
            }
            let as_value = |m: &std::collections::BTreeMap<String, String>| serde_json::to_value(m).ok();
            errs.extend(validate_labels(
                as_value(&policy.labels).as_ref(),
                &mp.child("labels"),
            ));
            errs.extend(validate_annotations(
                as_value(&policy.annotations).as_ref(),
                &mp.child("annotations"),
            ));
        }
    }
    errs
}

fn validate_probe_identity<'a>(
    probe: &'a PodContainerProbe,
    p: &Path,
    names: &mut BTreeSet<&'a str>,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let name = probe.name.as_str();
    let np = p.child("name");
    if name.is_empty() {
        errs.push(required(&np, ""));
    } else if name.contains('#') {
        errs.push(invalid(&np, name, "must not contain '#'"));
    } else if NATIVE_CONDITIONS.contains(&name) {
        errs.push(invalid(&np, name, "must not be a built-in pod condition type"));
    } else if !names.insert(name) {
        errs.push(duplicate(&np, name));
    }
    if probe.container_name.is_empty() {
        errs.push(required(&p.child("containerName"), ""));
    }
    errs
}

/// The probe: one handler, valid, and non-negative timings.
pub fn validate_probe(probe: &Probe, p: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut handlers = 0;
    if let Some(exec) = &probe.exec {
        handlers += 1;
        if exec.command.as_ref().is_none_or(Vec::is_empty) {
            errs.push(required(&p.child("exec").child("command"), ""));
        }
    }
    if let Some(http) = &probe.http_get {
        let hp = p.child("httpGet");
        handlers += 1;
        if handlers > 1 {
            errs.push(forbidden(&hp, "may not specify more than 1 handler type"));
        } else {
            let path = http.path.as_deref().unwrap_or_default();
            if path.is_empty() {
                errs.push(required(&hp.child("path"), ""));
            } else if !path.starts_with('/') || path.chars().any(char::is_whitespace) {
                errs.push(invalid(&hp.child("path"), path, "must be a valid URL path"));
            }
            if let Some(host) = http.host.as_deref().filter(|h| !h.is_empty()) {
                errs.push(invalid(
                    &hp.child("host"),
                    host,
                    "host field in probes is not allowed",
                ));
            }
            errs.extend(validate_port(&http.port, &hp.child("port")));
            if let Some(scheme) = http.scheme.as_deref().filter(|s| !s.is_empty())
                && !matches!(scheme, "HTTP" | "HTTPS")
            {
                errs.push(not_supported(&hp.child("scheme"), scheme, &["HTTP", "HTTPS"]));
            }
            for (k, header) in http.http_headers.iter().flatten().enumerate() {
                if header.name.is_empty() || !header.name.bytes().all(is_token_byte) {
                    errs.push(invalid(
                        &hp.child("httpHeaders").index(k).child("name"),
                        header.name.as_str(),
                        "a valid HTTP header must consist of alphanumeric characters or '-'",
                    ));
                }
            }
        }
    }
    if let Some(tcp) = &probe.tcp_socket {
        let tp = p.child("tcpSocket");
        handlers += 1;
        if handlers > 1 {
            errs.push(forbidden(&tp, "may not specify more than 1 handler type"));
        } else {
            if let Some(host) = tcp.host.as_deref().filter(|h| !h.is_empty()) {
                errs.push(invalid(
                    &tp.child("host"),
                    host,
                    "host field in probes is not allowed",
                ));
            }
            errs.extend(validate_port(&tcp.port, &tp.child("port")));
        }
    }
    if probe.grpc.is_some() {
        errs.push(forbidden(
            &p.child("grpc"),
            "only exec, httpGet and tcpSocket are supported",
        ));
    }
    if handlers == 0 {
        errs.push(required(p, "must specify a handler type"));
    }
    for (field, value) in [
        ("initialDelaySeconds", probe.initial_delay_seconds),
        ("timeoutSeconds", probe.timeout_seconds),
        ("periodSeconds", probe.period_seconds),
        ("successThreshold", probe.success_threshold),
        ("failureThreshold", probe.failure_threshold),
    ] {
        errs.extend(validate_nonnegative(
            i64::from(value.unwrap_or(0)),
            &p.child(field),
        ));
    }
    errs
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

fn validate_port(port: &IntOrString, p: &Path) -> ErrorList {
    match port {
        IntOrString::Int(n) if !(1..=65535).contains(n) => {
            vec![invalid(
                p,
                i64::from(*n),
                "must be between 1 and 65535, inclusive",
            )]
        }
        IntOrString::Int(_) => Vec::new(),
        IntOrString::String(s) => port_name(s)
            .into_iter()
            .map(|m| invalid(p, s.as_str(), m))
            .collect(),
    }
}

#[cfg(test)]
mod tests;
