//! Fixtures shared by the table tests.

use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kruise_api::apps_v1beta1::{CloneSet, CloneSetSpec};

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
