//! Lifecycle hooks and the `lifecycle.apps.kruise.io/state` label (docs/cloneset-controller.md#lifecycle).

use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::common::{LIFECYCLE_STATE_KEY, LIFECYCLE_TIMESTAMP_KEY, LifecycleHook};
use serde_json::{Value, json};

use crate::action::Action;
use crate::pods::{self, condition};
use crate::rfc3339::rfc3339;

/// The readiness gate / condition the podreadiness controller keeps.
pub const KRUISE_POD_READY: &str = "KruisePodReady";
/// Not-ready key written while a preDelete hook holds the pod.
pub const PRE_DELETE_HOOK_KEY: &str = "preDeleteHook";
/// Not-ready key written while an inPlaceUpdate hook holds the pod.
pub const PRE_UPDATE_HOOK_KEY: &str = "preUpdateHook";

/// OpenKruise's `IsPodHooked`: the pod has any of the hook's finalizers, or any hook label with the
/// exact value.
pub fn is_hooked(hook: Option<&LifecycleHook>, pod: &PodRecord) -> bool {
    let Some(hook) = hook else { return false };
    let finalizers = pod.metadata.finalizers.as_deref().unwrap_or_default();
    hook.finalizers_handler
        .iter()
        .flatten()
        .any(|f| finalizers.contains(f))
        || hook
            .labels_handler
            .iter()
            .flatten()
            .any(|(k, v)| pods::label(pod, k) == Some(v.as_str()))
}

/// OpenKruise's `IsPodAllHooked`: every hook finalizer and label is present (false without a hook).
pub fn is_all_hooked(hook: Option<&LifecycleHook>, pod: &PodRecord) -> bool {
    let Some(hook) = hook else { return false };
    let finalizers = pod.metadata.finalizers.as_deref().unwrap_or_default();
    hook.finalizers_handler
        .iter()
        .flatten()
        .all(|f| finalizers.contains(f))
        && hook
            .labels_handler
            .iter()
            .flatten()
            .all(|(k, v)| pods::label(pod, k) == Some(v.as_str()))
}

/// The hook's `markPodNotReady`.
pub fn marks_not_ready(hook: Option<&LifecycleHook>) -> bool {
    hook.and_then(|h| h.mark_pod_not_ready).unwrap_or(false)
}

/// Adds what moves a pod to `state` to a patch's label and annotation maps: the state label and the
/// lifecycle timestamp.
pub fn add_state(
    labels: &mut serde_json::Map<String, Value>,
    annotations: &mut serde_json::Map<String, Value>,
    state: &str,
    now: Timestamp,
) {
    labels.insert(LIFECYCLE_STATE_KEY.into(), Value::String(state.into()));
    annotations.insert(LIFECYCLE_TIMESTAMP_KEY.into(), Value::String(rfc3339(now)));
}

/// The metadata patch moving the pod to `state` (with the lifecycle timestamp), or `None` when it is
/// already there.
pub fn state_patch(pod: &PodRecord, state: &str, now: Timestamp) -> Option<Value> {
    (pods::lifecycle_state(pod) != state).then(|| {
        let (mut labels, mut annotations) = (serde_json::Map::new(), serde_json::Map::new());
        add_state(&mut labels, &mut annotations, state, now);
        let mut metadata = serde_json::Map::new();
        metadata.insert("labels".into(), Value::Object(labels));
        metadata.insert("annotations".into(), Value::Object(annotations));
        let mut patch = serde_json::Map::new();
        patch.insert("metadata".into(), Value::Object(metadata));
        Value::Object(patch)
    })
}

/// The action moving the pod to `state`, if it is not there.
pub fn set_state(pod: &PodRecord, state: &str, now: Timestamp) -> Option<Action> {
    state_patch(pod, state, now).map(|patch| Action::PatchPod {
        name: pods::name(pod).to_owned(),
        reason: "lifecycle",
        patch,
    })
}

/// One not-ready key in the `KruisePodReady` message, fields in OpenKruise's order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct NotReadyKey {
    user_agent: String,
    key: String,
}

/// The not-ready keys in the `KruisePodReady` message.
fn not_ready_keys(pod: &PodRecord) -> Vec<NotReadyKey> {
    condition(pod, KRUISE_POD_READY)
        .and_then(|c| c.message.as_deref())
        .and_then(|m| serde_json::from_str(m).ok())
        .unwrap_or_default()
}

