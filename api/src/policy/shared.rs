//! PodUnavailableBudget parts whose shape does not differ between versions.

use crate::common::string_enum;

/// v1alpha1 annotation listing the protected operations (comma-separated);
/// v1beta1 has `spec.protectOperations`.
pub const PUB_PROTECT_OPERATION_ANNOTATION: &str = "kruise.io/pub-protect-operations";
/// v1alpha1 annotation overriding the expected replica count;
/// v1beta1 has `spec.protectTotalReplicas`.
pub const PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION: &str = "pub.kruise.io/protect-total-replicas";
/// Pod annotation (`"true"`) exempting the pod from PUB protection.
pub const POD_PUB_NO_PROTECTION_ANNOTATION: &str = "pub.kruise.io/no-protect";
/// Pod annotation caching the name of the PUB that covers the pod.
pub const POD_RELATED_PUB_ANNOTATION: &str = "pub.kruise.io/related-pub";
/// Older spelling of [`POD_RELATED_PUB_ANNOTATION`], still written for compatibility.
pub const DEPRECATED_POD_RELATED_PUB_ANNOTATION: &str = "kruise.io/related-pub";
/// Prefix of pod labels that make PUB count the pod as unavailable.
pub const POD_UNAVAILABLE_LABEL_PREFIX: &str = "unavailable-pod.kruise.io/";

string_enum! {
    /// A pod operation a PodUnavailableBudget can guard.
    pub enum PubOperation [validated] {
        /// Pod deletion.
        Delete = "DELETE",
        /// Pod update that restarts containers.
        Update = "UPDATE",
        /// Pod eviction.
        Evict = "EVICT",
        /// In-place pod resize.
        Resize = "RESIZE",
    }
}
