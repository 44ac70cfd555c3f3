//! The part of Kubernetes' pod validation (`k8s.io/kubernetes/pkg/apis/core/validation`) that OpenKruise
//! runs on CloneSet templates (`ValidatePodTemplateSpec`) and on a SidecarSet's containers and volumes
//! (`ValidatePodCreate` of a fake pod), with Kubernetes' field paths and wording.
//!
//! Covered: volumes (name required, DNS label, unique, exactly one source), containers and init
//! containers (name required / DNS label / unique across both lists, image required and without
//! surrounding whitespace for pods, terminationMessagePolicy and imagePullPolicy required and supported,
//! ports (name, number, protocol), env names, volumeMounts (name known, mountPath required and unique),
//! volumeDevices (name known and of a PVC or ephemeral volume, devicePath required, unique, without `..`;
//! neither name nor path shared with a volumeMount),
//! probes (one handler, non-negative numbers, liveness/startup successThreshold 1), native sidecar
//! `restartPolicy`, probes and lifecycle only on regular or sidecar containers), restartPolicy,
//! dnsPolicy, nodeSelector labels, activeDeadlineSeconds range, template labels and annotations,
//! ephemeral containers forbidden in templates.
//! Not covered (the apiserver still validates the pods it creates): resources, security contexts,
//! affinity, tolerations, topology spread, DNS config, host namespaces, seccomp/AppArmor annotations.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::field::{
    ErrorList, GoValue, Path, duplicate, forbidden, invalid, not_found, not_supported, required, str_at,
};
use super::meta::{dns1123_label, port_name, validate_annotations, validate_labels, validate_nonnegative};

const VOLUME_SOURCES: &[&str] = &[
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
];

fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// The valid volumes by name: true for a block-capable source (`persistentVolumeClaim` or `ephemeral`).
type Volumes = BTreeMap<String, bool>;

/// `ValidateVolumes`: the valid volumes, and the errors.
pub fn validate_volumes(volumes: &[Value], path: &Path) -> (Volumes, ErrorList) {
    let mut names = Volumes::new();
    let mut errs = ErrorList::new();
    for (i, vol) in volumes.iter().enumerate() {
        let p = path.index(i);
        let mut el = ErrorList::new();
        let sources: Vec<&str> = VOLUME_SOURCES
            .iter()
            .copied()
            .filter(|s| vol.get(*s).is_some_and(|v| !v.is_null()))
            .collect();
        match sources.len() {
            0 => el.push(required(&p, "must specify a volume type")),
            1 => {}
            _ => el.push(forbidden(
                &p.child(sources[1]),
                "may not specify more than 1 volume type",
            )),
        }
        let name = str_at(vol, "name");
        let name_path = p.child("name");
        if name.is_empty() {
            el.push(required(&name_path, ""));
        } else {
            el.extend(
                dns1123_label(name)
                    .into_iter()
                    .map(|m| invalid(&name_path, name, m)),
            );
        }
        if names.contains_key(name) {
            el.push(duplicate(&name_path, name));
        }
        if el.is_empty() {
            let block = matches!(sources.first(), Some(&("persistentVolumeClaim" | "ephemeral")));
            names.insert(name.to_string(), block);
        } else {
            errs.extend(el);
        }
    }
    (names, errs)
}

pub(crate) fn validate_ports(ports: &[Value], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let p = path.index(i);
        let name = str_at(port, "name");
        if !name.is_empty() {
            let msgs = port_name(name);
            if !msgs.is_empty() {
                errs.extend(msgs.into_iter().map(|m| invalid(&p.child("name"), name, m)));
            } else if !names.insert(name.to_string()) {
                errs.push(duplicate(&p.child("name"), name));
            }
        }
        let number = |key: &str| port.get(key).and_then(Value::as_i64).unwrap_or(0);
        let container_port = number("containerPort");
        if container_port == 0 {
            errs.push(required(&p.child("containerPort"), ""));
        } else if !(1..=65535).contains(&container_port) {
            errs.push(invalid(
                &p.child("containerPort"),
                container_port,
                "must be between 1 and 65535, inclusive",
            ));
        }
        let host_port = number("hostPort");
        if host_port != 0 && !(1..=65535).contains(&host_port) {
            errs.push(invalid(
                &p.child("hostPort"),
                host_port,
                "must be between 1 and 65535, inclusive",
            ));
        }
        match str_at(port, "protocol") {
            "" => errs.push(required(&p.child("protocol"), "")),
            "TCP" | "UDP" | "SCTP" => {}
            other => errs.push(not_supported(
                &p.child("protocol"),
                other,
                &["SCTP", "TCP", "UDP"],
            )),
        }
    }
    errs
}

