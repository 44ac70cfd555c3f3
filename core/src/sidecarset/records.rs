//! The per-SidecarSet records of a pod's `kruise.io/sidecarset-hash` and
//! `kruise.io/sidecarset-hash-without-image` annotations, read and written as OpenKruise does, and Go's
//! JSON escaping for what goes into annotations.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

/// Go's json.Marshal HTML-escapes; these characters only occur inside strings, so a textual replacement of
/// serde's output is exact.
pub fn go_escape(s: String) -> String {
    // A byte scan (U+2028 and U+2029 both begin with the byte 0xE2 in UTF-8) rules out most strings.
    if !s.bytes().any(|b| matches!(b, b'<' | b'>' | b'&' | 0xE2)) {
        return s;
    }
    s.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// One SidecarSet's record in `kruise.io/sidecarset-hash(-without-image)`, fields in OpenKruise's order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpgradeSpec {
    /// RFC 3339; `null` for records converted from the legacy `name → hash` form.
    #[serde(rename = "updateTimestamp", default)]
    pub update_timestamp: Option<String>,
    #[serde(rename = "hash", default, deserialize_with = "null_as_default")]
    pub hash: String,
    #[serde(rename = "sidecarSetName", default, deserialize_with = "null_as_default")]
    pub sidecar_set_name: String,
    #[serde(rename = "sidecarList", default)]
    pub sidecar_list: Option<Vec<String>>,
    #[serde(
        rename = "controllerRevision",
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub controller_revision: String,
}

/// A pod's hash records by SidecarSet name: `{name: UpgradeSpec}`, or the legacy `{name: hash}` converted.
pub fn read_records(value: Option<&str>) -> Result<BTreeMap<String, UpgradeSpec>, String> {
    let Some(value) = value.filter(|v| !v.is_empty()) else {
        return Ok(BTreeMap::new());
    };
    match serde_json::from_str::<Option<BTreeMap<String, UpgradeSpec>>>(value) {
        Ok(map) => Ok(map.unwrap_or_default()),
        Err(_) => match serde_json::from_str::<Option<BTreeMap<String, String>>>(value) {
            Ok(legacy) => Ok(legacy
                .unwrap_or_default()
                .into_iter()
                .map(|(name, hash)| {
                    let spec = UpgradeSpec {
                        hash,
                        sidecar_set_name: name.clone(),
                        ..UpgradeSpec::default()
                    };
                    (name, spec)
                })
                .collect()),
            Err(e) => Err(e.to_string()),
        },
    }
}

/// Compact JSON of a record map (sorted by SidecarSet name), as injection and the controller write it.
pub fn write_records(map: &BTreeMap<String, UpgradeSpec>) -> String {
    go_escape(serde_json::to_string(map).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upgrade_specs_in_both_shapes() {
        let legacy = read_records(Some(r#"{"s":"h1"}"#)).unwrap();
        assert_eq!(
            write_records(&legacy),
            r#"{"s":{"updateTimestamp":null,"hash":"h1","sidecarSetName":"s","sidecarList":null}}"#
        );
        let full = r#"{"s":{"updateTimestamp":"2025-01-02T03:04:05Z","hash":"h","sidecarSetName":"s","sidecarList":["a"],"controllerRevision":"s-1"}}"#;
        assert_eq!(write_records(&read_records(Some(full)).unwrap()), full);
        assert!(read_records(Some("[1]")).is_err());
        assert!(read_records(Some("")).unwrap().is_empty());
    }
}