/// The `pods/status` patch adding (`add`) or removing a lifecycle not-ready key, or `None` when the
/// condition already says so. With keys left the condition is False, without it is True.
pub fn not_ready_key_patch(pod: &PodRecord, key: &str, add: bool, now: Timestamp) -> Option<Action> {
    not_ready_key_patch_as(pod, "Lifecycle", key, add, now)
}

/// Whether the `KruisePodReady` message holds `key` of `user_agent`.
pub fn has_not_ready_key(pod: &PodRecord, user_agent: &str, key: &str) -> bool {
    not_ready_keys(pod)
        .iter()
        .any(|k| k.user_agent == user_agent && k.key == key)
}

/// [`not_ready_key_patch`] for another writer (`user_agent`: `Lifecycle`, `ContainerRecreateRequest`).
pub fn not_ready_key_patch_as(
    pod: &PodRecord,
    user_agent: &str,
    key: &str,
    add: bool,
    now: Timestamp,
) -> Option<Action> {
    let mut keys = not_ready_keys(pod);
    let entry = NotReadyKey {
        user_agent: user_agent.into(),
        key: key.into(),
    };
    let present = keys.contains(&entry);
    if present == add {
        return None;
    }
    if add {
        keys.push(entry);
    } else {
        keys.retain(|k| k != &entry);
    }
    let status = if keys.is_empty() { "True" } else { "False" };
    let message = if keys.is_empty() {
        String::new()
    } else {
        serde_json::to_string(&keys).unwrap_or_default()
    };
    Some(Action::PatchPodStatus {
        name: pods::name(pod).to_owned(),
        patch: json!({"status": {"conditions": [{
            "type": KRUISE_POD_READY, "status": status, "message": message,
            "lastTransitionTime": rfc3339(now),
        }]}})
        .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pods::fixtures::{labelled, now, pod};

    fn hook() -> LifecycleHook {
        LifecycleHook {
            labels_handler: Some([("hold".to_string(), "true".to_string())].into()),
            finalizers_handler: Some(vec!["example.com/hold".into()]),
            mark_pod_not_ready: None,
        }
    }

    #[test]
    fn hooked_means_any_handler_and_all_hooked_means_every_handler() {
        let bare = pod("demo-a", "r");
        let by_label = labelled(bare.clone(), "hold", "true");
        let wrong_value = labelled(bare.clone(), "hold", "yes");
        let mut both = by_label.clone();
        both.metadata.finalizers = Some(vec!["example.com/hold".into()]);
        let cases = [
            ("no handler present", &bare, false, false),
            ("the label with the exact value", &by_label, true, false),
            ("the label with another value", &wrong_value, false, false),
            ("label and finalizer", &both, true, true),
        ];
        for (name, p, hooked, all) in cases {
            assert_eq!(is_hooked(Some(&hook()), p), hooked, "{name}");
            assert_eq!(is_all_hooked(Some(&hook()), p), all, "{name}");
        }
        assert!(
            !is_hooked(None, &both) && !is_all_hooked(None, &both),
            "no hook, never hooked"
        );
    }

    #[test]
    fn state_patches_only_change_what_differs() {
        let p = labelled(pod("demo-a", "r"), LIFECYCLE_STATE_KEY, "Normal");
        assert!(state_patch(&p, "Normal", now()).is_none());
        let patch = state_patch(&p, "PreparingDelete", now()).unwrap();
        assert_eq!(
            patch["metadata"]["labels"][LIFECYCLE_STATE_KEY],
            "PreparingDelete"
        );
        assert_eq!(
            patch["metadata"]["annotations"][LIFECYCLE_TIMESTAMP_KEY],
            "2026-01-01T12:00:00Z"
        );
    }

    #[test]
    fn not_ready_keys_flip_kruise_pod_ready() {
        let p = pod("demo-a", "r");
        let Some(Action::PatchPodStatus { patch, .. }) =
            not_ready_key_patch(&p, PRE_DELETE_HOOK_KEY, true, now())
        else {
            panic!("expected a status patch")
        };
        let cond = &patch["status"]["conditions"][0];
        assert_eq!(cond["status"], "False");
        assert_eq!(
            cond["message"],
            r#"[{"userAgent":"Lifecycle","key":"preDeleteHook"}]"#
        );
        assert!(not_ready_key_patch(&p, PRE_DELETE_HOOK_KEY, false, now()).is_none());
    }
}
