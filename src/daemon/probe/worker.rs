//! One worker per (pod, probe): waits out the first period (spread by a per-probe offset), then
//! each period finds the container, runs the probe once it has run `initialDelaySeconds`, counts
//! the result towards its threshold and publishes it ([`Results::record`]).

use std::collections::HashMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Probe;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps_v1alpha1::{NodePodProbeSpec, ProbeState};
use kruise_cri::{Runtime, kubelet, v1::ContainerState};
use kruise_reconcile::node_pod_probe::agent::{ProbeKey, Results, Streak, Timing};
use tokio::sync::watch;

use super::{Shared, check};

/// What a worker probes.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// Pod namespace.
    pub namespace: String,
    /// Pod name.
    pub name: String,
    /// Pod IP (tcpSocket and httpGet).
    pub ip: String,
    /// Container name.
    pub container: String,
    /// The probe.
    pub probe: Probe,
}

/// The workers a spec asks for.
pub fn targets(spec: &NodePodProbeSpec) -> HashMap<ProbeKey, Target> {
    spec.pod_probes
        .iter()
        .flat_map(|pod| {
            pod.probes.iter().map(move |p| {
                (
                    (pod.uid.clone(), p.name.clone()),
                    Target {
                        namespace: pod.namespace.clone(),
                        name: pod.name.clone(),
                        ip: pod.ip.clone(),
                        container: p.container_name.clone(),
                        probe: p.probe.clone(),
                    },
                )
            })
        })
        .collect()
}

/// A stable offset in `[0, period)` for the first run, so workers started together spread out.
fn offset(key: &ProbeKey, period: Duration) -> Duration {
    let hash = key
        .0
        .bytes()
        .chain(key.1.bytes())
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    let millis = u64::try_from(period.as_millis()).unwrap_or(u64::MAX).max(1);
    Duration::from_millis(hash % millis)
}

/// The newest container of the name in the pod: id, running, started at (Unix nanoseconds).
async fn container(
    runtime: &Runtime,
    uid: &str,
    name: &str,
) -> Result<Option<(String, bool, i64)>, kruise_cri::RuntimeError> {
    let listed = runtime
        .list_containers(&[(kubelet::POD_UID, uid), (kubelet::CONTAINER_NAME, name)], None)
        .await?;
    let Some(newest) = listed.into_iter().max_by_key(|c| c.created_at) else {
        return Ok(None);
    };
    let running = newest.state() == ContainerState::ContainerRunning;
    let started = if running {
        match runtime.container_status(&newest.id).await {
            Ok(s) => s.started_at,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e),
        }
    } else {
        0
    };
    Ok(Some((newest.id, running, started)))
}

fn publish(shared: &Shared, record: impl FnOnce(&mut Results)) {
    record(&mut shared.results());
    shared.changed.notify_one();
}

/// Runs until aborted.
pub async fn run(
    key: ProbeKey,
    target: Target,
    mut runtime: watch::Receiver<Option<Runtime>>,
    shared: Shared,
) {
    let timing = Timing::of(&target.probe);
    let mut streak = Streak::default();
    let mut current: Option<String> = None;
    tokio::time::sleep(offset(&key, timing.period)).await;
    let mut ticks = tokio::time::interval(timing.period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(rt) = runtime.borrow_and_update().clone() else {
            continue;
        };
        let found = match container(&rt, &key.0, &target.container).await {
            Ok(found) => found,
            Err(e) => {
                tracing::debug!(error = %e, pod = %target.name, probe = %key.1, "finding the probed container");
                continue;
            }
        };
        let Some((id, running, started)) = found else {
            continue;
        };
        let now = Timestamp::now();
        if current.as_deref() != Some(id.as_str()) {
            streak.reset();
            publish(&shared, |r| r.new_container(&key, &id, now));
            current = Some(id.clone());
        }
        if !running {
            let message = format!("Container({}) is Non-running", target.container);
            publish(&shared, |r| {
                r.record(&key, &id, ProbeState::Failed, &message, now)
            });
            continue;
        }
        let ran_for = now.as_nanosecond() - i128::from(started);
        if ran_for < timing.initial_delay.as_nanos() as i128 {
            continue;
        }
        let (ok, message) = check::run(&rt, &id, &target.probe, &target.ip, timing.timeout).await;
        if let Some(state) = streak.observe(ok, &timing) {
            publish(&shared, |r| {
                r.record(&key, &id, state, &message, Timestamp::now())
            });
        }
    }
}
