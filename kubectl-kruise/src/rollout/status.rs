//! `rollout status`: one line per change of the workload until its rollout is done.
//!
//! The lines are OpenKruise's (kruise-tools' status viewers), with its defects fixed
//! (docs/kubectl-kruise.md, "Differences from kruise-tools"): an in-place CloneSet is done only once
//! its pods are updated and ready, a percent partition is resolved against the replicas (the
//! controller's own `partition_replicas`), and a CloneSet without a partition waits for its pods to be
//! updated, not only ready.

use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kruise_api::apps_v1alpha1::CloneSet;
use kruise_api::apps_v1beta1::{DaemonSet, DaemonSetUpdateStrategyType, StatefulSet};
use kube::{
    Api,
    api::{DynamicObject, ListParams},
    runtime::watcher,
};

use crate::{
    Error,
    client::Session,
    kinds::{Kind, Target},
};

/// What the viewer says of one observation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub line: String,
    pub done: bool,
}

fn waiting(line: String) -> Result<Status, Error> {
    Ok(Status { line, done: false })
}

fn observed(meta: &ObjectMeta, observed_generation: i64) -> bool {
    observed_generation != 0 && meta.generation.unwrap_or(0) <= observed_generation
}

/// The CloneSet viewer. `detail` prefixes waiting lines with `CloneSet <name> `, as `-d` does.
pub fn cloneset(cs: &CloneSet, detail: bool) -> Result<Status, Error> {
    let name = cs.metadata.name.as_deref().unwrap_or_default();
    let prefix = if detail {
        format!("CloneSet {name} ")
    } else {
        String::new()
    };
    let status = cs.status.clone().unwrap_or_default();
    if !observed(&cs.metadata, status.observed_generation) {
        let who = if detail {
            format!("CloneSet {name}")
        } else {
            "CloneSet".to_string()
        };
        return waiting(format!("Waiting for {who} spec update to be observed..."));
    }
    let replicas = cs.spec.replicas.unwrap_or(1);
    let partition_field = cs.spec.update_strategy.partition.as_ref();
    let partition = kruise_reconcile::cloneset::arithmetic::partition_replicas(partition_field, replicas)
        .map_err(|e| Error::Failed(format!("CloneSet {name}: {e}")))?;
    let target = i64::from(replicas) - partition;
    let updated = i64::from(status.updated_replicas);
    let updated_ready = i64::from(status.updated_ready_replicas);
    // Defaulting writes `partition: 0`: only a partition that keeps pods makes a partitioned rollout.
    if partition > 0 {
        if updated < target {
            return waiting(format!(
                "{prefix}Waiting for partitioned roll out to finish: {updated} out of {target} new pods have been updated..."
            ));
        }
        if updated_ready < target {
            return waiting(format!(
                "{prefix}Waiting for {} pods to be ready...",
                target - updated_ready
            ));
        }
        return Ok(Status {
            line: format!("partitioned roll out complete: {updated} new pods have been updated..."),
            done: true,
        });
    }
    let replicas = i64::from(replicas);
    if updated < replicas {
        return waiting(format!(
            "{prefix}Waiting for CloneSet {name:?} rollout to finish: {updated} out of {replicas} new pods have been updated..."
        ));
    }
    if i64::from(status.replicas) > replicas {
        return waiting(format!(
            "{prefix}Waiting for CloneSet {name:?} rollout to finish: {} old pods are pending termination...",
            i64::from(status.replicas) - replicas
        ));
    }
    let ready = updated_ready.min(i64::from(status.ready_replicas));
    if ready < replicas {
        return waiting(format!(
            "{prefix}Waiting for {} pods to be ready...",
            replicas - ready
        ));
    }
    let revision = status.update_revision.unwrap_or_default();
    let head = if detail {
        format!("CloneSet {name} ")
    } else {
        "CloneSet ".to_string()
    };
    Ok(Status {
        line: format!(
            "{head}rolling update complete {} pods at revision {revision}...",
            status.available_replicas
        ),
        done: true,
    })
}

/// The Advanced StatefulSet viewer.
pub fn advanced_statefulset(asts: &StatefulSet) -> Result<Status, Error> {
    let status = asts.status.clone().unwrap_or_default();
    let replicas = asts.spec.replicas.unwrap_or(1);
    let rolling = asts
        .spec
        .update_strategy
        .rolling_update
        .as_ref()
        .and_then(|r| r.partition);
    let on_delete = asts
        .spec
        .update_strategy
        .type_
        .as_ref()
        .is_some_and(|t| t.as_str() == "OnDelete");
    if !on_delete && let Some(partition) = rolling {
        let target = replicas - partition.clamp(0, replicas);
        if status.updated_replicas < target {
            return waiting(format!(
                "Waiting for partitioned roll out to finish:{} out of {target} new pods has been updated...",
                status.updated_replicas
            ));
        }
    }
    if !observed(&asts.metadata, status.observed_generation) {
        return waiting("Waiting for Advanced StatefulSet spec update to be observed...".to_string());
    }
    if !on_delete && rolling.is_none() && status.updated_replicas < replicas {
        return waiting(format!(
            "Waiting for Advanced StatefulSet rolling update to finish: {} out of {replicas} new pods have been updated...",
            status.updated_replicas
        ));
    }
    if status.ready_replicas < replicas {
        return waiting(format!(
            "Waiting for {} pods to be ready...",
            replicas - status.ready_replicas
        ));
    }
    Ok(Status {
        line: format!(
            "Advanced StatefulSet rolling update complete {} pods at revision {}...",
            status.available_replicas,
            status.update_revision.unwrap_or_default()
        ),
        done: true,
    })
}

