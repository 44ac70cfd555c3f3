//! Dispatch: each command to its module; built-in kinds to kubectl.

use clap::CommandFactory as _;

use crate::{
    Error,
    cli::{Cli, Command, Rollout, parse_duration},
    client::{Session, delegate_to_kubectl},
    explain,
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
                Rollout::Pause(a) | Rollout::Resume(a) | Rollout::Restart(a) | Rollout::Approve(a) => {
                    &a.resources
                }
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
            let targets = rollout::approve::resolve(&session, targets).await?;
            rollout_command(&session, &cli.kube, command, &targets).await?;
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
        Command::Describe(crate::cli::Describe::Rollout(args)) => {
            crate::describe::run(&cli.kube, args).await?;
        }
        Command::Scaledown(args) => {
            let session = cli.kube.connect().await?;
            crate::scaledown::run(&session, args).await?;
        }
        Command::Explain(args) => return explain(&cli.kube, args).await,
        Command::Inject(args) => return inject(&cli.kube, args).await,
        Command::Create(command) => {
            let session = cli.kube.connect().await?;
            crate::create::run(&session, command).await?;
        }
        Command::Migrate(args) => {
            let session = cli.kube.connect().await?;
            crate::migrate::run(&session, args).await?;
        }
        Command::Get(args) => return crate::get::run(&cli.kube, &args.what),
        Command::Exec(args) => return crate::exec::run(&cli.kube, &args).await,
        Command::Expose(args) => return crate::expose::run(&cli.kube, &args).await,
        Command::Diff(_)
        | Command::Apply(_)
        | Command::Patch(_)
        | Command::Replace(_)
        | Command::Wait(_)
        | Command::Kustomize(_)
        | Command::Config(_)
        | Command::Plugin(_)
        | Command::Version(_)
        | Command::ApiVersions(_)
        | Command::ApiResources(_)
        | Command::Options(_)
        | Command::Scale(_) => return delegate_to_kubectl(),
        Command::Completion(args) => {
            let mut command = Cli::command();
            // Into a buffer: clap_complete panics when its writer fails (a closed pipe).
            let mut script = Vec::new();
            clap_complete::generate(args.shell, &mut command, "kubectl-kruise", &mut script);
            std::io::Write::write_all(&mut std::io::stdout(), &script)
                .map_err(|e| Error::Failed(format!("cannot write the script: {e}")))?;
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

async fn rollout_command(
    session: &Session,
    kube: &crate::client::KubeFlags,
    command: Rollout,
    targets: &[Target],
) -> Result<(), Error> {
    match command {
        Rollout::Status(a) => {
            let target = one(targets)?;
            let timeout = parse_duration(&a.timeout)?;
            rollout::status::run(session, target, a.watch, timeout, a.detail).await
        }
        Rollout::History(a) => {
            for target in targets {
                if target.ty.kind == Kind::Rollout {
                    return Err(Error::Failed(format!(
                        "no history viewer has been implemented for {:?}",
                        target.ty.group_kind()
                    )));
                }
                rollout::history::run(session, target, a.revision).await?;
            }
            Ok(())
        }
        Rollout::Undo(a) if a.fast => rollout::approve::fast_undo(session, targets, a.dry_run).await,
        Rollout::Undo(a) => rollout::undo::run_all(session, kube, targets, a.to_revision, a.dry_run).await,
        Rollout::Approve(_) => rollout::approve::approve(session, targets).await,
        Rollout::Pause(_) => rollout::pause::pause_or_resume(session, targets, true).await,
        Rollout::Resume(_) => rollout::pause::pause_or_resume(session, targets, false).await,
        Rollout::Restart(_) => rollout::pause::restart(session, targets).await,
    }
}

/// The objects to explain against: the files of `--objects`, else the cluster's.
async fn objects(
    kube: &crate::client::KubeFlags,
    files: &[std::path::PathBuf],
    namespace: &str,
) -> Result<Vec<serde_json::Value>, Error> {
    if files.is_empty() {
        let session = kube.connect().await?;
        explain::cluster_objects(&session, namespace).await
    } else {
        explain::file_objects(files)
    }
}

fn offline_namespace(kube: &crate::client::KubeFlags) -> String {
    kube.namespace.clone().unwrap_or_else(|| "default".to_string())
}

async fn explain(kube: &crate::client::KubeFlags, args: crate::cli::ExplainArgs) -> Result<u8, Error> {
    let offline = !args.objects.is_empty();
    let namespace = if offline {
        offline_namespace(kube)
    } else {
        kube.connect().await?.namespace
    };
    let pod = match (&args.filename, args.resources.as_slice()) {
        (Some(file), []) => explain::read_pod_manifest(file, &namespace)?,
        (None, [_, ..]) => {
            let target = match kinds::targets(&args.resources)?.as_slice() {
                [t] if t.ty.kind == Kind::Pod => t.clone(),
                _ => {
                    return Err(Error::Usage(
                        "explain takes one pod: pod/NAME or -f pod.yaml".to_string(),
                    ));
                }
            };
            if offline {
                explain::file_objects(&args.objects)?
                    .into_iter()
                    .find(|o| {
                        o.get("kind").and_then(|k| k.as_str()) == Some("Pod")
                            && o.pointer("/metadata/name").and_then(|n| n.as_str())
                                == Some(target.name.as_str())
                            && o.pointer("/metadata/namespace")
                                .and_then(|n| n.as_str())
                                .unwrap_or("default")
                                == namespace
                    })
                    .ok_or_else(|| {
                        Error::Failed(format!("pod {namespace}/{} is not in --objects", target.name))
                    })?
            } else {
                let session = kube.connect().await?;
                let mut pod =
                    serde_json::to_value(session.api(target.ty.resource()?).get(&target.name).await?)?;
                if let Some(map) = pod.as_object_mut() {
                    map.insert("apiVersion".into(), "v1".into());
                    map.insert("kind".into(), "Pod".into());
                }
                pod
            }
        }
        _ => {
            return Err(Error::Usage(
                "explain takes one pod: pod/NAME or -f pod.yaml".to_string(),
            ));
        }
    };
    let pod_namespace = pod
        .pointer("/metadata/namespace")
        .and_then(|n| n.as_str())
        .unwrap_or(&namespace)
        .to_string();
    let state = explain::State::new(objects(kube, &args.objects, &pod_namespace).await?);
    print!("{}", explain::explain(&state, &pod)?);
    Ok(0)
}

/// `inject`: `kruise admit -f`'s code path (kruise-rs's `admit::manifest`) over the cluster's objects.
async fn inject(kube: &crate::client::KubeFlags, args: crate::cli::InjectArgs) -> Result<u8, Error> {
    let namespace = if args.objects.is_empty() {
        kube.connect().await?.namespace
    } else {
        offline_namespace(kube)
    };
    let mut view = kruise_webhooks::MemoryView::default();
    for object in objects(kube, &args.objects, &namespace).await? {
        view.add(object)
            .map_err(|e| Error::Failed(format!("cannot read the cluster state: {e}")))?;
    }
    let admission = kruise_rs::admission::Admission::in_memory(view, kruise_webhooks::Settings::default());
    let mut out = std::io::stdout().lock();
    let code = kruise_rs::admit::manifest(&admission, &args.filename, &mut out)
        .await
        .map_err(Error::Failed)?;
    Ok(if code == std::process::ExitCode::SUCCESS {
        0
    } else {
        1
    })
}
