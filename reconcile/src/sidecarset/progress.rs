//! The `Progressing` condition (kruise-rs): why the rollout stands where it does.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps_v1beta1::{SIDECARSET_PROGRESSING, SidecarSetCondition, SidecarSetStatus};

/// Why the rollout stands where it does: the `Progressing` condition.
pub(super) struct Progress {
    progressing: bool,
    reason: &'static str,
    message: String,
}

impl Progress {
    pub(super) fn new(progressing: bool, reason: &'static str, message: String) -> Self {
        Progress {
            progressing,
            reason,
            message,
        }
    }
}

/// The `Progressing` condition; its transition time moves only when its status or reason does.
pub(super) fn condition(
    old: Option<&SidecarSetStatus>,
    progress: Progress,
    now: Timestamp,
) -> SidecarSetCondition {
    let status = if progress.progressing { "True" } else { "False" };
    let previous = old
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == SIDECARSET_PROGRESSING));
    let since = previous
        .filter(|c| c.status == status && c.reason.as_deref() == Some(progress.reason))
        .and_then(|c| c.last_transition_time.clone())
        .unwrap_or(Time(now));
    SidecarSetCondition {
        type_: SIDECARSET_PROGRESSING.into(),
        status: status.into(),
        last_transition_time: Some(since),
        reason: Some(progress.reason.into()),
        message: Some(progress.message),
    }
}