/// The Advanced DaemonSet viewer (kruise-tools has none): kubectl's DaemonSet lines, with a partition
/// resolved as the controller resolves it.
pub fn advanced_daemonset(ds: &DaemonSet) -> Result<Status, Error> {
    let name = ds.metadata.name.as_deref().unwrap_or_default();
    let strategy = &ds.spec.update_strategy;
    if strategy
        .type_
        .as_ref()
        .is_some_and(|t| *t != DaemonSetUpdateStrategyType::RollingUpdate)
    {
        return Err(Error::Failed(
            "rollout status is only available for RollingUpdate strategy type".to_string(),
        ));
    }
    let status = ds.status.clone().unwrap_or_default();
    if !observed(&ds.metadata, status.observed_generation) {
        return waiting("Waiting for daemon set spec update to be observed...".to_string());
    }
    let desired = status.desired_number_scheduled;
    let partition =
        kruise_reconcile::daemonset::nodes::partition_of(strategy.rolling_update.as_ref(), desired)
            .map_err(|e| Error::Failed(format!("DaemonSet {name}: {e}")))?;
    let target = desired - partition;
    let updated = status.updated_number_scheduled;
    if updated < target {
        return waiting(format!(
            "Waiting for daemon set {name:?} rollout to finish: {updated} out of {target} new pods have been updated..."
        ));
    }
    if status.number_available < desired {
        return waiting(format!(
            "Waiting for daemon set {name:?} rollout to finish: {} of {desired} updated pods are available...",
            status.number_available
        ));
    }
    Ok(Status {
        line: if partition > 0 {
            format!("partitioned roll out complete: {updated} new pods have been updated...")
        } else {
            format!("daemon set {name:?} successfully rolled out")
        },
        done: true,
    })
}

fn view(target: &Target, object: &DynamicObject, detail: bool) -> Result<Status, Error> {
    let value = serde_json::to_value(object)?;
    match target.ty.kind {
        Kind::CloneSet => cloneset(&serde_json::from_value(value)?, detail),
        Kind::AdvancedStatefulSet => advanced_statefulset(&serde_json::from_value(value)?),
        Kind::AdvancedDaemonSet => advanced_daemonset(&serde_json::from_value(value)?),
        _ => Err(Error::Failed(format!(
            "no status viewer has been implemented for {}",
            target.ty.group_kind()
        ))),
    }
}

/// `Updated ready pods: [..]` / `Updated not ready pods: [..]` of `-d`.
async fn pod_detail(session: &Session, object: &DynamicObject) -> Result<String, Error> {
    let revision = object
        .data
        .pointer("/status/updateRevision")
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    let pods: Api<kruise_api::PodRecord> = Api::namespaced(session.client.clone(), &session.namespace);
    let label = format!(
        "{}={revision}",
        kruise_core::names::CONTROLLER_REVISION_HASH_LABEL
    );
    let list = pods.list(&ListParams::default().labels(&label)).await?;
    let owned = |p: &&kruise_api::PodRecord| {
        p.metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| Some(&o.uid) == object.metadata.uid.as_ref())
    };
    let (ready, not_ready): (Vec<_>, Vec<_>) = list
        .items
        .iter()
        .filter(owned)
        .partition(|p| kruise_core::pod_state::is_ready(p));
    let names = |v: Vec<&kruise_api::PodRecord>| {
        v.iter()
            .filter_map(|p| p.metadata.name.clone())
            .collect::<Vec<_>>()
            .join(" ")
    };
    Ok(format!(
        "Updated ready pods: [{}]\nUpdated not ready pods: [{}]",
        names(ready),
        names(not_ready)
    ))
}

/// Watches (or, without `watch`, reads once) until the rollout is done; a timeout is an error.
pub async fn run(
    session: &Session,
    target: &Target,
    watch: bool,
    timeout: Duration,
    detail: bool,
) -> Result<(), Error> {
    let api = session.api(target.ty.resource()?);
    let first = api.get(&target.name).await?;
    let print = async |object: &DynamicObject, last: &mut Option<String>| -> Result<bool, Error> {
        let status = view(target, object, detail)?;
        let mut text = status.line.clone();
        if detail && target.ty.kind == Kind::CloneSet {
            text = format!("{text}\n{}", pod_detail(session, object).await?);
        }
        if last.as_deref() != Some(text.as_str()) {
            println!("{text}");
            *last = Some(text);
        }
        Ok(status.done)
    };
    let mut last = None;
    if print(&first, &mut last).await? || !watch {
        return Ok(());
    }
    let config = watcher::Config::default().fields(&format!("metadata.name={}", target.name));
    let follow = async {
        let mut stream = watcher(api.clone(), config).boxed();
        while let Some(event) = stream.next().await {
            let event = event.map_err(|e| Error::Client(e.to_string()))?;
            match event {
                watcher::Event::Apply(object) | watcher::Event::InitApply(object) => {
                    if object.metadata.name.as_deref() == Some(target.name.as_str())
                        && print(&object, &mut last).await?
                    {
                        return Ok(());
                    }
                }
                watcher::Event::Delete(object) => {
                    if object.metadata.name.as_deref() == Some(target.name.as_str()) {
                        return Err(Error::Failed("object has been deleted".to_string()));
                    }
                }
                watcher::Event::Init | watcher::Event::InitDone => {}
            }
        }
        Err(Error::Failed(
            "watch closed before the rollout was done".to_string(),
        ))
    };
    if timeout.is_zero() {
        return follow.await;
    }
    tokio::time::timeout(timeout, follow)
        .await
        .map_err(|_| Error::Failed("timed out waiting for the condition".to_string()))?
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
