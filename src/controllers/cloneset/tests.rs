use super::*;

#[test]
fn instance_ids_are_five_characters_of_the_kubernetes_alphabet() {
    let ids: std::collections::BTreeSet<String> = (0..200).map(|_| random_id()).collect();
    assert!(ids.len() > 190, "ids repeat too often: {}", ids.len());
    for id in &ids {
        assert_eq!(id.len(), 5);
        assert!(id.bytes().all(|b| ID_ALPHABET.contains(&b)), "{id}");
    }
}
