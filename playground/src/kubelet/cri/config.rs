//! A pod as CRI configurations: its host-network sandbox and its containers, labelled and annotated
//! as kubelet labels them (`kruise_cri::kubelet`), plus the playground's own labels.

use base64::Engine as _;
use kruise_cri::kubelet;
use kruise_cri::v1::{
    ContainerConfig, ContainerMetadata, ImageSpec, KeyValue, LinuxPodSandboxConfig,
    LinuxSandboxSecurityContext, NamespaceMode, NamespaceOption, PodSandboxConfig, PodSandboxMetadata,
};
use serde_json::Value;

use crate::api::Api;
use crate::meta;
use crate::store::ResKey;

/// Label (sandboxes and containers): the playground that created it (one id per playground).
pub const INSTANCE: &str = "playground.kruise.io/instance";
/// Label (sandboxes): the process id of that playground, so a later one can tell a leftover of a
/// crashed process (its pid is gone) from a live playground's sandbox.
pub const PID: &str = "playground.kruise.io/pid";

/// The pod's `terminationGracePeriodSeconds` (30 when unset, as the API defaults it).
pub fn termination_grace(pod: &Value) -> i64 {
    pod["spec"]["terminationGracePeriodSeconds"]
        .as_i64()
        .unwrap_or(30)
        .max(0)
}

fn pod_labels(pod: &Value) -> Vec<(String, String)> {
    vec![
        (kubelet::POD_NAME.into(), meta::name(pod).into()),
        (kubelet::POD_NAMESPACE.into(), meta::namespace(pod).into()),
        (kubelet::POD_UID.into(), meta::uid_of(pod).into()),
    ]
}

fn strings(map: &Value) -> impl Iterator<Item = (String, String)> + '_ {
    map.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
}

/// The sandbox of `pod` (attempt `attempt`): host network, no hostname (as kubelet leaves it for
/// host-network pods), the pod's labels and annotations with kubelet's and the playground's labels.
pub fn sandbox(pod: &Value, attempt: u32, instance: &str) -> PodSandboxConfig {
    let mut labels: std::collections::HashMap<String, String> = strings(&pod["metadata"]["labels"]).collect();
    labels.extend(pod_labels(pod));
    labels.insert(INSTANCE.into(), instance.into());
    labels.insert(PID.into(), std::process::id().to_string());
    PodSandboxConfig {
        metadata: Some(PodSandboxMetadata {
            name: meta::name(pod).into(),
            uid: meta::uid_of(pod).into(),
            namespace: meta::namespace(pod).into(),
            attempt,
        }),
        labels,
        annotations: strings(&pod["metadata"]["annotations"]).collect(),
        linux: Some(LinuxPodSandboxConfig {
            security_context: Some(LinuxSandboxSecurityContext {
                namespace_options: Some(NamespaceOption {
                    network: NamespaceMode::Node.into(),
                    ..NamespaceOption::default()
                }),
                ..LinuxSandboxSecurityContext::default()
            }),
            ..LinuxPodSandboxConfig::default()
        }),
        ..PodSandboxConfig::default()
    }
}

/// The container `spec` of `pod`, its `restart_count`-th run, or why it cannot be made (the message of
/// `CreateContainerConfigError`: a missing ConfigMap, Secret or key).
pub fn container(
    api: &Api,
    pod: &Value,
    spec: &Value,
    restart_count: u32,
    instance: &str,
) -> Result<ContainerConfig, String> {
    let name = spec["name"].as_str().unwrap_or_default();
    let image = spec["image"].as_str().unwrap_or_default();
    let list = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    let mut labels: std::collections::HashMap<String, String> = pod_labels(pod).into_iter().collect();
    labels.insert(kubelet::CONTAINER_NAME.into(), name.into());
    labels.insert(INSTANCE.into(), instance.into());
    let mut annotations = std::collections::HashMap::from([
        (
            kubelet::CONTAINER_HASH.to_owned(),
            kubelet::container_hash_hex(name, image),
        ),
        (
            kubelet::CONTAINER_RESTART_COUNT.to_owned(),
            restart_count.to_string(),
        ),
        (
            kubelet::POD_TERMINATION_GRACE_PERIOD.to_owned(),
            termination_grace(pod).to_string(),
        ),
        (
            kubelet::CONTAINER_TERMINATION_MESSAGE_PATH.to_owned(),
            spec["terminationMessagePath"]
                .as_str()
                .unwrap_or("/dev/termination-log")
                .to_owned(),
        ),
    ]);
    if let Some(grace) = pod["metadata"]["deletionGracePeriodSeconds"].as_i64() {
        annotations.insert(kubelet::POD_DELETION_GRACE_PERIOD.into(), grace.to_string());
    }
    if spec["lifecycle"]["preStop"].is_object() {
        annotations.insert(
            kubelet::CONTAINER_PRE_STOP_HANDLER.into(),
            spec["lifecycle"]["preStop"].to_string(),
        );
    }
    if spec["ports"].as_array().is_some_and(|p| !p.is_empty()) {
        annotations.insert(kubelet::CONTAINER_PORTS.into(), spec["ports"].to_string());
    }
    Ok(ContainerConfig {
        metadata: Some(ContainerMetadata {
            name: name.into(),
            attempt: restart_count,
        }),
        image: Some(ImageSpec {
            image: image.into(),
            ..ImageSpec::default()
        }),
        command: list(&spec["command"]),
        args: list(&spec["args"]),
        working_dir: spec["workingDir"].as_str().unwrap_or_default().into(),
        envs: env(api, pod, spec)?,
        labels,
        annotations,
        ..ContainerConfig::default()
    })
}

