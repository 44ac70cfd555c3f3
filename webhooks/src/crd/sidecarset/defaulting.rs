//! OpenKruise's SidecarSet defaults and the two hash annotations (`msidecarset.kb.io`).

use serde_json::{Value, json};

use crate::crd::defaults::{Mutator, PullDefault, default_container, default_volumes, path};
use kruise_core::names::{SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION};

fn p(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

/// Applies OpenKruise's SidecarSet defaults and hashes to `m` (either version: the fields are the same).
pub fn apply_defaults(m: &mut Mutator) {
    let us = p(&["spec", "updateStrategy"]);
    m.set_default_zero(&path(&us, &["type"]), json!("RollingUpdate"));
    m.set_default(&path(&us, &["maxUnavailable"]), json!(1));
    m.set_default(&path(&us, &["partition"]), json!(0));
    for (list, inject) in [
        ("initContainers", "AfterAppContainer"),
        ("containers", "BeforeAppContainer"),
    ] {
        for i in 0..m.len(&p(&["spec", list])) {
            let c = p(&["spec", list, &i.to_string()]);
            m.set_default_zero(&path(&c, &["podInjectPolicy"]), json!(inject));
            m.set_default_zero(
                &path(&c, &["upgradeStrategy", "upgradeType"]),
                json!("ColdUpgrade"),
            );
            m.set_default_zero(&path(&c, &["shareVolumePolicy", "type"]), json!("disabled"));
            default_container(m, &c, PullDefault::FromTag, false);
            for j in 0..m.len(&path(&c, &["transferEnv"])) {
                let t = path(&c, &["transferEnv", &j.to_string(), "sourceContainerNameFrom"]);
                if m.has(&path(&t, &["fieldRef"])) {
                    m.set_default_zero(&path(&t, &["fieldRef", "apiVersion"]), json!("v1"));
                }
            }
        }
    }
    default_volumes(m, &p(&["spec", "volumes"]));
    m.set_default(&p(&["spec", "revisionHistoryLimit"]), json!(10));
    for i in 0..m.len(&p(&["spec", "patchPodMetadata"])) {
        m.set_default_zero(
            &p(&["spec", "patchPodMetadata", &i.to_string(), "patchPolicy"]),
            json!("Retain"),
        );
    }
    if m.has(&p(&["spec", "injectionStrategy", "revision"])) {
        m.set_default_zero(
            &p(&["spec", "injectionStrategy", "revision", "policy"]),
            json!("Always"),
        );
    }
    let null = Value::Null;
    let (hash, without_image) =
        kruise_core::sidecarset::gojson::sidecarset_hashes(m.doc.get("spec").unwrap_or(&null));
    m.set_map_entry(&["metadata", "annotations"], SIDECARSET_HASH_ANNOTATION, &hash);
    m.set_map_entry(
        &["metadata", "annotations"],
        SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION,
        &without_image,
    );
}

/// A volume with the core/v1 volume defaults applied.
pub(super) fn defaulted_volume(volume: &Value) -> Value {
    let mut m = Mutator::new(json!([volume]));
    default_volumes(&mut m, &[]);
    m.doc.as_array_mut().and_then(|a| a.pop()).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openkruise_mutating_test_vector() {
        // pkg/webhook/sidecarset/mutating/sidecarset_mutating_test.go
        let mut m = Mutator::new(
            json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
            "metadata": {"name": "sidecarset-test", "resourceVersion": "123"},
            "spec": {"containers": [{"name": "dns-f", "image": "dns:1.0"}],
                "patchPodMetadata": [{"annotations": {"key1": "value1"}}],
                "injectionStrategy": {"revision": {"customVersion": "1"}}}}),
        );
        apply_defaults(&mut m);
        let a = &m.doc["metadata"]["annotations"];
        assert_eq!(
            a[SIDECARSET_HASH_ANNOTATION],
            "6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684"
        );
        assert_eq!(
            a[SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION],
            "82684vwf9d4cb4wz4vffx4ddfbb47ww4z4wwxdbwb8w2zbb7zvf4524cdd49bv94"
        );
        assert_eq!(m.doc["spec"]["injectionStrategy"]["revision"]["policy"], "Always");
        assert_eq!(m.doc["spec"]["patchPodMetadata"][0]["patchPolicy"], "Retain");
    }
}
