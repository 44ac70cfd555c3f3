//! The loop every controller runs; a controller brings its planner and a few lines ([`Reconciler`]).
//!
//! The loop owns what the controllers used to copy:
//!
//! - the kube-runtime `Controller` over the controller's kind, with its triggers (`super::triggers`):
//!   pod changes from the shared cache (told once it shows them) and changes of related kinds, mapped
//!   to the objects to reconcile;
//! - the freshest copy of the object: the trigger's, the cache's (the webhooks write status too) or
//!   the one re-read after a conflict, whichever has the highest resourceVersion;
//! - per-object memory kept between passes (the CloneSet expectations), dropped with the object;
//! - the status write with the resourceVersion the pass read as precondition ([`Pass::write_status`]):
//!   a 409 re-reads the object from the API server into the cache and decides again shortly after;
//!   never an overwrite;
//! - requeues: the planner's requeue-after, capped by the resync interval; failures back off
//!   exponentially from [`ERROR_REQUEUE`] per object, reset by a pass that succeeds.

use std::{
    collections::HashMap,
    fmt::Debug,
    future::Future,
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use futures::StreamExt as _;
use kruise_webhooks::WriteTarget;
use kube::{
    Api, Resource, ResourceExt as _,
    api::{ApiResource, DynamicObject},
    runtime::{
        controller::{Action, Config},
        reflector::ObjectRef,
    },
};
use serde::Serialize;

use super::{Context, ControllerView, ERROR_REQUEUE, Error};
use crate::cluster::status_writes::{self, WriteError};
use crate::server::metrics::ControllerLabels;
use prometheus_client::metrics::histogram::Histogram;

pub use super::triggers::{Known, Object, Source, Triggers};

/// The longest a failing object waits before its next attempt.
pub const MAX_ERROR_BACKOFF: Duration = Duration::from_secs(80);
/// How long one status write may take by default, the kube client's retries of a 429 or 503 included:
/// the client waits each `Retry-After` it is given, however long, up to 15 times; past this bound the
/// pass fails as throttled and is requeued (`Tuning::status_write_bound`).
pub const STATUS_WRITE_BOUND: Duration = Duration::from_secs(30);
/// Slots kept before the first walk that drops those of objects gone.
const MIN_PRUNE_AT: usize = 64;
/// The shortest requeue a pass can ask for.
const MIN_REQUEUE: Duration = Duration::from_millis(100);

/// What comes after a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Look again after this long (at least 100 ms, at most the resync interval).
    After(Duration),
    /// Nothing pending: look again at the resync interval, or on a trigger.
    Resync,
    /// Only on a trigger (the object is being deleted or gone).
    Idle,
}

impl Next {
    /// A planner's requeue-after: `None` means nothing is pending.
    pub fn after(requeue_after: Option<Duration>) -> Next {
        requeue_after.map_or(Next::Resync, Next::After)
    }
}

/// One controller: its kind, its triggers and its pass. The pass calls the planner and carries the
/// plan out; everything around it is the loop's.
pub trait Reconciler: Send + Sync + Sized + 'static {
    type Object: Object;
    /// Kept per object between passes (dropped when the object goes).
    type Memory: Clone + Default + Send + 'static;
    /// Trigger debounce.
    const DEBOUNCE: Duration;
    /// Every object is passed at least this often.
    const RESYNC: Duration;
    /// How soon a pass runs again after its status write conflicted.
    const CONFLICT_REQUEUE: Duration = Duration::from_millis(500);
    /// Passes running at once (never two for one object).
    const CONCURRENCY: u16 = 3;
    /// Whether objects being deleted are passed too.
    const WHILE_DELETING: bool = false;

    /// The controller's objects from a cache the process keeps anyway; `None`: its own watch.
    fn source(_view: &dyn ControllerView) -> Option<Source<Self::Object>> {
        None
    }

    /// Adds the watches whose changes trigger passes.
    fn triggers(&self, triggers: Triggers<Self::Object>) -> Triggers<Self::Object> {
        triggers
    }

    /// The shared cache's copy of the object, when the cache holds the kind.
    fn cached(_view: &dyn ControllerView, _namespace: &str, _name: &str) -> Option<Arc<Self::Object>> {
        None
    }

    /// One pass over the freshest copy of the object.
    fn pass(
        self: Arc<Self>,
        object: Arc<Self::Object>,
        pass: Pass<Self::Object, Self::Memory>,
    ) -> impl Future<Output = Result<Next, Error>> + Send;
}

