//! Property tests of the v1alpha1 <-> v1beta1 conversion over generated objects of all four kinds.
//!
//! The generators build valid objects in both versions: every field the conversion rewrites
//! (update strategy type / `podUpdatePolicy`, PVC reuse, scale strategies, partitions as int and
//! percent, image pre-download annotations and fields, SidecarSet `namespace` /
//! `namespaceSelector` / custom version, PUB protect annotations and fields, WorkloadSpread subset
//! renames and conditions, statuses) plus fields the conversion does not know (`x…` keys at the
//! top level, in metadata, spec, status and nested objects the conversion edits in place) that it
//! must carry over untouched.
//!
//! Properties:
//! 1. v1alpha1 → v1beta1 → v1alpha1 gives the original back, except for the one-way cases listed
//!    in `kruise_api::conversion`; those are generated too and the expected result is the original
//!    with exactly those fields normalised (see the `*_round_trip_expected` functions).
//! 2. v1beta1 → v1alpha1 → v1beta1 likewise.
//! 3. Every object (source, converted, round-tripped) decodes into the typed struct of its version.
//! 4. Converting to the object's own version is the identity; converting twice to a version
//!    equals converting once; a round trip is a projection (a second one changes nothing); and
//!    the v1beta1 (storage) form of a v1alpha1 object does not change after a trip through
//!    v1alpha1.
//! 5. An unknown desired (or source) version is a clear `UnsupportedVersion` error, and mangled
//!    objects give an error or an object, never a panic.
//!
//! Left out of the generators on purpose, each commented where the field is generated and all
//! listed in the module docs: explicit `false` / `""` / `[]` / `null` in fields the conversion
//! reads (Go's `omitempty` never writes them; they read as unset); non-canonical annotation
//! spellings (read like the canonical ones, they come back canonical); v1alpha1 WorkloadSpread
//! conditions without `lastTransitionTime` (no valid v1beta1 form).

use std::collections::BTreeMap;

use kruise_api::apps::shared::cloneset::{
    CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_KEY as EXCLUDE_LABEL,
    IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS_KEY as MIN_READY_ANN,
    IMAGE_PRE_DOWNLOAD_PARALLELISM_KEY as PARALLELISM_ANN,
    IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS_KEY as TIMEOUT_ANN,
};
use kruise_api::apps::shared::sidecarset::{LABEL_METADATA_NAME, SIDECARSET_CUSTOM_VERSION_LABEL};
use kruise_api::policy::shared::{PUB_PROTECT_OPERATION_ANNOTATION, PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION};
use kruise_api::{
    ConversionError, apps_v1alpha1, apps_v1beta1, convert_object, policy_v1alpha1, policy_v1beta1,
};
use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value, json};

const APPS: &str = "apps.kruise.io";
const POLICY: &str = "policy.kruise.io";
const ALPHA: &str = "v1alpha1";
const BETA: &str = "v1beta1";

mod cloneset;
mod pub_budget;
mod sidecarset;
mod strategies;
mod workloadspread;
use cloneset::*;
use pub_budget::*;
use sidecarset::*;
use strategies::*;
use workloadspread::*;

/// Any generated object of any kind in either version.
fn any_object() -> impl Strategy<Value = Value> {
    prop_oneof![
        alpha_cloneset().boxed(),
        beta_cloneset().boxed(),
        alpha_sidecarset().boxed(),
        beta_sidecarset().boxed(),
        alpha_workloadspread().boxed(),
        beta_workloadspread().boxed(),
        alpha_pub().boxed(),
        beta_pub().boxed(),
    ]
}

/// Properties 1/2 and 3 for one object: the round trip gives `expected`, and every object on
/// the way decodes into its typed struct.
fn check_round_trip(orig: &Value, expected: Value) -> Result<(), TestCaseError> {
    let from = version_of(orig).to_string();
    assert_decodes(orig, "generated object")?;
    let there = convert(orig, other_version(&from));
    assert_decodes(&there, "converted object")?;
    let back = convert(&there, &from);
    assert_decodes(&back, "round-tripped object")?;
    prop_assert!(
        back == expected,
        "round trip differs from the expected object\noriginal: {}\nconverted: {}\nback: {}\nexpected: {}",
        pretty(orig),
        pretty(&there),
        pretty(&back),
        pretty(&expected)
    );
    Ok(())
}

