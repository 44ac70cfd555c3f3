//! Background controllers of the simulated control plane, run as one task against the [`Api`]:
//!
//! - garbage collector: dependents whose owners (by `ownerReferences[].uid`) are all gone are
//!   deleted (Background); dangling references next to a live owner are removed; an owner deleting
//!   with `orphan` has the references to it removed from its dependents, then loses the finalizer;
//!   an owner deleting with `foregroundDeletion` has its dependents deleted, and loses the
//!   finalizer once none is left;
//! - namespace controller: a `Terminating` namespace has its contents deleted, then its
//!   `spec.finalizers` emptied, which removes it;
//! - pod terminator (the simulated kubelet's part of graceful deletion): a pod with a pending grace
//!   period is removed `pod_termination_delay` after its deletion began (`None`: a real kubelet —
//!   `kubelet::cri` — removes it once its containers stopped).
//!
//! Each pass looks at the whole store (shared, not copied); passes run every 200 ms and on changes,
//! at most one per [`MIN_PASS_INTERVAL`] so that a burst of writes costs one pass, not one each.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::api::delete::{DeleteOptions, FOREGROUND, ORPHAN};
use crate::api::{Api, UpdateMode};
use crate::meta;
use crate::resources::ResourceDef;

/// The least time between two passes.
pub const MIN_PASS_INTERVAL: Duration = Duration::from_millis(50);

