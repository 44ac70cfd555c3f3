//! Fixtures shared by the table tests.

use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{CloneSet, CloneSetSpec};

use super::context::Ctx;
use crate::pods::fixtures::now;

/// CloneSet `ns/demo` (uid `cs-uid`, generation 1) selecting `app=demo`, one container `app:1`.
pub fn cloneset(replicas: i32) -> CloneSet {
    let labels = [("app".to_string(), "demo".to_string())];
    let mut cs = CloneSet::new(
        "demo",
        CloneSetSpec {
            replicas: Some(replicas),
            selector: Some(LabelSelector {
                match_labels: Some(labels.clone().into()),
                ..Default::default()
            }),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels.into()),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "app".into(),
                        image: Some("app:1".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
    );
    cs.metadata.namespace = Some("ns".into());
    cs.metadata.uid = Some("cs-uid".into());
    cs.metadata.generation = Some(1);
    cs
}

/// A pass over `pods` of `cs` at [`now`], moving from revision `demo-1` to `demo-2`: default params and
/// options, empty templates, no PVCs, no per-pod views.
pub fn ctx<'a>(cs: &'a CloneSet, pods: Vec<&'a PodRecord>) -> Ctx<'a> {
    Ctx {
        cs,
        params: Default::default(),
        pods,
        pvcs: vec![],
        current_name: "demo-1",
        update_name: "demo-2",
        current_template: Default::default(),
        update_template: Default::default(),
        revisions: &[],
        now: now(),
        options: Default::default(),
        pods_to_delete: Default::default(),
        views: Vec::new(),
        by_address: Vec::new(),
    }
}
