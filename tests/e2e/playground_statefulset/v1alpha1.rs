//! The flows of `ordering` and `update` with the set written, edited and read as v1alpha1. Each of those
//! flows takes several seconds, so instead of running each twice, a v1alpha1 test runs a creation flow
//! and an update flow on one set. The flows of `claims` and the reserved ordinals need v1beta1-only
//! fields (`persistentVolumeClaimRetentionPolicy`, `lifecycle`, `reserveOrdinals`, `ordinals`), which a
//! v1alpha1 user cannot write (conversion keeps them in an annotation): they run as v1beta1 only.
//! Every `settle` also checks that both versions show the same status.

use crate::playground_statefulset::env::{Version, start_with, stateful_set};
use crate::playground_statefulset::{ordering, update};

#[tokio::test]
async fn ordered_creation_in_place_update_and_scale_down_as_v1alpha1() {
    // OrderedReady allows no maxUnavailable above 1.
    let env = start_with(stateful_set(Version::V1alpha1, 5, update::in_place_strategy(1))).await;
    ordering::created_in_order(&env).await;
    update::updated_in_place_above_the_partition(&env, 1).await;
    ordering::scaled_down_from_the_top(&env).await;
}

#[tokio::test]
async fn parallel_creation_recreate_rollout_and_rollback_as_v1alpha1() {
    let env = start_with(stateful_set(Version::V1alpha1, 5, update::recreate_strategy())).await;
    ordering::created_in_parallel(&env).await;
    update::recreated_then_rolled_back(&env).await;
}
