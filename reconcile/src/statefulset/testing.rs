//! Fixtures shared by the Advanced StatefulSet table tests.

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{
    POD_INDEX_LABEL, RollingUpdateStatefulSetStrategy, STATEFULSET_POD_NAME_LABEL, StatefulSet,
    StatefulSetSpec, StatefulSetStatus, StatefulSetUpdateStrategy, StatefulSetUpdateStrategyType,
};
use kruise_api::common::LIFECYCLE_STATE_KEY;

use crate::pods::fixtures;
use crate::statefulset::revision::new_revision;

/// Set `ns/web` (uid `set-uid`, generation 1) selecting `app=demo`, one container `app:1`,
/// RollingUpdate with defaults (as the defaulting webhook leaves it).
pub fn set(replicas: i32) -> StatefulSet {
    let labels = [("app".to_string(), "demo".to_string())];
    let mut s = StatefulSet::new(
        "web",
        StatefulSetSpec {
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
            update_strategy: StatefulSetUpdateStrategy {
                type_: Some(StatefulSetUpdateStrategyType::RollingUpdate),
                rolling_update: Some(RollingUpdateStatefulSetStrategy {
                    partition: Some(0),
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
    );
    s.metadata.namespace = Some("ns".into());
    s.metadata.uid = Some("set-uid".into());
    s.metadata.generation = Some(1);
    s
}

/// The revision of the set's template (number 1).
pub fn revision(s: &StatefulSet) -> ControllerRevision {
    new_revision(s, 1, Some(0))
}

/// A running, ready pod `web-<ordinal>` at `revision`, lifecycle `Normal`.
pub fn pod(ordinal: i64, revision: &str) -> PodRecord {
    let name = format!("web-{ordinal}");
    let mut p = fixtures::pod(&name, revision);
    let labels = &mut p.metadata.labels;
    labels.remove(kruise_api::apps_v1beta1::CLONESET_INSTANCE_ID);
    labels.remove(crate::pods::POD_TEMPLATE_HASH);
    labels.insert(STATEFULSET_POD_NAME_LABEL.into(), name.clone());
    labels.insert(POD_INDEX_LABEL.into(), ordinal.to_string());
    labels.insert(LIFECYCLE_STATE_KEY.into(), "Normal".into());
    p
}

/// `s` moved from its template (revision 1, `app:1`) to `app:2` (revision 2); returns the revisions
/// and their names.
pub fn rolled(s: &mut StatefulSet) -> (Vec<ControllerRevision>, String, String) {
    let old = revision(s);
    s.spec.template.spec.as_mut().unwrap().containers[0].image = Some("app:2".into());
    let new = new_revision(s, 2, Some(0));
    let (o, n) = (
        old.metadata.name.clone().unwrap(),
        new.metadata.name.clone().unwrap(),
    );
    s.status = Some(StatefulSetStatus {
        current_revision: Some(o.clone()),
        update_revision: Some(n.clone()),
        collision_count: Some(0),
        ..Default::default()
    });
    (vec![old, new], o, n)
}
