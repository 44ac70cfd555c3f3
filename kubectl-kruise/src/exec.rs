//! `exec (POD|TYPE/NAME) [-c C] [-S SIDECAR] [-i] [-t] -- CMD`: resolves a workload to one of its pods
//! (the most active one its selector picks, as kubectl does), picks the SidecarSet hot-upgrade
//! working container with `-S`, and runs `kubectl exec` on that pod; kubectl's exit code (the remote
//! command's) is the plugin's.

use std::time::{Duration, Instant};

use kruise_api::PodRecord;
use kruise_core::selector::Selector;
use kube::api::{Api, ApiResource, ListParams};
use serde_json::Value;

use crate::{
    Error,
    cli::ExecArgs,
    client::{KubeFlags, Session},
    kinds::{self, Kind},
};

/// A pod of the cluster, as far as `exec` needs it.
pub type Pod = PodRecord;

/// The container of `pod` to enter: with `sidecar`, the working container the pod's
/// `kruise.io/sidecarset-working-hotupgrade-container` annotation records for it (a JSON map from
/// SidecarSet container to working container); otherwise (or when the map does not name it)
/// `container`.
pub fn working_container(
    pod: &Pod,
    sidecar: Option<&str>,
    container: Option<&str>,
) -> (Option<String>, bool) {
    let working = sidecar.and_then(|s| {
        let text = pod
            .metadata
            .annotations
            .get(kruise_core::sidecarset::SIDECARSET_WORKING_HOTUPGRADE_CONTAINER)?;
        let map: std::collections::BTreeMap<String, String> = serde_json::from_str(text).ok()?;
        map.get(s).cloned()
    });
    match working {
        Some(w) => (Some(w), true),
        None => (container.map(str::to_string), false),
    }
}

/// kubectl's arguments: the connection flags, the pod's namespace, `exec POD [-c C] [-i] [-t] -- CMD`.
pub fn kubectl_args(
    kube: &KubeFlags,
    namespace: &str,
    pod: &str,
    container: Option<&str>,
    args: &ExecArgs,
) -> Vec<String> {
    let mut out = vec!["exec".to_string()];
    out.extend(crate::get::kubectl_flags(&KubeFlags {
        namespace: None,
        ..kube.clone()
    }));
    out.push(format!("--namespace={namespace}"));
    out.push(pod.to_string());
    if let Some(c) = container {
        out.push(format!("--container={c}"));
    }
    if args.stdin {
        out.push("--stdin".to_string());
    }
    if args.tty {
        out.push("--tty".to_string());
    }
    out.push("--".to_string());
    out.extend(args.command.iter().cloned());
    out
}

/// The API resource of a workload kind kubectl can exec into through its selector.
fn workload_resource(type_name: &str) -> Result<ApiResource, Error> {
    if let Ok(ty) = kinds::Type::parse(type_name) {
        match ty.kind {
            Kind::CloneSet | Kind::AdvancedStatefulSet | Kind::AdvancedDaemonSet | Kind::Pod => {
                return ty.resource().cloned();
            }
            Kind::SidecarSet | Kind::BroadcastJob | Kind::ContainerRecreateRequest | Kind::Rollout => {
                let r = ty.resource()?;
                return Err(Error::Failed(format!(
                    "cannot attach to {}.{}: selector for it not implemented",
                    r.kind, r.group
                )));
            }
            Kind::Native => {}
        }
    }
    let lower = type_name.to_ascii_lowercase();
    let base = lower.split('.').next().unwrap_or_default();
    let (group, kind, plural) = match base {
        "deployment" | "deployments" | "deploy" => ("apps", "Deployment", "deployments"),
        "statefulset" | "statefulsets" | "sts" => ("apps", "StatefulSet", "statefulsets"),
        "daemonset" | "daemonsets" | "ds" => ("apps", "DaemonSet", "daemonsets"),
        "replicaset" | "replicasets" | "rs" => ("apps", "ReplicaSet", "replicasets"),
        "job" | "jobs" => ("batch", "Job", "jobs"),
        "service" | "services" | "svc" => ("", "Service", "services"),
        _ => {
            return Err(Error::Usage(format!(
                "the server doesn't have a resource type \"{type_name}\""
            )));
        }
    };
    let api_version = if group.is_empty() {
        "v1".to_string()
    } else {
        format!("{group}/v1")
    };
    Ok(ApiResource {
        group: group.into(),
        version: "v1".into(),
        api_version,
        kind: kind.into(),
        plural: plural.into(),
    })
}

