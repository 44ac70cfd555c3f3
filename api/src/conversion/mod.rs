//! Conversion between `v1alpha1` and `v1beta1` for the seven kinds, following OpenKruise's
//! `*_conversion.go` mappings.
//!
//! The conversion works on the JSON object: fields both versions share are carried over
//! untouched (including fields this crate does not model), and only the fields whose shape
//! differs are rewritten. Where OpenKruise stashes a v1beta1-only setting in a v1alpha1 label
//! or annotation, the same key is used here. Known one-way mappings (also lossy in OpenKruise):
//!
//! * SidecarSet: v1alpha1 `spec.namespace` becomes a `namespaceSelector` on
//!   `kubernetes.io/metadata.name` (replacing any v1alpha1 `namespaceSelector`) and stays a
//!   selector when converted back. An empty custom-version label is dropped; a custom-version
//!   label on a v1beta1 object is read as `spec.customVersion` (the field wins) and removed.
//! * CloneSet: v1beta1 `scaleStrategy.excludePreparingDelete` is dropped on the way to v1alpha1
//!   (v1alpha1 reads the label `apps.kruise.io/cloneset-scaling-exclude-preparing-delete`); an
//!   unset or unknown v1alpha1 `updateStrategy.type` becomes `RollingUpdate` + `ReCreate`, and an
//!   unset or unknown v1beta1 `type` / `podUpdatePolicy` comes back as those defaults;
//!   `OnDelete` drops the rolling-update fields on the way to v1beta1 (v1beta1 `OnDelete` with a
//!   `rollingUpdate` reaches v1alpha1 whole but does not come back); an `inPlaceUpdateStrategy`
//!   with nothing set (no non-zero grace period, no pre-download setting) is dropped in both
//!   directions (OpenKruise keeps it as `{}`). The v1beta1 pre-download fields are written to the
//!   v1alpha1 annotations, which stay on the object when it comes back to v1beta1 (as in
//!   OpenKruise), and are read back from them.
//! * WorkloadSpread: a condition without reason gets reason `Unknown`; v1beta1 condition
//!   `observedGeneration` is dropped. A v1alpha1 condition without `lastTransitionTime` has no
//!   valid v1beta1 form (`metav1.Condition` requires one); none is invented.
//! * StatefulSet (Advanced): lossless; the v1beta1-only fields travel in the annotation
//!   `kruise-rs.io/statefulset-v1beta1-fields` (`statefulset.rs`), where OpenKruise drops them.
//! * DaemonSet (Advanced): `Surging` becomes `Standard` with surge, the progressive-creation
//!   annotation mirrors `scaleStrategy.partitionedScaling`, `daemonSetHash` is `updateRevision`
//!   (`daemonset.rs`).
//! * ResourceDistribution: lossless; only `targets.namespaceLabelSelector` ↔ `namespaceSelector`
//!   and the conditions' `failedNamespace` ↔ `failedNamespaces` are renamed.
//! * NodeImage: v1beta1 pull-secret `mode` is dropped on the way to v1alpha1. ImagePullJob and
//!   ImageListPullJob: identical in both versions.
//! * UnitedDeployment: v1alpha1's `subsetReplicas` and `updateStatus` ↔ v1beta1's `updatedRevision`
//!   and `subsetStatuses[].replicas/partition` (`uniteddeployment.rs`).
//! * PersistentPodState: lossless; only the topology terms' `nodeTopologyKeys` ↔ `keys` is renamed.
//! * ContainerRecreateRequest: v1beta1 `status.containerStatusSnapshot` and the `PreRecreateGrace`
//!   condition ↔ v1alpha1 annotations (`containerrecreaterequest.rs`).
//! * PodUnavailableBudget: v1beta1 `ignoredPodSelector` is dropped on the way to v1alpha1;
//!   `protectOperations` / `protectTotalReplicas` travel through the annotations
//!   `kruise.io/pub-protect-operations` / `pub.kruise.io/protect-total-replicas`, which v1alpha1
//!   derives from the fields (stale values are replaced or removed) and which stay on the object
//!   when it comes back to v1beta1.
//!
//! Annotation values are read the way OpenKruise reads them, so non-canonical spellings
//! (`"DELETE, EVICT"`, `"05"`) come back canonical, and an explicit `false`, `""`, `[]` or
//! `null` in a field the conversion reads (which Go's `omitempty` never writes) is treated as
//! unset and may not come back. `tests/conversion_props.rs` checks that everything else
//! round-trips exactly.

