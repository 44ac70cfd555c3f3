//! The SidecarSet hashes OpenKruise stamps on a SidecarSet at admission (`kruise.io/sidecarset-hash`,
//! `kruise.io/sidecarset-hash-without-image`): SHA-256 of the JSON `{"containers":[…]}` (plus
//! `"initContainers":[…]` when one of them is a native sidecar), hex, mapped character by character onto
//! `bcdfghjklmnpqrstvwxz2456789` (Kubernetes' `rand.SafeEncodeString`).
//!
//! We copy the annotations when present (the normal case: OpenKruise's, or our, SidecarSet webhook wrote them).
//! When absent they are computed here once per SidecarSet when the index is built. The JSON is written in Go's
//! field order for the container, its SidecarSet settings and the common nested types (env, ports, volume
//! mounts and devices, resources), so the result equals OpenKruise's for SidecarSets that use those; deeper
//! nested objects (probes, security contexts, …) keep serde's order, which still gives a stable hash that
//! changes exactly when the containers do.

use kruise_api::apps_v1beta1::{SidecarContainer, SidecarSetSpec};
use serde_json::{Map, Value};

const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// `(hash, hash without image)` of a SidecarSet spec.
pub(crate) fn sidecar_set_hashes(spec: &SidecarSetSpec) -> (String, String) {
    (encode(spec, false), encode(spec, true))
}

