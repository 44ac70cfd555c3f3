//! How Kubernetes' controller history encodes, hashes and names a ControllerRevision, byte for byte
//! (`HashControllerRevision`, `rand.SafeEncodeString`, Go's `json.Marshal`), so revision names match the
//! ones OpenKruise would choose.

use k8s_openapi::api::apps::v1::ControllerRevision;
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
    kruise_core::go::json_string(s, out);
}

/// The revision data of a workload whose revisions hold its pod template: the template with the
/// `"$patch":"replace"` marker, under `spec.template`.
pub fn template_data(template: &PodTemplateSpec) -> Value {
    let mut template = go_shaped_template(template);
    if let Some(obj) = template.as_object_mut() {
        obj.insert("$patch".into(), json!("replace"));
    }
    json!({"spec": {"template": template}})
}

/// How the update revision was found by [`choose_update`].
#[derive(Debug, Clone, PartialEq)]
pub enum Chosen {
    /// The newest revision already holds the data.
    Existing(ControllerRevision),
    /// An older revision holds the data (a rollback): it gets the next `.revision` number.
    Bumped(ControllerRevision),
    /// A new revision, to be created.
    Created(ControllerRevision),
}

/// Kubernetes' controller-history choice of the update revision: reuse the newest revision equal to
/// `data`, bump an older equal one, or build a new one with `build(number, collision_count)`, stepping
/// `collision_count` while the built name clashes with an existing revision. Returns the choice and the
/// collision count after it.
pub fn choose_update(
    revisions: &[ControllerRevision],
    data: &Value,
    mut collision_count: Option<i32>,
    build: &dyn Fn(i64, Option<i32>) -> ControllerRevision,
) -> (Chosen, Option<i32>) {
    let mut sorted: Vec<&ControllerRevision> = revisions.iter().collect();
    sorted.sort_by_key(|r| r.revision.unwrap_or(0));
    let next = sorted.last().map_or(0, |r| r.revision.unwrap_or(0)) + 1;
    let newest = sorted.last().map(|l| l.metadata.name.as_deref());
    let chosen = match sorted.iter().rev().find(|r| &r.data.0 == data) {
        Some(r) if Some(r.metadata.name.as_deref()) == newest => Chosen::Existing((*r).clone()),
        Some(r) => {
            let mut bumped = (*r).clone();
            bumped.revision = Some(next);
            Chosen::Bumped(bumped)
        }
        None => loop {
            let candidate = build(next, collision_count);
            if !sorted.iter().any(|r| r.metadata.name == candidate.metadata.name) {
                break Chosen::Created(candidate);
            }
            collision_count = Some(collision_count.unwrap_or(0).saturating_add(1));
        },
    };
    (chosen, collision_count)
}

/// History truncation: the names of the oldest revisions that are neither `current`, `update` nor
/// `in_use`, beyond `limit` such revisions.
pub fn truncate(
    revisions: &[ControllerRevision],
    current: &str,
    update: &str,
    in_use: &dyn Fn(&str) -> bool,
    limit: usize,
) -> Vec<String> {
    let mut sorted: Vec<&ControllerRevision> = revisions.iter().collect();
    sorted.sort_by_key(|r| r.revision.unwrap_or(0));
    let dead: Vec<String> = sorted
        .iter()
        .filter_map(|r| r.metadata.name.clone())
        .filter(|n| n != current && n != update && !in_use(n))
        .collect();
    let excess = dead.len().saturating_sub(limit);
    dead.into_iter().take(excess).collect()
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
