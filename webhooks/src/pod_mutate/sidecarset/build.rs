//! The pod-dependent part of a sidecar (docs/sidecarset-injection.md#building-a-sidecar): shared volume
//! mounts and devices
//! with the env vars their `subPathExpr` needs, `transferEnv`, and hot-upgrade pairs. Reads only the raw
//! fields it needs from the pod.

use foldhash::HashSet;
use kruise_core::sidecarset::{version_alt_annotation, version_annotation};
use serde_json::{Map, Value, json};

use super::{
    plan::{SidecarPlan, Source},
    pod_containers::{PodContainers, name, str_field},
};

/// The sidecar container for this pod (before any hot-upgrade split).
pub(crate) fn container(
    sidecar: &SidecarPlan,
    pod: &PodContainers<'_>,
    label: impl Fn(&str) -> Option<String>,
    annotation: impl Fn(&str) -> Option<String>,
) -> Value {
    let mut c = sidecar.base.clone();
    if sidecar.is_static() {
        return c;
    }
    let empty = (Vec::new(), Vec::new());
    let (mounts, sub_path_envs) = if sidecar.share_volumes {
        pod.shared_mounts()
    } else {
        &empty
    };
    // transferEnv, then the subPathExpr envs whose names are not transferred.
    let mut transfer: Vec<Value> = Vec::new();
    for t in &sidecar.transfer {
        let source = match &t.source {
            Source::Name(n) => n.clone(),
            Source::Label(k) => label(k).unwrap_or_default(),
            Source::Annotation(k) => annotation(k).unwrap_or_default(),
        };
        for env in &t.env_names {
            if let Some(v) = pod.env_of(&source, env) {
                transfer.push(v.clone());
            }
        }
    }
    let mut transferred: HashSet<String> = transfer.iter().map(|e| name(e).to_string()).collect();
    for env in sub_path_envs {
        if transferred.insert(name(env).to_string()) {
            transfer.push((*env).clone());
        }
    }
    // The sidecar's own paths are read from `sidecar.base`, which `c` copies, so that they can be borrowed
    // while `c` changes.
    let own_paths = |key: &str, field: &'static str| {
        sidecar
            .base
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(move |v| str_field(v, field).unwrap_or_default())
    };
    let Some(map) = c.as_object_mut() else { return c };
    if !mounts.is_empty() {
        let mut own = take_array(map, "volumeMounts");
        let mut paths: HashSet<&str> = own_paths("volumeMounts", "mountPath")
            .chain(own_paths("volumeDevices", "devicePath"))
            .collect();
        for m in mounts {
            if paths.insert(str_field(m, "mountPath").unwrap_or_default()) {
                own.push((*m).clone());
            }
        }
        map.insert("volumeMounts".into(), Value::Array(own));
    }
    if !transfer.is_empty() {
        let mut env = take_array(map, "env");
        let mut names: HashSet<String> = env.iter().map(|e| name(e).to_string()).collect();
        for e in transfer {
            if names.insert(name(&e).to_string()) {
                env.push(e);
            }
        }
        map.insert("env".into(), Value::Array(env));
    }
    if sidecar.share_devices {
        let devices_in = pod.shared_devices();
        if !devices_in.is_empty() {
            let mut own = take_array(map, "volumeDevices");
            // The mounts as they are now (the shared ones included) count, so they are read from `map`.
            let mut paths: HashSet<String> = array_in(map, "volumeMounts")
                .iter()
                .map(|m| str_field(m, "mountPath").unwrap_or_default().to_string())
                .collect();
            paths.extend(own_paths("volumeDevices", "devicePath").map(str::to_string));
            for d in devices_in {
                if paths.insert(str_field(d, "devicePath").unwrap_or_default().to_string()) {
                    own.push((*d).clone());
                }
            }
            map.insert("volumeDevices".into(), Value::Array(own));
        }
    }
    c
}

fn take_array(map: &mut Map<String, Value>, key: &str) -> Vec<Value> {
    match map.remove(key) {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    }
}

fn array_in<'m>(map: &'m Map<String, Value>, key: &str) -> &'m [Value] {
    map.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// The hot-upgrade pair of `container` (named `C`): `C-1` with the image and `C-2` with the empty image,
/// each with `SIDECARSET_VERSION` / `SIDECARSET_VERSION_ALT` from its version annotations.
pub(crate) fn hot_pair(sidecar_name: &str, container: &Value, empty_image: &str) -> [Value; 2] {
    let pair = |suffix: &str, image: Option<&str>| {
        let own = format!("{sidecar_name}-{suffix}");
        let mut c = container.clone();
        if let Some(map) = c.as_object_mut() {
            map.insert("name".into(), Value::String(own.clone()));
            match image {
                Some("") => {
                    map.remove("image");
                }
                Some(image) => {
                    map.insert("image".into(), Value::String(image.to_string()));
                }
                None => {}
            }
            let mut env = take_array(map, "env");
            for (var, annotation) in [
                ("SIDECARSET_VERSION", version_annotation(&own)),
                ("SIDECARSET_VERSION_ALT", version_alt_annotation(&own)),
            ] {
                env.push(json!({"name": var, "valueFrom": {"fieldRef": {
                    "fieldPath": format!("metadata.annotations['{annotation}']")}}}));
            }
            map.insert("env".into(), Value::Array(env));
        }
        c
    };
    [pair("1", None), pair("2", Some(empty_image))]
}