mod cloneset;
mod containerrecreaterequest;
mod daemonset;
mod imagepull;
mod json;
mod persistentpodstate;
mod podunavailablebudget;
mod resourcedistribution;
mod sidecarset;
mod statefulset;
mod uniteddeployment;
mod workloadspread;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::apps::{v1alpha1 as apps_a, v1beta1 as apps_b};
use crate::policy::{v1alpha1 as policy_a, v1beta1 as policy_b};

/// Why an object could not be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConversionError {
    /// The object is not a JSON object or lacks a string `apiVersion` / `kind`.
    #[error("not a Kubernetes object: {0}")]
    NotAnObject(String),
    /// The group/kind pair is not one this crate converts.
    #[error("unknown kind {kind:?} in group {group:?}")]
    UnknownKind {
        /// Group of the object.
        group: String,
        /// Kind of the object.
        kind: String,
    },
    /// A typed helper got an object of another kind.
    #[error("expected a {expected}, got a {found}")]
    WrongKind {
        /// Kind the helper reads.
        expected: String,
        /// Kind of the object.
        found: String,
    },
    /// The source or desired API version is not served for the kind.
    #[error("unsupported API version {api_version:?} for kind {kind}")]
    UnsupportedVersion {
        /// Kind of the object.
        kind: String,
        /// The offending `group/version`.
        api_version: String,
    },
    /// A field could not be decoded; `path` is the JSON path when known.
    #[error("cannot decode {kind}{}: {message}", path.as_ref().map(|p| format!(" at {p}")).unwrap_or_default())]
    Decode {
        /// Kind of the object.
        kind: String,
        /// Dotted path of the offending field, if known.
        path: Option<String>,
        /// What was wrong.
        message: String,
    },
}

/// API versions served for every kind here.
pub const VERSIONS: [&str; 2] = ["v1alpha1", "v1beta1"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    CloneSet,
    SidecarSet,
    WorkloadSpread,
    PodUnavailableBudget,
    StatefulSet,
    DaemonSet,
    ResourceDistribution,
    NodeImage,
    ImagePullJob,
    ImageListPullJob,
    UnitedDeployment,
    PersistentPodState,
    ContainerRecreateRequest,
}

impl Kind {
    fn parse(group: &str, kind: &str) -> Option<Self> {
        match (group, kind) {
            (crate::apps::GROUP, "CloneSet") => Some(Self::CloneSet),
            (crate::apps::GROUP, "SidecarSet") => Some(Self::SidecarSet),
            (crate::apps::GROUP, "WorkloadSpread") => Some(Self::WorkloadSpread),
            (crate::apps::GROUP, "StatefulSet") => Some(Self::StatefulSet),
            (crate::apps::GROUP, "DaemonSet") => Some(Self::DaemonSet),
            (crate::apps::GROUP, "ResourceDistribution") => Some(Self::ResourceDistribution),
            (crate::apps::GROUP, "NodeImage") => Some(Self::NodeImage),
            (crate::apps::GROUP, "ImagePullJob") => Some(Self::ImagePullJob),
            (crate::apps::GROUP, "ImageListPullJob") => Some(Self::ImageListPullJob),
            (crate::apps::GROUP, "UnitedDeployment") => Some(Self::UnitedDeployment),
            (crate::apps::GROUP, "PersistentPodState") => Some(Self::PersistentPodState),
            (crate::apps::GROUP, "ContainerRecreateRequest") => Some(Self::ContainerRecreateRequest),
            (crate::policy::GROUP, "PodUnavailableBudget") => Some(Self::PodUnavailableBudget),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::CloneSet => "CloneSet",
            Self::SidecarSet => "SidecarSet",
            Self::WorkloadSpread => "WorkloadSpread",
            Self::PodUnavailableBudget => "PodUnavailableBudget",
            Self::StatefulSet => "StatefulSet",
            Self::DaemonSet => "DaemonSet",
            Self::ResourceDistribution => "ResourceDistribution",
            Self::NodeImage => "NodeImage",
            Self::ImagePullJob => "ImagePullJob",
            Self::ImageListPullJob => "ImageListPullJob",
            Self::UnitedDeployment => "UnitedDeployment",
            Self::PersistentPodState => "PersistentPodState",
            Self::ContainerRecreateRequest => "ContainerRecreateRequest",
        }
    }

