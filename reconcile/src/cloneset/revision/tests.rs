use super::*;
use crate::cloneset::testing::cloneset;
use crate::pods::fixtures::pod;
use crate::pods::short_hash;

fn with_image(image: &str) -> CloneSet {
    let mut cs = cloneset(3);
    cs.spec.template.spec.as_mut().unwrap().containers[0].image = Some(image.into());
    cs
}

#[test]
fn revision_data_is_the_template_with_a_replace_marker_in_go_shape() {
    let data = revision_data(&cloneset(1));
    assert_eq!(
        data,
        json!({"spec": {"template": {
            "$patch": "replace",
            "metadata": {"creationTimestamp": null, "labels": {"app": "demo"}},
            "spec": {"containers": [{"name": "app", "image": "app:1", "resources": {}}]}
        }}})
    );
}

#[test]
fn a_new_revision_is_named_labelled_and_owned_like_openkruise() {
    let mut cs = cloneset(1);
    cs.metadata.annotations = Some([("team".to_string(), "a".to_string())].into());
    let rev = new_revision(&cs, 4, None);
    let bytes = go_json_bytes(&revision_data(&cs));
    let hash = hash_revision_data(&bytes, None);
    assert_eq!(
        rev.metadata.name.as_deref(),
        Some(format!("demo-{hash}").as_str())
    );
    assert_eq!(rev.revision, Some(4));
    let labels = rev.metadata.labels.as_ref().unwrap();
    assert_eq!(labels.get("app").map(String::as_str), Some("demo"));
    assert_eq!(labels.get(CONTROLLER_REVISION_HASH), Some(&hash));
    let annotations = rev.metadata.annotations.as_ref().unwrap();
    assert_eq!(annotations.get("team").map(String::as_str), Some("a"));
    assert_eq!(annotations.get(VCT_HASH_ANNOTATION).map(String::as_str), Some(""));
    let owner = &rev.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!((owner.kind.as_str(), owner.controller), ("CloneSet", Some(true)));
    assert_ne!(
        new_revision(&cs, 4, Some(1)).metadata.name,
        rev.metadata.name,
        "collision count changes the hash"
    );
    assert_eq!(
        template_of(&rev).unwrap().spec.unwrap().containers[0]
            .image
            .as_deref(),
        Some("app:1")
    );
}

#[test]
fn choosing_the_update_revision() {
    let v1 = new_revision(&with_image("app:1"), 1, None);
    let v2 = new_revision(&with_image("app:2"), 2, None);
    let name = |r: &ControllerRevision| r.metadata.name.clone().unwrap();

    // No revision yet: create revision 1.
    let got = active_revisions(&with_image("app:1"), &[]);
    assert_eq!(got.actions, vec![RevisionAction::Create(v1.clone())]);
    assert_eq!(name(&got.current), name(&v1), "current defaults to update");

    // The newest revision is equal: reuse it, write nothing.
    let got = active_revisions(&with_image("app:2"), &[v1.clone(), v2.clone()]);
    assert!(got.actions.is_empty());
    assert_eq!(name(&got.update), name(&v2));

    // An older revision is equal: roll back by bumping its number.
    let mut cs = with_image("app:1");
    cs.status = Some(kruise_api::apps_v1beta1::CloneSetStatus {
        current_revision: Some(name(&v2)),
        ..Default::default()
    });
    let got = active_revisions(&cs, &[v2.clone(), v1.clone()]);
    assert_eq!(got.update.revision, Some(3));
    assert_eq!(name(&got.update), name(&v1));
    assert!(matches!(&got.actions[..], [RevisionAction::Update(r)] if r.revision == Some(3)));
    assert_eq!(name(&got.current), name(&v2));

    // A different revision squats the name: step the collision count.
    let mut squatter = v2.clone();
    squatter.metadata.name = v1.metadata.name.clone();
    let got = active_revisions(&with_image("app:1"), &[squatter]);
    assert_eq!(got.collision_count, Some(1));
    assert_eq!(
        got.actions,
        vec![RevisionAction::Create(new_revision(
            &with_image("app:1"),
            3,
            Some(1)
        ))]
    );
}

#[test]
fn history_keeps_live_revisions_and_deletes_the_oldest_dead_ones() {
    let revs: Vec<ControllerRevision> = (1..=6)
        .map(|i| new_revision(&with_image(&format!("app:{i}")), i, None))
        .collect();
    let names: Vec<String> = revs.iter().map(|r| r.metadata.name.clone().unwrap()).collect();
    let mut cs = cloneset(1);
    cs.spec.revision_history_limit = Some(1);
    // r1 is used by a pod (by short hash), r5 is current, r6 is update: dead are r2, r3, r4.
    let pod = pod("demo-aaaaa", short_hash(&names[0]));
    let pods = vec![&pod];
    let got = truncate_history(&cs, &revs, &pods, &names[4], &names[5]);
    assert_eq!(got, vec![names[1].clone(), names[2].clone()]);
    cs.spec.revision_history_limit = None;
    assert!(truncate_history(&cs, &revs, &pods, &names[4], &names[5]).is_empty());
}
