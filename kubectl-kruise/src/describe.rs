//! `describe rollout NAME`: a Kruise Rollout's phase, steps and traffic routing, its workload's
//! replica counts and pods (the workload's selector, and unless `--all` the current batch's
//! `rollouts.kruise.io/rollout-batch-id`); `-w` prints it again at every change of the Rollout.

mod render;

pub use render::{
    Fetched, Info, PodRow, Workload, human_duration, info, pod_row, render, sort_pods, workload,
};

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::Pod;
use kube::{
    Api,
    api::{ApiResource, DynamicObject, ListParams},
    runtime::watcher,
};
use serde_json::Value;

use crate::{
    Error,
    cli::{DescribeRolloutArgs, parse_duration},
    client::{KubeFlags, Session},
    kinds::{self, Kind, Target, Type},
    rollout::kruise_rollout::{BATCH_ID_LABEL, WorkloadRef},
};

/// Clears the terminal before each new picture of `-w` (not with `--no-color`).
const CLEAR: &str = "\x1b[2J\x1b[H";

/// The Rollout `NAME` or `rollout/NAME` designates (the first one given, as kruise-tools).
fn target(names: &[String]) -> Result<Target, Error> {
    let first = names.first().cloned().unwrap_or_default();
    if first.contains('/') {
        let target = kinds::targets(&[first])?.remove(0);
        if target.ty.kind != Kind::Rollout {
            return Err(Error::Usage(format!(
                "describe rollout takes a Rollout, not {}",
                target.ty.written
            )));
        }
        return Ok(target);
    }
    Ok(Target {
        ty: Type::parse("rollouts.rollouts.kruise.io")?,
        name: first,
    })
}

/// `describe rollout`.
pub async fn run(kube: &KubeFlags, args: DescribeRolloutArgs) -> Result<(), Error> {
    let session = kube.connect().await?;
    let target = crate::rollout::approve::resolve(&session, vec![target(&args.names)?])
        .await?
        .remove(0);
    let timeout = parse_duration(&args.timeout)?;
    let color = !args.no_color;
    let api = session.api(target.ty.resource()?);
    let first = api.get(&target.name).await?;
    if !args.watch {
        print!("{}", describe(&session, &first, args.all, color).await?);
        return Ok(());
    }
    let config = watcher::Config::default().fields(&format!("metadata.name={}", target.name));
    let follow = async {
        let mut stream = watcher(api.clone(), config).boxed();
        while let Some(event) = stream.next().await {
            match event.map_err(|e| Error::Client(e.to_string()))? {
                watcher::Event::Apply(object) | watcher::Event::InitApply(object)
                    if object.metadata.name.as_deref() == Some(target.name.as_str()) =>
                {
                    let text = describe(&session, &object, args.all, color).await?;
                    print!("{}{text}", if color { CLEAR } else { "" });
                    use std::io::Write as _;
                    let _ = std::io::stdout().flush();
                }
                _ => {}
            }
        }
        Ok(())
    };
    if timeout.is_zero() {
        return follow.await;
    }
    tokio::time::timeout(timeout, follow)
        .await
        .map_err(|_| Error::Failed("timed out waiting for the condition".to_string()))?
}

/// The description of one reading of the Rollout.
async fn describe(
    session: &Session,
    rollout: &DynamicObject,
    all: bool,
    color: bool,
) -> Result<String, Error> {
    let info = info(&serde_json::to_value(rollout)?);
    let referenced_routings = if info.traffic_routing_ref.is_empty() {
        None
    } else {
        Some(traffic_routing(session, &info.traffic_routing_ref).await)
    };
    let workload = match &info.workload {
        Some(reference) => workload_and_pods(session, reference, &info, all).await,
        None => Err("the Rollout has no workloadRef".to_string()),
    };
    Ok(render(
        &info,
        &Fetched {
            referenced_routings,
            workload,
        },
        color,
    ))
}

/// The routings of a TrafficRouting object (`rollouts.kruise.io/v1alpha1`).
async fn traffic_routing(session: &Session, name: &str) -> Result<Vec<Value>, String> {
    let resource = ApiResource {
        group: "rollouts.kruise.io".into(),
        version: "v1alpha1".into(),
        api_version: "rollouts.kruise.io/v1alpha1".into(),
        kind: "TrafficRouting".into(),
        plural: "trafficroutings".into(),
    };
    let object = session
        .api(&resource)
        .get(name)
        .await
        .map_err(|e| Error::from(e).to_string())?;
    Ok(object
        .data
        .pointer("/spec/objectRef")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

/// The workload's counts and the pods to list.
async fn workload_and_pods(
    session: &Session,
    reference: &WorkloadRef,
    info: &Info,
    all: bool,
) -> Result<(Workload, Vec<PodRow>), String> {
    let resource = ApiResource {
        group: reference.group().to_string(),
        version: reference.version().to_string(),
        api_version: reference.api_version.clone(),
        kind: reference.kind.clone(),
        plural: format!("{}s", reference.kind.to_ascii_lowercase()),
    };
    let object = session
        .api(&resource)
        .get(&reference.name)
        .await
        .map_err(|e| Error::from(e).to_string())?;
    let mut value = serde_json::to_value(&object).map_err(|e| e.to_string())?;
    value["kind"] = Value::String(reference.kind.clone());
    let counts = workload(&value)?;
    let mut selector =
        crate::exec::selector_of(&value, &reference.kind, &reference.name).map_err(|e| e.to_string())?;
    if !all && info.step_index != 0 {
        selector = format!("{selector},{BATCH_ID_LABEL}={}", info.step_index);
    }
    let pods: Api<Pod> = Api::namespaced(session.client.clone(), &session.namespace);
    let list = pods
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| Error::from(e).to_string())?;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let mut rows: Vec<PodRow> = list.items.iter().map(|p| pod_row(p, now)).collect();
    sort_pods(&mut rows);
    Ok((counts, rows))
}
