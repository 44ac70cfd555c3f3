//! `migrate CloneSet --from Deployment`: create a CloneSet from a Deployment (`--create`), or move
//! replicas from the Deployment to the CloneSet, surging by at most `--max-surge` and scaling the
//! Deployment in only once the CloneSet's pods are available. Each step is decided by [`step`], a pure
//! function of what was moved so far.

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::{Error, cli::MigrateArgs, client::Session};

/// What has been moved, and the limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Replicas to move.
    pub target: i32,
    /// The CloneSet's replicas raised so far.
    pub scaled_out: i32,
    /// The Deployment's replicas lowered so far.
    pub scaled_in: i32,
    /// The Deployment's replicas now.
    pub source_replicas: i32,
    /// The CloneSet's pods are all available.
    pub destination_ready: bool,
    pub max_surge: i32,
}

/// The next move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    ScaleOut(i32),
    ScaleIn(i32),
    Wait,
    Done,
}

/// Decides the next move: raise the CloneSet while the surge allows, lower the Deployment by what the
/// available CloneSet pods cover.
pub fn step(p: Progress) -> Step {
    if p.scaled_in >= p.target && p.scaled_out >= p.target {
        return Step::Done;
    }
    let surge = p.scaled_out - p.scaled_in;
    if p.scaled_out < p.target && surge < p.max_surge {
        return Step::ScaleOut((p.max_surge - surge).min(p.target - p.scaled_out));
    }
    if p.destination_ready {
        let n = p.source_replicas.min(p.target - p.scaled_in).min(surge);
        if n > 0 {
            return Step::ScaleIn(n);
        }
    }
    Step::Wait
}

/// The CloneSet `--create` makes from a Deployment (replicas copied only with `copy`; kruise-tools
/// always copied them).
pub fn cloneset_from(deployment: &Value, name: &str, namespace: &str, copy: bool) -> Value {
    let meta = &deployment["metadata"];
    let spec = &deployment["spec"];
    let rolling = spec.pointer("/strategy/rollingUpdate");
    let mut strategy =
        json!({"type": "ReCreate", "paused": spec.get("paused").cloned().unwrap_or(json!(false))});
    for key in ["maxUnavailable", "maxSurge"] {
        if let Some(v) = rolling.and_then(|r| r.get(key)) {
            strategy[key] = v.clone();
        }
    }
    let mut cs = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": if copy { spec.get("replicas").cloned().unwrap_or(json!(1)) } else { json!(0) },
                 "selector": spec["selector"], "template": spec["template"], "updateStrategy": strategy}});
    for key in ["labels", "annotations", "finalizers"] {
        if let Some(v) = meta.get(key) {
            cs["metadata"][key] = v.clone();
        }
    }
    if let Some(a) = cs["metadata"]
        .get_mut("annotations")
        .and_then(Value::as_object_mut)
    {
        a.remove("deployment.kubernetes.io/revision");
        a.remove("kubectl.kubernetes.io/last-applied-configuration");
    }
    for key in ["revisionHistoryLimit", "minReadySeconds"] {
        if let Some(v) = spec.get(key) {
            cs["spec"][key] = v.clone();
        }
    }
    cs
}

fn check(args: &MigrateArgs) -> Result<(), Error> {
    if !args.kind.eq_ignore_ascii_case("cloneset") {
        return Err(Error::Usage(
            "currently only supported CloneSet as dst type".to_string(),
        ));
    }
    if !args.from.eq_ignore_ascii_case("deployment") {
        return Err(Error::Usage(
            "currently only supported Deployment as src type".to_string(),
        ));
    }
    if args.src_name.is_empty() {
        return Err(Error::Usage("must specify --src-name".to_string()));
    }
    if args.dst_name.is_empty() {
        return Err(Error::Usage("must specify --dst-name".to_string()));
    }
    Ok(())
}

