//! Wide objects: a pod (or a pod template, or a SidecarSet) with more containers, volumes or env
//! entries than any real workload has is refused before a decision is made, because every step of a
//! decision walks those lists. The limits are far above what real pods use; kube-apiserver itself only
//! bounds the request size (3 MiB), in which a pod can list 100,000 minimal containers.

use serde_json::Value;

mod stream;

pub use stream::check_body;

/// Bodies from this size on are checked by [`check_body`] before they are parsed: below it, the tree
/// a body parses into stays small whatever it lists.
pub const STREAMED_FROM: usize = 256 << 10;

/// Containers, initContainers and ephemeralContainers together.
pub const MAX_CONTAINERS: usize = 1_000;
/// Volumes.
pub const MAX_VOLUMES: usize = 5_000;
/// `env` plus `envFrom` entries of one container.
pub const MAX_ENV: usize = 10_000;

/// An object over one of the limits.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
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

/// The container lists of a pod spec, in the order their limits are judged.
const LISTS: [&str; 3] = ["containers", "initContainers", "ephemeralContainers"];

fn check_spec(at: &str, spec: &Value) -> Result<(), TooWide> {
    let len = |value: &Value| value.as_array().map_or(0, Vec::len);
    let mut sizes = Sizes::default();
    for (list, name) in LISTS.iter().enumerate() {
        for (index, container) in spec[name].as_array().into_iter().flatten().enumerate() {
            sizes.containers += 1;
            sizes.container_env(list, index, len(&container["env"]) + len(&container["envFrom"]));
        }
    }
    sizes.volumes = len(&spec["volumes"]);
    sizes.check(at)
}

/// What the limits judge in one pod spec.
#[derive(Debug, Default)]
struct Sizes {
    /// Containers of the three lists together.
    containers: usize,
    volumes: usize,
    /// Per list, the first container over the env limit: its index and its count.
    env_over: [Option<(usize, usize)>; 3],
}

impl Sizes {
    /// Container `index` of list `list` has `env` env and envFrom entries.
    fn container_env(&mut self, list: usize, index: usize, env: usize) {
        if env > MAX_ENV && self.env_over[list].is_none() {
            self.env_over[list] = Some((index, env));
        }
    }

    /// The first limit broken, judged in order: containers, volumes, then each list's env.
    fn check(&self, at: &str) -> Result<(), TooWide> {
        let over = |at: String, what, count, limit| {
            if count > limit {
                Err(TooWide {
                    at,
                    what,
                    count,
                    limit,
                })
            } else {
                Ok(())
            }
        };
        over(
            at.to_string(),
            "containers (all kinds)",
            self.containers,
            MAX_CONTAINERS,
        )?;
        over(at.to_string(), "volumes", self.volumes, MAX_VOLUMES)?;
        for (list, found) in self.env_over.iter().enumerate() {
            if let Some((index, env)) = found {
                over(
                    format!("{at}.{}[{index}]", LISTS[list]),
                    "env and envFrom entries",
                    *env,
                    MAX_ENV,
                )?;
            }
        }
        Ok(())
    }
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

    #[test]
    fn a_body_is_judged_as_its_parsed_object_is() {
        let env: Vec<Value> = (0..=MAX_ENV).map(|i| json!({"name": format!("E{i}")})).collect();
        let volumes: Vec<Value> = (0..=MAX_VOLUMES)
            .map(|i| json!({"name": format!("v{i}")}))
            .collect();
        let objects = [
            json!({"kind": "Pod", "spec": {"containers": containers(3), "volumes": [{"name": "v"}]}}),
            json!({"kind": "Pod", "spec": {"containers": containers(600), "initContainers": containers(401)}}),
            json!({"kind": "CloneSet", "spec": {"template": {"spec": {"volumes": volumes}}}}),
            json!({"kind": "Pod", "spec": {"initContainers": [{"name": "a"}, {"name": "b", "envFrom": env}],
                "containers": [{"name": "c", "env": env}]}}),
            json!({"kind": "Pod", "spec": {"containers": "not a list", "volumes": {"a": 1}}}),
            json!({"kind": "Pod", "spec": {"containers": [1, "x", {"name": "a", "env": null}]}}),
        ];
        for object in objects {
            let expected = check(&object);
            for which in ["object", "oldObject"] {
                let body = serde_json::to_vec(&json!({"apiVersion": "admission.k8s.io/v1",
                    "request": {"uid": "u", which: object, "other": {"spec": {"containers": containers(2000)}}}}))
                .unwrap();
                assert_eq!(
                    check_body(&body).map_err(|(w, e)| (w.to_string(), e)),
                    expected.clone().map_err(|e| (which.to_string(), e)),
                    "{which}: {object}"
                );
            }
        }
        assert_eq!(check_body(b"{not json"), Ok(()), "the parser reports it");
    }
}
