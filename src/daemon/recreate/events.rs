//! The events the agent records while carrying out a request (spec §A.8): on the pod's container
//! (fieldPath `spec.containers{<c>}`), from component `kruise-daemon-crr` with `source.host` = this
//! node — Normal `Killing` once per stop, Warning `FailedPreStopHook` once per failed hook. Core v1
//! Events, so `source` is kept as OpenKruise's recorder writes it.

use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps_v1beta1::{CRR_POD_UID_LABEL, ContainerRecreateRequest};
use kube::api::{Api, PostParams};

/// The recording component.
pub const COMPONENT: &str = "kruise-daemon-crr";

/// What happened to one container of the request's pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Happened<'a> {
    /// The container is about to be stopped.
    Killing {
        /// The container.
        container: &'a str,
    },
    /// Its preStop hook failed (the stop went on).
    FailedPreStopHook {
        /// The container.
        container: &'a str,
        /// The hook's error.
        error: &'a str,
    },
}

/// The Event for `what`, on `crr`'s pod, recorded by this `node` at `now`.
pub fn event(crr: &ContainerRecreateRequest, what: &Happened<'_>, node: &str, now: Timestamp) -> Event {
    let crr_name = crr.metadata.name.as_deref().unwrap_or_default();
    let (type_, reason, container, message) = match what {
        Happened::Killing { container } => (
            "Normal",
            "Killing",
            *container,
            format!("Stopping container {container} by ContainerRecreateRequest {crr_name}"),
        ),
        Happened::FailedPreStopHook { container, error } => {
            ("Warning", "FailedPreStopHook", *container, (*error).to_owned())
        }
    };
    let pod = &crr.spec.pod_name;
    let namespace = crr.metadata.namespace.clone();
    Event {
        metadata: ObjectMeta {
            name: Some(format!("{pod}.{:x}", now.as_nanosecond())),
            namespace: namespace.clone(),
            ..Default::default()
        },
        involved_object: ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Pod".into()),
            namespace,
            name: Some(pod.clone()),
            uid: crr
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(CRR_POD_UID_LABEL))
                .cloned(),
            field_path: Some(format!("spec.containers{{{container}}}")),
            ..Default::default()
        },
        type_: Some(type_.into()),
        reason: Some(reason.into()),
        message: Some(message),
        source: Some(EventSource {
            component: Some(COMPONENT.into()),
            host: Some(node.into()),
        }),
        reporting_component: Some(COMPONENT.into()),
        reporting_instance: Some(node.into()),
        action: Some(reason.into()),
        first_timestamp: Some(Time(now)),
        last_timestamp: Some(Time(now)),
        event_time: Some(MicroTime(now)),
        count: Some(1),
        ..Default::default()
    }
}

/// Records `what`; a failure is logged (an event is never worth failing the stop for).
pub async fn record(client: &kube::Client, node: &str, crr: &ContainerRecreateRequest, what: Happened<'_>) {
    let e = event(crr, &what, node, Timestamp::now());
    let api: Api<Event> = Api::namespaced(
        client.clone(),
        crr.metadata.namespace.as_deref().unwrap_or_default(),
    );
    if let Err(err) = api.create(&PostParams::default(), &e).await {
        tracing::debug!(error = %err, reason = ?e.reason, "could not record the event");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crr() -> ContainerRecreateRequest {
        serde_json::from_value(
            json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "ContainerRecreateRequest",
            "metadata": {"name": "restart-app", "namespace": "shop", "labels": {CRR_POD_UID_LABEL: "u-1"}},
            "spec": {"podName": "web-0", "containers": [{"name": "app"}]}}),
        )
        .unwrap()
    }

    #[test]
    fn killing_is_a_normal_event_on_the_container_from_this_node() {
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let e = serde_json::to_value(event(
            &crr(),
            &Happened::Killing { container: "app" },
            "node-1",
            now,
        ))
        .unwrap();
        assert_eq!(e["type"], "Normal");
        assert_eq!(e["reason"], "Killing");
        assert_eq!(
            e["message"],
            "Stopping container app by ContainerRecreateRequest restart-app"
        );
        assert_eq!(
            e["source"],
            json!({"component": "kruise-daemon-crr", "host": "node-1"})
        );
        assert_eq!(
            e["involvedObject"],
            json!({"apiVersion": "v1", "kind": "Pod", "namespace": "shop", "name": "web-0", "uid": "u-1",
                "fieldPath": "spec.containers{app}"})
        );
        assert_eq!(
            (e["metadata"]["namespace"].clone(), e["count"].clone()),
            (json!("shop"), json!(1))
        );
        assert!(e["metadata"]["name"].as_str().unwrap().starts_with("web-0."));
    }

    #[test]
    fn a_failed_hook_is_a_warning_carrying_its_error() {
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let what = Happened::FailedPreStopHook {
            container: "app",
            error: "exec exited with 1: boom",
        };
        let e = serde_json::to_value(event(&crr(), &what, "node-1", now)).unwrap();
        assert_eq!(
            (e["type"].as_str(), e["reason"].as_str()),
            (Some("Warning"), Some("FailedPreStopHook"))
        );
        assert_eq!(e["message"], "exec exited with 1: boom");
        assert_eq!(e["involvedObject"]["fieldPath"], "spec.containers{app}");
    }
}