/// 256 cases per property (proptest's default; `PROPTEST_CASES` raises it); failures are
/// reported with the shrunk object, not persisted to a regressions file.
fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    // Properties 1 and 2 (with 3 checked on every step), per kind and version.

    #[test]
    fn cloneset_v1alpha1_round_trip(cs in alpha_cloneset()) {
        check_round_trip(&cs, cloneset_alpha_round_trip_expected(&cs))?;
    }

    #[test]
    fn cloneset_v1beta1_round_trip(cs in beta_cloneset()) {
        check_round_trip(&cs, cloneset_beta_round_trip_expected(&cs))?;
    }

    #[test]
    fn sidecarset_v1alpha1_round_trip(s in alpha_sidecarset()) {
        check_round_trip(&s, sidecarset_alpha_round_trip_expected(&s))?;
    }

    #[test]
    fn sidecarset_v1beta1_round_trip(s in beta_sidecarset()) {
        check_round_trip(&s, sidecarset_beta_round_trip_expected(&s))?;
    }

    #[test]
    fn workloadspread_v1alpha1_round_trip(ws in alpha_workloadspread()) {
        check_round_trip(&ws, workloadspread_alpha_round_trip_expected(&ws))?;
    }

    #[test]
    fn workloadspread_v1beta1_round_trip(ws in beta_workloadspread()) {
        check_round_trip(&ws, workloadspread_beta_round_trip_expected(&ws))?;
    }

    #[test]
    fn pub_v1alpha1_round_trip(p in alpha_pub()) {
        check_round_trip(&p, pub_alpha_round_trip_expected(&p))?;
    }

    #[test]
    fn pub_v1beta1_round_trip(p in beta_pub()) {
        check_round_trip(&p, pub_beta_round_trip_expected(&p))?;
    }

    /// Property 3 on its own: an object of either version converts to both versions, and each
    /// result decodes into the typed struct of that version.
    #[test]
    fn converted_objects_decode(obj in any_object()) {
        for version in [ALPHA, BETA] {
            let converted = convert(&obj, version);
            prop_assert_eq!(version_of(&converted), version);
            assert_decodes(&converted, &format!("object converted to {version}"))?;
        }
    }

    /// Property 4: same version is the identity (with a full or a bare version), converting
    /// twice equals converting once, and a round trip is a projection: once an object has been
    /// through the other version, further trips change nothing.
    #[test]
    fn identity_and_idempotence(obj in any_object()) {
        let own = version_of(&obj).to_string();
        prop_assert_eq!(&convert(&obj, &own), &obj);
        prop_assert_eq!(&convert_object(&obj, &own).unwrap(), &obj);
        for version in [ALPHA, BETA] {
            let once = convert(&obj, version);
            prop_assert_eq!(&convert(&once, version), &once);
        }
        let once = round_trip(&obj);
        prop_assert_eq!(&round_trip(&once), &once, "second round trip changed the object");
        // The v1beta1 (storage) form of a v1alpha1 object does not drift when a v1alpha1 client
        // reads it and writes it back. (The converse does not hold for the documented one-way
        // case: v1beta1 OnDelete with rollingUpdate reaches v1alpha1 whole but comes back
        // without it.)
        if own == ALPHA {
            let stored = convert(&obj, BETA);
            prop_assert_eq!(
                &convert(&convert(&stored, ALPHA), BETA),
                &stored,
                "the v1beta1 form changed after a trip through v1alpha1"
            );
        }
    }

    /// Property 5: an unknown desired version is an `UnsupportedVersion` error naming it.
    #[test]
    fn unknown_desired_version_is_an_error(
        obj in any_object(),
        desired in prop_oneof![
            "v[0-9a-z]{0,8}",
            "[a-z.]{0,12}/v[0-9a-z]{0,8}",
            Just("apps.kruise.io/v1".to_string()),
            Just("policy.kruise.io/v1beta2".to_string()),
            Just("apps.kruise.io/v1beta1".to_string()),
            Just("policy.kruise.io/v1alpha1".to_string()),
            Just("/v1beta1".to_string()),
            Just(String::new()),
            Just("/".to_string()),
            "[ -~]{0,16}",
        ],
    ) {
        let group = group_of(&obj);
        // A bare version (or an empty group) is read in the object's group.
        let (g, v) = desired.rsplit_once('/').unwrap_or(("", desired.as_str()));
        let g = if g.is_empty() { group } else { g };
        prop_assume!(!(g == group && (v == ALPHA || v == BETA)));
        let err = match convert_object(&obj, &desired) {
            Err(err) => err,
            Ok(_) => return Err(TestCaseError::fail(format!("desired {desired:?} was accepted"))),
        };
        prop_assert_eq!(
            &err,
            &ConversionError::UnsupportedVersion {
                kind: obj["kind"].as_str().unwrap().to_string(),
                api_version: desired.clone(),
            }
        );
        let message = err.to_string();
        prop_assert!(message.contains("unsupported API version"), "{}", message);
        prop_assert!(message.contains(&format!("{desired:?}")), "{}", message);
    }

    /// Property 5 for the source side: an object whose own version is not served is an
    /// `UnsupportedVersion` error for either desired version.
    #[test]
    fn unknown_source_version_is_an_error(mut obj in any_object(), version in "v[0-9a-z]{0,6}") {
        prop_assume!(version != ALPHA && version != BETA);
        let group = group_of(&obj);
        let api_version = format!("{group}/{version}");
        root(&mut obj).insert("apiVersion".into(), api_version.clone().into());
        for desired in [ALPHA, BETA] {
            prop_assert_eq!(
                convert_object(&obj, &format!("{group}/{desired}")),
                Err(ConversionError::UnsupportedVersion {
                    kind: obj["kind"].as_str().unwrap().to_string(),
                    api_version: api_version.clone(),
                })
            );
        }
    }

    /// Mangled objects (any JSON at a field the conversion reads) give an object or an error,
    /// never a panic; what comes out is still of the desired version.
    #[test]
    fn mangled_objects_never_panic(
        obj in any_object(),
        path in select(MANGLE_PATHS.to_vec()),
        junk in any_json(),
    ) {
        let mut obj = obj;
        set_path(&mut obj, path, junk);
        let group = group_of(&obj);
        for version in [ALPHA, BETA] {
            if let Ok(out) = convert_object(&obj, &format!("{group}/{version}")) {
                let want = format!("{group}/{version}");
                prop_assert_eq!(out["apiVersion"].as_str(), Some(want.as_str()));
            }
        }
    }
}

