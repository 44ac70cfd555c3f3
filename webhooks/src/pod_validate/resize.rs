//! Pod UPDATE: may the change make the pod unavailable, and is it an in-place resize (OpenKruise
//! "IsPodUnavailableChanged" and "CanResizeInplace")?

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use kruise_core::pod_state::{annotation, has_unavailable_label};
use kruise_core::quantity::Quantity as Parsed;

/// True when the update may cause unavailability: the spec changed, or an unavailable label was added.
/// Label, annotation and status changes alone do not count.
pub(crate) fn may_cause_unavailability(old: &Pod, new: &Pod) -> bool {
    old.spec != new.spec || (!has_unavailable_label(&old.metadata) && has_unavailable_label(&new.metadata))
}

/// True when the update only resizes cpu/memory of containers in place without restarting them.
pub(crate) fn can_resize_in_place(old: &Pod, new: &Pod) -> bool {
    if !has_unavailable_label(&old.metadata) && has_unavailable_label(&new.metadata) {
        return false;
    }
    if spec_without_resources(old) != spec_without_resources(new) {
        return false;
    }
    if is_static(old) || is_static(new) {
        return false;
    }
    if qos_class(old) != qos_class(new) {
        return false;
    }
    resources_resizable(old, new)
}

fn spec_without_resources(pod: &Pod) -> serde_json::Value {
    let mut spec = pod.spec.clone().unwrap_or_default();
    for c in &mut spec.containers {
        c.resources = None;
    }
    serde_json::to_value(spec).unwrap_or_default()
}

/// A static (file or http sourced) pod: annotation `kubernetes.io/config.source` other than `api`.
fn is_static(pod: &Pod) -> bool {
    annotation(&pod.metadata, "kubernetes.io/config.source").is_some_and(|s| s != "api")
}

fn containers(pod: &Pod) -> &[Container] {
    pod.spec
        .as_ref()
        .map(|s| s.containers.as_slice())
        .unwrap_or_default()
}

type Resources = BTreeMap<String, Quantity>;

fn requests(c: &Container) -> Option<&Resources> {
    c.resources.as_ref().and_then(|r| r.requests.as_ref())
}

fn limits(c: &Container) -> Option<&Resources> {
    c.resources.as_ref().and_then(|r| r.limits.as_ref())
}

fn resource_changed(a: Option<&Resources>, b: Option<&Resources>, name: &str) -> bool {
    match (a.and_then(|m| m.get(name)), b.and_then(|m| m.get(name))) {
        (None, None) => false,
        (Some(x), Some(y)) => !quantities_equal(x, y),
        _ => true,
    }
}

fn resources_resizable(old: &Pod, new: &Pod) -> bool {
    let (old_cs, new_cs) = (containers(old), containers(new));
    if old_cs.len() != new_cs.len() {
        return false;
    }
    for c in new_cs {
        let Some(o) = old_cs.iter().find(|o| o.name == c.name) else {
            return false;
        };
        let names: BTreeSet<&String> = [requests(o), requests(c), limits(o), limits(c)]
            .into_iter()
            .flatten()
            .flat_map(BTreeMap::keys)
            .collect();
        for name in names {
            let changed = resource_changed(requests(o), requests(c), name)
                || resource_changed(limits(o), limits(c), name);
            if !changed {
                continue;
            }
            if name != "cpu" && name != "memory" {
                return false;
            }
            let policy = c
                .resize_policy
                .iter()
                .flatten()
                .rev()
                .find(|p| p.resource_name == *name)
                .map(|p| p.restart_policy.as_str());
            if !matches!(policy, None | Some("" | "NotRequired")) {
                return false;
            }
        }
    }
    true
}

#[derive(Debug, PartialEq, Eq)]
enum Qos {
    Guaranteed,
    Burstable,
    BestEffort,
}

/// The QoS class computed from cpu/memory requests and limits of all containers and init containers
/// (Kubernetes' `ComputePodQOS`: positive quantities summed per resource).
fn qos_class(pod: &Pod) -> Qos {
    let spec = pod.spec.as_ref();
    let all = spec
        .map(|s| s.containers.iter().chain(s.init_containers.iter().flatten()))
        .into_iter()
        .flatten();
    let mut requests_sum: BTreeMap<&str, Sum> = BTreeMap::new();
    let mut limits_sum: BTreeMap<&str, Sum> = BTreeMap::new();
    let mut guaranteed = true;
    for c in all {
        for (name, q) in requests(c).into_iter().flatten() {
            if let (n @ ("cpu" | "memory"), Some(v)) = (name.as_str(), positive(q)) {
                requests_sum.entry(n).or_default().add(&v);
            }
        }
        let mut found = BTreeSet::new();
        for (name, q) in limits(c).into_iter().flatten() {
            if let (n @ ("cpu" | "memory"), Some(v)) = (name.as_str(), positive(q)) {
                found.insert(n);
                limits_sum.entry(n).or_default().add(&v);
            }
        }
        if found.len() < 2 {
            guaranteed = false;
        }
    }
    if requests_sum.is_empty() && limits_sum.is_empty() {
        return Qos::BestEffort;
    }
    if guaranteed
        && requests_sum
            .iter()
            .all(|(n, r)| limits_sum.get(n).is_some_and(|l| l.equals(r)))
        && requests_sum.len() == limits_sum.len()
    {
        return Qos::Guaranteed;
    }
    Qos::Burstable
}

