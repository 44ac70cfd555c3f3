//! Dispatch: each command to its module; built-in kinds to kubectl.

use clap::CommandFactory as _;

use crate::{
    Error,
    cli::{Cli, Command, Rollout, parse_duration},
    client::{Session, delegate_to_kubectl},
    kinds::{self, Kind, Target},
    rollout,
};

/// Runs the command; returns the exit code (kubectl's when the command was handed to it).
pub async fn run(cli: Cli) -> Result<u8, Error> {
    match cli.command {
        Command::Rollout(command) => {
            let resources = match &command {
                Rollout::Status(a) => &a.resources,
                Rollout::History(a) => &a.resources,
                Rollout::Undo(a) => &a.resources,
                Rollout::Pause(a) | Rollout::Resume(a) | Rollout::Restart(a) => &a.resources,
            };
            let targets = kinds::targets(resources)?;
            if targets.iter().any(|t| t.ty.kind == Kind::Native) {
                if targets.iter().all(|t| t.ty.kind == Kind::Native) {
                    return delegate_to_kubectl();
                }
                return Err(Error::Usage(
                    "give built-in kinds and kruise kinds in separate commands".to_string(),
                ));
            }
            let session = cli.kube.connect().await?;
            rollout_command(&session, command, &targets).await?;
        }
        Command::Set(command) => {
            let args = match &command {
                crate::cli::Set::Image(a) | crate::cli::Set::ServiceAccount(a) => &a.args,
                crate::cli::Set::Env(a) => &a.args,
                crate::cli::Set::Resources(a) => &a.args,
            };
            if let Some(first) = args.first()
                && kinds::Type::parse(first.split('/').next().unwrap_or_default())
                    .is_ok_and(|t| t.kind == Kind::Native)
            {
                return delegate_to_kubectl();
            }
            let session = cli.kube.connect().await?;
            crate::set::run(&session, command).await?;
        }
        Command::Scaledown(args) => {
            let session = cli.kube.connect().await?;
            crate::scaledown::run(&session, args).await?;
        }
        Command::Completion(args) => {
            let mut command = Cli::command();
            clap_complete::generate(args.shell, &mut command, "kubectl-kruise", &mut std::io::stdout());
        }
        other => {
            return Err(Error::Usage(format!("{other:?} is not available")));
        }
    }
    Ok(0)
}

fn one(targets: &[Target]) -> Result<&Target, Error> {
    match targets {
        [target] => Ok(target),
        _ => Err(Error::Usage(format!(
            "rollout status is only supported on individual resources and resource collections - {} resources were found",
            targets.len()
        ))),
    }
}

async fn rollout_command(session: &Session, command: Rollout, targets: &[Target]) -> Result<(), Error> {
    match command {
        Rollout::Status(a) => {
            let target = one(targets)?;
            let timeout = parse_duration(&a.timeout)?;
            rollout::status::run(session, target, a.watch, timeout, a.detail).await
        }
        Rollout::History(a) => {
            for target in targets {
                rollout::history::run(session, target, a.revision).await?;
            }
            Ok(())
        }
        Rollout::Undo(a) => {
            for target in targets {
                rollout::undo::run(session, target, a.to_revision, a.dry_run).await?;
            }
            Ok(())
        }
        Rollout::Pause(_) => rollout::pause::pause_or_resume(session, targets, true).await,
        Rollout::Resume(_) => rollout::pause::pause_or_resume(session, targets, false).await,
        Rollout::Restart(_) => rollout::pause::restart(session, targets).await,
    }
}