/// The container's `env`: literal values, `fieldRef` (the pod's name, namespace, uid, node,
/// service account, IPs, `metadata.labels['k']`, `metadata.annotations['k']`) and ConfigMap or Secret
/// keys. `envFrom` and `resourceFieldRef` are not supported (the variable is left out).
fn env(api: &Api, pod: &Value, spec: &Value) -> Result<Vec<KeyValue>, String> {
    let mut out = vec![];
    for e in spec["env"].as_array().into_iter().flatten() {
        let Some(name) = e["name"].as_str() else {
            continue;
        };
        let from = &e["valueFrom"];
        let value = if !from.is_object() {
            Some(e["value"].as_str().unwrap_or_default().to_owned())
        } else if let Some(path) = from["fieldRef"]["fieldPath"].as_str() {
            Some(field(pod, path))
        } else if from["configMapKeyRef"].is_object() {
            key_ref(api, pod, &from["configMapKeyRef"], "configmaps", "ConfigMap")?
        } else if from["secretKeyRef"].is_object() {
            key_ref(api, pod, &from["secretKeyRef"], "secrets", "Secret")?
        } else {
            None
        };
        if let Some(value) = value {
            out.push(KeyValue {
                key: name.to_owned(),
                value: value.into_bytes(),
            });
        }
    }
    Ok(out)
}

/// A `fieldRef` path's value ("" for one the pod does not have).
fn field(pod: &Value, path: &str) -> String {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let key_in = |prefix: &str| -> Option<String> {
        let rest = path.strip_prefix(prefix)?.strip_suffix("']")?;
        Some(rest.to_owned())
    };
    if let Some(k) = key_in("metadata.labels['") {
        return text(&pod["metadata"]["labels"][k.as_str()]);
    }
    if let Some(k) = key_in("metadata.annotations['") {
        return text(&pod["metadata"]["annotations"][k.as_str()]);
    }
    match path {
        "metadata.name" => meta::name(pod).to_owned(),
        "metadata.namespace" => meta::namespace(pod).to_owned(),
        "metadata.uid" => meta::uid_of(pod).to_owned(),
        "spec.nodeName" => text(&pod["spec"]["nodeName"]),
        "spec.serviceAccountName" => text(&pod["spec"]["serviceAccountName"]),
        // Host-network sandboxes: the pod's IP is the node's, loopback.
        "status.podIP" | "status.hostIP" => super::POD_IP.to_owned(),
        _ => String::new(),
    }
}

