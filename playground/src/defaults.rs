//! Defaulting of the built-in kinds kube-apiserver applies to every request body (the
//! `SetDefaults_*` functions of `k8s.io/kubernetes/pkg/apis/*/v1`), for the fields controllers
//! and webhooks commonly look at: pod specs (also in workload templates), workloads, services.
//! Only unset fields are filled, so defaulting is idempotent.

use serde_json::{Value, json};

fn set(obj: &mut Value, key: &str, value: Value) {
    if let Some(m) = obj.as_object_mut()
        && m.get(key).is_none_or(Value::is_null)
    {
        m.insert(key.into(), value);
    }
}

fn image_pull_policy(image: &str) -> &'static str {
    let name = image.rsplit('/').next().unwrap_or(image);
    let tag = name
        .split_once('@')
        .map_or(name, |(n, _)| n)
        .split_once(':')
        .map(|(_, t)| t);
    match (image.contains('@'), tag) {
        (true, _) => "IfNotPresent",
        (false, None | Some("latest")) => "Always",
        _ => "IfNotPresent",
    }
}

fn container(c: &mut Value) {
    let image = c["image"].as_str().unwrap_or_default().to_string();
    set(c, "imagePullPolicy", json!(image_pull_policy(&image)));
    set(c, "terminationMessagePath", json!("/dev/termination-log"));
    set(c, "terminationMessagePolicy", json!("File"));
    set(c, "resources", json!({}));
    if let Some(ports) = c["ports"].as_array_mut() {
        for p in ports {
            set(p, "protocol", json!("TCP"));
        }
    }
}

/// Defaults of a new ephemeral container: pull policy, termination message path and policy.
pub fn ephemeral_container(c: &mut Value) {
    let image = c["image"].as_str().unwrap_or_default().to_string();
    set(c, "imagePullPolicy", json!(image_pull_policy(&image)));
    set(c, "terminationMessagePath", json!("/dev/termination-log"));
    set(c, "terminationMessagePolicy", json!("File"));
}

/// Defaults of a PodSpec.
pub fn pod_spec(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    set(spec, "restartPolicy", json!("Always"));
    set(spec, "terminationGracePeriodSeconds", json!(30));
    set(spec, "dnsPolicy", json!("ClusterFirst"));
    set(spec, "securityContext", json!({}));
    set(spec, "schedulerName", json!("default-scheduler"));
    set(spec, "enableServiceLinks", json!(true));
    for list in ["containers", "initContainers"] {
        if let Some(cs) = spec[list].as_array_mut() {
            cs.iter_mut().for_each(container);
        }
    }
}

fn template(obj: &mut Value) {
    pod_spec(&mut obj["spec"]["template"]["spec"]);
}

fn rolling(obj: &mut Value, field: &str, kind: &str) {
    let spec = &mut obj["spec"];
    set(spec, field, json!({"type": kind}));
    if spec[field]["type"] == "RollingUpdate" {
        let strategy = &mut spec[field];
        set(strategy, "rollingUpdate", json!({}));
    }
}

/// `SetDefaults_Job`: parallelism and completions 1 when both are unset, backoffLimit 6,
/// NonIndexed completion, not suspended, and the pod template's defaults.
fn job(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    if spec["completions"].is_null() && spec["parallelism"].is_null() {
        set(spec, "completions", json!(1));
    }
    set(spec, "parallelism", json!(1));
    set(spec, "backoffLimit", json!(6));
    set(spec, "completionMode", json!("NonIndexed"));
    set(spec, "suspend", json!(false));
    set(spec, "podReplacementPolicy", json!("TerminatingOrFailed"));
    pod_spec(&mut spec["template"]["spec"]);
}

/// Applies the defaults of `plural` (a built-in kind) to `obj`.
pub fn apply(group: &str, plural: &str, obj: &mut Value) {
    match (group, plural) {
        ("", "pods") => pod_spec(&mut obj["spec"]),
        ("apps", "deployments") => {
            let spec = &mut obj["spec"];
            set(spec, "replicas", json!(1));
            set(spec, "revisionHistoryLimit", json!(10));
            set(spec, "progressDeadlineSeconds", json!(600));
            rolling(obj, "strategy", "RollingUpdate");
            if obj["spec"]["strategy"]["type"] == "RollingUpdate" {
                let ru = &mut obj["spec"]["strategy"]["rollingUpdate"];
                set(ru, "maxUnavailable", json!("25%"));
                set(ru, "maxSurge", json!("25%"));
            }
            template(obj);
        }
        ("apps", "replicasets") => {
            set(&mut obj["spec"], "replicas", json!(1));
            template(obj);
        }
        ("apps", "statefulsets") => {
            let spec = &mut obj["spec"];
            set(spec, "replicas", json!(1));
            set(spec, "podManagementPolicy", json!("OrderedReady"));
            set(spec, "revisionHistoryLimit", json!(10));
            rolling(obj, "updateStrategy", "RollingUpdate");
            if obj["spec"]["updateStrategy"]["type"] == "RollingUpdate" {
                set(
                    &mut obj["spec"]["updateStrategy"]["rollingUpdate"],
                    "partition",
                    json!(0),
                );
            }
            template(obj);
        }
        ("apps", "daemonsets") => {
            set(&mut obj["spec"], "revisionHistoryLimit", json!(10));
            rolling(obj, "updateStrategy", "RollingUpdate");
            if obj["spec"]["updateStrategy"]["type"] == "RollingUpdate" {
                let ru = &mut obj["spec"]["updateStrategy"]["rollingUpdate"];
                set(ru, "maxUnavailable", json!(1));
                set(ru, "maxSurge", json!(0));
            }
            template(obj);
        }
        ("batch", "jobs") => job(&mut obj["spec"]),
        ("batch", "cronjobs") => {
            let spec = &mut obj["spec"];
            set(spec, "concurrencyPolicy", json!("Allow"));
            set(spec, "suspend", json!(false));
            set(spec, "successfulJobsHistoryLimit", json!(3));
            set(spec, "failedJobsHistoryLimit", json!(1));
            job(&mut spec["jobTemplate"]["spec"]);
        }
        ("", "services") => {
            let spec = &mut obj["spec"];
            set(spec, "type", json!("ClusterIP"));
            set(spec, "sessionAffinity", json!("None"));
            if let Some(ports) = spec["ports"].as_array_mut() {
                for p in ports {
                    set(p, "protocol", json!("TCP"));
                    let port = p["port"].clone();
                    set(p, "targetPort", port);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policy_follows_the_tag() {
        assert_eq!(image_pull_policy("nginx"), "Always");
        assert_eq!(image_pull_policy("nginx:latest"), "Always");
        assert_eq!(image_pull_policy("registry:5000/nginx:1.25"), "IfNotPresent");
        assert_eq!(image_pull_policy("registry:5000/nginx"), "Always");
        assert_eq!(image_pull_policy("nginx@sha256:abc"), "IfNotPresent");
    }

    #[test]
    fn defaulting_is_idempotent() {
        let mut d = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i:1"}]}}}});
        apply("apps", "deployments", &mut d);
        let once = d.clone();
        apply("apps", "deployments", &mut d);
        assert_eq!(d, once);
        assert_eq!(d["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
            "IfNotPresent"
        );
    }
}
