//! Pure admission logic of kruise-rs.
//!
//! Every webhook is a function of an [`AdmissionRequest`] and a read-only [`ClusterView`] that returns a
//! [`Decision`]: allowed or denied, the JSON-patch operations to apply, warnings, and the status writes the
//! decision depends on. No IO, no async, no Kubernetes client: the `kruise` binary (server, `kruise admit`)
//! decodes, calls and applies.

pub mod convert;
pub mod crd;
pub mod decision;
pub mod deletion_protection;
pub mod patch;
pub mod pod_mutate;
pub mod pod_validate;
pub mod registration;
pub mod review;
pub mod table;
pub mod width;

/// The cluster view and owner lookups live in `kruise-core`; re-exported under their old paths.
pub use kruise_core::{owner, view};

pub use decision::{
    AdmissionEvent, BudgetRefusal, Decision, Denial, MissingObject, Regarding, StatusWrite, WriteTarget,
};
pub use kruise_core::{Settings, selector};
pub use pod_validate::conflict_denial;
pub use review::{AdmissionRequest, Operation, Review, ReviewError, ReviewResponse};
pub use table::{REGISTRATIONS, Webhook};
pub use view::{ClusterView, MemoryView};