/// A ConfigMap or Secret key, `None` when it is missing and optional; the kubelet's message when it is
/// missing and required.
fn key_ref(api: &Api, pod: &Value, r: &Value, resource: &str, kind: &str) -> Result<Option<String>, String> {
    let (name, key) = (
        r["name"].as_str().unwrap_or_default(),
        r["key"].as_str().unwrap_or_default(),
    );
    let optional = r["optional"].as_bool() == Some(true);
    let ns = meta::namespace(pod);
    let Some(object) = api.store.get(&ResKey::new("", resource), ns, name) else {
        return if optional {
            Ok(None)
        } else {
            Err(format!("{} \"{name}\" not found", kind.to_lowercase()))
        };
    };
    if let Some(v) = object["data"][key].as_str() {
        return Ok(Some(if resource == "secrets" {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(v)
                .map_err(|e| format!("secret {ns}/{name} key {key}: {e}"))?;
            String::from_utf8_lossy(&bytes).into_owned()
        } else {
            v.to_owned()
        }));
    }
    if optional {
        Ok(None)
    } else {
        Err(format!("couldn't find key {key} in {kind} {ns}/{name}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> Value {
        json!({"metadata": {"name": "web-0", "namespace": "shop", "uid": "u-1",
                "labels": {"app": "web"}, "annotations": {"note": "x=y"}},
            "spec": {"nodeName": "node-1", "terminationGracePeriodSeconds": 5,
                "containers": [{"name": "main", "image": "127.0.0.1:5000/demo:v1",
                    "command": ["/bin/sh"], "args": ["-c", "sleep 9"], "ports": [{"containerPort": 80}],
                    "env": [{"name": "A", "value": "1"},
                        {"name": "NOTE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['note']"}}},
                        {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
                        {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]}]}})
    }

    #[test]
    fn the_sandbox_is_host_network_and_labelled_as_kubelet_labels_it() {
        let s = sandbox(&pod(), 2, "pg-1");
        let m = s.metadata.as_ref().unwrap();
        assert_eq!(
            (m.name.as_str(), m.namespace.as_str(), m.uid.as_str(), m.attempt),
            ("web-0", "shop", "u-1", 2)
        );
        assert_eq!(s.labels[kubelet::POD_UID], "u-1");
        assert_eq!(s.labels[kubelet::POD_NAME], "web-0");
        assert_eq!(s.labels["app"], "web");
        assert_eq!(s.labels[INSTANCE], "pg-1");
        assert_eq!(s.annotations["note"], "x=y");
        assert!(s.hostname.is_empty());
        let ns = s
            .linux
            .unwrap()
            .security_context
            .unwrap()
            .namespace_options
            .unwrap();
        assert_eq!(ns.network(), NamespaceMode::Node);
    }

    #[tokio::test]
    async fn the_container_carries_kubelet_annotations_and_resolved_env() {
        let api = Api::new(10, vec![]);
        let p = pod();
        let c = container(&api, &p, &p["spec"]["containers"][0], 3, "pg-1").unwrap();
        assert_eq!(c.metadata.as_ref().unwrap().attempt, 3);
        assert_eq!(c.labels[kubelet::CONTAINER_NAME], "main");
        assert_eq!(c.labels[kubelet::POD_NAMESPACE], "shop");
        assert_eq!(
            c.annotations[kubelet::CONTAINER_HASH],
            kubelet::container_hash_hex("main", "127.0.0.1:5000/demo:v1")
        );
        assert_eq!(c.annotations[kubelet::CONTAINER_RESTART_COUNT], "3");
        assert_eq!(c.annotations[kubelet::POD_TERMINATION_GRACE_PERIOD], "5");
        assert_eq!(
            c.annotations[kubelet::CONTAINER_PORTS],
            r#"[{"containerPort":80}]"#
        );
        assert_eq!(
            (c.command.clone(), c.args.clone()),
            (
                vec!["/bin/sh".to_owned()],
                vec!["-c".to_owned(), "sleep 9".to_owned()]
            )
        );
        let env: Vec<(&str, &str)> = c
            .envs
            .iter()
            .map(|e| (e.key.as_str(), std::str::from_utf8(&e.value).unwrap()))
            .collect();
        assert_eq!(
            env,
            [("A", "1"), ("NOTE", "x=y"), ("APP", "web"), ("IP", "127.0.0.1")]
        );
    }

    #[tokio::test]
    async fn a_missing_config_map_key_is_a_config_error_unless_optional() {
        let api = Api::new(10, vec![]);
        let mut p = pod();
        p["spec"]["containers"][0]["env"] =
            json!([{"name": "K", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "k"}}}]);
        let err = container(&api, &p, &p["spec"]["containers"][0], 0, "pg").unwrap_err();
        assert_eq!(err, "configmap \"cfg\" not found");
        p["spec"]["containers"][0]["env"][0]["valueFrom"]["configMapKeyRef"]["optional"] = json!(true);
        let c = container(&api, &p, &p["spec"]["containers"][0], 0, "pg").unwrap();
        assert!(c.envs.is_empty());
    }
}
