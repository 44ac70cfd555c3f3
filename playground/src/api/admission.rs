//! The admission hook point of the write path. Every create, update (including subresources) and
//! delete runs the configured hooks after defaulting and before the object is stored, as
//! kube-apiserver runs mutating then validating admission. The webhooks of stored
//! Mutating/ValidatingWebhookConfigurations will plug in here.

use futures::future::BoxFuture;
use serde_json::Value;

use crate::error::ApiError;
use crate::resources::ResourceDef;

/// The operation being admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Create (also subresource creates: eviction, binding).
    Create,
    /// Update or patch.
    Update,
    /// Delete.
    Delete,
}

/// What an admission hook sees.
#[derive(Debug, Clone, Copy)]
pub struct Attributes<'a> {
    /// The server state, e.g. to read the stored webhook configurations.
    pub api: &'a crate::api::Api,
    /// Operation.
    pub operation: Operation,
    /// The resource.
    pub resource: &'a ResourceDef,
    /// Subresource (`status`, `scale`, `eviction`, …), if any.
    pub subresource: Option<&'a str>,
    /// Namespace ("" for cluster-scoped).
    pub namespace: &'a str,
    /// Name (may be empty on a create with generateName before the name is generated).
    pub name: &'a str,
    /// The new object (create, update).
    pub object: Option<&'a Value>,
    /// The stored object (update, delete).
    pub old_object: Option<&'a Value>,
    /// `dryRun=All`.
    pub dry_run: bool,
}

/// An admission plugin: mutate (return `Some(new object)`), allow (`None`) or deny (`Err`).
pub trait AdmissionHook: Send + Sync {
    /// Admits one request.
    fn admit<'a>(&'a self, attributes: Attributes<'a>) -> BoxFuture<'a, Result<Option<Value>, ApiError>>;
}
