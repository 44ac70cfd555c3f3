//! `create job|broadcastjob|containerrecreaterequest`. Each object is built by a pure function; the
//! ContainerRecreateRequest fixes kruise-tools' defects (docs/kubectl-kruise.md): `--containers`, `-u`
//! and `-m` are honoured, no read-only container fields are pre-filled, and a missing pod is named.

use k8s_openapi::api::{batch::v1::CronJob, core::v1::Pod};
use kube::api::{Api, ApiResource, DynamicObject, PostParams};
use serde_json::{Value, json};

use crate::{
    Error,
    cli::{Create, CreateCrrArgs, CreateJobArgs, DryRun},
    client::Session,
    kinds::{Target, Type},
    set::print_result,
};

/// A Job (or BroadcastJob) pod template running `image` with `command`.
fn template(name: &str, image: &str, command: &[String]) -> Value {
    let mut container = json!({"name": name, "image": image});
    if !command.is_empty() {
        container["command"] = json!(command);
    }
    json!({"spec": {"containers": [container], "restartPolicy": "Never"}})
}

/// `create job NAME --image IMG [-- CMD]`.
pub fn job(name: &str, namespace: &str, image: &str, command: &[String]) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": name, "namespace": namespace},
           "spec": {"template": template(name, image, command)}})
}

/// `create job NAME --from=cronjob/N`: the CronJob's job template, marked as started by hand and owned
/// by the CronJob.
pub fn job_from_cronjob(name: &str, namespace: &str, cronjob: &CronJob) -> Result<Value, Error> {
    let template = &cronjob.spec.job_template;
    let meta = template.metadata.clone().unwrap_or_default();
    let mut annotations = meta.annotations.unwrap_or_default();
    annotations.insert("cronjob.kubernetes.io/instantiate".into(), "manual".into());
    Ok(json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations, "labels": meta.labels,
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob",
                "name": cronjob.metadata.name, "uid": cronjob.metadata.uid, "controller": true}]},
        "spec": template.spec}))
}

/// `create broadcastjob NAME --image IMG [-- CMD]`.
pub fn broadcast_job(name: &str, namespace: &str, image: &str, command: &[String]) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "BroadcastJob",
           "metadata": {"name": name, "namespace": namespace},
           "spec": {"template": template(name, image, command)}})
}

/// `create containerrecreaterequest NAME --pod P [--containers a,b] [-u N] [-m N]`: only the named
/// containers (all of the pod's when none are named), each checked against the pod.
pub fn container_recreate_request(args: &CreateCrrArgs, namespace: &str, pod: &Pod) -> Result<Value, Error> {
    let present: Vec<&str> = pod
        .spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .map(|c| c.name.as_str())
        .collect();
    let names: Vec<&str> = if args.containers.is_empty() {
        present.clone()
    } else {
        args.containers.iter().map(String::as_str).collect()
    };
    if let Some(missing) = names.iter().find(|n| !present.contains(n)) {
        return Err(Error::Failed(format!(
            "container {missing:?} not found in pod {}",
            args.pod
        )));
    }
    let containers: Vec<Value> = names.iter().map(|n| json!({"name": n})).collect();
    Ok(
        json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ContainerRecreateRequest",
        "metadata": {"name": args.name, "namespace": namespace},
        "spec": {"podName": args.pod, "containers": containers,
            "strategy": {"failurePolicy": "Fail", "unreadyGracePeriodSeconds": args.unready_grace_period_seconds,
                         "minStartedSeconds": args.min_started_seconds},
            "activeDeadlineSeconds": 300, "ttlSecondsAfterFinished": 1800}}),
    )
}

fn job_args(args: &CreateJobArgs, allow_from: bool) -> Result<(), Error> {
    match (&args.image, &args.from) {
        (None, None) => Err(Error::Usage("either --image or --from must be specified".to_string())),
        (Some(_), Some(_)) => Err(Error::Usage("--image and --from cannot both be specified".to_string())),
        (None, Some(_)) if !args.command.is_empty() => {
            Err(Error::Usage("cannot specify --from and command".to_string()))
        }
        (None, Some(_)) if !allow_from => Err(Error::Usage(
            "--from is not supported for broadcastjob by kubectl kruise (AdvancedCronJob is not served by kruise-rs)".to_string(),
        )),
        _ => Ok(()),
    }
}

async fn send(
    session: &Session,
    ty: &str,
    object: Value,
    dry_run: DryRun,
    output: &crate::cli::OutputArgs,
) -> Result<(), Error> {
    let ty = Type::parse(ty)?;
    let resource: ApiResource = match ty.resource() {
        Ok(r) => r.clone(),
        Err(_) => ApiResource {
            group: "batch".into(),
            version: "v1".into(),
            api_version: "batch/v1".into(),
            kind: "Job".into(),
            plural: "jobs".into(),
        },
    };
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let target = Target { ty, name };
    let written = if dry_run == DryRun::Client {
        object
    } else {
        let api: Api<DynamicObject> =
            Api::namespaced_with(session.client.clone(), &session.namespace, &resource);
        let params = PostParams {
            dry_run: dry_run == DryRun::Server,
            ..PostParams::default()
        };
        serde_json::to_value(api.create(&params, &serde_json::from_value(object)?).await?)?
    };
    if output.output.is_none() && target.ty.written == "job" {
        let dry = match dry_run {
            DryRun::None => "",
            DryRun::Client => " (dry run)",
            DryRun::Server => " (server dry run)",
        };
        println!("job.batch/{} created{dry}", target.name);
        return Ok(());
    }
    print_result(&target, &written, "created", output)
}

