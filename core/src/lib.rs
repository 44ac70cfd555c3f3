//! The rules kruise-rs shares between its admission webhooks (`kruise-webhooks`), its controller
//! planners (`kruise-reconcile`) and the binary, each written once with OpenKruise's and
//! apimachinery's semantics. Pure: no IO, no async.
//!
//! The registry and the view are layered, each module using only those before it here:
//!
//! * [`decode`]: decoding what Kubernetes stores, naming the failing field;
//! * [`kind`]: what one kind is ([`Kind`]) and the [`Lookup`] of its objects a view holds;
//! * [`kinds`]: the one registry of the kinds kruise-rs reads (declaring a kind there gives it storage,
//!   a reflector, loading from files, status writes and readiness gating; `docs/adding-a-kind.md`);
//! * [`lenient`]: an object as a watch delivers it, decoded or skipped with the reason;
//! * [`view`]: the read-only [`ClusterView`] the webhooks and controllers consult, and the in-memory
//!   [`MemoryView`];
//! * [`derived`]: indexes derived from one kind, rebuilt when that kind changes;
//! * [`owner`]: ownerReference chains and workload lookups.
//!
//! Beside them, the rules themselves: [`intstr`], [`selector`], [`names`], [`ordinals`], [`pod_state`],
//! [`quantity`], [`cron`] (schedules), [`containermeta`] (env fed from metadata), [`resource_version`], [`pub_protection`], [`sidecarset`], [`workload_spread`], [`settings`]
//! and [`feature_gates`]; and [`documents`], objects in YAML or JSON text (the `--objects` loader without
//! the files).

pub mod containermeta;
pub mod cron;
pub mod decode;
pub mod derived;
pub mod documents;
pub mod feature_gates;
pub mod go;
pub mod image_ref;
pub mod in_place;
pub mod intstr;
pub mod kind;
pub mod kinds;
pub mod lenient;
pub mod names;
pub mod node_fit;
pub mod ordinals;
pub mod owner;
pub mod pod_state;
pub mod pub_protection;
pub mod quantity;
pub mod resource_version;
pub mod selector;
pub mod settings;
pub mod shape;
pub mod sidecarset;
pub mod strategic_merge;
pub mod view;
pub mod workload_spread;

pub use decode::DecodeError;
pub use derived::{Derived, DerivedCache};
pub use feature_gates::{FeatureGates, Gate, GateError};
pub use kinds::{Kind, Kinds, Registered};
pub use lenient::Lenient;
pub use settings::Settings;
pub use shape::{Shape, ShapeTextError};
pub use view::{ClusterView, Lookup, MemoryView, ObjectMap, StatusChange, StatusWrite, WriteTarget};
