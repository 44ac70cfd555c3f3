//! Wide objects: a pod (or a pod template, or a SidecarSet) with more containers, volumes or env
//! entries than any real workload has is refused before a decision is made, because every step of a
//! decision walks those lists. The limits are far above what real pods use; kube-apiserver itself only
//! bounds the request size (3 MiB), in which a pod can list 100,000 minimal containers.

use serde_json::Value;

/// Containers, initContainers and ephemeralContainers together.
pub const MAX_CONTAINERS: usize = 1_000;
/// Volumes.
pub const MAX_VOLUMES: usize = 5_000;
/// `env` plus `envFrom` entries of one container.
pub const MAX_ENV: usize = 10_000;

/// An object over one of the limits.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{at} has {count} {what}; at most {limit} are accepted")]
pub struct TooWide {
    /// Where: `spec` or `spec.template.spec`, or a container in one.
    pub at: String,
    pub what: &'static str,
    pub count: usize,
    pub limit: usize,
}

/// Checks the pod specs of `object`: `spec` (a Pod, a SidecarSet) and `spec.template.spec` (workloads).
pub fn check(object: &Value) -> Result<(), TooWide> {
    for (at, spec) in [
        ("spec", &object["spec"]),
        ("spec.template.spec", &object["spec"]["template"]["spec"]),
    ] {
        if spec.is_object() {
            check_spec(at, spec)?;
        }
    }
    Ok(())
}

fn check_spec(at: &str, spec: &Value) -> Result<(), TooWide> {
    let len = |value: &Value| value.as_array().map_or(0, Vec::len);
    let over = |what, count, limit| {
        (count > limit).then(|| TooWide {
            at: at.to_string(),
            what,
            count,
            limit,
        })
    };
    let lists = ["containers", "initContainers", "ephemeralContainers"];
    let containers: usize = lists.iter().map(|list| len(&spec[list])).sum();
    if let Some(e) = over("containers (all kinds)", containers, MAX_CONTAINERS) {
        return Err(e);
    }
    if let Some(e) = over("volumes", len(&spec["volumes"]), MAX_VOLUMES) {
        return Err(e);
    }
    for list in lists {
        for (index, container) in spec[list].as_array().into_iter().flatten().enumerate() {
            let env = len(&container["env"]) + len(&container["envFrom"]);
            if let Some(mut e) = over("env and envFrom entries", env, MAX_ENV) {
                e.at = format!("{at}.{list}[{index}]");
                return Err(e);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn containers(n: usize) -> Vec<Value> {
        (0..n)
            .map(|i| json!({"name": format!("c{i}"), "image": "x"}))
            .collect()
    }

    #[test]
    fn real_pods_pass_and_wide_ones_name_the_limit() {
        let pod = json!({"kind": "Pod", "spec": {"containers": containers(3), "volumes": [{"name": "v"}]}});
        assert_eq!(check(&pod), Ok(()));

        let wide = json!({"kind": "Pod", "spec": {
            "containers": containers(600), "initContainers": containers(401)}});
        assert_eq!(
            check(&wide).unwrap_err().to_string(),
            "spec has 1001 containers (all kinds); at most 1000 are accepted"
        );

        let volumes: Vec<Value> = (0..=MAX_VOLUMES)
            .map(|i| json!({"name": format!("v{i}")}))
            .collect();
        let template = json!({"kind": "CloneSet", "spec": {"template": {"spec": {"volumes": volumes}}}});
        assert_eq!(
            check(&template).unwrap_err().to_string(),
            "spec.template.spec has 5001 volumes; at most 5000 are accepted"
        );

        let env: Vec<Value> = (0..=MAX_ENV).map(|i| json!({"name": format!("E{i}")})).collect();
        let pod = json!({"kind": "Pod", "spec": {"containers": [{"name": "a"}, {"name": "b", "env": env}]}});
        assert_eq!(
            check(&pod).unwrap_err().to_string(),
            "spec.containers[1] has 10001 env and envFrom entries; at most 10000 are accepted"
        );
    }
}
