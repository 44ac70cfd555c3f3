//! The pod's containers as sidecars see them: raw field access, OpenKruise's "injected sidecar" marker, and
//! what an app container lends a sidecar (its mounts, devices and env vars), computed at most once per
//! review.

use std::cell::OnceCell;

use serde_json::Value;

/// The env var marking a container as injected.
pub(crate) use kruise_core::names::SIDECAR_INJECTED_ENV as IS_INJECTED;

pub(crate) fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn array<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// A container's name (`""` when missing).
pub(crate) fn name(c: &Value) -> &str {
    str_field(c, "name").unwrap_or_default()
}

/// OpenKruise's "injected sidecar" test: the first `IS_INJECTED` env var has the value `true`.
fn is_injected(c: &Value) -> bool {
    array(c, "env")
        .iter()
        .find(|e| name(e) == IS_INJECTED)
        .is_some_and(|e| str_field(e, "value") == Some("true"))
}

/// What sidecars may take from the pod's app containers, computed at most once per review.
pub(crate) struct PodContainers<'a> {
    pub(crate) containers: &'a [Value],
    pub(crate) init_containers: &'a [Value],
    shared_mounts: OnceCell<(Vec<&'a Value>, Vec<&'a Value>)>,
    shared_devices: OnceCell<Vec<&'a Value>>,
}

impl<'a> PodContainers<'a> {
    pub(crate) fn of(pod: &'a Value) -> PodContainers<'a> {
        let spec = pod.get("spec").unwrap_or(&Value::Null);
        PodContainers {
            containers: array(spec, "containers"),
            init_containers: array(spec, "initContainers"),
            shared_mounts: OnceCell::new(),
            shared_devices: OnceCell::new(),
        }
    }

    /// Mounts of the app containers (not injected ones), and the env vars their `subPathExpr`s reference.
    pub(crate) fn shared_mounts(&self) -> &(Vec<&'a Value>, Vec<&'a Value>) {
        self.shared_mounts.get_or_init(|| {
            let mut mounts = Vec::new();
            let mut envs = Vec::new();
            for app in self.containers.iter().filter(|c| !is_injected(c)) {
                for mount in array(app, "volumeMounts") {
                    mounts.push(mount);
                    for var in sub_path_vars(str_field(mount, "subPathExpr").unwrap_or_default()) {
                        if let Some(env) = array(app, "env").iter().find(|e| name(e) == var) {
                            envs.push(env);
                        }
                    }
                }
            }
            (mounts, envs)
        })
    }

    pub(crate) fn shared_devices(&self) -> &[&'a Value] {
        self.shared_devices.get_or_init(|| {
            self.containers
                .iter()
                .filter(|c| !is_injected(c))
                .flat_map(|c| array(c, "volumeDevices"))
                .collect()
        })
    }

    /// The env var `env` of the app container `container` (the last of either name, as OpenKruise's map
    /// keeps); init containers are never a source.
    pub(crate) fn env_of(&self, container: &str, env: &str) -> Option<&'a Value> {
        self.containers
            .iter()
            .rev()
            .filter(|c| name(c) == container)
            .flat_map(|c| array(c, "env").iter().rev())
            .find(|e| name(e) == env)
    }
}

/// The `$(NAME)` references of a `subPathExpr` (OpenKruise's `\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)`).
fn sub_path_vars(expr: &str) -> Vec<&str> {
    let bytes = expr.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'$' && bytes[i + 1] == b'(' {
            let start = i + 2;
            let first_ok = bytes
                .get(start)
                .is_some_and(|b| b.is_ascii_alphabetic() || matches!(b, b'-' | b'.' | b'_'));
            if first_ok {
                let mut end = start + 1;
                while bytes
                    .get(end)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
                {
                    end += 1;
                }
                if bytes.get(end) == Some(&b')') {
                    out.push(&expr[start..end]);
                    i = end + 1;
                    continue;
                }
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_path_references() {
        assert_eq!(
            sub_path_vars("foo/$(POD_NAME)/$(OD_NAME)/conf"),
            ["POD_NAME", "OD_NAME"]
        );
        assert!(sub_path_vars("foo").is_empty());
        assert_eq!(sub_path_vars("$(a)$(1b)$(.c)"), ["a", ".c"]);
        assert!(sub_path_vars("$(unclosed").is_empty());
    }
}