fn encode(spec: &SidecarSetSpec, without_image: bool) -> String {
    let list = |containers: &[SidecarContainer]| {
        let items: Vec<String> = containers
            .iter()
            .map(|c| go_sidecar_container(c, without_image))
            .collect();
        format!("[{}]", items.join(","))
    };
    let containers = spec.containers.as_deref().unwrap_or_default();
    let init = spec.init_containers.as_deref().unwrap_or_default();
    let has_native = init.iter().any(|c| c.restart_policy.as_deref() == Some("Always"));
    // Go's json.Marshal of a map sorts keys: "containers" < "initContainers".
    let json = if has_native {
        format!(
            "{{\"containers\":{},\"initContainers\":{}}}",
            list(containers),
            list(init)
        )
    } else {
        format!("{{\"containers\":{}}}", list(containers))
    };
    safe_encode(&hex(&super::sha256::digest(json.as_bytes())))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Kubernetes' `rand.SafeEncodeString`.
pub(crate) fn safe_encode(s: &str) -> String {
    s.bytes()
        .map(|b| ALPHANUMS[usize::from(b) % ALPHANUMS.len()] as char)
        .collect()
}

/// Field order of Go's `corev1.Container`; `name` and `resources` are always written.
const CONTAINER: &[&str] = &[
    "name",
    "image",
    "command",
    "args",
    "workingDir",
    "ports",
    "envFrom",
    "env",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "volumeMounts",
    "volumeDevices",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "securityContext",
    "stdin",
    "stdinOnce",
    "tty",
];

fn go_sidecar_container(c: &SidecarContainer, without_image: bool) -> String {
    let mut container = serde_json::to_value(&c.container).unwrap_or_default();
    if without_image && let Some(m) = container.as_object_mut() {
        m.remove("image");
    }
    let settings = serde_json::to_value(c).unwrap_or_default();
    let mut out = String::from("{");
    let mut first = true;
    let mut field = |out: &mut String, key: &str, value: String| {
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(&serde_json::to_string(key).unwrap_or_default());
        out.push(':');
        out.push_str(&value);
    };
    let empty = Map::new();
    let cm = container.as_object().unwrap_or(&empty);
    for key in CONTAINER {
        match (cm.get(*key), *key) {
            (Some(v), k) => field(&mut out, k, go_nested(k, v)),
            (None, "name") => field(&mut out, "name", "\"\"".into()),
            (None, "resources") => field(&mut out, "resources", "{}".into()),
            _ => {}
        }
    }
    let sm = settings.as_object().unwrap_or(&empty);
    let always = ["upgradeStrategy", "shareVolumePolicy"];
    for key in [
        "podInjectPolicy",
        "upgradeStrategy",
        "shareVolumePolicy",
        "shareVolumeDevicePolicy",
        "transferEnv",
        "resourcesPolicy",
    ] {
        match sm.get(key) {
            Some(v) => field(&mut out, key, go_nested(key, v)),
            None if always.contains(&key) => field(&mut out, key, "{}".into()),
            None => {}
        }
    }
    out.push('}');
    out
}

/// Go's order for the nested types we know; serde's (sorted) order otherwise.
fn go_nested(key: &str, value: &Value) -> String {
    let order: &[&str] = match key {
        "env" => &["name", "value", "valueFrom"],
        "ports" => &["name", "hostPort", "containerPort", "protocol", "hostIP"],
        "volumeMounts" => &[
            "name",
            "readOnly",
            "recursiveReadOnly",
            "mountPath",
            "subPath",
            "mountPropagation",
            "subPathExpr",
        ],
        "volumeDevices" => &["name", "devicePath"],
        "resources" => &["limits", "requests", "claims"],
        "upgradeStrategy" => &["upgradeType", "hotUpgradeEmptyImage"],
        "transferEnv" => &[
            "sourceContainerName",
            "sourceContainerNameFrom",
            "envName",
            "envNames",
        ],
        "resourcesPolicy" => &[
            "targetContainersMode",
            "targetContainersNameRegex",
            "resourcesExpr",
        ],
        _ => &[],
    };
    let ordered = |m: &Map<String, Value>| {
        let mut parts: Vec<String> = Vec::new();
        for k in order {
            if let Some(v) = m.get(*k) {
                parts.push(format!(
                    "{}:{}",
                    serde_json::to_string(k).unwrap_or_default(),
                    compact(v)
                ));
            }
        }
        for (k, v) in m.iter().filter(|(k, _)| !order.contains(&k.as_str())) {
            parts.push(format!(
                "{}:{}",
                serde_json::to_string(k).unwrap_or_default(),
                compact(v)
            ));
        }
        format!("{{{}}}", parts.join(","))
    };
    match value {
        _ if order.is_empty() => compact(value),
        Value::Array(items) => {
            let parts: Vec<String> = items
                .iter()
                .map(|i| i.as_object().map_or_else(|| compact(i), ordered))
                .collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(m) => ordered(m),
        other => compact(other),
    }
}

/// Compact JSON as Go writes it (`<`, `>`, `&`, U+2028 and U+2029 escaped).
pub(crate) fn compact(value: &Value) -> String {
    go_escape(serde_json::to_string(value).unwrap_or_default())
}

/// Go's json.Marshal HTML-escapes; these characters only occur inside strings, so a textual replacement of
/// serde's output is exact.
pub(crate) fn go_escape(s: String) -> String {
    if !s.contains(['<', '>', '&', '\u{2028}', '\u{2029}']) {
        return s;
    }
    s.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(v: Value) -> SidecarSetSpec {
        serde_json::from_value(v).unwrap()
    }

    // Expected values from OpenKruise's pkg/control/sidecarcontrol/hash_test.go.
    #[test]
    fn matches_openkruise_test_vectors() {
        let c = json!([{"name": "container1", "image": "test-image"}]);
        let only = spec(json!({"containers": c}));
        assert_eq!(
            sidecar_set_hashes(&only).0,
            "w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78"
        );
        let with_init = spec(json!({"containers": c, "initContainers": c}));
        assert_eq!(
            sidecar_set_hashes(&with_init),
            (
                "w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78".into(),
                "8wzddb4dvv9c6x8zdc77z4z75987424f457dfv6724ddw6zbdx467wz5x24fc759".into()
            )
        );
        let native = spec(json!({"containers": c,
            "initContainers": [{"name": "container1", "image": "test-image", "restartPolicy": "Always"}]}));
        assert_eq!(
            sidecar_set_hashes(&native),
            (
                "4xwx4d4844vd4v9x79wb4xbxf4xb29475cc4446v8cz2c2f2f5c5bw448vd42z8w".into(),
                "5725fw8bwbx249bw57v5892c847dzf48bww9zb7c86xb95264fdz26654847b2c8".into()
            )
        );
    }

    #[test]
    fn go_escaping() {
        assert_eq!(compact(&json!({"a": "<&>"})), r#"{"a":"\u003c\u0026\u003e"}"#);
    }
}
