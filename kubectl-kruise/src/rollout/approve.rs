//! `rollout approve` and `rollout undo --fast` of Kruise Rollouts: status writes decided on the
//! Rollout as read, sent as merge patches to the status subresource with the read resourceVersion
//! (a Rollout whose status changed meanwhile is read and decided again), and the served version of
//! `rollouts.kruise.io` asked of the server.

use kube::api::{Patch, PatchParams};
use serde_json::Value;

use crate::{
    Error,
    cli::DryRun,
    client::Session,
    kinds::{Kind, Target},
    rollout::{kruise_rollout, pause::gather_errors},
};

/// Attempts of one status write whose Rollout keeps changing under it.
const ATTEMPTS: usize = 5;

/// The targets with each Rollout in the version the server prefers (kubectl's discovery), unless the
/// version was written (`rollouts.v1alpha1.rollouts.kruise.io`).
pub async fn resolve(session: &Session, targets: Vec<Target>) -> Result<Vec<Target>, Error> {
    if !targets.iter().any(|t| t.ty.kind == Kind::Rollout && !t.ty.pinned) {
        return Ok(targets);
    }
    let groups = session.client.list_api_groups().await?;
    let group = groups.groups.iter().find(|g| g.name == "rollouts.kruise.io");
    let mut resolved = Vec::with_capacity(targets.len());
    for mut target in targets {
        if target.ty.kind == Kind::Rollout && !target.ty.pinned {
            let version = group
                .and_then(|g| g.preferred_version.as_ref().or(g.versions.first()))
                .map(|v| v.version.clone())
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "the server doesn't have a resource type \"{}\"",
                        target.ty.written
                    ))
                })?;
            target.ty = target.ty.with_version(&version);
        }
        resolved.push(target);
    }
    Ok(resolved)
}

/// Reads the Rollout, asks `decide` for the status patch and sends it conditionally; a conflict
/// reads and decides again. `Ok(Err(why))`: `decide` refused.
async fn write_status(
    session: &Session,
    target: &Target,
    dry_run: DryRun,
    decide: impl Fn(&Value) -> Result<Value, String>,
) -> Result<Result<(), String>, Error> {
    let api = session.api(target.ty.resource()?);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let object = serde_json::to_value(api.get(&target.name).await?)?;
        let mut patch = match decide(&object) {
            Ok(patch) => patch,
            Err(why) => return Ok(Err(why)),
        };
        if dry_run == DryRun::Client {
            return Ok(Ok(()));
        }
        if let (Some(map), Some(version)) = (
            patch.as_object_mut(),
            object.pointer("/metadata/resourceVersion").cloned(),
        ) {
            map.insert("metadata".into(), serde_json::json!({"resourceVersion": version}));
        }
        match api
            .patch_status(
                &target.name,
                &PatchParams {
                    dry_run: dry_run == DryRun::Server,
                    ..PatchParams::default()
                },
                &Patch::Merge(patch),
            )
            .await
        {
            Ok(_) => return Ok(Ok(())),
            Err(kube::Error::Api(status)) if status.code == 409 && attempt < ATTEMPTS => continue,
            Err(e) => return Err(Error::Failed(format!("failed to patch: {}", Error::from(e)))),
        }
    }
}

/// Runs one status write per target; prints `<kind>.<group>/<name> <done>` for each one written and
/// gathers the refusals as kubectl does (`rollouts.rollouts.kruise.io "NAME" <why>`).
async fn each(
    session: &Session,
    targets: &[Target],
    dry_run: DryRun,
    done: &str,
    unsupported: &str,
    decide: fn(&Value) -> Result<Value, String>,
) -> Result<(), Error> {
    let mut errors = Vec::new();
    for target in targets {
        let outcome = if target.ty.kind == Kind::Rollout {
            write_status(session, target, dry_run, decide).await
        } else {
            Ok(Err(unsupported.to_string()))
        };
        match outcome {
            Ok(Ok(())) => println!(
                "{} {done}{}",
                target.display(),
                match dry_run {
                    DryRun::None => "",
                    DryRun::Client => " (dry run)",
                    DryRun::Server => " (server dry run)",
                }
            ),
            Ok(Err(why)) => errors.push(Error::Failed(format!(
                "{} {:?} {why}",
                target.ty.resource_string(),
                target.name
            ))),
            Err(e) => errors.push(e),
        }
    }
    gather_errors(errors)
}

/// `rollout approve`: the paused step of each Rollout becomes ready.
pub async fn approve(session: &Session, targets: &[Target]) -> Result<(), Error> {
    each(
        session,
        targets,
        DryRun::None,
        "approved",
        "approving is not supported",
        kruise_rollout::approve_patch,
    )
    .await
}

/// `rollout undo --fast`: each Rollout goes back to an earlier step that sends no traffic
/// (`--dry-run`: decided, printed, not written; kruise-tools writes anyway).
pub async fn fast_undo(session: &Session, targets: &[Target], dry_run: DryRun) -> Result<(), Error> {
    each(
        session,
        targets,
        dry_run,
        "rolled back",
        "rollback is not supported on given object",
        kruise_rollout::fast_undo_patch,
    )
    .await
}