/// Runs the controllers until the task is aborted.
pub async fn run(api: Arc<Api>, pod_termination_delay: Option<Duration>) {
    loop {
        let notified = api.store.changed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let started = std::time::Instant::now();
        pass(&api, pod_termination_delay).await;
        // A pass walks every object: with many it waits as long as it took (as the simulation does).
        tokio::time::sleep(MIN_PASS_INTERVAL.max(started.elapsed())).await;
        tokio::select! {
            _ = notified => {}
            _ = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
    }
}

struct Obj {
    def: Arc<ResourceDef>,
    value: std::sync::Arc<Value>,
}

fn owner_uids(o: &Value) -> Vec<&str> {
    o["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["uid"].as_str())
        .collect()
}

fn snapshot(api: &Api) -> Vec<Obj> {
    let mut defs: HashMap<(String, String), Arc<ResourceDef>> = HashMap::new();
    for d in api.registry.all() {
        defs.entry((d.group.clone(), d.plural.clone()))
            .or_insert_with(|| Arc::new(d));
    }
    let mut out = vec![];
    for k in api.store.keys() {
        let Some(def) = defs.get(&(k.group.clone(), k.resource.clone())) else {
            continue;
        };
        for value in api.store.list_shared(&k, None).0 {
            out.push(Obj {
                def: def.clone(),
                value,
            });
        }
    }
    out
}

async fn remove(api: &Api, o: &Obj, policy: &str) {
    let opts = DeleteOptions {
        propagation_policy: Some(policy.into()),
        ..DeleteOptions::default()
    };
    let r = api
        .delete(&o.def, meta::namespace(&o.value), meta::name(&o.value), &opts)
        .await;
    if let Err(e) = r
        && e.code != 404
    {
        tracing::debug!(error = %e, "garbage collector delete failed");
    }
}

async fn write(api: &Api, o: &Obj, next: Value, mode: UpdateMode) {
    let (ns, name) = (meta::namespace(&o.value), meta::name(&o.value));
    if let Err(e) = api.update(&o.def, ns, name, next, mode, false).await {
        tracing::debug!(error = %e, "controller update failed");
    }
}

async fn drop_finalizer(api: &Api, o: &Obj, finalizer: &str) {
    let mut next = Value::clone(&o.value);
    let list: Vec<String> = meta::finalizers(&next)
        .into_iter()
        .filter(|f| f != finalizer)
        .collect();
    meta::set_finalizers(&mut next, &list);
    write(api, o, next, UpdateMode::Main).await;
}

/// One pass of every controller.
pub async fn pass(api: &Api, pod_termination_delay: Option<Duration>) {
    let objs = snapshot(api);
    let by_uid: HashMap<&str, &Obj> = objs.iter().map(|o| (meta::uid_of(&o.value), o)).collect();
    let mut has_dependents: HashSet<&str> = HashSet::new();
    for o in &objs {
        let owners = owner_uids(&o.value);
        if owners.is_empty() {
            continue;
        }
        has_dependents.extend(owners.iter().copied());
        let live: Vec<&&Obj> = owners.iter().filter_map(|u| by_uid.get(u)).collect();
        if live.is_empty() {
            if !meta::is_deleting(&o.value) {
                remove(api, o, "Background").await;
            }
            continue;
        }
        let orphaning: Vec<&str> = live
            .iter()
            .filter(|w| meta::is_deleting(&w.value) && meta::finalizers(&w.value).iter().any(|f| f == ORPHAN))
            .map(|w| meta::uid_of(&w.value))
            .collect();
        if live.len() < owners.len() || !orphaning.is_empty() {
            let mut next = Value::clone(&o.value);
            if let Some(refs) = next["metadata"]["ownerReferences"].as_array_mut() {
                refs.retain(|r| {
                    let uid = r["uid"].as_str().unwrap_or_default();
                    by_uid.contains_key(uid) && !orphaning.contains(&uid)
                });
                if refs.is_empty() {
                    meta::metadata_mut(&mut next).remove("ownerReferences");
                }
            }
            write(api, o, next, UpdateMode::Main).await;
            continue;
        }
        let foreground = live.iter().any(|w| {
            meta::is_deleting(&w.value) && meta::finalizers(&w.value).iter().any(|f| f == FOREGROUND)
        });
        if foreground && !meta::is_deleting(&o.value) {
            remove(api, o, "Foreground").await;
        }
    }
    for o in &objs {
        if !meta::is_deleting(&o.value) {
            continue;
        }
        let uid = meta::uid_of(&o.value);
        for f in [ORPHAN, FOREGROUND] {
            if meta::finalizers(&o.value).iter().any(|x| x == f) && !has_dependents.contains(uid) {
                drop_finalizer(api, o, f).await;
            }
        }
        if o.def.plural == "namespaces" && o.def.group.is_empty() {
            terminate_namespace(api, o, &objs).await;
        }
        if o.def.plural == "pods"
            && o.def.group.is_empty()
            && let Some(delay) = pod_termination_delay
        {
            terminate_pod(api, o, delay).await;
        }
    }
}

async fn terminate_namespace(api: &Api, ns: &Obj, objs: &[Obj]) {
    let name = meta::name(&ns.value);
    let contents: Vec<&Obj> = objs
        .iter()
        .filter(|o| o.def.namespaced && meta::namespace(&o.value) == name)
        .collect();
    for o in &contents {
        if !meta::is_deleting(&o.value) {
            remove(api, o, "Background").await;
        }
    }
    let pending = ns.value["spec"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty());
    if contents.is_empty() && pending {
        let mut next = Value::clone(&ns.value);
        next["spec"]["finalizers"] = json!([]);
        write(api, ns, next, UpdateMode::Finalize).await;
    }
}

async fn terminate_pod(api: &Api, pod: &Obj, delay: Duration) {
    let grace = pod.value["metadata"]["deletionGracePeriodSeconds"]
        .as_i64()
        .unwrap_or(0);
    if grace == 0 {
        return;
    }
    let Some(deadline) = pod.value["metadata"]["deletionTimestamp"]
        .as_str()
        .and_then(meta::parse_time)
    else {
        return;
    };
    let started = deadline - time::Duration::seconds(grace);
    let elapsed = time::OffsetDateTime::now_utc() - started;
    if elapsed >= delay.min(Duration::from_secs(grace as u64)) {
        let opts = DeleteOptions {
            grace_period_seconds: Some(0),
            ..DeleteOptions::default()
        };
        let (ns, name) = (meta::namespace(&pod.value), meta::name(&pod.value));
        let _ = api.delete(&pod.def, ns, name, &opts).await;
    }
}
