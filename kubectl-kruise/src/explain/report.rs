//! One finding per policy, each from runs of the webhook code (see the parent module), and the report's
//! text.

use serde_json::{Value, json};

use super::{State, annotation, evict, name};
use crate::Error;

/// Annotation `/mutate-pod` sets to the PodUnavailableBudget covering the pod.
pub const RELATED_PUB: &str = "kruise.io/related-pub";
/// Annotation `/mutate-pod` sets to the WorkloadSpread (and subset) the pod was placed by.
pub const MATCHED_SPREAD: &str = "apps.kruise.io/matched-workloadspread";

/// Whether one policy applies, and what it does or why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub name: String,
    pub applies: bool,
    pub detail: String,
}

/// Everything `explain` says about one pod.
#[derive(Debug, Default)]
pub struct Report {
    pub pod: String,
    pub sidecar_sets: Vec<Finding>,
    pub budgets: Vec<Finding>,
    pub spreads: Vec<Finding>,
    pub launch_priority: Option<Finding>,
}

impl Report {
    pub(super) fn new(pod: &Value) -> Report {
        Report {
            pod: format!("{}/{}", super::namespace_of(pod), name(pod)),
            ..Report::default()
        }
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "Pod {}", self.pod)?;
        for (title, findings) in [
            ("SidecarSets", &self.sidecar_sets),
            ("PodUnavailableBudgets", &self.budgets),
            ("WorkloadSpreads", &self.spreads),
        ] {
            writeln!(f, "{title}:")?;
            if findings.is_empty() {
                writeln!(f, "  (none)")?;
            }
            for finding in findings {
                writeln!(f, "  {}: {}", finding.name, verdict(finding))?;
            }
        }
        if let Some(finding) = &self.launch_priority {
            writeln!(f, "Launch priority:\n  {}", verdict(finding))?;
        }
        Ok(())
    }
}

fn verdict(finding: &Finding) -> String {
    let head = if finding.applies {
        "applies"
    } else {
        "does not apply"
    };
    format!("{head}: {}", finding.detail)
}

fn finding(policy: &Value, applies: bool, detail: String) -> Finding {
    Finding {
        name: name(policy),
        applies,
        detail,
    }
}

/// A change to a policy that might make it apply, and what needing it means.
struct Relaxation {
    why: String,
    relax: Box<dyn Fn(&mut Value)>,
}

fn remove(object: &mut Value, parent: &str, key: &str) {
    if let Some(map) = object.pointer_mut(parent).and_then(Value::as_object_mut) {
        map.remove(key);
    }
}

fn set(object: &mut Value, parent: &str, key: &str, value: Value) {
    if let Some(map) = object.pointer_mut(parent).and_then(Value::as_object_mut) {
        map.insert(key.to_string(), value);
    }
}

fn labels(pod: &Value) -> Value {
    pod.pointer("/metadata/labels")
        .cloned()
        .unwrap_or_else(|| json!({}))
}

fn show(value: Option<&Value>) -> String {
    value.map_or_else(
        || "none".to_string(),
        |v| serde_json::to_string(v).unwrap_or_default(),
    )
}

/// The smallest set of relaxations with which `applies` holds (fewest first, then in order).
fn needed(
    policy: &Value,
    relaxations: &[Relaxation],
    applies: impl Fn(&Value) -> Result<bool, Error>,
) -> Result<Option<Vec<String>>, Error> {
    let n = relaxations.len();
    let mut subsets: Vec<u32> = (1..(1u32 << n)).collect();
    subsets.sort_by_key(|s| s.count_ones());
    for subset in subsets {
        let mut copy = policy.clone();
        for (i, r) in relaxations.iter().enumerate() {
            if subset & (1 << i) != 0 {
                (r.relax)(&mut copy);
            }
        }
        if applies(&copy)? {
            return Ok(Some(
                relaxations
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| subset & (1 << i) != 0)
                    .map(|(_, r)| r.why.clone())
                    .collect(),
            ));
        }
    }
    Ok(None)
}