/// What the loop keeps per object, made when there is something to keep (most objects of a kind with
/// no memory, such as pods, never get one).
struct Slot<K, M> {
    uid: Option<String>,
    memory: M,
    /// Failed passes in a row.
    failures: u32,
    /// The copy re-read after a conflict.
    reread: Option<Arc<K>>,
}

/// The slot of the object with `uid` in `slots`, made if missing.
fn slot_in<'a, K: Object, M: Default>(
    slots: &'a mut HashMap<ObjectRef<K>, Slot<K, M>>,
    key: &ObjectRef<K>,
    uid: &Option<String>,
) -> &'a mut Slot<K, M> {
    slots.entry(key.clone()).or_insert_with(|| Slot {
        uid: uid.clone(),
        memory: M::default(),
        failures: 0,
        reread: None,
    })
}

type Slots<K, M> = Mutex<HashMap<ObjectRef<K>, Slot<K, M>>>;

/// The slots; a poisoned lock is taken over (every change to a slot is a single assignment).
fn lock<K: Object, M>(slots: &Slots<K, M>) -> MutexGuard<'_, HashMap<ObjectRef<K>, Slot<K, M>>> {
    slots.lock().unwrap_or_else(|p| p.into_inner())
}

/// What one pass gets besides the object: the client and cache, its memory, the status write.
pub struct Pass<K: Object, M> {
    pub context: Context,
    slots: Arc<Slots<K, M>>,
    key: ObjectRef<K>,
    uid: Option<String>,
    started: std::time::Instant,
    decision_duration: Histogram,
}

impl<K: Object, M: Clone + Default> Pass<K, M> {
    /// The memory the previous pass kept for this object.
    pub fn memory(&self) -> M {
        let slots = lock(&self.slots);
        slots.get(&self.key).map(|s| s.memory.clone()).unwrap_or_default()
    }

    /// Notes that the pass has made its plan: the time since it started is its decision time.
    pub fn decided(&self) {
        self.decision_duration
            .observe(self.started.elapsed().as_secs_f64());
    }

    /// Keeps `memory` for the next pass of this object.
    pub fn keep(&self, memory: M) {
        let mut slots = lock(&self.slots);
        slot_in(&mut slots, &self.key, &self.uid).memory = memory;
    }

    /// Writes `status` through the status subresource with `object`'s resourceVersion as precondition
    /// and hands the stored object to the cache. A conflict is [`Error::Conflict`] (the loop re-reads
    /// and decides again), a missing object [`Error::Gone`].
    pub async fn write_status(&self, object: &K, status: &impl Serialize) -> Result<(), Error> {
        let target = WriteTarget {
            api_version: K::api_version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            plural: K::plural(&()).into_owned(),
            namespace: object.namespace().unwrap_or_default(),
            name: object.name_any(),
        };
        let status = serde_json::to_value(status).unwrap_or_default();
        let resource_version = object.meta().resource_version.as_deref();
        let write = status_writes::write_status(&self.context.client, &target, resource_version, &status);
        let bound = self.context.tuning.status_write_bound;
        let Ok(written) = tokio::time::timeout(bound, write).await else {
            return Err(throttled::<K>(
                &target,
                format!("no answer within {bound:?}"),
                None,
            ));
        };
        match written {
            Ok(stored) => {
                self.context.view.remember(&stored);
                Ok(())
            }
            Err(WriteError::Conflict { .. }) => Err(conflict::<K>(&target.namespace, &target.name)),
            Err(WriteError::Api { source, .. }) if matches!(&*source, kube::Error::Api(s) if s.is_not_found()) => {
                Err(Error::Gone)
            }
            Err(WriteError::Api { source, .. }) if crate::cluster::overloaded(&source) => {
                let retry_after = match &*source {
                    kube::Error::Api(s) => s
                        .details
                        .as_ref()
                        .map(|d| d.retry_after_seconds)
                        .filter(|&seconds| seconds > 0)
                        .map(|seconds| Duration::from_secs(seconds.into())),
                    _ => None,
                };
                Err(throttled::<K>(&target, source.to_string(), retry_after))
            }
            Err(e) => Err(Error::Write(Box::new(e))),
        }
    }
}

