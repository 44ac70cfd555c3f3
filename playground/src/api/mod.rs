//! The write path shared by every verb (and, later, by in-process controllers): create and update
//! with kube-apiserver's metadata rules, namespace lifecycle, admission, and CRD registration.

pub mod admission;
pub mod delete;

use std::sync::Arc;

use serde_json::{Value, json};

use self::admission::{AdmissionHook, Attributes, Operation};
use crate::error::ApiError;
use crate::kinds;
use crate::meta;
use crate::registry::{Registry, crd_resources, crd_status};
use crate::resources::ResourceDef;
use crate::store::{ResKey, Store, StoreError};
use crate::validate;

/// Which part of an object an update writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateMode {
    /// The main resource: everything but `.status` when the resource has a status subresource.
    Main,
    /// `/status`: only `.status`.
    Status,
    /// `namespaces/finalize`: only `spec.finalizers`.
    Finalize,
    /// `pods/ephemeralcontainers`: only `spec.ephemeralContainers`, added to, never changed.
    EphemeralContainers,
}

/// The simulated API server state: store, served resources, admission hooks.
pub struct Api {
    /// Objects.
    pub store: Store,
    /// Served resources.
    pub registry: Registry,
    /// Admission hooks, run in order.
    pub admission: Vec<Arc<dyn AdmissionHook>>,
    /// How often watches with `allowWatchBookmarks=true` get a BOOKMARK.
    pub bookmark_interval: std::time::Duration,
    /// Requests answered, by verb and resource.
    pub requests: crate::request_counts::RequestCounts,
    /// Requests refused before any handler (test hook: throttling, missing permissions).
    pub refusals: crate::refusals::Refusals,
    /// Where webhook `clientConfig.service`s resolve to (conversion webhooks).
    pub webhook_address: Option<std::net::SocketAddr>,
    /// What the built-in controllers read as now (the system clock unless `--clock manual`).
    pub clock: crate::clock::Clock,
    /// Restart requests (test hook, `restart` module), carried out by the serving loop.
    pub restarts: crate::restart::Restarts,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

/// The storage key of a resource (`events.k8s.io` events share the core events' storage).
pub fn key(def: &ResourceDef) -> ResKey {
    if crate::events::is_events_api(def) {
        return ResKey::new("", "events");
    }
    ResKey::new(&def.group, &def.plural)
}

impl Api {
    /// An empty server state with the four namespaces every cluster has.
    pub fn new(history_limit: usize, admission: Vec<Arc<dyn AdmissionHook>>) -> Self {
        let api = Api {
            store: Store::new(history_limit),
            registry: Registry::default(),
            admission,
            bookmark_interval: std::time::Duration::from_secs(60),
            requests: Default::default(),
            refusals: Default::default(),
            webhook_address: None,
            clock: crate::clock::Clock::system(),
            restarts: Default::default(),
        };
        let ns_key = ResKey::new("", "namespaces");
        for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            let mut obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            stamp_new(&mut obj, false, &meta::now());
            kinds::prepare_create("namespaces", &mut obj);
            let _ = api.store.create(&ns_key, obj);
        }
        api
    }

    /// Runs the admission hooks; returns the possibly mutated object.
    pub async fn admit(
        &self,
        attributes: Attributes<'_>,
        object: Option<Value>,
    ) -> Result<Option<Value>, ApiError> {
        let mut object = object;
        for hook in &self.admission {
            let attrs = Attributes {
                object: object.as_ref(),
                ..attributes
            };
            if let Some(mutated) = hook.admit(attrs).await? {
                object = Some(mutated);
            }
        }
        Ok(object)
    }

    /// 404 if the namespace is missing, 403 if it is terminating.
    pub fn check_namespace(&self, def: &ResourceDef, ns: &str, name: &str) -> Result<(), ApiError> {
        let Some(namespace) = self.store.get(&ResKey::new("", "namespaces"), "", ns) else {
            return Err(ApiError::not_found(
                &crate::error::GroupResource::new("", "namespaces"),
                ns,
            ));
        };
        if meta::is_deleting(&namespace) {
            let why =
                format!("unable to create new content in namespace {ns} because it is being terminated");
            return Err(ApiError::forbidden(&def.group_resource(), name, &why).with_cause(
                "NamespaceTerminating",
                &why,
                "metadata.namespace",
            ));
        }
        Ok(())
    }

