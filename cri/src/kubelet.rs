//! What kubelet writes on the sandboxes and containers it creates, which is how a node agent finds a
//! pod's containers in the runtime (docs/node-agent.md): the label and annotation names, and the
//! container hash kubelet compares to decide that a container must be recreated.

/// Label (sandboxes and containers): the pod's name.
pub const POD_NAME: &str = "io.kubernetes.pod.name";
/// Label (sandboxes and containers): the pod's namespace.
pub const POD_NAMESPACE: &str = "io.kubernetes.pod.namespace";
/// Label (sandboxes and containers): the pod's uid.
pub const POD_UID: &str = "io.kubernetes.pod.uid";
/// Label (containers): the container's name in the pod spec.
pub const CONTAINER_NAME: &str = "io.kubernetes.container.name";
/// Annotation (containers): [`container_hash`] in lower-case hex.
pub const CONTAINER_HASH: &str = "io.kubernetes.container.hash";
/// Annotation (containers): how many times this container of the pod was restarted before this one.
pub const CONTAINER_RESTART_COUNT: &str = "io.kubernetes.container.restartCount";
/// Annotation (containers): the pod's `terminationGracePeriodSeconds`.
pub const POD_TERMINATION_GRACE_PERIOD: &str = "io.kubernetes.pod.terminationGracePeriod";
/// Annotation (containers): the pod's `deletionGracePeriodSeconds`, when it is being deleted.
pub const POD_DELETION_GRACE_PERIOD: &str = "io.kubernetes.pod.deletionGracePeriod";
/// Annotation (containers): the container's `lifecycle.preStop` handler as JSON, when it has one.
pub const CONTAINER_PRE_STOP_HANDLER: &str = "io.kubernetes.container.preStopHandler";
/// Annotation (containers): the container's `ports` as JSON, when it has some.
pub const CONTAINER_PORTS: &str = "io.kubernetes.container.ports";
/// Annotation (containers): the container's `terminationMessagePath`.
pub const CONTAINER_TERMINATION_MESSAGE_PATH: &str = "io.kubernetes.container.terminationMessagePath";

const FNV_OFFSET: u32 = 0x811c_9dc5;
const FNV_PRIME: u32 = 0x0100_0193;

/// FNV-1a, 32 bit (Go's `hash/fnv.New32a`).
fn fnv1a_32(bytes: impl IntoIterator<Item = u8>, mut hash: u32) -> u32 {
    for b in bytes {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

/// Kubernetes' `DeepHashObject` of a JSON document: FNV-1a-32 over the text `([]uint8)[b0 b1 …]`
/// (the decimal bytes, space-separated), which is how that function prints a byte slice.
pub fn deep_hash_json(json: &[u8]) -> u32 {
    let mut hash = fnv1a_32(*b"([]uint8)[", FNV_OFFSET);
    for (i, b) in json.iter().enumerate() {
        if i > 0 {
            hash = fnv1a_32(*b" ", hash);
        }
        hash = fnv1a_32(b.to_string().bytes(), hash);
    }
    fnv1a_32(*b"]", hash)
}

/// The hash kubelet (1.31 and later) gives a container: [`deep_hash_json`] of
/// `{"image":…,"name":…}`. It changes exactly when the container's name or image changes, and a
/// change makes kubelet stop the container and create it again.
pub fn container_hash(name: &str, image: &str) -> u64 {
    let mut fields = std::collections::BTreeMap::new();
    fields.insert("image", image);
    fields.insert("name", name);
    // A map of strings always serialises.
    let json = serde_json_text(&fields);
    u64::from(deep_hash_json(json.as_bytes()))
}

/// `{"k":"v",…}` with JSON string escaping, keys in order (what Go's `json.Marshal` of a
/// `map[string]string` writes, HTML characters escaped as Go does).
fn serde_json_text(fields: &std::collections::BTreeMap<&str, &str>) -> String {
    let mut out = String::from("{");
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        quote(k, &mut out);
        out.push(':');
        quote(v, &mut out);
    }
    out.push('}');
    out
}

fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// [`container_hash`] as the annotation carries it.
pub fn container_hash_hex(name: &str, image: &str) -> String {
    format!("{:x}", container_hash(name, image))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_hash_matches_the_worked_values() {
        // Values worked out for the env hash of the node-agent contract (docs/node-agent.md).
        assert_eq!(deep_hash_json(b"null"), 86_995_377);
        assert_eq!(deep_hash_json(br#"[{"name":"FOO","value":"bar"}]"#), 366_487_640);
        assert_eq!(deep_hash_json(br#"[{"name":"FOO"}]"#), 791_028_036);
    }

    #[test]
    fn the_container_hash_follows_name_and_image_only() {
        let v1 = container_hash("app", "127.0.0.1:5000/demo:v1");
        assert_eq!(v1, container_hash("app", "127.0.0.1:5000/demo:v1"));
        assert_ne!(v1, container_hash("app", "127.0.0.1:5000/demo:v2"));
        assert_ne!(v1, container_hash("web", "127.0.0.1:5000/demo:v1"));
        assert_eq!(
            serde_json_text(&[("image", "a<b"), ("name", "x\"y")].into_iter().collect()),
            r#"{"image":"a\u003cb","name":"x\"y"}"#
        );
        assert_eq!(
            container_hash_hex("app", "img"),
            format!("{:x}", container_hash("app", "img"))
        );
    }
}
