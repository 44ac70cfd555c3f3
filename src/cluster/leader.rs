//! Leader election on a `coordination.k8s.io/v1` Lease: controllers run only on the leader; webhook
//! serving and certificates run on every replica.
//!
//! The decision of each round is a pure function of the Lease, our identity and the time
//! ([`next_action`]); the loop around it writes with resourceVersion preconditions, so two replicas can
//! never both win the same round.

use std::time::{Duration, Instant};

use k8s_openapi::{
    api::coordination::v1::{Lease, LeaseSpec},
    apimachinery::pkg::apis::meta::v1::MicroTime,
    jiff::Timestamp,
};
use kube::{
    Api, Client,
    api::{ObjectMeta, PostParams},
};
use tokio::sync::watch;

/// How long a lease stays valid without renewal.
pub const LEASE_DURATION: Duration = Duration::from_secs(15);
/// How long the holder keeps leading while its renewals fail (an API server restarting, say): well
/// inside [`LEASE_DURATION`], so no one else can have taken over (client-go's renew deadline).
pub const RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// How often a round runs: the holder renews, the others look whether the Lease ran out
/// (client-go's retry period; these three are controller-runtime's defaults, which OpenKruise keeps).
pub const RETRY_PERIOD: Duration = Duration::from_secs(2);
/// The longest one round may take.
const ROUND_TIMEOUT: Duration = Duration::from_secs(4);
const _: () = assert!(RENEW_DEADLINE.as_secs() < LEASE_DURATION.as_secs());

/// What to do with the Lease this round.
#[derive(Debug, PartialEq, Eq)]
pub enum LeaseAction {
    /// No Lease yet: create it holding it ourselves.
    Create,
    /// We hold it: renew.
    Renew,
    /// Someone else held it and it expired: take it over.
    TakeOver,
    /// Someone else holds a valid lease.
    Wait,
}

/// Decides the round from the current Lease.
pub fn next_action(lease: Option<&Lease>, identity: &str, now: Timestamp) -> LeaseAction {
    let Some(spec) = lease.and_then(|l| l.spec.as_ref()) else {
        return LeaseAction::Create;
    };
    if spec.holder_identity.as_deref() == Some(identity) {
        return LeaseAction::Renew;
    }
    let duration = i64::from(
        spec.lease_duration_seconds
            .unwrap_or(LEASE_DURATION.as_secs() as i32),
    );
    let renewed = spec.renew_time.as_ref().map(|t| t.0.as_second());
    match renewed {
        Some(at) if at + duration > now.as_second() && spec.holder_identity.is_some() => LeaseAction::Wait,
        _ => LeaseAction::TakeOver,
    }
}

/// Whether a holder whose last successful renewal was at `renewed` still leads at `now` although
/// its latest round failed.
pub fn still_leading(renewed: Option<Instant>, now: Instant) -> bool {
    renewed.is_some_and(|at| now.saturating_duration_since(at) < RENEW_DEADLINE)
}

/// Runs the election and reports leadership through a watch channel.
pub struct LeaderElector {
    api: Api<Lease>,
    name: String,
    identity: String,
}

impl LeaderElector {
    /// Election on Lease `name` in `namespace` as `identity` (the pod name).
    pub fn new(client: Client, namespace: &str, name: &str, identity: &str) -> Self {
        LeaderElector {
            api: Api::namespaced(client, namespace),
            name: name.into(),
            identity: identity.into(),
        }
    }

