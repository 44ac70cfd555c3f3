//! The SidecarSet rules shared by injection (`kruise-webhooks`) and the SidecarSet controller
//! (`kruise-reconcile`): the SidecarSet hashes ([`gojson`], [`stamped_or_computed_hashes`]), the
//! per-SidecarSet pod records of `kruise.io/sidecarset-hash(-without-image)` ([`records`]), the
//! `patchPodMetadata` rules ([`metadata`]) and the `sidecarList` a record carries ([`sidecar_list`]).

pub mod gojson;
pub mod metadata;
pub mod records;

use std::collections::BTreeMap;

use kruise_api::apps_v1beta1::SidecarSetSpec;
use serde_json::Value;

use crate::names::{SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION};

pub use metadata::{MetadataPatch, MetadataPolicy, merge_patch, metadata_patches, patch_pod_metadata};
pub use records::{UpgradeSpec, go_escape, read_records, write_records};

/// The pod annotation recording which container of each hot-upgrade pair is working
/// (`{"sidecar": "sidecar-1"}`).
pub const SIDECARSET_WORKING_HOTUPGRADE_CONTAINER: &str = "kruise.io/sidecarset-working-hotupgrade-container";

/// `version.sidecarset.kruise.io/<container>`: a hot-upgrade twin's version (`"0"` while it runs the
/// empty image), read by the twin through env `SIDECARSET_VERSION`.
pub fn version_annotation(container: &str) -> String {
    format!("version.sidecarset.kruise.io/{container}")
}

/// `versionalt.sidecarset.kruise.io/<container>`: the other twin's version, read through env
/// `SIDECARSET_VERSION_ALT`.
pub fn version_alt_annotation(container: &str) -> String {
    format!("versionalt.sidecarset.kruise.io/{container}")
}

/// `(hash, hash without image)` of a SidecarSet spec, as OpenKruise computes them.
pub fn sidecar_set_hashes(spec: &SidecarSetSpec) -> (String, String) {
    let spec = serde_json::to_value(spec).unwrap_or(Value::Null);
    gojson::sidecarset_hashes(&spec)
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

/// A SidecarSet's `sidecarList`: its container names and native init container names
/// (`restartPolicy: Always`), sorted, de-duplicated.
pub fn sidecar_list(spec: &SidecarSetSpec) -> Vec<String> {
    let mut list: Vec<String> = spec
        .init_containers
        .iter()
        .flatten()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"))
        .chain(spec.containers.iter().flatten())
        .map(|c| c.name.clone())
        .collect();
    list.sort();
    list.dedup();
    list
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::{SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION};
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