/// `migrate`.
pub async fn run(session: &Session, args: MigrateArgs) -> Result<(), Error> {
    check(&args)?;
    let ns = session.namespace.clone();
    let deployments: Api<Deployment> = Api::namespaced(session.client.clone(), &ns);
    let resource = crate::kinds::Type::parse("cloneset")?.resource()?.clone();
    let clonesets = session.api(&resource);
    let (src, dst) = (&args.src_name, &args.dst_name);
    if args.create {
        if clonesets.get_opt(dst).await?.is_some() {
            return Err(Error::Failed(format!("cloneset {dst} already exists")));
        }
        let deployment = serde_json::to_value(deployments.get(src).await?)?;
        let cs = cloneset_from(&deployment, dst, &ns, args.copy);
        clonesets
            .create(&PostParams::default(), &serde_json::from_value(cs)?)
            .await?;
        println!("Successfully created from Deployment/{src} to CloneSet/{dst}");
        return Ok(());
    }
    let source_start = deployments.get(src).await?.spec.replicas.unwrap_or(1);
    let destination_start = replicas(&serde_json::to_value(clonesets.get(dst).await?)?);
    let target = if args.replicas < 0 {
        source_start
    } else {
        args.replicas.min(source_start)
    };
    let deadline = (args.timeout_seconds >= 0)
        .then(|| Instant::now() + Duration::from_secs(args.timeout_seconds as u64));
    let mut last = None;
    loop {
        let source = deployments.get(src).await?.spec.replicas.unwrap_or(1);
        let cs = serde_json::to_value(clonesets.get(dst).await?)?;
        let now = replicas(&cs);
        let available = cs
            .pointer("/status/availableReplicas")
            .and_then(Value::as_i64)
            .unwrap_or(0) as i32;
        let observed = cs.pointer("/status/observedGeneration").and_then(Value::as_i64)
            >= cs.pointer("/metadata/generation").and_then(Value::as_i64);
        let progress = Progress {
            target,
            scaled_out: now - destination_start,
            scaled_in: source_start - source,
            source_replicas: source,
            destination_ready: observed && available >= now,
            max_surge: args.max_surge.max(1),
        };
        if last != Some((progress.scaled_in, progress.scaled_out)) {
            println!(
                "Migration progress: Deployment/{src} scale in {}, CloneSet/{dst} scale out {}",
                progress.scaled_in, progress.scaled_out
            );
            last = Some((progress.scaled_in, progress.scaled_out));
        }
        match step(progress) {
            Step::Done => break,
            Step::ScaleOut(n) => {
                clonesets
                    .patch(
                        dst,
                        &PatchParams::default(),
                        &Patch::Merge(json!({"spec": {"replicas": now + n}})),
                    )
                    .await?;
            }
            Step::ScaleIn(n) => {
                deployments
                    .patch(
                        src,
                        &PatchParams::default(),
                        &Patch::Merge(json!({"spec": {"replicas": source - n}})),
                    )
                    .await?;
            }
            Step::Wait => tokio::time::sleep(Duration::from_secs(1)).await,
        }
        if deadline.is_some_and(|d| Instant::now() > d) {
            return Err(Error::Failed(format!(
                "failed to migrate: timed out after {}s",
                args.timeout_seconds
            )));
        }
    }
    println!("Successfully migrated {target} replicas from Deployment/{src} to CloneSet/{dst}");
    Ok(())
}

fn replicas(cloneset: &Value) -> i32 {
    cloneset
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(scaled_out: i32, scaled_in: i32, ready: bool) -> Progress {
        Progress {
            target: 3,
            scaled_out,
            scaled_in,
            source_replicas: 3 - scaled_in,
            destination_ready: ready,
            max_surge: 1,
        }
    }

    #[test]
    fn surge_then_scale_in_once_available() {
        assert_eq!(step(p(0, 0, true)), Step::ScaleOut(1));
        assert_eq!(step(p(1, 0, false)), Step::Wait);
        assert_eq!(step(p(1, 0, true)), Step::ScaleIn(1));
        assert_eq!(step(p(1, 1, true)), Step::ScaleOut(1));
        assert_eq!(step(p(3, 2, true)), Step::ScaleIn(1));
        assert_eq!(step(p(3, 3, true)), Step::Done);
        let wide = Progress {
            max_surge: 5,
            ..p(0, 0, true)
        };
        assert_eq!(step(wide), Step::ScaleOut(3));
    }

    #[test]
    fn create_copies_the_template_and_replicas_only_with_copy() {
        let d = json!({"metadata": {"name": "shop", "labels": {"a": "b"},
                "annotations": {"deployment.kubernetes.io/revision": "3", "team": "x"}},
            "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "shop"}}, "minReadySeconds": 5,
                "template": {"metadata": {"labels": {"app": "shop"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
                "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}}}});
        let cs = cloneset_from(&d, "shop-cs", "default", false);
        assert_eq!(cs["spec"]["replicas"], 0);
        assert_eq!(
            cs["spec"]["updateStrategy"],
            json!({"type": "ReCreate", "paused": false, "maxSurge": "25%", "maxUnavailable": 1})
        );
        assert_eq!(cs["metadata"]["annotations"], json!({"team": "x"}));
        assert_eq!(cs["spec"]["minReadySeconds"], 5);
        assert_eq!(
            cloneset_from(&d, "shop-cs", "default", true)["spec"]["replicas"],
            4
        );
    }
}