    /// Starts the loop; the receiver reads `true` while we lead.
    pub fn spawn(self) -> watch::Receiver<bool> {
        let (tx, rx) = watch::channel(false);
        tokio::spawn(async move {
            let mut renewed: Option<Instant> = None;
            loop {
                // Leading on an older renewal, the round may take only what is left of the deadline.
                let deadline = renewed.map(|at| at + RENEW_DEADLINE);
                let left = |deadline: Instant| deadline.saturating_duration_since(Instant::now());
                let bound = deadline.map_or(ROUND_TIMEOUT, |d| left(d).min(ROUND_TIMEOUT));
                let round = tokio::time::timeout(bound, self.round()).await;
                let leading = match &round {
                    Ok(Ok(won)) => {
                        renewed = won.then(Instant::now);
                        *won
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(lease = %self.name, error = %e, "leader election round failed");
                        still_leading(renewed, Instant::now())
                    }
                    Err(_) => {
                        tracing::warn!(lease = %self.name, timeout = ?bound, "leader election round timed out");
                        still_leading(renewed, Instant::now())
                    }
                };
                if !leading {
                    renewed = None;
                }
                if *tx.borrow() != leading {
                    tracing::info!(lease = %self.name, leading, "leadership changed");
                }
                tx.send_replace(leading);
                let pause = match (&round, deadline) {
                    // Leading on an older renewal: wake at the deadline at the latest, to step down
                    // on time.
                    (Ok(Err(_)) | Err(_), Some(deadline)) if leading => RETRY_PERIOD.min(left(deadline)),
                    _ => RETRY_PERIOD,
                };
                tokio::time::sleep(pause).await;
            }
        });
        rx
    }

    /// One round: `true` when we hold the Lease after it.
    async fn round(&self) -> Result<bool, kube::Error> {
        let lease = self.api.get_opt(&self.name).await?;
        let now = Timestamp::now();
        let action = next_action(lease.as_ref(), &self.identity, now);
        let mut spec = lease.as_ref().and_then(|l| l.spec.clone()).unwrap_or_default();
        spec.renew_time = Some(MicroTime(now));
        spec.lease_duration_seconds = Some(LEASE_DURATION.as_secs() as i32);
        if action != LeaseAction::Renew {
            spec.holder_identity = Some(self.identity.clone());
            spec.acquire_time = Some(MicroTime(now));
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + i32::from(lease.is_some()));
        }
        let desired = Lease {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                resource_version: lease.as_ref().and_then(|l| l.metadata.resource_version.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec { ..spec }),
        };
        let written = match action {
            LeaseAction::Wait => return Ok(false),
            LeaseAction::Create => self.api.create(&PostParams::default(), &desired).await,
            LeaseAction::Renew | LeaseAction::TakeOver => {
                self.api
                    .replace(&self.name, &PostParams::default(), &desired)
                    .await
            }
        };
        match written {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.is_conflict() || s.is_already_exists() => Ok(false),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(holder: Option<&str>, renewed_secs_ago: i64) -> Lease {
        let now = Timestamp::now().as_second();
        Lease {
            metadata: ObjectMeta::default(),
            spec: Some(LeaseSpec {
                holder_identity: holder.map(String::from),
                lease_duration_seconds: Some(15),
                renew_time: Some(MicroTime(Timestamp::from_second(now - renewed_secs_ago).unwrap())),
                ..LeaseSpec::default()
            }),
        }
    }

    #[test]
    fn decides_each_round() {
        let now = Timestamp::now();
        assert_eq!(next_action(None, "a", now), LeaseAction::Create);
        assert_eq!(
            next_action(Some(&lease(Some("a"), 100)), "a", now),
            LeaseAction::Renew
        );
        assert_eq!(
            next_action(Some(&lease(Some("b"), 3)), "a", now),
            LeaseAction::Wait
        );
        assert_eq!(
            next_action(Some(&lease(Some("b"), 30)), "a", now),
            LeaseAction::TakeOver
        );
        assert_eq!(
            next_action(Some(&lease(None, 3)), "a", now),
            LeaseAction::TakeOver
        );
    }

    #[test]
    fn a_holder_keeps_leading_through_failed_renewals_until_the_renew_deadline() {
        let renewed = Instant::now();
        let at = |secs: u64| renewed + Duration::from_secs(secs);
        assert!(still_leading(Some(renewed), at(0)));
        assert!(still_leading(Some(renewed), at(9)));
        assert!(!still_leading(Some(renewed), at(10)));
        assert!(!still_leading(None, at(0)), "never renewed: not leading");
    }
}
