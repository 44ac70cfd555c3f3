//! WorkloadSpread rules read by both pod webhooks and the WorkloadSpread planner: the version a pod is
//! counted under (OpenKruise `pkg/util/workloadspread` `GetPodVersion`).

use crate::{
    names::{CONTROLLER_REVISION_HASH_LABEL, POD_TEMPLATE_HASH_LABEL},
    selector::LabelSource,
};

/// The version of pods whose workload keeps no versioned subset statuses.
pub const VERSION_IGNORED: &str = "versionIgnored";

/// Controller kinds (lower case) whose pods are counted per version: OpenKruise's default
/// `--ws-enabled-versioned-status=deployment` (which adds `replicaset`).
const VERSIONED_KINDS: [&str; 2] = ["deployment", "replicaset"];

/// The version a pod with controller kind `controller_kind` and `labels` is counted under: for pods of
/// Deployments and ReplicaSets its `pod-template-hash`, else the short hash (after the last `-`) of its
/// `controller-revision-hash`; [`VERSION_IGNORED`] otherwise.
pub fn pod_version<'a>(controller_kind: Option<&str>, labels: &'a impl LabelSource) -> &'a str {
    let versioned =
        controller_kind.is_some_and(|k| VERSIONED_KINDS.contains(&k.to_ascii_lowercase().as_str()));
    if !versioned {
        return VERSION_IGNORED;
    }
    if let Some(hash) = labels.label(POD_TEMPLATE_HASH_LABEL) {
        return hash;
    }
    if let Some(hash) = labels.label(CONTROLLER_REVISION_HASH_LABEL) {
        return hash.rsplit('-').next().unwrap_or(hash);
    }
    VERSION_IGNORED
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn versions_follow_the_controller_kind_and_the_hash_labels() {
        let labels = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let both = labels(&[
            ("pod-template-hash", "abc"),
            ("controller-revision-hash", "web-7f9c"),
        ]);
        let revision = labels(&[("controller-revision-hash", "web-7f9c")]);
        let cases = [
            (Some("ReplicaSet"), &both, "abc"),
            (Some("Deployment"), &revision, "7f9c"),
            (Some("replicaset"), &labels(&[]), VERSION_IGNORED),
            (Some("CloneSet"), &both, VERSION_IGNORED),
            (None, &both, VERSION_IGNORED),
        ];
        for (kind, labels, want) in cases {
            assert_eq!(pod_version(kind, labels), want, "{kind:?} {labels:?}");
        }
    }
}
