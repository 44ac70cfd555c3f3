//! The SidecarSet hashes, computed exactly as OpenKruise computes them.
//!
//! OpenKruise hashes `json.Marshal(map{"containers": spec.containers[, "initContainers": ...]})` of its Go
//! types: struct fields in declaration order, Go's `omitempty` rules (non-pointer structs always written,
//! `resources: {}` included), map keys sorted, quantities as `MarshalJSON` writes them
//! after defaulting (`crate::quantity`), strings escaped as Go escapes
//! them (`<`, `>`, `&` as `\u003c`...). This module re-encodes the raw JSON through a table of those Go
//! types, so fields Go does not know are dropped as Go drops them, then takes sha256 and
//! `rand.SafeEncodeString` of the hex digest.

use std::fmt::Write as _;

use crate::quantity::Quantity;
use serde_json::Value;

mod sha256;

use sha256::sha256;

/// The kind of a Go field.
#[derive(Clone, Copy)]
enum K {
    Str,
    Int,
    Bool,
    Struct(&'static [F]),
    Slice(&'static K),
    Map(&'static K),
    IntOrString,
    Quantity,
}

/// A Go struct field: JSON name, kind, pointer, `omitempty`. An empty name marks an inlined struct.
#[derive(Clone, Copy)]
struct F(&'static str, K, bool, bool);

const fn val(name: &'static str, k: K) -> F {
    F(name, k, false, false)
}
const fn opt(name: &'static str, k: K) -> F {
    F(name, k, false, true)
}
const fn ptr(name: &'static str, k: K) -> F {
    F(name, k, true, true)
}
const fn inline(k: K) -> F {
    F("", k, false, false)
}

const STR: K = K::Str;
const STRS: K = K::Slice(&K::Str);

const LOCAL_OBJECT_REFERENCE: &[F] = &[opt("name", STR)];
const CONTAINER_PORT: &[F] = &[
    opt("name", STR),
    opt("hostPort", K::Int),
    val("containerPort", K::Int),
    opt("protocol", STR),
    opt("hostIP", STR),
];
const ENV_SOURCE_REF: &[F] = &[
    inline(K::Struct(LOCAL_OBJECT_REFERENCE)),
    ptr("optional", K::Bool),
];
const ENV_FROM_SOURCE: &[F] = &[
    opt("prefix", STR),
    ptr("configMapRef", K::Struct(ENV_SOURCE_REF)),
    ptr("secretRef", K::Struct(ENV_SOURCE_REF)),
];
const OBJECT_FIELD_SELECTOR: &[F] = &[opt("apiVersion", STR), val("fieldPath", STR)];
const RESOURCE_FIELD_SELECTOR: &[F] = &[
    opt("containerName", STR),
    val("resource", STR),
    opt("divisor", K::Quantity),
];
const KEY_SELECTOR: &[F] = &[
    inline(K::Struct(LOCAL_OBJECT_REFERENCE)),
    val("key", STR),
    ptr("optional", K::Bool),
];
const ENV_VAR_SOURCE: &[F] = &[
    ptr("fieldRef", K::Struct(OBJECT_FIELD_SELECTOR)),
    ptr("resourceFieldRef", K::Struct(RESOURCE_FIELD_SELECTOR)),
    ptr("configMapKeyRef", K::Struct(KEY_SELECTOR)),
    ptr("secretKeyRef", K::Struct(KEY_SELECTOR)),
];
const ENV_VAR: &[F] = &[
    val("name", STR),
    opt("value", STR),
    ptr("valueFrom", K::Struct(ENV_VAR_SOURCE)),
];
const RESOURCE_CLAIM: &[F] = &[val("name", STR), opt("request", STR)];
const RESOURCE_REQUIREMENTS: &[F] = &[
    opt("limits", K::Map(&K::Quantity)),
    opt("requests", K::Map(&K::Quantity)),
    opt("claims", K::Slice(&K::Struct(RESOURCE_CLAIM))),
];
const RESIZE_POLICY: &[F] = &[val("resourceName", STR), val("restartPolicy", STR)];
const VOLUME_MOUNT: &[F] = &[
    val("name", STR),
    opt("readOnly", K::Bool),
    ptr("recursiveReadOnly", STR),
    val("mountPath", STR),
    opt("subPath", STR),
    ptr("mountPropagation", STR),
    opt("subPathExpr", STR),
];
const VOLUME_DEVICE: &[F] = &[val("name", STR), val("devicePath", STR)];
const EXEC_ACTION: &[F] = &[opt("command", STRS)];
const HTTP_HEADER: &[F] = &[val("name", STR), val("value", STR)];
const HTTP_GET_ACTION: &[F] = &[
    opt("path", STR),
    val("port", K::IntOrString),
    opt("host", STR),
    opt("scheme", STR),
    opt("httpHeaders", K::Slice(&K::Struct(HTTP_HEADER))),
];
const TCP_SOCKET_ACTION: &[F] = &[val("port", K::IntOrString), opt("host", STR)];
const GRPC_ACTION: &[F] = &[val("port", K::Int), F("service", STR, true, false)];
const PROBE_HANDLER: &[F] = &[
    ptr("exec", K::Struct(EXEC_ACTION)),
    ptr("httpGet", K::Struct(HTTP_GET_ACTION)),
    ptr("tcpSocket", K::Struct(TCP_SOCKET_ACTION)),
    ptr("grpc", K::Struct(GRPC_ACTION)),
];
const PROBE: &[F] = &[
    inline(K::Struct(PROBE_HANDLER)),
    opt("initialDelaySeconds", K::Int),
    opt("timeoutSeconds", K::Int),
    opt("periodSeconds", K::Int),
    opt("successThreshold", K::Int),
    opt("failureThreshold", K::Int),
    ptr("terminationGracePeriodSeconds", K::Int),
];
const SLEEP_ACTION: &[F] = &[val("seconds", K::Int)];
const LIFECYCLE_HANDLER: &[F] = &[
    ptr("exec", K::Struct(EXEC_ACTION)),
    ptr("httpGet", K::Struct(HTTP_GET_ACTION)),
    ptr("tcpSocket", K::Struct(TCP_SOCKET_ACTION)),
    ptr("sleep", K::Struct(SLEEP_ACTION)),
];
const LIFECYCLE: &[F] = &[
    ptr("postStart", K::Struct(LIFECYCLE_HANDLER)),
    ptr("preStop", K::Struct(LIFECYCLE_HANDLER)),
];
const CAPABILITIES: &[F] = &[opt("add", STRS), opt("drop", STRS)];
const SE_LINUX_OPTIONS: &[F] = &[
    opt("user", STR),
    opt("role", STR),
    opt("type", STR),
    opt("level", STR),
];
const WINDOWS_OPTIONS: &[F] = &[
    ptr("gmsaCredentialSpecName", STR),
    ptr("gmsaCredentialSpec", STR),
    ptr("runAsUserName", STR),
    ptr("hostProcess", K::Bool),
];
const PROFILE: &[F] = &[val("type", STR), ptr("localhostProfile", STR)];
const SECURITY_CONTEXT: &[F] = &[
    ptr("capabilities", K::Struct(CAPABILITIES)),
    ptr("privileged", K::Bool),
    ptr("seLinuxOptions", K::Struct(SE_LINUX_OPTIONS)),
    ptr("windowsOptions", K::Struct(WINDOWS_OPTIONS)),
    ptr("runAsUser", K::Int),
    ptr("runAsGroup", K::Int),
    ptr("runAsNonRoot", K::Bool),
    ptr("readOnlyRootFilesystem", K::Bool),
    ptr("allowPrivilegeEscalation", K::Bool),
    ptr("procMount", STR),
    ptr("seccompProfile", K::Struct(PROFILE)),
    ptr("appArmorProfile", K::Struct(PROFILE)),
];
/// `core/v1.Container` of k8s.io/api v0.32, in declaration order.
const CONTAINER: &[F] = &[
    val("name", STR),
    opt("image", STR),
    opt("command", STRS),
    opt("args", STRS),
    opt("workingDir", STR),
    opt("ports", K::Slice(&K::Struct(CONTAINER_PORT))),
    opt("envFrom", K::Slice(&K::Struct(ENV_FROM_SOURCE))),
    opt("env", K::Slice(&K::Struct(ENV_VAR))),
    opt("resources", K::Struct(RESOURCE_REQUIREMENTS)),
    opt("resizePolicy", K::Slice(&K::Struct(RESIZE_POLICY))),
    ptr("restartPolicy", STR),
    opt("volumeMounts", K::Slice(&K::Struct(VOLUME_MOUNT))),
    opt("volumeDevices", K::Slice(&K::Struct(VOLUME_DEVICE))),
    ptr("livenessProbe", K::Struct(PROBE)),
    ptr("readinessProbe", K::Struct(PROBE)),
    ptr("startupProbe", K::Struct(PROBE)),
    ptr("lifecycle", K::Struct(LIFECYCLE)),
    opt("terminationMessagePath", STR),
    opt("terminationMessagePolicy", STR),
    opt("imagePullPolicy", STR),
    ptr("securityContext", K::Struct(SECURITY_CONTEXT)),
    opt("stdin", K::Bool),
    opt("stdinOnce", K::Bool),
    opt("tty", K::Bool),
];
const UPGRADE_STRATEGY: &[F] = &[opt("upgradeType", STR), opt("hotUpgradeEmptyImage", STR)];
const SHARE_VOLUME_POLICY: &[F] = &[opt("type", STR)];
const SOURCE_CONTAINER_NAME_SOURCE: &[F] = &[ptr("fieldRef", K::Struct(OBJECT_FIELD_SELECTOR))];
const TRANSFER_ENV: &[F] = &[
    opt("sourceContainerName", STR),
    ptr("sourceContainerNameFrom", K::Struct(SOURCE_CONTAINER_NAME_SOURCE)),
    opt("envName", STR),
    opt("envNames", STRS),
];
const CPU_MEMORY: &[F] = &[opt("cpu", STR), opt("memory", STR)];
const RESOURCES_EXPR: &[F] = &[
    ptr("limits", K::Struct(CPU_MEMORY)),
    ptr("requests", K::Struct(CPU_MEMORY)),
];
const RESOURCES_POLICY: &[F] = &[
    val("targetContainersMode", STR),
    opt("targetContainersNameRegex", STR),
    val("resourcesExpr", K::Struct(RESOURCES_EXPR)),
];
/// OpenKruise's `SidecarContainer` (same in v1alpha1 and v1beta1).
const SIDECAR_CONTAINER: &[F] = &[
    inline(K::Struct(CONTAINER)),
    opt("podInjectPolicy", STR),
    opt("upgradeStrategy", K::Struct(UPGRADE_STRATEGY)),
    opt("shareVolumePolicy", K::Struct(SHARE_VOLUME_POLICY)),
    ptr("shareVolumeDevicePolicy", K::Struct(SHARE_VOLUME_POLICY)),
    opt("transferEnv", K::Slice(&K::Struct(TRANSFER_ENV))),
    ptr("resourcesPolicy", K::Struct(RESOURCES_POLICY)),
];

fn present(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

/// Whether a non-pointer field with `omitempty` is left out for this value.
fn omitted(k: K, v: Option<&Value>) -> bool {
    match (k, present(v)) {
        (K::Struct(_) | K::IntOrString | K::Quantity, _) => false,
        (_, None) => true,
        (K::Str, Some(v)) => v.as_str().is_none_or(str::is_empty),
        (K::Int, Some(v)) => v.as_f64().is_none_or(|n| n == 0.0),
        (K::Bool, Some(v)) => !v.as_bool().unwrap_or(false),
        (K::Slice(_), Some(v)) => v.as_array().is_none_or(Vec::is_empty),
        (K::Map(_), Some(v)) => v.as_object().is_none_or(|m| m.is_empty()),
    }
}

fn write_struct_fields(out: &mut String, fields: &[F], v: Option<&Value>, first: &mut bool) {
    for &F(name, k, is_ptr, omit) in fields {
        if name.is_empty() {
            if let K::Struct(inner) = k {
                write_struct_fields(out, inner, v, first);
            }
            continue;
        }
        let fv = v.and_then(|v| v.get(name));
        if is_ptr {
            if present(fv).is_none() {
                if omit {
                    continue;
                }
            } else if omit && matches!(k, K::Slice(_) | K::Map(_)) && omitted(k, fv) {
                continue;
            }
        } else if omit && omitted(k, fv) {
            continue;
        }
        if !*first {
            out.push(',');
        }
        *first = false;
        write_go_string(out, name);
        out.push(':');
        if is_ptr && present(fv).is_none() {
            out.push_str("null");
        } else {
            write_value(out, k, fv);
        }
    }
}

fn write_value(out: &mut String, k: K, v: Option<&Value>) {
    let v = present(v);
    match k {
        K::Str => write_go_string(out, v.and_then(Value::as_str).unwrap_or("")),
        K::Int => {
            let n = v
                .and_then(|v| v.as_i64().or_else(|| v.as_f64().map(|f| f as i64)))
                .unwrap_or(0);
            let _ = write!(out, "{n}");
        }
        K::Bool => out.push_str(if v.and_then(Value::as_bool).unwrap_or(false) {
            "true"
        } else {
            "false"
        }),
        K::Struct(fields) => {
            out.push('{');
            let mut first = true;
            write_struct_fields(out, fields, v, &mut first);
            out.push('}');
        }
        K::Slice(inner) => match v.and_then(Value::as_array) {
            None => out.push_str("null"),
            Some(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_value(out, *inner, Some(item));
                }
                out.push(']');
            }
        },
        K::Map(inner) => match v.and_then(Value::as_object) {
            None => out.push_str("null"),
            Some(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, key) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_go_string(out, key);
                    out.push(':');
                    write_value(out, *inner, map.get(key));
                }
                out.push('}');
            }
        },
        K::IntOrString => match v {
            Some(Value::String(s)) => write_go_string(out, s),
            Some(n) => {
                let _ = write!(out, "{}", n.as_i64().unwrap_or(0));
            }
            None => out.push('0'),
        },
        K::Quantity => {
            let text = match v {
                Some(Value::String(s)) => defaulted_quantity(s),
                Some(n @ Value::Number(_)) => defaulted_quantity(&n.to_string()),
                _ => "0".to_string(),
            };
            write_go_string(out, &text);
        }
    }
}

/// A quantity of a defaulted `ResourceList` as `MarshalJSON` writes it: parsed as `UnmarshalJSON` does
/// (surrounding spaces ignored), rounded up to milli precision (`SetDefaults_ResourceList`). Text that is
/// no quantity is written unchanged.
fn defaulted_quantity(s: &str) -> String {
    match Quantity::parse(s.trim()) {
        Ok(mut q) => {
            q.round_up(-3);
            q.to_go_string()
        }
        Err(_) => s.to_string(),
    }
}

/// A string as Go's `encoding/json` writes it (HTML-safe escaping).
fn write_go_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The Go encoding OpenKruise hashes: `{"containers":[...]}` plus `"initContainers"` (all of them) when any
/// init container is a native sidecar (`restartPolicy: Always`). With `blank_images`, every `image` is
/// emptied first (the "without image" hash).
pub fn encode_sidecarset(spec: &Value, blank_images: bool) -> String {
    let blank = |list: Option<&Value>| -> Option<Value> {
        let mut list = present(list)?.clone();
        if blank_images && let Some(items) = list.as_array_mut() {
            for item in items {
                if let Some(obj) = item.as_object_mut() {
                    obj.remove("image");
                }
            }
        }
        Some(list)
    };
    let containers = blank(spec.get("containers"));
    let init = blank(spec.get("initContainers"));
    let native_sidecar = init.as_ref().and_then(Value::as_array).is_some_and(|items| {
        items
            .iter()
            .any(|c| c.get("restartPolicy").and_then(Value::as_str) == Some("Always"))
    });
    let list = K::Slice(&K::Struct(SIDECAR_CONTAINER));
    let mut out = String::from("{\"containers\":");
    write_value(&mut out, list, containers.as_ref());
    if native_sidecar {
        out.push_str(",\"initContainers\":");
        write_value(&mut out, list, init.as_ref());
    }
    out.push('}');
    out
}

/// `rand.SafeEncodeString(hex(sha256(data)))`.
pub fn safe_hash(data: &str) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let digest = sha256(data.as_bytes());
    let mut hex = String::with_capacity(64);
    for b in digest {
        let _ = write!(hex, "{b:02x}");
    }
    hex.bytes()
        .map(|b| ALPHANUMS[b as usize % ALPHANUMS.len()] as char)
        .collect()
}

/// The two SidecarSet hashes (`kruise.io/sidecarset-hash`, `kruise.io/sidecarset-hash-without-image`) of a
/// (defaulted) spec.
pub fn sidecarset_hashes(spec: &Value) -> (String, String) {
    (
        safe_hash(&encode_sidecarset(spec, false)),
        safe_hash(&encode_sidecarset(spec, true)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// OpenKruise's `pkg/control/sidecarcontrol/hash_test.go` vectors (no defaults applied).
    #[test]
    fn openkruise_hash_test_vectors() {
        let c = json!({"name": "container1", "image": "test-image"});
        let spec = json!({"containers": [c]});
        assert_eq!(
            sidecarset_hashes(&spec).0,
            "w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78"
        );
        let spec = json!({"containers": [c], "initContainers": [c]});
        assert_eq!(
            sidecarset_hashes(&spec).0,
            "w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78",
            "plain init containers are not hashed"
        );
        assert_eq!(
            sidecarset_hashes(&spec).1,
            "8wzddb4dvv9c6x8zdc77z4z75987424f457dfv6724ddw6zbdx467wz5x24fc759"
        );
        let init = json!({"name": "container1", "image": "test-image", "restartPolicy": "Always"});
        let spec = json!({"containers": [c], "initContainers": [init]});
        assert_eq!(
            sidecarset_hashes(&spec),
            (
                "4xwx4d4844vd4v9x79wb4xbxf4xb29475cc4446v8cz2c2f2f5c5bw448vd42z8w".to_string(),
                "5725fw8bwbx249bw57v5892c847dzf48bww9zb7c86xb95264fdz26654847b2c8".to_string()
            )
        );
    }

    #[test]
    fn go_encoding_details() {
        let spec = json!({"containers": [{"name": "a<b", "image": "x", "unknown": 1,
            "resources": {"limits": {"memory": "1024Mi", "cpu": "0.5"}},
            "ports": [{"containerPort": 80}], "stdin": false}]});
        assert_eq!(
            encode_sidecarset(&spec, false),
            "{\"containers\":[{\"name\":\"a\\u003cb\",\"image\":\"x\",\"ports\":[{\"containerPort\":80}],\"resources\":{\"limits\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"}},\"upgradeStrategy\":{},\"shareVolumePolicy\":{}}]}"
        );
        assert_eq!(encode_sidecarset(&json!({}), false), "{\"containers\":null}");
    }
}
