//! Go's JSON text conventions for what injection writes into annotations, and the SidecarSet hashes.
//!
//! The hashes OpenKruise stamps on a SidecarSet at admission (`kruise.io/sidecarset-hash`,
//! `kruise.io/sidecarset-hash-without-image`) are copied from the SidecarSet when present (the normal case:
//! OpenKruise's, or our, SidecarSet webhook wrote them). When absent they are computed once per SidecarSet,
//! when the index is built, with the same Go encoding the SidecarSet webhook uses
//! ([`crate::crd::gojson::sidecarset_hashes`]), over the spec as stored (not defaulted again).

use std::collections::BTreeMap;

use kruise_api::apps_v1beta1::SidecarSetSpec;
use kruise_core::names::{SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION};
use serde_json::Value;

/// `(hash, hash without image)` of a SidecarSet spec, as OpenKruise computes them.
pub(crate) fn sidecar_set_hashes(spec: &SidecarSetSpec) -> (String, String) {
    let spec = serde_json::to_value(spec).unwrap_or(Value::Null);
    crate::crd::gojson::sidecarset_hashes(&spec)
}

/// `(hash, hash without image)` of a SidecarSet (or of a revision of one): the values stamped in
/// `annotations` where present and not empty, each missing one computed from `spec`.
pub fn stamped_or_computed_hashes(
    annotations: Option<&BTreeMap<String, String>>,
    spec: &SidecarSetSpec,
) -> (String, String) {
    let stamped = |key: &str| {
        annotations
            .and_then(|a| a.get(key))
            .filter(|v| !v.is_empty())
            .cloned()
    };
    match (
        stamped(SIDECARSET_HASH_ANNOTATION),
        stamped(SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION),
    ) {
        (Some(hash), Some(without_image)) => (hash, without_image),
        (hash, without_image) => {
            let (computed, computed_without_image) = sidecar_set_hashes(spec);
            (
                hash.unwrap_or(computed),
                without_image.unwrap_or(computed_without_image),
            )
        }
    }
}

/// Go's json.Marshal HTML-escapes; these characters only occur inside strings, so a textual replacement of
/// serde's output is exact.
pub(crate) fn go_escape(s: String) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(v: Value) -> SidecarSetSpec {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn stamped_hashes_win_and_a_missing_or_empty_one_is_computed() {
        let s = spec(json!({"containers": [{"name": "c", "image": "i"}]}));
        let (hash, without_image) = sidecar_set_hashes(&s);
        let stamped = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let both = stamped(&[
            (SIDECARSET_HASH_ANNOTATION, "h"),
            (SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION, "w"),
        ]);
        assert_eq!(
            stamped_or_computed_hashes(Some(&both), &s),
            ("h".into(), "w".into())
        );
        let one = stamped(&[
            (SIDECARSET_HASH_ANNOTATION, "h"),
            (SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION, ""),
        ]);
        assert_eq!(
            stamped_or_computed_hashes(Some(&one), &s),
            ("h".into(), without_image.clone())
        );
        assert_eq!(stamped_or_computed_hashes(None, &s), (hash, without_image));
    }

    #[test]
    fn go_escape_escapes_what_go_html_escapes_and_nothing_else() {
        // '€' also begins with the byte 0xE2 and stays as it is.
        let s = "<a href=\"x&y\">\u{2028}\u{2029} caf\u{e9} 5\u{20ac}</a>";
        assert_eq!(
            go_escape(s.to_string()),
            "\\u003ca href=\"x\\u0026y\"\\u003e\\u2028\\u2029 caf\u{e9} 5\u{20ac}\\u003c/a\\u003e"
        );
        assert_eq!(go_escape("plain €".to_string()), "plain €");
    }

    // Expected values from OpenKruise's pkg/control/sidecarcontrol/hash_test.go.
    #[test]
    fn matches_openkruise_test_vectors() {
        let c = json!([{"name": "container1", "image": "test-image"}]);
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
        let text = serde_json::to_string(&json!({"a": "<&>"})).unwrap();
        assert_eq!(go_escape(text), r#"{"a":"\u003c\u0026\u003e"}"#);
    }
}