/// The liveness, readiness and startup probes of a container (readiness may succeed more than once).
fn validate_probes(container: &Value, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for (key, must_succeed_once) in [
        ("livenessProbe", true),
        ("readinessProbe", false),
        ("startupProbe", true),
    ] {
        errs.extend(validate_probe(
            container.get(key),
            &path.child(key),
            must_succeed_once,
        ));
    }
    errs
}

fn validate_probe(probe: Option<&Value>, path: &Path, must_succeed_once: bool) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(probe) = probe.filter(|p| !p.is_null()) else {
        return errs;
    };
    let handlers = ["exec", "httpGet", "tcpSocket", "grpc"]
        .iter()
        .filter(|h| probe.get(**h).is_some_and(|v| !v.is_null()))
        .count();
    if handlers == 0 {
        errs.push(required(path, "must specify a handler type"));
    } else if handlers > 1 {
        errs.push(forbidden(path, "may not specify more than 1 handler type"));
    }
    for key in [
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ] {
        if let Some(n) = probe.get(key).and_then(Value::as_i64) {
            errs.extend(validate_nonnegative(n, &path.child(key)));
        }
    }
    if must_succeed_once
        && let Some(n) = probe.get("successThreshold").and_then(Value::as_i64)
        && n != 1
    {
        errs.push(invalid(&path.child("successThreshold"), n, "must be 1"));
    }
    errs
}

fn validate_container_common(c: &Value, volumes: &Volumes, path: &Path, for_pod: bool) -> ErrorList {
    let mut errs = ErrorList::new();
    let name = str_at(c, "name");
    if name.is_empty() {
        errs.push(required(&path.child("name"), ""));
    } else {
        errs.extend(
            dns1123_label(name)
                .into_iter()
                .map(|m| invalid(&path.child("name"), name, m)),
        );
    }
    let image = str_at(c, "image");
    if image.is_empty() {
        errs.push(required(&path.child("image"), ""));
    }
    match str_at(c, "terminationMessagePolicy") {
        "File" | "FallbackToLogsOnError" => {}
        "" => errs.push(required(&path.child("terminationMessagePolicy"), "")),
        other => errs.push(not_supported(
            &path.child("terminationMessagePolicy"),
            other,
            &["File", "FallbackToLogsOnError"],
        )),
    }
    errs.extend(validate_ports(items(c, "ports"), &path.child("ports")));
    for (i, env) in items(c, "env").iter().enumerate() {
        if str_at(env, "name").is_empty() {
            errs.push(required(&path.child("env").index(i).child("name"), ""));
        }
    }
    let mounts = items(c, "volumeMounts");
    let devices = items(c, "volumeDevices");
    let names_and_paths = |list: &'_ [Value], key: &str| -> Vec<(String, String)> {
        list.iter()
            .map(|v| (str_at(v, "name").to_string(), str_at(v, key).to_string()))
            .collect()
    };
    let (mount_map, device_map) = (
        names_and_paths(mounts, "mountPath"),
        names_and_paths(devices, "devicePath"),
    );
    let mut mount_paths = BTreeSet::new();
    for (i, mnt) in mounts.iter().enumerate() {
        let p = path.child("volumeMounts").index(i);
        let mname = str_at(mnt, "name");
        if mname.is_empty() {
            errs.push(required(&p.child("name"), ""));
        }
        if !volumes.contains_key(mname) {
            errs.push(not_found(&p.child("name"), mname));
        }
        let mpath = str_at(mnt, "mountPath");
        if mpath.is_empty() {
            errs.push(required(&p.child("mountPath"), ""));
        }
        if !mount_paths.insert(mpath.to_string()) {
            errs.push(invalid(&p.child("mountPath"), mpath, "must be unique"));
        }
        if device_map.iter().any(|(n, _)| n == mname) {
            errs.push(invalid(
                &p.child("name"),
                mname,
                "must not already exist in volumeDevices",
            ));
        }
        if device_map.iter().any(|(_, dp)| dp == mpath) {
            errs.push(invalid(
                &p.child("mountPath"),
                mpath,
                "must not already exist as a path in volumeDevices",
            ));
        }
    }
    errs.extend(validate_volume_devices(
        devices,
        &mount_map,
        volumes,
        &path.child("volumeDevices"),
    ));
    match str_at(c, "imagePullPolicy") {
        "Always" | "IfNotPresent" | "Never" => {}
        "" => errs.push(required(&path.child("imagePullPolicy"), "")),
        other => errs.push(not_supported(
            &path.child("imagePullPolicy"),
            other,
            &["Always", "IfNotPresent", "Never"],
        )),
    }
    if for_pod && image.len() != image.trim().len() {
        errs.push(invalid(
            &path.child("image"),
            image,
            "must not have leading or trailing whitespace",
        ));
    }
    errs
}

