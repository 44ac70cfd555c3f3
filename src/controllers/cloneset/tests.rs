use super::*;
use serde_json::json;

#[test]
fn instance_ids_are_five_characters_of_the_kubernetes_alphabet() {
    let ids: std::collections::BTreeSet<String> = (0..200).map(|_| random_id()).collect();
    assert!(ids.len() > 190, "ids repeat too often: {}", ids.len());
    for id in &ids {
        assert_eq!(id.len(), 5);
        assert!(id.bytes().all(|b| ID_ALPHABET.contains(&b)), "{id}");
    }
}

fn patch_with(rv: &str) -> Step {
    Step::PatchPod {
        name: "web-a".into(),
        reason: "inPlaceUpdate",
        patch: json!({"metadata": {"resourceVersion": rv}, "spec": {}}),
    }
}

#[test]
fn a_precondition_moves_only_past_our_own_write_of_the_pod() {
    let mut ours = HashMap::new();
    assert_eq!(*chain_precondition(&patch_with("7"), &ours), patch_with("7"));
    ours.insert("web-a".to_string(), ("7".to_string(), "9".to_string()));
    assert_eq!(*chain_precondition(&patch_with("7"), &ours), patch_with("9"));
    // Planned against another version: left alone (it will conflict if that is stale).
    assert_eq!(*chain_precondition(&patch_with("8"), &ours), patch_with("8"));
    let unconditional = Step::PatchPod {
        name: "web-a".into(),
        reason: "lifecycle",
        patch: json!({"metadata": {"labels": {"a": "b"}}}),
    };
    assert_eq!(*chain_precondition(&unconditional, &ours), unconditional);
}
