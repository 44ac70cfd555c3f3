//! How Kubernetes' controller history encodes, hashes and names a ControllerRevision, byte for byte
//! (`HashControllerRevision`, `rand.SafeEncodeString`, Go's `json.Marshal`), so revision names match the
//! ones OpenKruise would choose.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use serde_json::{Value, json};

/// The alphabet of Kubernetes' `rand.SafeEncodeString` (and of instance ids).
pub const SAFE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// FNV-1 (not 1a), 32 bit, as Go's `hash/fnv.New32`.
pub fn fnv1_32(bytes: impl IntoIterator<Item = u8>, mut hash: u32) -> u32 {
    for b in bytes {
        hash = hash.wrapping_mul(0x0100_0193) ^ u32::from(b);
    }
    hash
}

/// FNV offset basis.
pub const FNV_OFFSET: u32 = 0x811c_9dc5;

/// Kubernetes' `rand.SafeEncodeString`: each byte mapped into [`SAFE_ALPHABET`].
pub fn safe_encode(s: &str) -> String {
    s.bytes()
        .map(|b| SAFE_ALPHABET[usize::from(b) % SAFE_ALPHABET.len()] as char)
        .collect()
}

/// Kubernetes' `HashControllerRevision` over raw data bytes.
pub fn hash_revision_data(data: &[u8], collision_count: Option<i32>) -> String {
    let mut h = fnv1_32(data.iter().copied(), FNV_OFFSET);
    if let Some(c) = collision_count {
        h = fnv1_32(c.to_string().bytes(), h);
    }
    safe_encode(&h.to_string())
}

/// The revision name `<prefix>-<hash>`, the prefix cut to 223 bytes.
pub fn revision_name(owner: &str, hash: &str) -> String {
    let mut prefix = owner;
    if prefix.len() > 223 {
        let mut end = 223;
        while !prefix.is_char_boundary(end) {
            end -= 1;
        }
        prefix = &prefix[..end];
    }
    format!("{prefix}-{hash}")
}

/// The template as Go encodes it: `metadata.creationTimestamp: null` and `resources: {}` on every
/// container are always present in Go's output, so they are added for the hash to match.
pub fn go_shaped_template(template: &PodTemplateSpec) -> Value {
    let mut t = serde_json::to_value(template).unwrap_or_else(|_| json!({}));
    let Some(obj) = t.as_object_mut() else { return t };
    let meta = obj.entry("metadata").or_insert_with(|| json!({}));
    if let Some(meta) = meta.as_object_mut() {
        meta.entry("creationTimestamp").or_insert(Value::Null);
    }
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        spec.entry("containers").or_insert_with(|| json!([]));
        for key in ["containers", "initContainers", "ephemeralContainers"] {
            for c in spec
                .get_mut(key)
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                if let Some(c) = c.as_object_mut() {
                    c.entry("resources").or_insert_with(|| json!({}));
                }
            }
        }
    }
    t
}

/// JSON bytes as Go's `json.Marshal` writes them for a decoded map: keys sorted, `<`, `>`, `&`,
/// U+2028 and U+2029 escaped.
pub fn go_json_bytes(value: &Value) -> Vec<u8> {
    let mut out = String::new();
    write_go_json(value, &mut out);
    out.into_bytes()
}

fn write_go_json(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_string(k, out);
                out.push(':');
                write_go_json(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(item, out);
            }
            out.push(']');
        }
        Value::String(s) => write_go_string(s, out),
        other => out.push_str(&other.to_string()),
    }
}

fn write_go_string(s: &str, out: &mut String) {
    let quoted = Value::String(s.to_owned()).to_string();
    for c in quoted.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1_and_safe_encoding_match_go() {
        assert_eq!(fnv1_32(*b"", FNV_OFFSET), 0x811c_9dc5);
        assert_eq!(fnv1_32(*b"a", FNV_OFFSET), 0x050c_5d7e);
        assert_eq!(fnv1_32(*b"foobar", FNV_OFFSET), 0x31f0_b262);
        assert_eq!(safe_encode("0159"), "459f");
    }

    #[test]
    fn go_json_sorts_keys_and_escapes_html() {
        let v = json!({"b": 1, "a": {"z": "<&>", "y": [true, null]}});
        assert_eq!(
            String::from_utf8(go_json_bytes(&v)).unwrap(),
            r#"{"a":{"y":[true,null],"z":"\u003c\u0026\u003e"},"b":1}"#
        );
    }

    #[test]
    fn long_names_are_cut_to_223_bytes_before_the_hash() {
        let name = revision_name(&"x".repeat(300), "abc");
        assert_eq!(name.len(), 223 + 4);
    }
}