/// `ValidateVolumeDevices`: `mounts` are the container's volumeMounts as (name, mountPath).
fn validate_volume_devices(
    devices: &[Value],
    mounts: &[(String, String)],
    volumes: &Volumes,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let (mut names, mut paths) = (BTreeSet::new(), BTreeSet::new());
    for (i, dev) in devices.iter().enumerate() {
        let p = path.index(i);
        let (name, dpath) = (str_at(dev, "name"), str_at(dev, "devicePath"));
        if name.is_empty() {
            errs.push(required(&p.child("name"), ""));
        }
        if names.contains(name) {
            errs.push(invalid(&p.child("name"), name, "must be unique"));
        }
        match volumes.get(name) {
            Some(false) => errs.push(invalid(
                &p.child("name"),
                name,
                "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
            )),
            Some(true) => {}
            None => errs.push(not_found(&p.child("name"), name)),
        }
        if dpath.is_empty() {
            errs.push(required(&p.child("devicePath"), ""));
        }
        if paths.contains(dpath) {
            errs.push(invalid(&p.child("devicePath"), dpath, "must be unique"));
        }
        if !dpath.is_empty() && dpath.split('/').any(|part| part == "..") {
            errs.push(invalid(
                &p.child("devicePath"),
                dpath,
                "can not contain backsteps ('..')",
            ));
        } else {
            paths.insert(dpath);
        }
        if mounts.iter().any(|(n, _)| n == name) {
            errs.push(invalid(
                &p.child("name"),
                name,
                "must not already exist in volumeMounts",
            ));
        }
        if mounts.iter().any(|(_, mp)| mp == dpath) {
            errs.push(invalid(
                &p.child("devicePath"),
                dpath,
                "must not already exist as a path in volumeMounts",
            ));
        }
        if !name.is_empty() {
            names.insert(name);
        }
    }
    errs
}

