//! Group `policy.kruise.io`: PodUnavailableBudget.

pub mod shared;
pub mod v1alpha1;
pub mod v1beta1;

/// API group of PodUnavailableBudget.
pub const GROUP: &str = "policy.kruise.io";
