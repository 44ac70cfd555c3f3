//! Deletion protection (placeholder signature; being written).
use crate::{Decision, review::AdmissionRequest, table::Settings, view::ClusterView};

/// Decides a DELETE (or label change) of a protected object.
pub fn validate(_request: &AdmissionRequest, _view: &impl ClusterView, _settings: &Settings) -> Decision {
    Decision::allow()
}
