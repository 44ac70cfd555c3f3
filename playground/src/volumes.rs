//! A volume binder standing in for kube-controller-manager's PersistentVolume controller
//! (`pkg/controller/volume/persistentvolume` in k8s.io/kubernetes) and a dynamic provisioner:
//!
//! - a claim naming an existing unbound volume (`spec.volumeName`) is bound to it; any other
//!   pending claim gets a made-up volume `pvc-<claim uid>` (hostPath, the claim's requested
//!   storage, access modes, storage class and volume mode, reclaim policy `Delete`,
//!   annotated `pv.kubernetes.io/provisioned-by: playground`);
//! - bound: the claim gets `spec.volumeName`, the `pv.kubernetes.io/bind-completed` and
//!   `bound-by-controller` annotations and status `Bound` with capacity and access modes; the
//!   volume a `claimRef` and status `Bound`;
//! - a bound volume whose claim is gone is `Released`, then deleted when its reclaim policy is
//!   `Delete` (a `Retain` volume stays `Released`).
//!
//! Storage classes, `WaitForFirstConsumer` binding, selectors and size matching of existing
//! volumes are not simulated.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::api::{Api, UpdateMode};
use crate::meta;
use crate::resources::ResourceDef;
use crate::store::ResKey;
use crate::workload;

/// The annotation on claims the controller finished binding.
pub const BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
/// The annotation on objects the controller bound (not the user).
pub const BOUND_BY_CONTROLLER: &str = "pv.kubernetes.io/bound-by-controller";

/// One pass: binds pending claims, releases volumes of deleted claims.
pub async fn sync(api: &Api) {
    let (claims, _) = api
        .store
        .list_shared(&ResKey::new("", "persistentvolumeclaims"), None);
    let (volumes, _) = api.store.list_shared(&ResKey::new("", "persistentvolumes"), None);
    if claims.is_empty() && volumes.is_empty() {
        return;
    }
    let (Some(cdef), Some(vdef)) = (
        api.registry.find("", "v1", "persistentvolumeclaims"),
        api.registry.find("", "v1", "persistentvolumes"),
    ) else {
        return;
    };
    let uids: HashMap<&str, &Value> = claims.iter().map(|c| (meta::uid_of(c), &**c)).collect();
    for claim in claims
        .iter()
        .filter(|c| !meta::is_deleting(c) && c["status"]["phase"] != "Bound")
    {
        bind(api, &cdef, &vdef, claim).await;
    }
    for volume in volumes.iter().filter(|v| !meta::is_deleting(v)) {
        let claim_uid = volume["spec"]["claimRef"]["uid"].as_str();
        let phase = volume["status"]["phase"].as_str();
        let claim_gone = claim_uid.is_some_and(|u| !uids.contains_key(u));
        if claim_gone && phase == Some("Bound") {
            set_phase(api, &vdef, volume, "Released").await;
        } else if claim_gone
            && phase == Some("Released")
            && volume["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
        {
            workload::delete(api, &vdef, volume).await;
        }
    }
}

async fn set_phase(api: &Api, vdef: &ResourceDef, volume: &Value, phase: &str) {
    workload::set_status(api, vdef, volume, json!({"phase": phase})).await;
}

async fn bind(api: &Api, cdef: &ResourceDef, vdef: &ResourceDef, claim: &Value) {
    let (ns, name) = (meta::namespace(claim), meta::name(claim));
    let claim_ref = json!({"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": ns, "name": name,
                           "uid": meta::uid_of(claim), "resourceVersion": meta::resource_version(claim)});
    let wanted = claim["spec"]["volumeName"].as_str().filter(|v| !v.is_empty());
    let existing = wanted.and_then(|v| api.store.get(&ResKey::new("", "persistentvolumes"), "", v));
    let volume = match existing {
        Some(v)
            if v["spec"]["claimRef"]["uid"]
                .as_str()
                .is_some_and(|u| u != meta::uid_of(claim)) =>
        {
            return;
        }
        Some(mut v) => {
            v["spec"]["claimRef"] = claim_ref;
            let pv_name = meta::name(&v).to_string();
            match api.update(vdef, "", &pv_name, v, UpdateMode::Main, false).await {
                Ok(v) => v,
                Err(_) => return,
            }
        }
        // A claim naming a volume that does not exist waits for it.
        None if wanted.is_some() => return,
        None => {
            let pv_name = format!("pvc-{}", meta::uid_of(claim));
            let storage = claim["spec"]["resources"]["requests"]["storage"].clone();
            let mut spec = json!({
                "capacity": {"storage": if storage.is_null() { json!("1Gi") } else { storage }},
                "accessModes": claim["spec"]["accessModes"].clone(),
                "persistentVolumeReclaimPolicy": "Delete",
                "volumeMode": claim["spec"]["volumeMode"].as_str().unwrap_or("Filesystem"),
                "hostPath": {"path": format!("/var/local-path-provisioner/{pv_name}_{ns}_{name}"), "type": "DirectoryOrCreate"},
                "claimRef": claim_ref,
            });
            if let Some(class) = claim["spec"]["storageClassName"].as_str() {
                spec["storageClassName"] = json!(class);
            }
            let pv = json!({"metadata": {"name": pv_name, "annotations": {
                               "pv.kubernetes.io/provisioned-by": "playground", BOUND_BY_CONTROLLER: "yes"}},
                            "spec": spec});
            match api.create(vdef, "", pv, false).await {
                Ok(v) => v,
                Err(_) => match api.store.get(&ResKey::new("", "persistentvolumes"), "", &pv_name) {
                    Some(v) => v,
                    None => return,
                },
            }
        }
    };
    set_phase(api, vdef, &volume, "Bound").await;
    let mut next = claim.clone();
    next["spec"]["volumeName"] = json!(meta::name(&volume));
    let annotations = &mut next["metadata"]["annotations"];
    if !annotations.is_object() {
        *annotations = json!({});
    }
    annotations[BIND_COMPLETED] = json!("yes");
    if wanted.is_none() {
        annotations[BOUND_BY_CONTROLLER] = json!("yes");
    }
    let Ok(bound) = api.update(cdef, ns, name, next, UpdateMode::Main, false).await else {
        return;
    };
    let status = json!({"phase": "Bound", "accessModes": volume["spec"]["accessModes"],
                        "capacity": volume["spec"]["capacity"]});
    workload::set_status(api, cdef, &bound, status).await;
}