/// A SidecarSet: injected when the admitted pod lists it in `kruise.io/sidecarset-injected-list`.
pub(super) fn sidecar_set(state: &State, pod: &Value, sidecar_set: &Value) -> Result<Finding, Error> {
    let own = name(sidecar_set);
    let injected = |s: &Value| -> Result<bool, Error> {
        let (after, _) = state.admit(pod, &[s])?;
        let list =
            annotation(&after, kruise_core::names::SIDECARSET_INJECTED_LIST_ANNOTATION).unwrap_or_default();
        Ok(list.split(',').any(|n| n == own))
    };
    if injected(sidecar_set)? {
        let names: Vec<&str> = ["/spec/initContainers", "/spec/containers"]
            .iter()
            .filter_map(|p| sidecar_set.pointer(p).and_then(Value::as_array))
            .flatten()
            .filter_map(|c| c.get("name").and_then(Value::as_str))
            .collect();
        return Ok(finding(
            sidecar_set,
            true,
            format!("injects {}", names.join(", ")),
        ));
    }
    let pod_labels = labels(pod);
    let relaxations = vec![
        Relaxation {
            why: "injection is paused (spec.injectionStrategy.paused)".to_string(),
            relax: Box::new(|s| remove(s, "/spec/injectionStrategy", "paused")),
        },
        Relaxation {
            why: format!(
                "spec.selector {} does not select the pod's labels {}",
                show(sidecar_set.pointer("/spec/selector")),
                show(Some(&pod_labels))
            ),
            relax: Box::new(move |s| set(s, "/spec", "selector", json!({"matchLabels": pod_labels.clone()}))),
        },
        Relaxation {
            why: format!(
                "the pod's namespace {} is not selected (spec.namespace {}, spec.namespaceSelector {})",
                super::namespace_of(pod),
                show(sidecar_set.pointer("/spec/namespace")),
                show(sidecar_set.pointer("/spec/namespaceSelector"))
            ),
            relax: Box::new(|s| {
                remove(s, "/spec", "namespace");
                remove(s, "/spec", "namespaceSelector");
            }),
        },
    ];
    if let Some(reasons) = needed(sidecar_set, &relaxations, injected)? {
        return Ok(finding(sidecar_set, false, reasons.join("; ")));
    }
    let (_, decision) = state.admit(pod, &[sidecar_set])?;
    let detail = decision
        .denial
        .map(|d| format!("the pod would be refused ({}): {}", d.code, d.message))
        .or_else(|| decision.warnings.first().cloned())
        .unwrap_or_else(|| {
            "not injected, and no change of selector, namespace or pause would inject it".to_string()
        });
    Ok(finding(sidecar_set, false, detail))
}

/// A PodUnavailableBudget: covers the pod when the admitted pod names it in `kruise.io/related-pub`;
/// then an eviction is decided (dry run) by `/validate-pod`.
pub(super) fn budget(state: &State, pod: &Value, budget: &Value) -> Result<Finding, Error> {
    let own = name(budget);
    let covers = |b: &Value| -> Result<Option<Value>, Error> {
        let (after, _) = state.admit(pod, &[b])?;
        Ok((annotation(&after, RELATED_PUB) == Some(own.as_str())).then_some(after))
    };
    if let Some(admitted) = covers(budget)? {
        let allowed = budget
            .pointer("/status/unavailableAllowed")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let decision = evict(state, &admitted, budget)?;
        let detail = match decision.denial {
            None => format!(
                "covers the pod; an eviction now would be allowed (status.unavailableAllowed {allowed})"
            ),
            Some(d) => format!(
                "covers the pod; an eviction now would be refused ({}): {}",
                d.code, d.message
            ),
        };
        return Ok(finding(budget, true, detail));
    }
    let pod_labels = labels(pod);
    let why = match budget.pointer("/spec/targetRef") {
        Some(target) => format!("spec.targetRef {} is not the pod's workload", show(Some(target))),
        None => format!(
            "spec.selector {} does not select the pod's labels {}",
            show(budget.pointer("/spec/selector")),
            show(Some(&pod_labels))
        ),
    };
    let relaxations = vec![Relaxation {
        why,
        relax: Box::new(move |b| {
            remove(b, "/spec", "targetRef");
            set(b, "/spec", "selector", json!({"matchLabels": pod_labels.clone()}));
        }),
    }];
    let detail = match needed(budget, &relaxations, |b| Ok(covers(b)?.is_some()))? {
        Some(reasons) => reasons.join("; "),
        None => "does not cover the pod".to_string(),
    };
    Ok(finding(budget, false, detail))
}

fn subset_of(annotation_value: &str, spread: &str) -> Option<String> {
    let value: Value = serde_json::from_str(annotation_value).ok()?;
    (value.get("name").and_then(Value::as_str) == Some(spread)).then(|| {
        value
            .get("subset")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    })
}