/// `ValidatePodSpec` (the subset documented above) of the pod spec `spec` at `path`; `for_pod` adds the
/// pod-only checks of `ValidatePodCreate`.
pub fn validate_pod_spec(spec: &Value, path: &Path, for_pod: bool) -> ErrorList {
    let mut errs = ErrorList::new();
    let (volumes, vol_errs) = validate_volumes(items(spec, "volumes"), &path.child("volumes"));
    errs.extend(vol_errs);

    let containers = items(spec, "containers");
    let cpath = path.child("containers");
    let mut names = BTreeSet::new();
    if containers.is_empty() {
        errs.push(required(&cpath, ""));
    }
    for (i, c) in containers.iter().enumerate() {
        let p = cpath.index(i);
        errs.extend(validate_container_common(c, &volumes, &p, for_pod));
        let name = str_at(c, "name");
        if !names.insert(name.to_string()) {
            errs.push(duplicate(&p.child("name"), name));
        }
        errs.extend(validate_probes(c, &p));
        if c.get("restartPolicy").is_some_and(|v| !v.is_null()) {
            errs.push(forbidden(
                &p.child("restartPolicy"),
                "may not be set for non-init containers",
            ));
        }
    }

    let ipath = path.child("initContainers");
    for (i, c) in items(spec, "initContainers").iter().enumerate() {
        let p = ipath.index(i);
        errs.extend(validate_container_common(c, &volumes, &p, for_pod));
        let name = str_at(c, "name");
        if !names.insert(name.to_string()) {
            errs.push(duplicate(&p.child("name"), name));
        }
        let sidecar = match c.get("restartPolicy") {
            None | Some(Value::Null) => false,
            Some(v) => {
                let policy = v.as_str().unwrap_or("");
                if policy != "Always" {
                    errs.push(not_supported(&p.child("restartPolicy"), policy, &["Always"]));
                }
                policy == "Always"
            }
        };
        if sidecar {
            errs.extend(validate_probes(c, &p));
        } else {
            for key in ["lifecycle", "livenessProbe", "readinessProbe", "startupProbe"] {
                if c.get(key).is_some_and(|v| !v.is_null()) {
                    errs.push(forbidden(
                        &p.child(key),
                        "may not be set for init containers without restartPolicy=Always",
                    ));
                }
            }
        }
    }

    match str_at(spec, "restartPolicy") {
        "Always" | "OnFailure" | "Never" => {}
        "" => errs.push(required(&path.child("restartPolicy"), "")),
        other => errs.push(not_supported(
            &path.child("restartPolicy"),
            other,
            &["Always", "OnFailure", "Never"],
        )),
    }
    match str_at(spec, "dnsPolicy") {
        "ClusterFirstWithHostNet" | "ClusterFirst" | "Default" | "None" => {}
        "" => errs.push(required(&path.child("dnsPolicy"), "")),
        other => errs.push(not_supported(
            &path.child("dnsPolicy"),
            other,
            &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
        )),
    }
    errs.extend(validate_labels(
        spec.get("nodeSelector"),
        &path.child("nodeSelector"),
    ));
    if let Some(v) = spec.get("activeDeadlineSeconds").and_then(Value::as_i64)
        && !(1..=i64::from(u32::MAX)).contains(&v)
    {
        errs.push(invalid(
            &path.child("activeDeadlineSeconds"),
            GoValue::Int(v),
            format!("must be between 1 and {}, inclusive", u32::MAX),
        ));
    }
    errs
}

/// `ValidatePodTemplateSpec` of `template` at `path` (`spec.template`).
pub fn validate_pod_template(template: &Value, path: &Path) -> ErrorList {
    let null = Value::Null;
    let meta = template.get("metadata").unwrap_or(&null);
    let mut errs = validate_labels(meta.get("labels"), &path.child("labels"));
    errs.extend(validate_annotations(
        meta.get("annotations"),
        &path.child("annotations"),
    ));
    let spec = template.get("spec").unwrap_or(&null);
    errs.extend(validate_pod_spec(spec, &path.child("spec"), false));
    if !items(spec, "ephemeralContainers").is_empty() {
        errs.push(forbidden(
            &path.child("spec").child("ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::field::aggregate;
    use serde_json::json;

    fn good_container() -> Value {
        json!({"name": "app", "image": "nginx", "imagePullPolicy": "Always",
            "terminationMessagePolicy": "File"})
    }

    #[test]
    fn a_defaulted_spec_is_valid() {
        let spec = json!({"containers": [good_container()], "restartPolicy": "Always",
            "dnsPolicy": "ClusterFirst", "volumes": [{"name": "data", "emptyDir": {}}]});
        assert_eq!(validate_pod_spec(&spec, &Path::new("spec"), true), vec![]);
    }

    #[test]
    fn container_errors_are_named_by_path() {
        let mut c = good_container();
        c["name"] = json!("");
        c["volumeMounts"] = json!([{"name": "nope", "mountPath": "/x"}]);
        let spec = json!({"containers": [c, good_container(), good_container()], "restartPolicy": "Sometimes",
            "dnsPolicy": "ClusterFirst"});
        let errs = validate_pod_spec(&spec, &Path::new("spec"), true);
        assert_eq!(
            aggregate(&errs).unwrap(),
            "[spec.containers[0].name: Required value, spec.containers[0].volumeMounts[0].name: Not found: \"nope\", spec.containers[2].name: Duplicate value: \"app\", spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"]"
        );
    }
}