/// The label selector (`k=v,…`) of a workload, or of a Service (`spec.selector` is a map there).
pub fn selector_of(object: &Value, kind: &str, name: &str) -> Result<String, Error> {
    let raw = object.pointer("/spec/selector");
    if kind == "Service" {
        let map = raw
            .and_then(Value::as_object)
            .filter(|m| !m.is_empty())
            .ok_or_else(|| {
                Error::Failed(format!(
                    "invalid service '{name}': Service is defined without a selector"
                ))
            })?;
        let mut parts: Vec<String> = map
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
            .collect();
        parts.sort();
        return Ok(parts.join(","));
    }
    if raw.is_none_or(Value::is_null) {
        return Err(Error::Failed(format!(
            "cannot attach to {kind} {name:?}: it has no selector"
        )));
    }
    let selector = Selector::from_json(raw);
    selector
        .valid()
        .map_err(|e| Error::Failed(format!("invalid label selector: {e}")))?
        .to_selector_string()
        .map_err(|e| Error::Failed(format!("invalid label selector: {e}")))
}

/// The pod kubectl would attach to among `pods`: the most active one (scheduled, running, ready,
/// ready longest, fewest restarts, oldest), the last in Kubernetes' `ActivePods` order.
pub fn most_active(pods: &[Pod]) -> Option<&Pod> {
    pods.iter()
        .max_by(|a, b| kruise_reconcile::pods::active_pods_less(a, b))
}