    /// Creates an object (POST). `ns` is the namespace of the request path.
    pub async fn create(
        &self,
        def: &ResourceDef,
        ns: &str,
        obj: Value,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        let mut obj = validate::object_body(obj)?;
        obj["apiVersion"] = json!(def.api_version());
        obj["kind"] = json!(def.kind);
        crate::schema::prepare(def, &mut obj);
        validate::request_namespace(def, ns, &mut obj)?;
        if !meta::resource_version(&obj).is_empty() {
            return Err(ApiError::bad_request(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        let generate = obj["metadata"]["generateName"].as_str().map(String::from);
        if meta::name(&obj).is_empty()
            && let Some(prefix) = generate.filter(|p| !p.is_empty())
        {
            meta::metadata_mut(&mut obj).insert("name".into(), json!(meta::generate_name(&prefix)));
        }
        validate::name(def, &obj)?;
        let name = meta::name(&obj).to_string();
        if def.namespaced {
            self.check_namespace(def, ns, &name)?;
        }
        stamp_new(&mut obj, def.has_generation, &meta::timestamp(self.clock.now()));
        if def.has(crate::resources::Subresource::Status) {
            obj.as_object_mut().map(|m| m.remove("status"));
        }
        if def.builtin {
            crate::defaults::apply(&def.group, &def.plural, &mut obj);
        }
        kinds::prepare_create(&def.plural, &mut obj);
        if def.plural == "customresourcedefinitions" {
            validate::crd(&obj)?;
            obj["status"] = crd_status(&obj, &meta::now());
        }
        let attrs = Attributes {
            api: self,
            operation: Operation::Create,
            resource: def,
            subresource: None,
            namespace: ns,
            name: &name,
            object: None,
            old_object: None,
            dry_run,
        };
        let obj = self.admit(attrs, Some(obj)).await?.unwrap_or_default();
        validate::annotations(def, &obj)?;
        if dry_run {
            return Ok(obj);
        }
        if self.store.get(&key(def), meta::namespace(&obj), &name).is_some() {
            return Err(ApiError::already_exists(&def.group_resource(), &name));
        }
        let obj = self.to_storage(def, obj).await?;
        let stored = self
            .store
            .create(&key(def), obj)
            .map_err(|_| ApiError::already_exists(&def.group_resource(), &name))?;
        self.after_write(def, &stored);
        Ok(stored)
    }

    /// Updates an object (PUT of the resource or a subresource).
    pub async fn update(
        &self,
        def: &ResourceDef,
        ns: &str,
        name: &str,
        obj: Value,
        mode: UpdateMode,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        let mut obj = validate::object_body(obj)?;
        crate::schema::prepare(def, &mut obj);
        validate::request_namespace(def, ns, &mut obj)?;
        let body_name = meta::name(&obj);
        if !body_name.is_empty() && body_name != name {
            let msg =
                format!("the name of the object ({body_name}) does not match the name on the URL ({name})");
            return Err(ApiError::bad_request(msg));
        }
        let gr = def.group_resource();
        let current = self
            .store
            .get(&key(def), ns, name)
            .ok_or_else(|| ApiError::not_found(&gr, name))?;
        let wanted_rv = meta::resource_version(&obj).to_string();
        if !wanted_rv.is_empty() && wanted_rv != meta::resource_version(&current) {
            return Err(ApiError::stale(&gr, name));
        }
        // A custom resource is updated in the request's version (see `conversion`).
        let stored_rv = meta::resource_version(&current).to_string();
        let current = if def.crd.is_some() || crate::events::is_events_api(def) {
            self.present(def, current).await?
        } else {
            current
        };
        let mut new = merge_update(def, &current, obj, mode);
        if def.builtin && mode == UpdateMode::Main {
            crate::defaults::apply(&def.group, &def.plural, &mut new);
        }
        if def.has_generation && meta::spec_part(&new) != meta::spec_part(&current) {
            let generation = current["metadata"]["generation"].as_i64().unwrap_or(0) + 1;
            meta::metadata_mut(&mut new).insert("generation".into(), json!(generation));
        }
        if mode == UpdateMode::Main {
            validate::name(def, &new)?;
            kinds::validate_update(def, &current, &new)?;
            if def.builtin && def.plural == "pods" {
                crate::ephemeral::validate_pod_update(&current, &new)?;
            }
        }
        if mode == UpdateMode::EphemeralContainers {
            crate::ephemeral::default_new(&current, &mut new);
            crate::ephemeral::validate_update(&current, &new)?;
        }
        if new == current {
            return Ok(current);
        }
        let sub = match mode {
            UpdateMode::Main => None,
            UpdateMode::Status => Some("status"),
            UpdateMode::Finalize => Some("finalize"),
            UpdateMode::EphemeralContainers => Some("ephemeralcontainers"),
        };
        let attrs = Attributes {
            api: self,
            operation: Operation::Update,
            resource: def,
            subresource: sub,
            namespace: ns,
            name,
            object: None,
            old_object: Some(&current),
            dry_run,
        };
        let new = self.admit(attrs, Some(new)).await?.unwrap_or_default();
        if mode == UpdateMode::Main {
            validate::annotations(def, &new)?;
        }
        if dry_run {
            return Ok(new);
        }
        let new = self.to_storage(def, new).await?;
        let stored = self
            .store
            .update(&key(def), &stored_rv, new)
            .map_err(|e| match e {
                StoreError::NotFound => ApiError::not_found(&gr, name),
                _ => ApiError::stale(&gr, name),
            })?;
        self.after_write(def, &stored);
        if delete::ready_to_remove(def, &stored) {
            let _ = self
                .store
                .remove(&key(def), ns, name, meta::resource_version(&stored));
            self.after_remove(def, &stored);
        }
        Ok(stored)
    }

    /// Keeps the registry in step with stored CRDs.
    pub fn after_write(&self, def: &ResourceDef, obj: &Value) {
        if def.plural == "customresourcedefinitions" && def.group == "apiextensions.k8s.io" {
            self.registry.set_crd(meta::name(obj), crd_resources(obj));
        }
    }

    /// Cleans up after an object left the store (a CRD takes its custom resources along).
    pub fn after_remove(&self, def: &ResourceDef, obj: &Value) {
        if def.plural == "customresourcedefinitions" && def.group == "apiextensions.k8s.io" {
            self.registry.set_crd(meta::name(obj), vec![]);
            let group = obj["spec"]["group"].as_str().unwrap_or_default();
            let plural = obj["spec"]["names"]["plural"].as_str().unwrap_or_default();
            let k = ResKey::new(group, plural);
            for o in self.store.list(&k, None).0 {
                let _ = self.store.remove(
                    &k,
                    meta::namespace(&o),
                    meta::name(&o),
                    meta::resource_version(&o),
                );
            }
        }
    }
}

/// Sets uid, creationTimestamp (`now`) and generation of a new object; drops server-owned fields.
fn stamp_new(obj: &mut Value, has_generation: bool, now: &str) {
    let m = meta::metadata_mut(obj);
    m.insert("uid".into(), json!(meta::uid()));
    m.insert("creationTimestamp".into(), json!(now));
    m.remove("deletionTimestamp");
    m.remove("deletionGracePeriodSeconds");
    m.remove("selfLink");
    if has_generation {
        m.insert("generation".into(), json!(1));
    } else {
        m.remove("generation");
    }
}

/// The object an update stores: the request's object with server-owned metadata kept, and the
/// part the mode does not write taken from the stored object.
fn merge_update(def: &ResourceDef, current: &Value, obj: Value, mode: UpdateMode) -> Value {
    match mode {
        UpdateMode::Status => {
            let mut new = current.clone();
            match obj.get("status") {
                Some(s) => new["status"] = s.clone(),
                None => {
                    new.as_object_mut().map(|m| m.remove("status"));
                }
            }
            // Pods' status strategy keeps the request's labels and annotations (kube-apiserver resets
            // only the spec and a few metadata fields): node agents report through pods/status.
            if def.plural == "pods" {
                for k in ["labels", "annotations"] {
                    let m = meta::metadata_mut(&mut new);
                    match obj["metadata"].get(k) {
                        Some(v) if !v.is_null() => m.insert(k.into(), v.clone()),
                        _ => m.remove(k),
                    };
                }
            }
            new
        }
        UpdateMode::Finalize => {
            let mut new = current.clone();
            new["spec"]["finalizers"] = obj["spec"]["finalizers"].clone();
            new
        }
        UpdateMode::EphemeralContainers => {
            let mut new = current.clone();
            match obj["spec"].get("ephemeralContainers") {
                Some(list) if !list.is_null() => new["spec"]["ephemeralContainers"] = list.clone(),
                _ => {
                    new["spec"]
                        .as_object_mut()
                        .map(|m| m.remove("ephemeralContainers"));
                }
            }
            new
        }
        UpdateMode::Main => {
            let mut new = obj;
            new["apiVersion"] = current["apiVersion"].clone();
            new["kind"] = current["kind"].clone();
            let keep = [
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
                "namespace",
                "name",
                "resourceVersion",
            ];
            let cur_meta = current["metadata"].as_object().cloned().unwrap_or_default();
            let m = meta::metadata_mut(&mut new);
            for k in keep {
                match cur_meta.get(k) {
                    Some(v) => m.insert(k.into(), v.clone()),
                    None => m.remove(k),
                };
            }
            if !m.contains_key("managedFields")
                && let Some(mf) = cur_meta.get("managedFields")
            {
                m.insert("managedFields".into(), mf.clone());
            }
            if def.has(crate::resources::Subresource::Status) || def.plural == "namespaces" {
                match current.get("status") {
                    Some(s) => new["status"] = s.clone(),
                    None => {
                        new.as_object_mut().map(|m| m.remove("status"));
                    }
                }
            }
            if def.plural == "namespaces" {
                new["spec"] = current["spec"].clone();
            }
            new
        }
    }
}