/// A WorkloadSpread: places the pod when the admitted pod names it in
/// `apps.kruise.io/matched-workloadspread`.
pub(super) fn spread(state: &State, pod: &Value, spread: &Value) -> Result<Finding, Error> {
    let own = name(spread);
    if let Some(subset) = annotation(pod, MATCHED_SPREAD).and_then(|a| subset_of(a, &own)) {
        return Ok(finding(
            spread,
            true,
            format!("the pod is in subset {subset} (recorded when it was created)"),
        ));
    }
    let placed = |w: &Value| -> Result<Option<String>, Error> {
        let (after, _) = state.admit(pod, &[w])?;
        Ok(annotation(&after, MATCHED_SPREAD).and_then(|a| subset_of(a, &own)))
    };
    if let Some(subset) = placed(spread)? {
        return Ok(finding(
            spread,
            true,
            format!("places the pod in subset {subset}"),
        ));
    }
    // The statuses the webhook chose from: those of the pod's version (kruise-core's `pod_version`).
    let pod_labels: std::collections::BTreeMap<String, String> =
        serde_json::from_value(labels(pod)).unwrap_or_default();
    let controller = pod
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .and_then(|o| o.iter().find(|r| r.get("controller") == Some(&json!(true))))
        .and_then(|r| r.get("kind"))
        .and_then(Value::as_str);
    let version = kruise_core::workload_spread::pod_version(controller, &pod_labels);
    let statuses = spread
        .pointer("/status/versionedSubsetStatuses")
        .and_then(|v| v.get(version))
        .or_else(|| spread.pointer("/status/subsetStatuses"));
    let counts: Vec<String> = statuses
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|s| {
            format!(
                "{}: missingReplicas {}",
                s.get("name").and_then(Value::as_str).unwrap_or_default(),
                s.get("missingReplicas").and_then(Value::as_i64).unwrap_or(0)
            )
        })
        .collect();
    let relaxations = vec![Relaxation {
        why: format!("every subset is full ({})", counts.join(", ")),
        relax: Box::new(|w| {
            if let Some(subsets) = w.pointer_mut("/spec/subsets").and_then(Value::as_array_mut) {
                for s in subsets.iter_mut().filter_map(Value::as_object_mut) {
                    s.remove("maxReplicas");
                }
            }
            // And no subset recorded as full: every recorded status unlimited.
            let unlimited = |list: &mut Value| {
                for s in list
                    .as_array_mut()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_object_mut)
                {
                    s.insert("missingReplicas".into(), json!(-1));
                }
            };
            if let Some(list) = w.pointer_mut("/status/subsetStatuses") {
                unlimited(list);
            }
            if let Some(versions) = w
                .pointer_mut("/status/versionedSubsetStatuses")
                .and_then(Value::as_object_mut)
            {
                versions.values_mut().for_each(unlimited);
            }
        }),
    }];
    let detail = match needed(spread, &relaxations, |w| Ok(placed(w)?.is_some()))? {
        Some(reasons) => reasons.join("; "),
        None => {
            let owner = pod
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .and_then(|o| o.iter().find(|r| r.get("controller") == Some(&json!(true))))
                .map(|r| {
                    format!(
                        "{}/{}",
                        r["kind"].as_str().unwrap_or_default(),
                        r["name"].as_str().unwrap_or_default()
                    )
                })
                .unwrap_or_else(|| "none".to_string());
            format!(
                "spec.targetRef {} is not the pod's workload (the pod's controller: {owner})",
                show(spread.pointer("/spec/targetRef"))
            )
        }
    };
    Ok(finding(spread, false, detail))
}

fn has_barrier(pod: &Value) -> usize {
    pod.pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| {
            c.get("env")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .any(|e| {
                    e.get("name").and_then(Value::as_str) == Some(kruise_core::names::CONTAINER_BARRIER_ENV)
                })
        })
        .count()
}

/// Container launch priority: applies when the pod admitted by every policy has barrier envs.
pub(super) fn launch_priority(state: &State, pod: &Value) -> Result<Finding, Error> {
    let rule = json!({"metadata": {"name": "launch priority"}});
    let all = state.all_policies();
    let (after, decision) = state.admit(pod, &all)?;
    if let Some(d) = decision.denial {
        return Ok(finding(
            &rule,
            false,
            format!("the pod would be refused ({}): {}", d.code, d.message),
        ));
    }
    let n = has_barrier(&after);
    if n > 0 {
        return Ok(finding(
            &rule,
            true,
            format!(
                "{n} containers start in priority order (env {})",
                kruise_core::names::CONTAINER_BARRIER_ENV
            ),
        ));
    }
    let mut ordered = pod.clone();
    if let Some(meta) = ordered.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
        if let Some(a) = annotations.as_object_mut() {
            a.insert(
                "apps.kruise.io/container-launch-priority".into(),
                json!("Ordered"),
            );
        }
    }
    let (after, _) = state.admit(&ordered, &all)?;
    let detail = if has_barrier(&after) > 0 {
        format!(
            "the pod asks for no order (no annotation apps.kruise.io/container-launch-priority: Ordered, no differing {} envs)",
            kruise_core::names::CONTAINER_PRIORITY_ENV
        )
    } else {
        let containers = pod
            .pointer("/spec/containers")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        format!(
            "would not apply even with annotation apps.kruise.io/container-launch-priority: Ordered (the pod has {containers} container(s))"
        )
    };
    Ok(finding(&rule, false, detail))
}
