//! `rollout undo`: put a former revision's pod template back.
//!
//! kruise-tools merge-patches the object with the revision's data, which keeps fields the old template
//! did not have (a merge patch cannot remove what it does not mention) and stores the `$patch` marker
//! in the template. Here the template is replaced as a whole, by a JSON patch conditional on the template
//! that was compared being unchanged.

use k8s_openapi::api::apps::v1::ControllerRevision;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use crate::{
    Error,
    cli::DryRun,
    client::Session,
    kinds::{Kind, Target},
    rollout::history::{self, describe_template},
};

/// The revision `to` designates (0: the one before the newest).
pub fn pick(revisions: &[ControllerRevision], to: i64, kind: Kind) -> Result<&ControllerRevision, Error> {
    if to < 0 {
        return Err(Error::Failed(format!(
            "unable to find specified revision {to} in history"
        )));
    }
    if to == 0 {
        if revisions.len() <= 1 {
            return Err(Error::Failed(if kind == Kind::AdvancedStatefulSet {
                "no latest revision to roll back to".to_string()
            } else {
                "no last revision to roll back to".to_string()
            }));
        }
        return Ok(&revisions[revisions.len() - 2]);
    }
    revisions
        .iter()
        .find(|r| history::number(r) == to)
        .ok_or_else(|| Error::Failed(format!("unable to find specified revision {to} in history")))
}

/// Whether the current template already is the revision's: compared as the controller stores it (Go's
/// empty `creationTimestamp` and `resources` filled in on both sides).
pub fn matches(current: &Value, revision: &Value) -> bool {
    normalize(current) == normalize(revision)
}

fn normalize(template: &Value) -> Value {
    match serde_json::from_value(template.clone()) {
        Ok(t) => kruise_reconcile::history::go_shaped_template(&t),
        Err(_) => template.clone(),
    }
}

/// `rollout undo`.
pub async fn run(session: &Session, target: &Target, to: i64, dry_run: DryRun) -> Result<(), Error> {
    let (object, revisions) = history::revisions(session, target).await?;
    let chosen = pick(&revisions, to, target.ty.kind)?;
    let template = history::template(chosen)?;
    if dry_run == DryRun::Client {
        println!(
            "{} will roll back to {}",
            target.display(),
            describe_template(&template)
        );
        return Ok(());
    }
    let current = object
        .data
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(Value::Null);
    if matches(&current, &template) {
        println!(
            "{} skipped rollback (current template already matches revision {})",
            target.display(),
            history::number(chosen)
        );
        return Ok(());
    }
    let patch: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/spec/template", "value": current},
        {"op": "replace", "path": "/spec/template", "value": template},
    ]))?;
    let params = PatchParams {
        dry_run: dry_run == DryRun::Server,
        ..PatchParams::default()
    };
    session
        .api(target.ty.resource()?)
        .patch(&target.name, &params, &Patch::<()>::Json(patch))
        .await
        .map_err(|e| {
            Error::Failed(format!(
                "failed restoring revision {}: {}",
                history::number(chosen),
                Error::from(e)
            ))
        })?;
    println!("{} rolled back", target.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn revision(number: i64) -> ControllerRevision {
        ControllerRevision {
            revision: Some(number),
            ..Default::default()
        }
    }

    #[test]
    fn revision_zero_is_the_one_before_the_newest() {
        let list = [revision(1), revision(4), revision(6)];
        assert_eq!(history::number(pick(&list, 0, Kind::CloneSet).unwrap()), 4);
        assert_eq!(history::number(pick(&list, 1, Kind::CloneSet).unwrap()), 1);
        let e = pick(&list, 5, Kind::CloneSet).unwrap_err().to_string();
        assert_eq!(e, "unable to find specified revision 5 in history");
        let e = pick(&list[..1], 0, Kind::CloneSet).unwrap_err().to_string();
        assert_eq!(e, "no last revision to roll back to");
        let e = pick(&[], 0, Kind::AdvancedStatefulSet).unwrap_err().to_string();
        assert_eq!(e, "no latest revision to roll back to");
    }

    #[test]
    fn templates_compare_as_the_controller_stores_them() {
        let stored = json!({"metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
                            "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {}}]}});
        let live = json!({"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "web", "image": "nginx"}]}});
        assert!(matches(&live, &stored));
        let newer = json!({"metadata": {"labels": {"app": "web"}},
                           "spec": {"containers": [{"name": "web", "image": "nginx:2"}]}});
        assert!(!matches(&newer, &stored));
    }
}