/// A quantity that parses and is greater than zero.
fn positive(q: &Quantity) -> Option<Parsed> {
    Parsed::parse(&q.0)
        .ok()
        .filter(|v| !v.is_zero() && !v.is_negative())
}

/// A per-resource sum; `None` once it leaves the range kruise-rs computes exactly (never equal then).
struct Sum(Option<Parsed>);

impl Default for Sum {
    fn default() -> Sum {
        Sum(Some(Parsed::from_int(0)))
    }
}

impl Sum {
    fn add(&mut self, v: &Parsed) {
        if let Some(s) = &mut self.0
            && s.add(v).is_err()
        {
            self.0 = None;
        }
    }

    fn equals(&self, other: &Sum) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => a.compare(b) == Ordering::Equal,
            _ => false,
        }
    }
}

/// Semantic equality (`Quantity.Cmp`); text that is no quantity compares as text.
fn quantities_equal(a: &Quantity, b: &Quantity) -> bool {
    match (Parsed::parse(&a.0), Parsed::parse(&b.0)) {
        (Ok(x), Ok(y)) => x.compare(&y) == Ordering::Equal,
        _ => a.0 == b.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(containers: serde_json::Value) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": {"containers": containers}}))
            .unwrap()
    }

    #[test]
    fn quantities_compare_by_value() {
        let q = |s: &str| Quantity(s.to_string());
        assert!(quantities_equal(&q("100m"), &q("0.1")));
        assert!(quantities_equal(&q("1Ki"), &q("1024")));
        assert!(quantities_equal(&q("1e3"), &q("1k")));
        assert!(!quantities_equal(&q("1"), &q("1001m")));
        assert!(quantities_equal(&q("lots"), &q("lots")));
        assert!(!quantities_equal(&q("lots"), &q("1")));
    }

    #[test]
    fn qos_classes() {
        let c = |req: serde_json::Value, lim: serde_json::Value| {
            pod(json!([{"name": "a", "resources": {"requests": req, "limits": lim}}]))
        };
        assert_eq!(qos_class(&pod(json!([{"name": "a"}]))), Qos::BestEffort);
        assert_eq!(
            qos_class(&c(
                json!({"cpu": "1", "memory": "1Gi"}),
                json!({"cpu": "1000m", "memory": "1Gi"})
            )),
            Qos::Guaranteed
        );
        assert_eq!(
            qos_class(&c(json!({"cpu": "1"}), json!({"cpu": "2", "memory": "1Gi"}))),
            Qos::Burstable
        );
    }

    #[test]
    fn resize_only_for_cpu_memory_without_restart_policy() {
        let c = |cpu: &str, policy: &str, extra: serde_json::Value| {
            let mut v = json!([{"name": "a", "image": "x:1",
                "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": "4"}},
                "resizePolicy": [{"resourceName": "cpu", "restartPolicy": policy}]}]);
            if !extra.is_null() {
                v[0]["resources"]["requests"]["ephemeral-storage"] = extra;
            }
            pod(v)
        };
        let old = c("1", "NotRequired", json!(null));
        assert!(can_resize_in_place(&old, &c("2", "NotRequired", json!(null))));
        let restart = c("1", "RestartContainer", json!(null));
        assert!(!can_resize_in_place(
            &restart,
            &c("2", "RestartContainer", json!(null))
        ));
        assert!(
            !can_resize_in_place(&old, &c("1", "NotRequired", json!("1Gi"))),
            "not cpu/memory"
        );
        let mut image = c("2", "NotRequired", json!(null));
        image.spec.as_mut().unwrap().containers[0].image = Some("x:2".into());
        assert!(!can_resize_in_place(&old, &image));
        assert!(may_cause_unavailability(&old, &image));
        let mut labelled = old.clone();
        labelled.metadata.labels = Some([("a".to_string(), "b".to_string())].into());
        assert!(!may_cause_unavailability(&old, &labelled));
        labelled.metadata.labels =
            Some([("unavailable-pod.kruise.io/x".to_string(), "b".to_string())].into());
        assert!(may_cause_unavailability(&old, &labelled));
        assert!(!can_resize_in_place(&old, &labelled));
    }
}