fn throttled<K: Object>(target: &WriteTarget, message: String, retry_after: Option<Duration>) -> Error {
    Error::Throttled {
        kind: K::kind(&()).into_owned(),
        namespace: target.namespace.clone(),
        name: target.name.clone(),
        message,
        retry_after,
    }
}

fn conflict<K: Object>(namespace: &str, name: &str) -> Error {
    Error::Conflict {
        kind: K::kind(&()).into_owned(),
        namespace: namespace.to_string(),
        name: name.to_string(),
    }
}

fn version_of<K: Object>(object: &K) -> u64 {
    kruise_core::resource_version::of_or_zero(object.meta())
}

/// The loop's state shared by passes.
struct Shared<R: Reconciler> {
    reconciler: Arc<R>,
    context: Context,
    known: Arc<Known<R::Object>>,
    slots: Arc<Slots<R::Object, R::Memory>>,
    /// The slot count past which the next pass drops the slots of objects gone.
    prune_at: std::sync::atomic::AtomicUsize,
    /// This controller's `kruise_controller_pass_duration_seconds` histogram.
    pass_duration: Histogram,
    /// This controller's `kruise_controller_decision_duration_seconds` histogram.
    decision_duration: Histogram,
}

impl<R: Reconciler> Shared<R> {
    /// The object's key; drops a namesake's slot, and the slots of objects that are gone once the slots
    /// have doubled since the last time (a pass costs O(1) amortised, not a walk over every slot).
    fn key_for(&self, object: &R::Object) -> ObjectRef<R::Object> {
        use std::sync::atomic::Ordering::Relaxed;
        let key = ObjectRef::from_obj(object);
        let mut slots = lock(&self.slots);
        if slots.len() >= self.prune_at.load(Relaxed) {
            slots.retain(|r, slot| self.known.get(r).is_some_and(|k| k.meta().uid == slot.uid));
            self.prune_at.store((2 * slots.len()).max(MIN_PRUNE_AT), Relaxed);
        }
        if slots.get(&key).is_some_and(|slot| slot.uid != object.meta().uid) {
            slots.remove(&key);
        }
        key
    }

    /// The newest among the trigger's copy, the cache's and the one re-read after a conflict.
    fn freshest(&self, trigger: Arc<R::Object>, key: &ObjectRef<R::Object>) -> Arc<R::Object> {
        let namespace = trigger.namespace().unwrap_or_default();
        let uid = trigger.meta().uid.clone();
        let reread = {
            let slots = lock(&self.slots);
            slots.get(key).and_then(|s| s.reread.clone())
        };
        R::cached(self.context.view.as_ref(), &namespace, &trigger.name_any())
            .into_iter()
            .chain(reread)
            .filter(|k| k.meta().uid == uid)
            .fold(trigger, |best, k| {
                if version_of(&*k) > version_of(&*best) {
                    k
                } else {
                    best
                }
            })
    }

    /// Changes the slot of the object with `uid`, made if missing.
    fn update(
        &self,
        key: &ObjectRef<R::Object>,
        uid: &Option<String>,
        change: impl FnOnce(&mut Slot<R::Object, R::Memory>),
    ) {
        change(slot_in(&mut lock(&self.slots), key, uid));
    }

    /// After a pass that did not fail.
    fn succeeded(&self, key: &ObjectRef<R::Object>) {
        if let Some(slot) = lock(&self.slots).get_mut(key) {
            slot.failures = 0;
        }
    }

