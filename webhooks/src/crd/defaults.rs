//! Defaulting as JSON-patch operations against the raw object, and the core/v1 defaults OpenKruise applies
//! to pod templates and sidecar containers.
//!
//! A [`Mutator`] keeps the object as it will be after the operations so far, so later defaults see earlier
//! ones; a default is only written where the value is absent, `null` or (for Go strings and numbers that
//! Go defaults when zero) empty. Running the defaults on their own output adds nothing.
//!
//! The core/v1 subset (from `k8s.io/kubernetes/pkg/apis/core/v1/defaults.go`, as OpenKruise's
//! `SetDefaultPodSpec` and `setDefaultContainer` call it):
//! * pod spec: `dnsPolicy: ClusterFirst`, `restartPolicy: Always`, `securityContext: {}`,
//!   `terminationGracePeriodSeconds: 30`, `schedulerName: default-scheduler`;
//! * containers: `imagePullPolicy` (pod-template containers: `Always`, as OpenKruise forces for in-place
//!   update; init containers and sidecars: `Always` for `:latest` or no tag, else `IfNotPresent`),
//!   `terminationMessagePath: /dev/termination-log`, `terminationMessagePolicy: File`, port
//!   `protocol: TCP`, env `fieldRef.apiVersion: v1`, probe `timeoutSeconds 1 / periodSeconds 10 /
//!   successThreshold 1 / failureThreshold 3`, `httpGet` `path: /` and `scheme: HTTP` (probes and
//!   lifecycle hooks);
//! * volumes: no source → `emptyDir: {}`, `hostPath.type: ""`, `defaultMode: 420` on secret, configMap,
//!   downwardAPI and projected, `fieldRef.apiVersion: v1`, `serviceAccountToken.expirationSeconds: 3600`;
//! * volumeClaimTemplates: `status.phase: Pending`.
//!
//! Ephemeral containers get the container defaults but `imagePullPolicy` and `terminationMessage*`, as in
//! OpenKruise (`SetDefaultPodSpec` in apis/apps/defaults/pod.go).
//!
//! Not applied: resource quantities are not rewritten to canonical form (the hash canonicalises them
//! itself), `hostNetwork` host ports (gate off in OpenKruise) are left alone.

use json_patch::PatchOperation;
use serde_json::{Map, Value, json};

use crate::patch;

/// Operations building up against a working copy of the object.
pub struct Mutator {
    pub doc: Value,
    pub ops: Vec<PatchOperation>,
}

