//! `rollout pause|resume|restart` (a Kruise Rollout pauses by `spec.strategy.paused`).

use kruise_core::containermeta::RESTARTED_AT_KEY;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use crate::{
    Error,
    client::Session,
    kinds::{Kind, Target},
};

/// Where the pause switch is: CloneSet (v1alpha1) `spec.updateStrategy.paused`, Advanced StatefulSet
/// and Advanced DaemonSet `spec.updateStrategy.rollingUpdate.paused`.
fn paused_path(kind: Kind) -> Option<&'static [&'static str]> {
    match kind {
        Kind::CloneSet => Some(&["spec", "updateStrategy", "paused"]),
        Kind::AdvancedStatefulSet | Kind::AdvancedDaemonSet => {
            Some(&["spec", "updateStrategy", "rollingUpdate", "paused"])
        }
        _ => None,
    }
}

/// The merge patch that sets `path` to `value`.
fn nested(path: &[&str], value: Value) -> Value {
    path.iter().rev().fold(value, |inner, key| json!({ *key: inner }))
}

/// The merge patch that pauses (`pause`) or resumes the object, or why it cannot.
pub fn pause_patch(kind: Kind, object: &Value, pause: bool) -> Result<Value, String> {
    if kind == Kind::Rollout {
        return crate::rollout::kruise_rollout::pause_patch(object, pause);
    }
    let Some(path) = paused_path(kind) else {
        return Err(if pause {
            "pausing is not supported"
        } else {
            "resuming is not supported"
        }
        .into());
    };
    let pointer = format!("/{}", path.join("/"));
    let paused = object.pointer(&pointer).and_then(Value::as_bool).unwrap_or(false);
    match (pause, paused) {
        (true, true) => Err("is already paused".into()),
        (false, false) => Err("is not paused".into()),
        _ => Ok(nested(path, json!(pause))),
    }
}

/// `rollout pause` / `rollout resume` of every target; the errors are gathered as kubectl does.
pub async fn pause_or_resume(session: &Session, targets: &[Target], pause: bool) -> Result<(), Error> {
    let mut errors = Vec::new();
    for target in targets {
        let api = session.api(target.ty.resource()?);
        let object = match api.get(&target.name).await {
            Ok(o) => o,
            Err(e) => {
                errors.push(Error::from(e).to_string());
                continue;
            }
        };
        let patch = match pause_patch(target.ty.kind, &serde_json::to_value(&object)?, pause) {
            Ok(p) => p,
            Err(why) => {
                errors.push(format!("{} {:?} {why}", target.ty.resource_string(), target.name));
                continue;
            }
        };
        match api
            .patch(&target.name, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(_) => println!(
                "{} {}",
                target.display(),
                if pause { "paused" } else { "resumed" }
            ),
            Err(e) => errors.push(format!("failed to patch: {}", Error::from(e))),
        }
    }
    gather(errors)
}

/// One error as it is; several as kubectl's aggregate (`[a, b]`).
pub(crate) fn gather_errors(mut errors: Vec<Error>) -> Result<(), Error> {
    match errors.len() {
        0 => Ok(()),
        1 => Err(errors.remove(0)),
        _ => Err(Error::Failed(format!(
            "[{}]",
            errors
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

pub(crate) fn gather(errors: Vec<String>) -> Result<(), Error> {
    match errors.len() {
        0 => Ok(()),
        1 => Err(Error::Failed(errors.into_iter().next().unwrap_or_default())),
        _ => Err(Error::Failed(format!("[{}]", errors.join(", ")))),
    }
}

/// The merge patch that sets the template annotation `kubectl.kubernetes.io/restartedAt=<now>`, as
/// `kubectl rollout restart` does on a Deployment (kruise-tools sets env `RESTARTED_AT` instead, which
/// recreates every pod). Every container reads the annotation: the controllers restart them in place
/// where the node agent serves the pod and recreate the pod elsewhere (docs/env-from-metadata.md).
pub fn restart_patch(now: &str) -> Value {
    nested(
        &["spec", "template", "metadata", "annotations"],
        json!({ RESTARTED_AT_KEY: now }),
    )
}

/// `rollout restart` of every target (kruise-tools restarts only the first).
pub async fn restart(session: &Session, targets: &[Target]) -> Result<(), Error> {
    let now = time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .unwrap_or_else(|_| time::OffsetDateTime::now_utc())
        .format(&time::format_description::well_known::Rfc3339)
        .map_err(|e| Error::Failed(e.to_string()))?;
    let mut errors = Vec::new();
    for target in targets {
        if !matches!(
            target.ty.kind,
            Kind::CloneSet | Kind::AdvancedStatefulSet | Kind::AdvancedDaemonSet
        ) {
            errors.push(format!(
                "{} {:?} restarting is not supported",
                target.ty.resource_string(),
                target.name
            ));
            continue;
        }
        let api = session.api(target.ty.resource()?);
        let result = api
            .patch(
                &target.name,
                &PatchParams::default(),
                &Patch::Merge(restart_patch(&now)),
            )
            .await;
        match result {
            Ok(_) => println!("{} restarted", target.display()),
            Err(e) => errors.push(Error::from(e).to_string()),
        }
    }
    gather(errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_and_resume_patches_and_refusals() {
        let running = json!({"spec": {"updateStrategy": {}}});
        let paused = json!({"spec": {"updateStrategy": {"paused": true}}});
        assert_eq!(
            pause_patch(Kind::CloneSet, &running, true).unwrap(),
            json!({"spec": {"updateStrategy": {"paused": true}}})
        );
        assert_eq!(
            pause_patch(Kind::CloneSet, &paused, true).unwrap_err(),
            "is already paused"
        );
        assert_eq!(
            pause_patch(Kind::CloneSet, &running, false).unwrap_err(),
            "is not paused"
        );
        assert_eq!(
            pause_patch(Kind::AdvancedStatefulSet, &running, true).unwrap(),
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"paused": true}}}})
        );
        assert_eq!(
            pause_patch(Kind::SidecarSet, &running, true).unwrap_err(),
            "pausing is not supported"
        );
    }

    #[test]
    fn restart_sets_the_restarted_at_template_annotation() {
        let mut object = json!({"spec": {"template": {
            "metadata": {"labels": {"app": "web"},
                "annotations": {"a": "1", RESTARTED_AT_KEY: "2026-11-29T04:00:00Z"}},
            "spec": {"containers": [{"name": "a", "env": [{"name": "X", "value": "1"}]}]}}}});
        let before = object.clone();
        json_patch::merge(&mut object, &restart_patch("2026-11-30T05:00:00Z"));
        let template = &object["spec"]["template"];
        assert_eq!(
            template["metadata"]["annotations"],
            json!({"a": "1", "kubectl.kubernetes.io/restartedAt": "2026-11-30T05:00:00Z"})
        );
        assert_eq!(
            template["metadata"]["labels"],
            before["spec"]["template"]["metadata"]["labels"]
        );
        assert_eq!(
            template["spec"], before["spec"]["template"]["spec"],
            "no env is added: the containers restart in place where they can"
        );
    }
}
