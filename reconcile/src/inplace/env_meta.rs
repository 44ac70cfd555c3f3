//! In-place updates of env fed from pod metadata (docs/env-from-metadata.md): when the node agent
//! serves a pod, and when it has reported the restarted containers (OpenKruise's completion rule (a)).

use kruise_api::PodRecord;
use kruise_core::containermeta::{self, RUNTIME_CONTAINERS_META_KEY, RuntimeContainerMetaSet};

use crate::inplace::{NotInPlace, UpdateSpec};
use crate::pods;

/// The node agent serves `pod`: it carries `apps.kruise.io/runtime-containers-meta`, which only the
/// agent writes (for every kruise pod of its node, once its containers run).
pub fn agent_serves(pod: &PodRecord) -> bool {
    pods::annotation(pod, RUNTIME_CONTAINERS_META_KEY).is_some()
}

/// The verdict of a revision change for one pod: an update that must restart containers for env fed
/// from metadata is in place only with `env_from_metadata` (gates `KruiseDaemon` and
/// `InPlaceUpdateEnvFromMetadata`) and an agent serving the pod; otherwise it stays not in place.
pub fn for_pod<'s>(
    verdict: &'s Result<UpdateSpec, NotInPlace>,
    pod: &PodRecord,
    env_from_metadata: bool,
) -> Result<&'s UpdateSpec, &'s NotInPlace> {
    match verdict {
        Ok(spec) => Ok(spec),
        Err(NotInPlace::EnvFromMetadata { spec, .. }) if env_from_metadata && agent_serves(pod) => Ok(spec),
        Err(why) => Err(why),
    }
}

/// Every spec container has a status, and the agent's entry for it names the same containerID with
/// the env hash the pod's current labels and annotations give: the containers restarted with the new
/// values. False without the annotation.
pub fn env_completed(pod: &PodRecord) -> bool {
    let Some(meta) = RuntimeContainerMetaSet::of(pod.metadata.annotations.as_ref()) else {
        return false;
    };
    let statuses = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default();
    let containers = pod
        .spec
        .as_ref()
        .map(|s| s.containers.as_slice())
        .unwrap_or_default();
    containers.iter().all(|c| {
        let Some(status) = statuses.iter().find(|s| s.name == c.name) else {
            return false;
        };
        let Some(entry) = meta.get(&c.name) else {
            return false;
        };
        let expected = containermeta::expected_hash(
            c.env.as_deref().unwrap_or_default(),
            pod.metadata.labels.as_ref(),
            pod.metadata.annotations.as_ref(),
        );
        status.container_id.as_deref() == Some(entry.container_id.as_str())
            && entry.hashes.extracted_env_from_metadata_hash == expected
    })
}

#[cfg(test)]
mod tests;