    fn group(self) -> &'static str {
        match self {
            Self::PodUnavailableBudget => crate::policy::GROUP,
            _ => crate::apps::GROUP,
        }
    }
}

fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.rsplit_once('/') {
        Some((group, version)) => (group, version),
        None => ("", api_version),
    }
}

/// Converts `object` (any served version of the seven kinds) to `desired_api_version`.
///
/// `desired_api_version` is `group/version` as in a ConversionReview (a bare version is read
/// in the object's group). An object already at that version is returned unchanged.
pub fn convert_object(object: &Value, desired_api_version: &str) -> Result<Value, ConversionError> {
    let (kind, from) = identify(object)?;
    let (want_group, want_version) = match split_api_version(desired_api_version) {
        ("", v) => (kind.group(), v),
        (g, v) => (g, v),
    };
    if want_group != kind.group() || !VERSIONS.contains(&want_version) {
        return Err(ConversionError::UnsupportedVersion {
            kind: kind.name().to_string(),
            api_version: desired_api_version.to_string(),
        });
    }
    if from == want_version {
        return Ok(object.clone());
    }
    let mut out = object.clone();
    let map = out
        .as_object_mut()
        .ok_or_else(|| ConversionError::NotAnObject("expected a JSON object".into()))?;
    let to_beta = want_version == "v1beta1";
    let ctx = json::Ctx { kind: kind.name() };
    match (kind, to_beta) {
        (Kind::CloneSet, true) => cloneset::to_v1beta1(&ctx, map)?,
        (Kind::CloneSet, false) => cloneset::to_v1alpha1(&ctx, map)?,
        (Kind::SidecarSet, true) => sidecarset::to_v1beta1(&ctx, map)?,
        (Kind::SidecarSet, false) => sidecarset::to_v1alpha1(&ctx, map)?,
        (Kind::WorkloadSpread, true) => workloadspread::to_v1beta1(&ctx, map)?,
        (Kind::WorkloadSpread, false) => workloadspread::to_v1alpha1(&ctx, map)?,
        (Kind::PodUnavailableBudget, true) => podunavailablebudget::to_v1beta1(&ctx, map)?,
        (Kind::PodUnavailableBudget, false) => podunavailablebudget::to_v1alpha1(&ctx, map)?,
        (Kind::StatefulSet, true) => statefulset::to_v1beta1(&ctx, map)?,
        (Kind::StatefulSet, false) => statefulset::to_v1alpha1(&ctx, map)?,
        (Kind::DaemonSet, true) => daemonset::to_v1beta1(&ctx, map)?,
        (Kind::DaemonSet, false) => daemonset::to_v1alpha1(&ctx, map)?,
        (Kind::ResourceDistribution, true) => resourcedistribution::to_v1beta1(&ctx, map)?,
        (Kind::ResourceDistribution, false) => resourcedistribution::to_v1alpha1(&ctx, map)?,
        (Kind::NodeImage, false) => imagepull::node_image_to_v1alpha1(&ctx, map)?,
        (Kind::NodeImage | Kind::ImagePullJob | Kind::ImageListPullJob, _) => {}
        (Kind::UnitedDeployment, true) => uniteddeployment::to_v1beta1(&ctx, map)?,
        (Kind::UnitedDeployment, false) => uniteddeployment::to_v1alpha1(&ctx, map)?,
        (Kind::PersistentPodState, true) => persistentpodstate::to_v1beta1(&ctx, map)?,
        (Kind::PersistentPodState, false) => persistentpodstate::to_v1alpha1(&ctx, map)?,
        (Kind::ContainerRecreateRequest, true) => containerrecreaterequest::to_v1beta1(&ctx, map)?,
        (Kind::ContainerRecreateRequest, false) => containerrecreaterequest::to_v1alpha1(&ctx, map)?,
    }
    map.insert(
        "apiVersion".into(),
        Value::String(format!("{}/{}", kind.group(), want_version)),
    );
    Ok(out)
}