fn get<'a>(doc: &'a Value, tokens: &[String]) -> Option<&'a Value> {
    let mut cur = doc;
    for t in tokens {
        cur = match cur {
            Value::Object(m) => m.get(t)?,
            Value::Array(a) => a.get(t.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// A path from string tokens.
pub fn path(base: &[String], rest: &[&str]) -> Vec<String> {
    base.iter()
        .cloned()
        .chain(rest.iter().map(|s| s.to_string()))
        .collect()
}

impl Mutator {
    pub fn new(doc: Value) -> Self {
        Mutator { doc, ops: Vec::new() }
    }

    /// The value at `tokens`.
    pub fn get(&self, tokens: &[String]) -> Option<&Value> {
        get(&self.doc, tokens)
    }

    /// Number of items of the array at `tokens` (0 when absent or not an array).
    pub fn len(&self, tokens: &[String]) -> usize {
        self.get(tokens).and_then(Value::as_array).map_or(0, Vec::len)
    }

    /// True when there is a non-null value at `tokens`.
    pub fn has(&self, tokens: &[String]) -> bool {
        self.get(tokens).is_some_and(|v| !v.is_null())
    }

    /// Adds `value` at `tokens` when nothing (or `null`) is there; missing parent objects are created.
    pub fn set_default(&mut self, tokens: &[String], value: Value) {
        self.set_when(tokens, value, |v| v.is_null());
    }

    /// Like [`set_default`](Self::set_default), also replacing `""` and `0` (Go's zero values).
    pub fn set_default_zero(&mut self, tokens: &[String], value: Value) {
        self.set_when(tokens, value, |v| {
            v.is_null() || v.as_str() == Some("") || v.as_f64() == Some(0.0)
        });
    }

    fn set_when(&mut self, tokens: &[String], value: Value, replace: impl Fn(&Value) -> bool) {
        // Find the first missing (or null) element on the way down.
        for depth in 0..tokens.len() {
            let parent = get(&self.doc, &tokens[..depth]);
            let Some(parent) = parent else { return };
            let here = match parent {
                Value::Object(m) => m.get(&tokens[depth]),
                // Arrays are walked, never extended.
                Value::Array(a) => match tokens[depth].parse::<usize>().ok().and_then(|i| a.get(i)) {
                    Some(v) => Some(v),
                    None => return,
                },
                _ => return,
            };
            let last = depth + 1 == tokens.len();
            match here {
                Some(v) if last && !replace(v) => return,
                Some(v) if !last && !v.is_null() => continue,
                _ => {
                    let mut nested = value;
                    for t in tokens[depth + 1..].iter().rev() {
                        nested = Value::Object(Map::from_iter([(t.clone(), nested)]));
                    }
                    self.push(patch::add(tokens[..=depth].iter().map(String::as_str), nested));
                    return;
                }
            }
        }
    }

    /// Appends an operation and applies it to the working copy.
    pub fn push(&mut self, op: PatchOperation) {
        if json_patch::patch(&mut self.doc, std::slice::from_ref(&op)).is_ok() {
            self.ops.push(op);
        }
    }

    /// Sets `key = value` in the string map at `map` (e.g. `metadata.annotations`).
    pub fn set_map_entry(&mut self, map: &[&str], key: &str, value: &str) {
        for op in patch::set_map_entry(&self.doc, map, key, value) {
            self.push(op);
        }
    }
}

/// The image pull policy Kubernetes defaults for `image`: `Always` for `:latest` or no tag (and no digest),
/// else `IfNotPresent` (also for references that do not parse).
pub fn pull_policy_for(image: &str) -> &'static str {
    if image.is_empty() {
        return "IfNotPresent";
    }
    let (name, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let (repo, tag) = match name[last_slash..].rfind(':') {
        Some(i) => (&name[..last_slash + i], Some(&name[last_slash + i + 1..])),
        None => (name, None),
    };
    let path = repo.split_once('/').map_or(repo, |(host, rest)| {
        if host.contains(['.', ':']) || host == "localhost" {
            rest
        } else {
            repo
        }
    });
    let valid = !path.is_empty()
        && path
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"._-/".contains(&c))
        && tag.is_none_or(|t| !t.is_empty())
        && digest.is_none_or(|d| d.contains(':'));
    if !valid {
        return "IfNotPresent";
    }
    match (tag, digest) {
        (Some("latest"), _) | (None, None) => "Always",
        _ => "IfNotPresent",
    }
}

fn default_http_get(m: &mut Mutator, handler: &[String]) {
    if m.has(&path(handler, &["httpGet"])) {
        m.set_default_zero(&path(handler, &["httpGet", "path"]), json!("/"));
        m.set_default_zero(&path(handler, &["httpGet", "scheme"]), json!("HTTP"));
    }
}

fn default_field_ref(m: &mut Mutator, owner: &[String]) {
    if m.has(&path(owner, &["fieldRef"])) {
        m.set_default_zero(&path(owner, &["fieldRef", "apiVersion"]), json!("v1"));
    }
}

/// How a container's `imagePullPolicy` is defaulted.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum PullDefault {
    /// OpenKruise's pod-template containers: `Always`.
    Always,
    /// `SetDefaults_Container`: from the image tag.
    FromTag,
}

/// Defaults one container at `c` (a path to it).
pub fn default_container(m: &mut Mutator, c: &[String], pull: PullDefault, startup_probe: bool) {
    let policy = match pull {
        PullDefault::Always => "Always",
        PullDefault::FromTag => {
            pull_policy_for(m.get(&path(c, &["image"])).and_then(Value::as_str).unwrap_or(""))
        }
    };
    m.set_default_zero(&path(c, &["imagePullPolicy"]), json!(policy));
    m.set_default_zero(
        &path(c, &["terminationMessagePath"]),
        json!("/dev/termination-log"),
    );
    m.set_default_zero(&path(c, &["terminationMessagePolicy"]), json!("File"));
    default_container_fields(m, c, startup_probe);
}

/// The defaults OpenKruise's `SetDefaultPodSpec` gives every kind of container, ephemeral ones included:
/// port protocol, env `fieldRef`, probes, `httpGet` of probes and lifecycle hooks.
fn default_container_fields(m: &mut Mutator, c: &[String], startup_probe: bool) {
    for j in 0..m.len(&path(c, &["ports"])) {
        let p = path(c, &["ports", &j.to_string()]);
        m.set_default_zero(&path(&p, &["protocol"]), json!("TCP"));
    }
    for j in 0..m.len(&path(c, &["env"])) {
        default_field_ref(m, &path(c, &["env", &j.to_string(), "valueFrom"]));
    }
    let mut probes = vec!["livenessProbe", "readinessProbe"];
    if startup_probe {
        probes.push("startupProbe");
    }
    for probe in probes {
        let p = path(c, &[probe]);
        if !m.has(&p) {
            continue;
        }
        for (key, v) in [
            ("timeoutSeconds", 1),
            ("periodSeconds", 10),
            ("successThreshold", 1),
            ("failureThreshold", 3),
        ] {
            m.set_default_zero(&path(&p, &[key]), json!(v));
        }
        default_http_get(m, &p);
    }
    for hook in ["postStart", "preStop"] {
        default_http_get(m, &path(c, &["lifecycle", hook]));
    }
}

/// `SetDefaultPodVolumes` for the volume list at `volumes`.
pub fn default_volumes(m: &mut Mutator, volumes: &[String]) {
    for i in 0..m.len(volumes) {
        let v = path(volumes, &[&i.to_string()]);
        let has_source = m
            .get(&v)
            .and_then(Value::as_object)
            .is_some_and(|o| o.iter().any(|(k, val)| k != "name" && !val.is_null()));
        if !has_source {
            m.set_default(&path(&v, &["emptyDir"]), json!({}));
            continue;
        }
        if m.has(&path(&v, &["hostPath"])) {
            m.set_default(&path(&v, &["hostPath", "type"]), json!(""));
        }
        for source in ["secret", "configMap", "downwardAPI", "projected"] {
            if m.has(&path(&v, &[source])) {
                m.set_default(&path(&v, &[source, "defaultMode"]), json!(420));
            }
        }
        let items = path(&v, &["downwardAPI", "items"]);
        for j in 0..m.len(&items) {
            default_field_ref(m, &path(&items, &[&j.to_string()]));
        }
        let sources = path(&v, &["projected", "sources"]);
        for j in 0..m.len(&sources) {
            let s = path(&sources, &[&j.to_string()]);
            let items = path(&s, &["downwardAPI", "items"]);
            for k in 0..m.len(&items) {
                default_field_ref(m, &path(&items, &[&k.to_string()]));
            }
            if m.has(&path(&s, &["serviceAccountToken"])) {
                m.set_default(
                    &path(&s, &["serviceAccountToken", "expirationSeconds"]),
                    json!(3600),
                );
            }
        }
    }
}

/// OpenKruise's `SetDefaultPodSpec` for the pod spec at `spec`.
pub fn default_pod_spec(m: &mut Mutator, spec: &[String]) {
    m.set_default_zero(&path(spec, &["dnsPolicy"]), json!("ClusterFirst"));
    m.set_default_zero(&path(spec, &["restartPolicy"]), json!("Always"));
    m.set_default(&path(spec, &["securityContext"]), json!({}));
    m.set_default(&path(spec, &["terminationGracePeriodSeconds"]), json!(30));
    m.set_default_zero(&path(spec, &["schedulerName"]), json!("default-scheduler"));
    default_volumes(m, &path(spec, &["volumes"]));
    for i in 0..m.len(&path(spec, &["initContainers"])) {
        let c = path(spec, &["initContainers", &i.to_string()]);
        default_container(m, &c, PullDefault::FromTag, true);
    }
    for i in 0..m.len(&path(spec, &["containers"])) {
        let c = path(spec, &["containers", &i.to_string()]);
        default_container(m, &c, PullDefault::Always, true);
    }
    for i in 0..m.len(&path(spec, &["ephemeralContainers"])) {
        let c = path(spec, &["ephemeralContainers", &i.to_string()]);
        default_container_fields(m, &c, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn pull_policies() {
        for (image, want) in [
            ("nginx", "Always"),
            ("nginx:latest", "Always"),
            ("nginx:1.25", "IfNotPresent"),
            ("registry:5000/team/nginx", "Always"),
            ("registry:5000/team/nginx:v1", "IfNotPresent"),
            ("nginx@sha256:abcd", "IfNotPresent"),
            ("nginx:latest@sha256:abcd", "Always"),
            ("", "IfNotPresent"),
            ("Bad/Upper", "IfNotPresent"),
        ] {
            assert_eq!(pull_policy_for(image), want, "{image}");
        }
    }

    #[test]
    fn defaults_create_parents_once_and_are_idempotent() {
        let mut m = Mutator::new(json!({"spec": {"x": null, "s": ""}}));
        m.set_default(&p(&["spec", "updateStrategy", "type"]), json!("A"));
        m.set_default(&p(&["spec", "updateStrategy", "partition"]), json!(0));
        m.set_default(&p(&["spec", "x"]), json!(1));
        m.set_default_zero(&p(&["spec", "s"]), json!("v"));
        assert_eq!(m.ops.len(), 4);
        assert_eq!(
            m.doc,
            json!({"spec": {"x": 1, "s": "v", "updateStrategy": {"type": "A", "partition": 0}}})
        );
        let mut again = Mutator::new(m.doc.clone());
        again.set_default(&p(&["spec", "updateStrategy", "type"]), json!("B"));
        again.set_default_zero(&p(&["spec", "s"]), json!("w"));
        assert!(again.ops.is_empty());
    }

    #[test]
    fn ephemeral_containers_get_port_env_probe_and_hook_defaults() {
        let spec = json!({"containers": [{"name": "app", "image": "a:1"}], "ephemeralContainers": [{
            "name": "debug", "image": "busybox",
            "ports": [{"containerPort": 80}],
            "env": [{"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}],
            "startupProbe": {"httpGet": {"port": 80}},
            "lifecycle": {"preStop": {"httpGet": {"port": 80}}}}]});
        let mut m = Mutator::new(spec.clone());
        default_pod_spec(&mut m, &[]);
        let out = crate::patch::apply(&spec, &m.ops).unwrap();
        let debug = &out["ephemeralContainers"][0];
        assert_eq!(debug["ports"][0]["protocol"], "TCP");
        assert_eq!(debug["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
        assert_eq!(debug["startupProbe"]["periodSeconds"], 10);
        assert_eq!(debug["startupProbe"]["httpGet"]["scheme"], "HTTP");
        assert_eq!(debug["lifecycle"]["preStop"]["httpGet"]["path"], "/");
        // SetDefaults_Container is not applied to ephemeral containers.
        assert!(debug.get("imagePullPolicy").is_none());
        assert!(debug.get("terminationMessagePath").is_none());
    }
}
