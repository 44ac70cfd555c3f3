//! Status writes that admission decisions depend on (PUB budgets, WorkloadSpread bookkeeping), made with
//! the resourceVersion the decision was computed from. On 409 the caller re-reads the object into the
//! cache ([`crate::cluster::ClusterCache::refresh`]) and decides again (bounded), so a budget can never be spent twice —
//! across replicas too.

use kruise_webhooks::WriteTarget;
use kube::{
    Api, Client,
    api::{ApiResource, DynamicObject, GroupVersionKind, PostParams},
};
use serde_json::{Value, json};

/// How a write went.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The object changed since it was read: re-read and decide again.
    #[error("{kind} {namespace}/{name} changed since it was read")]
    Conflict {
        kind: String,
        namespace: String,
        name: String,
    },
    /// The new status could not be built from the cached object (gone from the cache, or not encodable).
    #[error("{0}")]
    Invalid(String),
    #[error("{kind} {namespace}/{name}: {source}")]
    Api {
        kind: String,
        namespace: String,
        name: String,
        #[source]
        source: Box<kube::Error>,
    },
}

/// The dynamic API resource of a write target.
pub fn api_resource(target: &WriteTarget) -> ApiResource {
    let (group, version) = target
        .api_version
        .rsplit_once('/')
        .unwrap_or(("", target.api_version.as_str()));
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(group, version, &target.kind),
        &target.plural,
    )
}

/// Writes the complete `status` of `t` with `resource_version` as precondition; returns the object as
/// stored.
pub async fn write_status(
    client: &Client,
    t: &WriteTarget,
    resource_version: Option<&str>,
    status: &Value,
) -> Result<Value, WriteError> {
    // A cluster-scoped object (a SidecarSet) has no namespace.
    let api: Api<DynamicObject> = if t.namespace.is_empty() {
        Api::all_with(client.clone(), &api_resource(t))
    } else {
        Api::namespaced_with(client.clone(), &t.namespace, &api_resource(t))
    };
    let body = json!({
        "apiVersion": t.api_version,
        "kind": t.kind,
        "metadata": {"name": t.name, "namespace": t.namespace, "resourceVersion": resource_version},
        "status": status,
    });
    let object: DynamicObject = match serde_json::from_value(body) {
        Ok(object) => object,
        Err(e) => {
            return Err(WriteError::Api {
                kind: t.kind.clone(),
                namespace: t.namespace.clone(),
                name: t.name.clone(),
                source: Box::new(kube::Error::SerdeError(e)),
            });
        }
    };
    match api.replace_status(&t.name, &PostParams::default(), &object).await {
        Ok(stored) => Ok(serde_json::to_value(stored).unwrap_or_default()),
        Err(kube::Error::Api(s)) if s.is_conflict() => Err(WriteError::Conflict {
            kind: t.kind.clone(),
            namespace: t.namespace.clone(),
            name: t.name.clone(),
        }),
        Err(e) => Err(WriteError::Api {
            kind: t.kind.clone(),
            namespace: t.namespace.clone(),
            name: t.name.clone(),
            source: Box::new(e),
        }),
    }
}