/// `create …`.
pub async fn run(session: &Session, command: Create) -> Result<(), Error> {
    let ns = session.namespace.clone();
    match command {
        Create::Job(args) => {
            job_args(&args, true)?;
            let object = match (&args.image, &args.from) {
                (Some(image), _) => job(&args.name, &ns, image, &args.command),
                (None, Some(from)) => {
                    let cron = from
                        .strip_prefix("cronjob/")
                        .or_else(|| from.strip_prefix("cronjobs/"))
                        .or_else(|| from.strip_prefix("cj/"))
                        .ok_or_else(|| {
                            Error::Usage(format!(
                                "from must be an existing cronjob: cronjob/NAME, got {from:?}"
                            ))
                        })?;
                    let api: Api<CronJob> = Api::namespaced(session.client.clone(), &ns);
                    job_from_cronjob(&args.name, &ns, &api.get(cron).await?)?
                }
                (None, None) => unreachable_usage()?,
            };
            send(session, "job", object, args.output.dry_run, &args.output).await
        }
        Create::BroadcastJob(args) => {
            job_args(&args, false)?;
            let image = args.image.clone().unwrap_or_default();
            let object = broadcast_job(&args.name, &ns, &image, &args.command);
            send(session, "broadcastjob", object, args.output.dry_run, &args.output).await
        }
        Create::ContainerRecreateRequest(args) => {
            let pods: Api<Pod> = Api::namespaced(session.client.clone(), &ns);
            let pod = pods
                .get_opt(&args.pod)
                .await?
                .ok_or_else(|| Error::Failed(format!("pod {ns}/{} not found", args.pod)))?;
            let object = container_recreate_request(&args, &ns, &pod)?;
            send(session, "crr", object, args.output.dry_run, &args.output).await
        }
    }
}

fn unreachable_usage() -> Result<Value, Error> {
    Err(Error::Usage(
        "either --image or --from must be specified".to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{DryRun, OutputArgs};

    fn crr_args(containers: &[&str]) -> CreateCrrArgs {
        CreateCrrArgs {
            name: "r".into(),
            pod: "web-1".into(),
            containers: containers.iter().map(|s| s.to_string()).collect(),
            unready_grace_period_seconds: 5,
            min_started_seconds: 10,
            output: OutputArgs {
                dry_run: DryRun::None,
                output: None,
            },
        }
    }

    fn pod() -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "web-1"}, "spec": {"containers": [
            {"name": "web", "image": "nginx", "ports": [{"containerPort": 80}],
             "lifecycle": {"postStart": {"exec": {"command": ["true"]}}}},
            {"name": "log-agent", "image": "fluent-bit"}]}}))
        .unwrap()
    }

    #[test]
    fn a_crr_recreates_only_the_named_containers_with_the_given_timings() {
        let crr = container_recreate_request(&crr_args(&["log-agent"]), "shop", &pod()).unwrap();
        assert_eq!(crr["spec"]["containers"], json!([{"name": "log-agent"}]));
        assert_eq!(
            crr["spec"]["strategy"],
            json!({"failurePolicy": "Fail", "unreadyGracePeriodSeconds": 5, "minStartedSeconds": 10})
        );
        assert_eq!(crr["spec"]["podName"], "web-1");
        // No pre-filled preStop or ports, which the webhook rejects as read-only.
        let all = container_recreate_request(&crr_args(&[]), "shop", &pod()).unwrap();
        assert_eq!(
            all["spec"]["containers"],
            json!([{"name": "web"}, {"name": "log-agent"}])
        );
        let e = container_recreate_request(&crr_args(&["nope"]), "shop", &pod()).unwrap_err();
        assert_eq!(e.to_string(), "container \"nope\" not found in pod web-1");
    }

    #[test]
    fn jobs_from_an_image_or_a_cronjob() {
        let j = job(
            "pi",
            "default",
            "perl",
            &["perl".into(), "-e".into(), "print 1".into()],
        );
        assert_eq!(
            j["spec"]["template"]["spec"]["containers"][0]["command"],
            json!(["perl", "-e", "print 1"])
        );
        assert_eq!(j["spec"]["template"]["spec"]["restartPolicy"], "Never");
        let cron: CronJob = serde_json::from_value(json!({"metadata": {"name": "nightly", "uid": "c1"},
            "spec": {"schedule": "@daily", "jobTemplate": {"metadata": {"labels": {"a": "b"}},
                "spec": {"template": {"spec": {"containers": [{"name": "x", "image": "y"}], "restartPolicy": "OnFailure"}}}}}}))
        .unwrap();
        let j = job_from_cronjob("now", "default", &cron).unwrap();
        assert_eq!(
            j["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"],
            "manual"
        );
        assert_eq!(j["metadata"]["ownerReferences"][0]["uid"], "c1");
        assert_eq!(j["metadata"]["labels"], json!({"a": "b"}));
        let b = broadcast_job("warm", "default", "busybox", &[]);
        assert_eq!(b["kind"], "BroadcastJob");
        assert!(
            b["spec"]["template"]["spec"]["containers"][0]
                .get("command")
                .is_none()
        );
    }
}