/// Returns the kind and version of an object, checking both are served here.
fn identify(object: &Value) -> Result<(Kind, &str), ConversionError> {
    let map = object
        .as_object()
        .ok_or_else(|| ConversionError::NotAnObject("expected a JSON object".into()))?;
    let field = |name: &str| {
        map.get(name)
            .and_then(Value::as_str)
            .ok_or_else(|| ConversionError::NotAnObject(format!("missing string field {name:?}")))
    };
    let api_version = field("apiVersion")?;
    let kind_name = field("kind")?;
    let (group, version) = split_api_version(api_version);
    let kind = Kind::parse(group, kind_name).ok_or_else(|| ConversionError::UnknownKind {
        group: group.to_string(),
        kind: kind_name.to_string(),
    })?;
    if !VERSIONS.contains(&version) {
        return Err(ConversionError::UnsupportedVersion {
            kind: kind_name.to_string(),
            api_version: api_version.to_string(),
        });
    }
    Ok((kind, version))
}

/// Decodes a JSON value into a typed object, reporting the failing field path.
pub fn decode<T: DeserializeOwned>(kind: &str, value: &Value) -> Result<T, ConversionError> {
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        ConversionError::Decode {
            kind: kind.to_string(),
            path: (path != "." && !path.is_empty()).then_some(path),
            message: err.into_inner().to_string(),
        }
    })
}

fn typed<T: DeserializeOwned>(value: &Value, kind: Kind, version: &str) -> Result<T, ConversionError> {
    let (found, _) = identify(value)?;
    if found != kind {
        return Err(ConversionError::WrongKind {
            expected: kind.name().to_string(),
            found: found.name().to_string(),
        });
    }
    let converted = convert_object(value, &format!("{}/{version}", kind.group()))?;
    decode(kind.name(), &converted)
}

/// Reads a CloneSet of either version as v1beta1.
pub fn cloneset_to_v1beta1(value: &Value) -> Result<apps_b::CloneSet, ConversionError> {
    typed(value, Kind::CloneSet, "v1beta1")
}

/// Reads a CloneSet of either version as v1alpha1.
pub fn cloneset_to_v1alpha1(value: &Value) -> Result<apps_a::CloneSet, ConversionError> {
    typed(value, Kind::CloneSet, "v1alpha1")
}

/// Reads a SidecarSet of either version as v1beta1.
pub fn sidecarset_to_v1beta1(value: &Value) -> Result<apps_b::SidecarSet, ConversionError> {
    typed(value, Kind::SidecarSet, "v1beta1")
}

/// Reads a SidecarSet of either version as v1alpha1.
pub fn sidecarset_to_v1alpha1(value: &Value) -> Result<apps_a::SidecarSet, ConversionError> {
    typed(value, Kind::SidecarSet, "v1alpha1")
}

/// Reads a WorkloadSpread of either version as v1beta1.
pub fn workloadspread_to_v1beta1(value: &Value) -> Result<apps_b::WorkloadSpread, ConversionError> {
    typed(value, Kind::WorkloadSpread, "v1beta1")
}

/// Reads a WorkloadSpread of either version as v1alpha1.
pub fn workloadspread_to_v1alpha1(value: &Value) -> Result<apps_a::WorkloadSpread, ConversionError> {
    typed(value, Kind::WorkloadSpread, "v1alpha1")
}

/// Reads an Advanced StatefulSet of either version as v1beta1.
pub fn statefulset_to_v1beta1(value: &Value) -> Result<apps_b::StatefulSet, ConversionError> {
    typed(value, Kind::StatefulSet, "v1beta1")
}

