//! The shared core of kruise-rs, below `kruise-webhooks`, `kruise-reconcile` and the binary. Pure: no
//! IO, no async.
//!
//! * [`kinds`]: the one registry of the kinds kruise-rs reads (declaring a kind there gives it storage,
//!   a reflector, loading from files, status writes and readiness gating);
//! * [`decode`]: decoding what Kubernetes stores, leniently where the cluster is concerned;
//! * [`view`]: the read-only [`ClusterView`] the webhooks and controllers consult, and the in-memory
//!   [`MemoryView`];
//! * [`derived`]: indexes derived from one kind, rebuilt when that kind changes;
//! * [`owner`]: ownerReference chains and workload lookups.

pub mod decode;
pub mod derived;
pub mod kinds;
pub mod owner;
pub mod view;

pub use decode::{DecodeError, Lenient};
pub use derived::{Derived, DerivedCache};
pub use kinds::{Kind, Kinds, Registered};
pub use view::{ClusterView, Lookup, MemoryView, ObjectMap, StatusWrite, WriteTarget};
