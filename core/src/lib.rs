//! The rules kruise-rs shares between its admission webhooks (`kruise-webhooks`), its controller
//! planners (`kruise-reconcile`) and the binary, each written once with OpenKruise's and
//! apimachinery's semantics. Pure: no IO, no async.

pub mod feature_gates;
pub mod go;
pub mod intstr;
pub mod names;
pub mod resource_version;
pub mod selector;
pub mod settings;

pub use feature_gates::{FeatureGates, Gate, GateError};
pub use settings::Settings;