/// Reads an Advanced StatefulSet of either version as v1alpha1.
pub fn statefulset_to_v1alpha1(value: &Value) -> Result<apps_a::StatefulSet, ConversionError> {
    typed(value, Kind::StatefulSet, "v1alpha1")
}

/// Reads an Advanced DaemonSet of either version as v1beta1.
pub fn daemonset_to_v1beta1(value: &Value) -> Result<apps_b::DaemonSet, ConversionError> {
    typed(value, Kind::DaemonSet, "v1beta1")
}

/// Reads an Advanced DaemonSet of either version as v1alpha1.
pub fn daemonset_to_v1alpha1(value: &Value) -> Result<apps_a::DaemonSet, ConversionError> {
    typed(value, Kind::DaemonSet, "v1alpha1")
}

/// Reads a ResourceDistribution of either version as v1beta1.
pub fn resourcedistribution_to_v1beta1(
    value: &Value,
) -> Result<apps_b::ResourceDistribution, ConversionError> {
    typed(value, Kind::ResourceDistribution, "v1beta1")
}

/// Reads a ResourceDistribution of either version as v1alpha1.
pub fn resourcedistribution_to_v1alpha1(
    value: &Value,
) -> Result<apps_a::ResourceDistribution, ConversionError> {
    typed(value, Kind::ResourceDistribution, "v1alpha1")
}

/// Reads a UnitedDeployment of either version as v1beta1.
pub fn uniteddeployment_to_v1beta1(value: &Value) -> Result<apps_b::UnitedDeployment, ConversionError> {
    typed(value, Kind::UnitedDeployment, "v1beta1")
}

/// Reads a UnitedDeployment of either version as v1alpha1.
pub fn uniteddeployment_to_v1alpha1(value: &Value) -> Result<apps_a::UnitedDeployment, ConversionError> {
    typed(value, Kind::UnitedDeployment, "v1alpha1")
}

/// Reads a PersistentPodState of either version as v1beta1.
pub fn persistentpodstate_to_v1beta1(value: &Value) -> Result<apps_b::PersistentPodState, ConversionError> {
    typed(value, Kind::PersistentPodState, "v1beta1")
}

/// Reads a PersistentPodState of either version as v1alpha1.
pub fn persistentpodstate_to_v1alpha1(value: &Value) -> Result<apps_a::PersistentPodState, ConversionError> {
    typed(value, Kind::PersistentPodState, "v1alpha1")
}

/// Reads a ContainerRecreateRequest of either version as v1beta1.
pub fn containerrecreaterequest_to_v1beta1(
    value: &Value,
) -> Result<apps_b::ContainerRecreateRequest, ConversionError> {
    typed(value, Kind::ContainerRecreateRequest, "v1beta1")
}

/// Reads a PodUnavailableBudget of either version as v1beta1.
pub fn podunavailablebudget_to_v1beta1(
    value: &Value,
) -> Result<policy_b::PodUnavailableBudget, ConversionError> {
    typed(value, Kind::PodUnavailableBudget, "v1beta1")
}

/// Reads a PodUnavailableBudget of either version as v1alpha1.
pub fn podunavailablebudget_to_v1alpha1(
    value: &Value,
) -> Result<policy_a::PodUnavailableBudget, ConversionError> {
    typed(value, Kind::PodUnavailableBudget, "v1alpha1")
}

/// Reads a NodeImage of either version as v1beta1.
pub fn nodeimage_to_v1beta1(value: &Value) -> Result<apps_b::NodeImage, ConversionError> {
    typed(value, Kind::NodeImage, "v1beta1")
}

/// Reads an ImagePullJob of either version as v1beta1.
pub fn imagepulljob_to_v1beta1(value: &Value) -> Result<apps_b::ImagePullJob, ConversionError> {
    typed(value, Kind::ImagePullJob, "v1beta1")
}

/// Reads an ImageListPullJob of either version as v1beta1.
pub fn imagelistpulljob_to_v1beta1(value: &Value) -> Result<apps_b::ImageListPullJob, ConversionError> {
    typed(value, Kind::ImageListPullJob, "v1beta1")
}
