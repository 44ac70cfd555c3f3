//! `rollout undo`: put a former revision's pod template back.
//!
//! kruise-tools merge-patches the object with the revision's data, which keeps fields the old template
//! did not have (a merge patch cannot remove what it does not mention) and stores the `$patch` marker
//! in the template. Here the template is replaced as a whole, by a JSON patch conditional on the template
//! that was compared being unchanged.
//!
//! A Kruise Rollout undoes the workload of its `spec.workloadRef` (built-in kinds through kubectl's own
//! `rollout undo`); a workload named twice, directly or through Rollouts, is undone once.

use k8s_openapi::api::apps::v1::ControllerRevision;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use crate::{
    Error,
    cli::DryRun,
    client::{KubeFlags, Session, run_kubectl},
    kinds::{Kind, Target, Type},
    rollout::{
        history::{self, describe_template},
        kruise_rollout,
        pause::gather_errors,
    },
};

/// What one argument of `rollout undo` rolls back.
enum Workload {
    /// A kind the plugin undoes itself.
    Kruise(Target),
    /// A built-in kind: `deployments.v1.apps/NAME` for kubectl.
    Native {
        group: String,
        kind: String,
        arg: String,
    },
}

impl Workload {
    /// The same workload, however it was reached.
    fn key(&self) -> (String, String, String) {
        match self {
            Workload::Kruise(t) => {
                let r = t.ty.resource().ok();
                (
                    r.map(|r| r.group.clone()).unwrap_or_default(),
                    r.map(|r| r.kind.clone()).unwrap_or_default(),
                    t.name.clone(),
                )
            }
            Workload::Native { group, kind, arg } => (group.clone(), kind.clone(), arg.clone()),
        }
    }
}

/// The workload a Rollout's `workloadRef` names.
fn referenced(reference: &kruise_rollout::WorkloadRef) -> Result<Workload, Error> {
    let kind = reference.kind.as_str();
    let group = reference.group();
    let kruise = |resource: &str| {
        Ok(Workload::Kruise(Target {
            ty: Type::parse(resource)?,
            name: reference.name.clone(),
        }))
    };
    match (group, kind) {
        ("apps.kruise.io", "CloneSet") => kruise("clonesets.apps.kruise.io"),
        ("apps.kruise.io", "StatefulSet") => kruise("statefulsets.apps.kruise.io"),
        ("apps.kruise.io", "DaemonSet") => kruise("daemonsets.apps.kruise.io"),
        ("apps", "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet") => Ok(Workload::Native {
            group: group.to_string(),
            kind: kind.to_string(),
            arg: format!(
                "{}s.{}.{group}/{}",
                kind.to_ascii_lowercase(),
                reference.version(),
                reference.name
            ),
        }),
        _ => Err(Error::Failed(format!(
            "no rollbacker has been implemented for \"{kind}.{group}\""
        ))),
    }
}

/// `rollout undo` of every target, each workload once; errors are gathered as kubectl does.
pub async fn run_all(
    session: &Session,
    kube: &KubeFlags,
    targets: &[Target],
    to: i64,
    dry_run: DryRun,
) -> Result<(), Error> {
    let mut seen = std::collections::HashSet::new();
    let mut errors = Vec::new();
    for target in targets {
        let workload = if target.ty.kind == Kind::Rollout {
            let rollout = session.api(target.ty.resource()?).get(&target.name).await;
            let reference = rollout.map_err(Error::from).and_then(|r| {
                kruise_rollout::workload_ref(&serde_json::to_value(r)?).map_err(|why| {
                    Error::Failed(format!("{} {:?} {why}", target.ty.resource_string(), target.name))
                })
            });
            match reference.and_then(|r| referenced(&r)) {
                Ok(w) => w,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            }
        } else {
            Workload::Kruise(target.clone())
        };
        if !seen.insert(workload.key()) {
            continue;
        }
        let result = match workload {
            Workload::Kruise(t) => run(session, &t, to, dry_run).await,
            Workload::Native { arg, .. } => {
                let mut args = vec!["rollout".to_string(), "undo".to_string(), arg];
                args.push(format!("--to-revision={to}"));
                match dry_run {
                    DryRun::None => {}
                    DryRun::Client => args.push("--dry-run=client".to_string()),
                    DryRun::Server => args.push("--dry-run=server".to_string()),
                }
                args.extend(crate::get::kubectl_flags(kube));
                run_kubectl(&args)
            }
        };
        if let Err(e) = result {
            errors.push(e);
        }
    }
    gather_errors(errors)
}

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
    fn a_rollout_reference_names_the_workload_kind_to_undo() {
        let reference = |api_version: &str, kind: &str| kruise_rollout::WorkloadRef {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            name: "web".to_string(),
        };
        let Ok(Workload::Kruise(t)) = referenced(&reference("apps.kruise.io/v1alpha1", "CloneSet")) else {
            panic!("a CloneSet is undone by the plugin")
        };
        assert_eq!(t.display(), "cloneset.apps.kruise.io/web");
        let Ok(Workload::Kruise(t)) = referenced(&reference("apps.kruise.io/v1beta1", "StatefulSet")) else {
            panic!("an Advanced StatefulSet is undone by the plugin")
        };
        assert_eq!(t.ty.kind, Kind::AdvancedStatefulSet);
        let Ok(Workload::Native { arg, .. }) = referenced(&reference("apps/v1", "Deployment")) else {
            panic!("a Deployment goes to kubectl")
        };
        assert_eq!(arg, "deployments.v1.apps/web");
        let Err(e) = referenced(&reference("example.com/v1", "Widget")) else {
            panic!("unknown kinds are refused")
        };
        assert_eq!(
            e.to_string(),
            "no rollbacker has been implemented for \"Widget.example.com\""
        );
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