/// Paths the conversion reads or rewrites, for [`mangled_objects_never_panic`].
const MANGLE_PATHS: &[&[&str]] = &[
    &["metadata"],
    &["metadata", "labels"],
    &["metadata", "labels", EXCLUDE_LABEL],
    &["metadata", "labels", SIDECARSET_CUSTOM_VERSION_LABEL],
    &["metadata", "annotations"],
    &["metadata", "annotations", PARALLELISM_ANN],
    &["metadata", "annotations", TIMEOUT_ANN],
    &["metadata", "annotations", MIN_READY_ANN],
    &["metadata", "annotations", PUB_PROTECT_OPERATION_ANNOTATION],
    &["metadata", "annotations", PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION],
    &["spec"],
    &["spec", "scaleStrategy"],
    &["spec", "scaleStrategy", "disablePVCReuse"],
    &["spec", "scaleStrategy", "enablePVCReuse"],
    &["spec", "updateStrategy"],
    &["spec", "updateStrategy", "type"],
    &["spec", "updateStrategy", "inPlaceUpdateStrategy"],
    &[
        "spec",
        "updateStrategy",
        "inPlaceUpdateStrategy",
        "gracePeriodSeconds",
    ],
    &["spec", "updateStrategy", "rollingUpdate"],
    &["spec", "updateStrategy", "rollingUpdate", "podUpdatePolicy"],
    &["spec", "updateStrategy", "rollingUpdate", "inPlaceUpdateStrategy"],
    &[
        "spec",
        "updateStrategy",
        "rollingUpdate",
        "inPlaceUpdateStrategy",
        "imagePreDownloadParallelism",
    ],
    &[
        "spec",
        "updateStrategy",
        "rollingUpdate",
        "inPlaceUpdateStrategy",
        "imagePreDownloadTimeoutSeconds",
    ],
    &["spec", "namespace"],
    &["spec", "customVersion"],
    &["spec", "subsets"],
    &["spec", "protectOperations"],
    &["spec", "protectTotalReplicas"],
    &["status"],
    &["status", "subsetStatuses"],
    &["status", "versionedSubsetStatuses"],
    &["status", "versionedSubsetStatuses", "abc"],
];

/// Sets `path` in `v`, turning whatever is in the way into objects.
fn set_path(v: &mut Value, path: &[&str], value: Value) {
    let mut cur = v;
    for key in &path[..path.len() - 1] {
        if !cur.is_object() {
            *cur = json!({});
        }
        cur = cur
            .as_object_mut()
            .unwrap()
            .entry(key.to_string())
            .or_insert_with(|| json!({}));
    }
    if !cur.is_object() {
        *cur = json!({});
    }
    cur.as_object_mut()
        .unwrap()
        .insert(path[path.len() - 1].to_string(), value);
}

/// Mangling one level deeper: a subset or condition that is not an object.
#[test]
fn mangled_lists_are_errors_not_panics() {
    let cases = [
        json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "WorkloadSpread", "spec": {"subsets": [1]}}),
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
               "status": {"subsetStatuses": [{"conditions": [3]}]}}),
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
               "status": {"versionedSubsetStatuses": {"a": "b"}}}),
        json!({"apiVersion": "policy.kruise.io/v1beta1", "kind": "PodUnavailableBudget",
               "spec": {"protectOperations": [1]}}),
    ];
    for case in cases {
        let from = version_of(&case).to_string();
        let err =
            convert_object(&case, &format!("{}/{}", group_of(&case), other_version(&from))).unwrap_err();
        assert!(
            matches!(err, ConversionError::Decode { path: Some(_), .. }),
            "{err:?}"
        );
    }
}
