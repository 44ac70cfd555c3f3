//! Object metadata helpers: timestamps, generated names and uids, accessors on JSON objects.

use ring::rand::{SecureRandom, SystemRandom};
use serde_json::{Value, json};
use time::{OffsetDateTime, format_description::BorrowedFormatItem, macros::format_description};

const RFC3339_SECONDS: &[BorrowedFormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");

/// `metav1.Time` of an instant: RFC 3339, whole seconds, UTC.
pub fn timestamp(t: OffsetDateTime) -> String {
    t.to_offset(time::UtcOffset::UTC)
        .format(RFC3339_SECONDS)
        .unwrap_or_default()
}

/// `metav1.Time` now.
pub fn now() -> String {
    timestamp(OffsetDateTime::now_utc())
}

/// Parses a `metav1.Time`.
pub fn parse_time(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    // SystemRandom only fails when the OS has no entropy source; fall back to the clock.
    if SystemRandom::new().fill(&mut buf).is_err() {
        let nanos = OffsetDateTime::now_utc().unix_timestamp_nanos().to_le_bytes();
        for (i, b) in buf.iter_mut().enumerate() {
            *b = nanos[i % nanos.len()].wrapping_add(i as u8);
        }
    }
    buf
}

/// The alphabet of `k8s.io/apimachinery/pkg/util/rand.String` (no vowels, no confusable digits).
const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// `generateName` + 5 random characters, as the apiserver's names.SimpleNameGenerator does.
pub fn generate_name(prefix: &str) -> String {
    let prefix = if prefix.len() > 58 { &prefix[..58] } else { prefix };
    let suffix: String = random_bytes::<5>()
        .iter()
        .map(|b| ALPHANUMS[*b as usize % ALPHANUMS.len()] as char)
        .collect();
    format!("{prefix}{suffix}")
}

/// A random (version 4) UUID.
pub fn uid() -> String {
    let mut b = random_bytes::<16>();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// `metadata.name`, or "".
pub fn name(obj: &Value) -> &str {
    obj["metadata"]["name"].as_str().unwrap_or_default()
}

/// `metadata.namespace`, or "".
pub fn namespace(obj: &Value) -> &str {
    obj["metadata"]["namespace"].as_str().unwrap_or_default()
}

/// `metadata.uid`, or "".
pub fn uid_of(obj: &Value) -> &str {
    obj["metadata"]["uid"].as_str().unwrap_or_default()
}

/// `metadata.resourceVersion`, or "".
pub fn resource_version(obj: &Value) -> &str {
    obj["metadata"]["resourceVersion"].as_str().unwrap_or_default()
}

/// `metadata.finalizers`.
pub fn finalizers(obj: &Value) -> Vec<String> {
    obj["metadata"]["finalizers"]
        .as_array()
        .map(|a| a.iter().filter_map(|f| f.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

/// Sets `metadata.finalizers` (removing the field when empty).
pub fn set_finalizers(obj: &mut Value, list: &[String]) {
    let meta = metadata_mut(obj);
    if list.is_empty() {
        meta.remove("finalizers");
    } else {
        meta.insert("finalizers".into(), json!(list));
    }
}

/// Whether `metadata.deletionTimestamp` is set.
pub fn is_deleting(obj: &Value) -> bool {
    obj["metadata"]["deletionTimestamp"].is_string()
}

/// `metadata` as a mutable map, created when missing.
pub fn metadata_mut(obj: &mut Value) -> &mut serde_json::Map<String, Value> {
    if !obj["metadata"].is_object() {
        obj["metadata"] = json!({});
    }
    obj["metadata"].as_object_mut().expect("metadata is an object")
}

/// `metadata.labels` as string pairs.
pub fn labels(obj: &Value) -> Vec<(String, String)> {
    obj["metadata"]["labels"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// Reads a simple JSON path (`.spec.replicas`, `.status.conditions[0].type` is not supported).
pub fn get_path<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = obj;
    for seg in segments(path) {
        cur = cur.get(&seg)?;
    }
    Some(cur)
}

/// The keys of a simple JSON path, `\.` standing for a dot inside a key (as in CRD printer columns
/// such as `.metadata.labels.crr\.apps\.kruise\.io/node-name`).
fn segments(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = path.trim_start_matches('.').chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => current.extend(chars.next()),
            '.' => out.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    out.push(current);
    out.retain(|s| !s.is_empty());
    out
}

/// Writes a simple JSON path, creating objects on the way.
pub fn set_path(obj: &mut Value, path: &str, value: Value) {
    let segs = segments(path);
    let mut cur = obj;
    for seg in &segs {
        if !cur.is_object() {
            *cur = json!({});
        }
        cur = cur
            .as_object_mut()
            .expect("just made an object")
            .entry(seg.clone())
            .or_insert(Value::Null);
    }
    *cur = value;
}

/// Everything but `metadata` and `status`: what a `generation` bump tracks.
pub fn spec_part(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
        m.remove("status");
        m.remove("kind");
        m.remove("apiVersion");
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_escape_dots_inside_keys() {
        let mut o = json!({"metadata": {"labels": {"crr.apps.kruise.io/node-name": "n1", "a": "b"}}});
        assert_eq!(
            get_path(&o, r".metadata.labels.crr\.apps\.kruise\.io/node-name"),
            Some(&json!("n1"))
        );
        assert_eq!(get_path(&o, ".metadata.labels.a"), Some(&json!("b")));
        assert_eq!(get_path(&o, ".metadata.labels.crr.apps"), None);
        set_path(&mut o, r".metadata.annotations.x\.io/y", json!("z"));
        assert_eq!(o["metadata"]["annotations"]["x.io/y"], "z");
    }

    #[test]
    fn generated_names_use_the_apimachinery_alphabet() {
        let n = generate_name("web-");
        assert_eq!(n.len(), 9);
        assert!(n[4..].bytes().all(|b| ALPHANUMS.contains(&b)), "{n}");
    }

    #[test]
    fn uids_are_v4() {
        let u = uid();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
    }

    #[test]
    fn timestamps_are_whole_seconds_utc() {
        let t = time::macros::datetime!(2024-01-02 03:04:05.678 UTC);
        assert_eq!(timestamp(t), "2024-01-02T03:04:05Z");
        assert_eq!(
            parse_time("2024-01-02T03:04:05Z").map(|t| t.unix_timestamp()),
            Some(1704164645)
        );
    }
}
