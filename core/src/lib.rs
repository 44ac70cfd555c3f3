//! The rules kruise-rs shares between its admission webhooks (`kruise-webhooks`), its controller
//! planners (`kruise-reconcile`) and the binary, each written once with OpenKruise's and
//! apimachinery's semantics. Pure: no IO, no async.
//!
//! * [`kinds`]: the one registry of the kinds kruise-rs reads (declaring a kind there gives it storage,
//!   a reflector, loading from files, status writes and readiness gating; `docs/adding-a-kind.md`);
//! * [`decode`]: decoding what Kubernetes stores, leniently where the cluster is concerned;
//! * [`view`]: the read-only [`ClusterView`] the webhooks and controllers consult, and the in-memory
//!   [`MemoryView`];
//! * [`derived`]: indexes derived from one kind, rebuilt when that kind changes;
//! * [`owner`]: ownerReference chains and workload lookups.

pub mod decode;
pub mod derived;
pub mod feature_gates;
pub mod go;
pub mod intstr;
pub mod kinds;
pub mod names;
pub mod owner;
pub mod resource_version;
pub mod selector;
pub mod settings;
pub mod shape;
pub mod view;

pub use decode::{DecodeError, Lenient};
pub use derived::{Derived, DerivedCache};
pub use feature_gates::{FeatureGates, Gate, GateError};
pub use kinds::{Kind, Kinds, Registered};
pub use settings::Settings;
pub use shape::Shape;
pub use view::{ClusterView, Lookup, MemoryView, ObjectMap, StatusWrite, WriteTarget};