    /// After a conflict: the API server's copy, for the cache and the next pass.
    async fn reread(&self, key: &ObjectRef<R::Object>) -> Next {
        let resource = ApiResource::erase::<R::Object>(&());
        let client = self.context.client.clone();
        let api: Api<DynamicObject> = match key.namespace.as_deref().filter(|n| !n.is_empty()) {
            Some(namespace) => Api::namespaced_with(client, namespace, &resource),
            None => Api::all_with(client, &resource),
        };
        match api.get_opt(&key.name).await {
            Ok(Some(fresh)) => {
                let value = serde_json::to_value(&fresh).unwrap_or_default();
                self.context.view.remember(&value);
                match serde_json::from_value::<R::Object>(value) {
                    Ok(fresh) => {
                        let uid = fresh.meta().uid.clone();
                        self.update(key, &uid, |slot| slot.reread = Some(Arc::new(fresh)));
                    }
                    Err(e) => tracing::debug!(error = %e, "re-read object does not decode"),
                }
                Next::After(R::CONFLICT_REQUEUE)
            }
            Ok(None) => Next::Idle,
            // The next pass reads what the watches bring.
            Err(e) => {
                tracing::debug!(error = %e, "re-reading after a conflict failed");
                Next::After(R::CONFLICT_REQUEUE)
            }
        }
    }
}

fn action<R: Reconciler>(next: Next) -> Action {
    match next {
        Next::After(wait) => Action::requeue(wait.min(R::RESYNC).max(MIN_REQUEUE)),
        Next::Resync => Action::requeue(R::RESYNC),
        Next::Idle => Action::await_change(),
    }
}

async fn reconcile<R: Reconciler>(trigger: Arc<R::Object>, shared: Arc<Shared<R>>) -> Result<Action, Error> {
    if trigger.meta().deletion_timestamp.is_some() && !R::WHILE_DELETING {
        return Ok(Action::await_change());
    }
    let namespace = trigger.namespace().unwrap_or_default();
    let name = trigger.name_any();
    let key = shared.key_for(&trigger);
    let object = shared.freshest(trigger, &key);
    let started = std::time::Instant::now();
    let pass = Pass {
        context: shared.context.clone(),
        slots: shared.slots.clone(),
        key: key.clone(),
        uid: object.meta().uid.clone(),
        started,
        decision_duration: shared.decision_duration.clone(),
    };
    let outcome = shared.reconciler.clone().pass(object, pass).await;
    shared.pass_duration.observe(started.elapsed().as_secs_f64());
    let next = match outcome {
        Ok(next) => next,
        Err(Error::Conflict { .. }) => {
            tracing::debug!(%namespace, %name, "status write conflicted; deciding again from the API's copy");
            shared.reread(&key).await
        }
        Err(Error::Gone) => Next::Idle,
        Err(e) => return Err(e),
    };
    shared.succeeded(&key);
    Ok(action::<R>(next))
}

/// `ERROR_REQUEUE` doubled per failure in a row, up to [`MAX_ERROR_BACKOFF`].
pub fn backoff(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    ERROR_REQUEUE
        .saturating_mul(1 << doublings)
        .min(MAX_ERROR_BACKOFF)
}

/// How long a failed pass waits: [`backoff`], or the server's `Retry-After` of a throttled write when
/// longer (capped at [`MAX_ERROR_BACKOFF`]).
fn retry_wait(error: &Error, failures: u32) -> Duration {
    match error {
        Error::Throttled {
            retry_after: Some(asked),
            ..
        } => backoff(failures).max((*asked).min(MAX_ERROR_BACKOFF)),
        _ => backoff(failures),
    }
}

fn error_policy<R: Reconciler>(object: Arc<R::Object>, error: &Error, shared: Arc<Shared<R>>) -> Action {
    let key = ObjectRef::from_obj(&*object);
    let mut failures = 1;
    shared.update(&key, &object.meta().uid, |slot| {
        slot.failures += 1;
        failures = slot.failures;
    });
    let wait = retry_wait(error, failures);
    tracing::warn!(kind = %R::Object::kind(&()), namespace = object.namespace().unwrap_or_default(),
        name = %object.name_any(), %error, failures, retry_in = ?wait, "pass failed; retrying");
    Action::requeue(wait)
}

