//! In-place updates of env fed from pod metadata (docs/env-from-metadata.md): when the node agent
//! serves a pod, and when it has reported the restarted containers (OpenKruise's completion rule (a)).

use kruise_api::PodRecord;
use kruise_core::containermeta::RUNTIME_CONTAINERS_META_KEY;

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

#[cfg(test)]
mod tests;

#[cfg(test)]
mod restarted_at_tests;
