//! A BroadcastJob's pods: made from the template, pinned to their node.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kruise_api::PodRecord;
use kruise_api::apps_v1alpha1::{BROADCAST_JOB_CONTROLLER_UID_LABEL, BROADCAST_JOB_NAME_LABEL, BroadcastJob};

/// The node a job pod is pinned to (`spec.nodeName`).
pub fn assigned_node(pod: &PodRecord) -> Option<&str> {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .filter(|n| !n.is_empty())
}

/// The job's pod before it is bound to a node: the template with name prefix `<job>-`, the labels
/// `broadcastjob-name` and `broadcastjob-controller-uid` and the job as controller. The plan binds
/// it to each node through `spec.nodeName` ([`crate::Action::CreatePodOnNode`]; OpenKruise's
/// `--assign-bcj-pods-by-scheduler=false` way; docs/broadcastjob.md).
pub fn new_pod(job: &BroadcastJob) -> Pod {
    let name = job.metadata.name.clone().unwrap_or_default();
    let uid = job.metadata.uid.clone().unwrap_or_default();
    let template = &job.spec.template;
    let source = template.metadata.clone().unwrap_or_default();
    let mut labels = source.labels.unwrap_or_default();
    labels.insert(BROADCAST_JOB_NAME_LABEL.to_owned(), name.clone());
    labels.insert(BROADCAST_JOB_CONTROLLER_UID_LABEL.to_owned(), uid.clone());
    let spec = template.spec.clone().unwrap_or_default();
    Pod {
        metadata: ObjectMeta {
            generate_name: Some(format!("{name}-")),
            namespace: job.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: source.annotations,
            finalizers: source.finalizers,
            owner_references: Some(vec![OwnerReference {
                api_version: "apps.kruise.io/v1alpha1".to_owned(),
                kind: "BroadcastJob".to_owned(),
                name,
                uid,
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    }
}