/// Resolves `POD` or `TYPE/NAME` to a pod, waiting up to `timeout` for a workload's first pod.
pub async fn resolve(session: &Session, resource: &str, timeout: Duration) -> Result<Pod, Error> {
    let pods: Api<Pod> = Api::namespaced(session.client.clone(), &session.namespace);
    let Some((type_name, name)) = resource.split_once('/') else {
        return Ok(pods.get(resource).await?);
    };
    let api_resource = workload_resource(type_name)?;
    if api_resource.kind == "Pod" {
        return Ok(pods.get(name).await?);
    }
    let object = Api::<kube::api::DynamicObject>::namespaced_with(
        session.client.clone(),
        &session.namespace,
        &api_resource,
    )
    .get(name)
    .await?;
    let selector = selector_of(&object.data, &api_resource.kind, name)?;
    let started = Instant::now();
    loop {
        let list = pods.list(&ListParams::default().labels(&selector)).await?;
        if let Some(pod) = most_active(&list.items) {
            return Ok(pod.clone());
        }
        if started.elapsed() >= timeout {
            return Err(Error::Failed("timed out waiting for the condition".to_string()));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// `exec`.
pub async fn run(kube: &KubeFlags, args: &ExecArgs) -> Result<u8, Error> {
    if args.command.is_empty() {
        return Err(Error::Usage(
            "you must specify at least one command for the container".to_string(),
        ));
    }
    let timeout = crate::cli::parse_duration(&args.pod_running_timeout)?;
    let session = kube.connect().await?;
    let pod = resolve(&session, &args.resource, timeout).await?;
    let phase = pod
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default();
    if phase == "Succeeded" || phase == "Failed" {
        return Err(Error::Failed(format!(
            "cannot exec into a container in a completed pod; current phase is {phase}"
        )));
    }
    let (container, working) = working_container(&pod, args.sidecar.as_deref(), args.container.as_deref());
    if working {
        eprintln!(
            "Enter working container {} of SidecarSet.",
            container.as_deref().unwrap_or_default()
        );
    }
    let name = pod.metadata.name.clone().unwrap_or_default();
    let namespace = pod
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| session.namespace.clone());
    let kubectl = std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".to_string());
    let status = std::process::Command::new(&kubectl)
        .args(kubectl_args(kube, &namespace, &name, container.as_deref(), args))
        .status()
        .map_err(|e| Error::Failed(format!("cannot run {kubectl}: {e}")))?;
    Ok(status.code().map_or(1, |c| u8::try_from(c).unwrap_or(1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, phase: &str, ready: bool, annotations: Value) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "shop", "annotations": annotations,
                         "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"nodeName": "node-1", "containers": [{"name": "main", "image": "x"}]},
            "status": {"phase": phase, "conditions": [
                {"type": "Ready", "status": if ready {"True"} else {"False"},
                 "lastTransitionTime": "2026-01-01T00:01:00Z"}]},
        }))
        .unwrap()
    }

    #[test]
    fn the_sidecar_flag_enters_the_working_hot_upgrade_container() {
        let p = pod(
            "web-1",
            "Running",
            true,
            json!({"kruise.io/sidecarset-working-hotupgrade-container": "{\"logger\":\"logger-2\"}"}),
        );
        assert_eq!(
            working_container(&p, Some("logger"), Some("main")),
            (Some("logger-2".into()), true)
        );
        // A container the map does not name, or no map: -c as given.
        assert_eq!(
            working_container(&p, Some("other"), Some("main")),
            (Some("main".into()), false)
        );
        let plain = pod("web-2", "Running", true, json!({}));
        assert_eq!(working_container(&plain, Some("logger"), None), (None, false));
    }

    #[test]
    fn a_workload_resolves_to_its_most_active_pod() {
        let pods = [
            pod("pending", "Pending", false, json!({})),
            pod("ready", "Running", true, json!({})),
            pod("running", "Running", false, json!({})),
        ];
        assert_eq!(
            most_active(&pods).unwrap().metadata.name.as_deref(),
            Some("ready")
        );
        assert!(most_active(&[]).is_none());
    }

    #[test]
    fn selectors_read_as_kubectl_lists_them() {
        let cs = json!({"spec": {"selector": {"matchLabels": {"app": "web", "tier": "a"},
            "matchExpressions": [{"key": "zone", "operator": "In", "values": ["x", "y"]}]}}});
        assert_eq!(
            selector_of(&cs, "CloneSet", "web").unwrap(),
            "app=web,tier=a,zone in (x,y)"
        );
        let svc = json!({"spec": {"selector": {"b": "2", "a": "1"}}});
        assert_eq!(selector_of(&svc, "Service", "s").unwrap(), "a=1,b=2");
        let e = selector_of(&json!({"spec": {}}), "Service", "s")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "invalid service 's': Service is defined without a selector");
        assert!(selector_of(&json!({"spec": {}}), "CloneSet", "web").is_err());
        assert!(
            workload_resource("sidecarset")
                .unwrap_err()
                .to_string()
                .starts_with("cannot attach to SidecarSet.apps.kruise.io")
        );
        assert_eq!(workload_resource("deploy").unwrap().api_version, "apps/v1");
        assert_eq!(workload_resource("svc").unwrap().api_version, "v1");
    }

    #[test]
    fn kubectl_exec_gets_the_pod_container_streams_and_command() {
        let args = ExecArgs {
            resource: "cloneset/web".into(),
            container: None,
            sidecar: None,
            stdin: true,
            tty: false,
            pod_running_timeout: "1m".into(),
            command: vec!["sh".into(), "-c".into(), "exit 3".into()],
        };
        let kube = KubeFlags {
            kubeconfig: Some("/k".into()),
            namespace: Some("ignored".into()),
            ..KubeFlags::default()
        };
        assert_eq!(
            kubectl_args(&kube, "shop", "web-1", Some("logger-2"), &args),
            [
                "exec",
                "--kubeconfig=/k",
                "--namespace=shop",
                "web-1",
                "--container=logger-2",
                "--stdin",
                "--",
                "sh",
                "-c",
                "exit 3"
            ]
        );
    }
}