/// Runs `reconciler`'s controller until aborted.
pub async fn run<R: Reconciler>(context: Context, reconciler: R) {
    let config = Config::default()
        .concurrency(R::CONCURRENCY)
        .debounce(R::DEBOUNCE);
    let source = R::source(context.view.as_ref());
    let triggers = Triggers::new(&context, config, source);
    let known = triggers.known();
    let controller = reconciler.triggers(triggers).into_controller();
    let labels = ControllerLabels {
        controller: R::Object::kind(&()).to_lowercase(),
    };
    let pass_duration = context.pass_durations.passes.get_or_create(&labels).clone();
    let decision_duration = context.pass_durations.decisions.get_or_create(&labels).clone();
    let shared = Arc::new(Shared {
        pass_duration,
        decision_duration,
        reconciler: Arc::new(reconciler),
        context,
        known,
        slots: Arc::default(),
        prune_at: MIN_PRUNE_AT.into(),
    });
    controller
        .run(reconcile::<R>, error_policy::<R>, shared)
        .for_each(|result| async move {
            if let Err(e) = result {
                tracing::debug!(kind = %R::Object::kind(&()), error = %e, "pass");
            }
        })
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use kruise_api::policy_v1beta1::PodUnavailableBudget;

    struct Probe;

    impl Reconciler for Probe {
        type Object = PodUnavailableBudget;
        type Memory = ();
        const DEBOUNCE: Duration = Duration::ZERO;
        const RESYNC: Duration = Duration::from_secs(60);

        async fn pass(
            self: Arc<Self>,
            _: Arc<PodUnavailableBudget>,
            _: Pass<PodUnavailableBudget, ()>,
        ) -> Result<Next, Error> {
            Ok(Next::Idle)
        }
    }

    #[test]
    fn requeues_are_clamped_between_100_ms_and_the_resync_interval() {
        let cases = [
            (
                Next::After(Duration::from_millis(10)),
                Action::requeue(MIN_REQUEUE),
            ),
            (
                Next::After(Duration::from_secs(5)),
                Action::requeue(Duration::from_secs(5)),
            ),
            (
                Next::After(Duration::from_secs(3600)),
                Action::requeue(Probe::RESYNC),
            ),
            (Next::after(None), Action::requeue(Probe::RESYNC)),
            (
                Next::after(Some(Duration::from_secs(7))),
                Action::requeue(Duration::from_secs(7)),
            ),
            (Next::Idle, Action::await_change()),
        ];
        for (next, expected) in cases {
            assert_eq!(action::<Probe>(next), expected, "{next:?}");
        }
    }

    #[test]
    fn a_throttled_write_waits_what_the_server_asked_within_the_backoff_bounds() {
        let throttled = |seconds: Option<u64>| Error::Throttled {
            kind: "CloneSet".into(),
            namespace: "ns".into(),
            name: "web".into(),
            message: "429".into(),
            retry_after: seconds.map(Duration::from_secs),
        };
        assert_eq!(retry_wait(&throttled(Some(20)), 1), Duration::from_secs(20));
        assert_eq!(
            retry_wait(&throttled(Some(1)), 1),
            ERROR_REQUEUE,
            "never sooner than the backoff"
        );
        assert_eq!(
            retry_wait(&throttled(Some(3600)), 1),
            MAX_ERROR_BACKOFF,
            "bounded"
        );
        assert_eq!(retry_wait(&throttled(None), 2), backoff(2));
        assert_eq!(retry_wait(&Error::Gone, 3), backoff(3));
    }

    #[test]
    fn failures_back_off_exponentially_up_to_a_cap() {
        let waits: Vec<u64> = (1..=7).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(waits, [5, 10, 20, 40, 80, 80, 80]);
        assert_eq!(backoff(0), ERROR_REQUEUE);
        assert_eq!(backoff(u32::MAX), MAX_ERROR_BACKOFF);
    }
}
