//! PodUnavailableBudget protection of one pod operation: OpenKruise's decision procedure, in its order,
//! ending in a check-and-decrement whose result is a status write. The pod validating webhook runs it on
//! each request; the SidecarSet controller runs it (dry) before it updates a pod, so a protected pod waits
//! instead of drawing a refusal.

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::pod::LabelledMeta;
use kruise_api::policy_v1beta1::{
    DEPRECATED_POD_RELATED_PUB_ANNOTATION, POD_PUB_NO_PROTECTION_ANNOTATION, POD_RELATED_PUB_ANNOTATION,
    PUB_PROTECT_OPERATION_ANNOTATION, PodUnavailableBudget, PodUnavailableBudgetStatus, PubOperation,
};

use crate::pod_state::{annotation, is_ready_for_pub, is_state_consistent};
use crate::view::StatusChange;
use crate::{StatusWrite, WriteTarget, selector::selects_non_empty, view::ClusterView};

/// How long a disruption admitted by the webhook may take to show (the pod deleted or evicted).
pub const DELETION_TIMEOUT: Duration = Duration::from_secs(20);
/// How long an in-place update admitted by the webhook counts the pod unavailable.
pub const UPDATED_DELAY_CHECK: Duration = Duration::from_secs(10);

/// Most entries `disruptedPods` and `unavailablePods` may hold together before every request is denied.
pub const MAX_RECORDED_PODS: usize = 2000;

/// The operation a request performs on a pod, as a PUB names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodOperation {
    Delete,
    Update,
    Evict,
    Resize,
}

impl PodOperation {
    /// The spelling in `spec.protectOperations`.
    pub fn as_str(self) -> &'static str {
        match self {
            PodOperation::Delete => "DELETE",
            PodOperation::Update => "UPDATE",
            PodOperation::Evict => "EVICT",
            PodOperation::Resize => "RESIZE",
        }
    }
}

/// Why a pod passes without touching any budget (the skip rules, in the order they are tested).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Skip {
    NoRelatedPub,
    /// The pod's namespace is being deleted: its pods go with it and nothing replaces them, so a budget
    /// would only hold the namespace in `Terminating` for ever.
    NamespaceTerminating,
    NoProtectAnnotation,
    NotReady,
    NotConsistent,
    PubNotFound,
    IgnoredBySelector,
    NothingDesired,
    OperationNotProtected,
    AlreadyRecorded,
}

/// The outcome of the procedure.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Allowed, no budget involved.
    Skipped(Skip),
    /// Allowed and the budget spent: `write` is the new PUB status (`None` in dry run).
    Spent { write: Option<StatusWrite> },
    /// Denied by the budget `pub_name`, with OpenKruise's message.
    Denied { pub_name: String, message: String },
}

/// One unit of a budget spent on a pod at `at`: `unavailableAllowed` one lower and the pod recorded in
/// `unavailablePods` (an update) or `disruptedPods` (a deletion, eviction or resize).
#[derive(Clone, Debug, PartialEq)]
pub struct BudgetSpend {
    pub pod: String,
    pub operation: PodOperation,
    pub at: Time,
}

impl BudgetSpend {
    /// The spend is still allowed by `status`, as the webhook would decide on it: the pod is not
    /// recorded yet, a unit is left and the records are not too many. A grouped write checks each spend
    /// against the status the spends before it made.
    pub fn holds(&self, status: &PodUnavailableBudgetStatus) -> bool {
        let recorded =
            |m: &Option<BTreeMap<String, Time>>| m.as_ref().is_some_and(|m| m.contains_key(&self.pod));
        let size = |m: &Option<BTreeMap<String, Time>>| m.as_ref().map_or(0, BTreeMap::len);
        !recorded(&status.disrupted_pods)
            && !recorded(&status.unavailable_pods)
            && status.unavailable_allowed > 0
            && size(&status.disrupted_pods) + size(&status.unavailable_pods) <= MAX_RECORDED_PODS
    }

    /// Records the spend in `status` (both maps are present afterwards, as OpenKruise writes them).
    pub fn apply(&self, status: &mut PodUnavailableBudgetStatus) {
        status.unavailable_allowed -= 1;
        let disrupted = status.disrupted_pods.get_or_insert_with(BTreeMap::new);
        let unavailable = status.unavailable_pods.get_or_insert_with(BTreeMap::new);
        let recorded = match self.operation {
            PodOperation::Update => unavailable,
            PodOperation::Delete | PodOperation::Evict | PodOperation::Resize => disrupted,
        };
        recorded.insert(self.pod.clone(), self.at.clone());
    }
}

/// Drops the spends admission recorded that are past their timeout and gives back the unit each took:
/// what the controller's recount does when the pods never change (standalone `kruise serve`, which has
/// no controller, runs this instead). Returns how many it dropped.
pub fn expire_spends(status: &mut PodUnavailableBudgetStatus, now: Timestamp) -> usize {
    let mut dropped = 0;
    for (records, timeout) in [
        (&mut status.disrupted_pods, DELETION_TIMEOUT),
        (&mut status.unavailable_pods, UPDATED_DELAY_CHECK),
    ] {
        if let Some(records) = records {
            let before = records.len();
            records.retain(|_, at| !crate::workload_spread::past(at, timeout, now));
            dropped += before - records.len();
        }
    }
    status.unavailable_allowed += dropped as i32;
    dropped
}

/// True when [`expire_spends`] would drop something.
pub fn has_expired_spends(status: &PodUnavailableBudgetStatus, now: Timestamp) -> bool {
    let any = |m: &Option<BTreeMap<String, Time>>, timeout| {
        m.iter()
            .flatten()
            .any(|(_, at)| crate::workload_spread::past(at, timeout, now))
    };
    any(&status.disrupted_pods, DELETION_TIMEOUT) || any(&status.unavailable_pods, UPDATED_DELAY_CHECK)
}

/// The PUB a pod names: `pub.kruise.io/related-pub`, else the deprecated `kruise.io/related-pub`.
pub fn related_pub_name(meta: &impl LabelledMeta) -> Option<&str> {
    annotation(meta, POD_RELATED_PUB_ANNOTATION)
        .filter(|n| !n.is_empty())
        .or_else(|| annotation(meta, DEPRECATED_POD_RELATED_PUB_ANNOTATION))
        .filter(|n| !n.is_empty())
}

/// Go's `strconv.ParseBool` true spellings.
fn parses_true(value: &str) -> bool {
    matches!(value, "1" | "t" | "T" | "TRUE" | "true" | "True")
}

/// The protected operations: `spec.protectOperations` if non-empty; else the comma list of the
/// `kruise.io/pub-protect-operations` annotation (no trimming, empty items dropped) if it names any;
/// else DELETE, UPDATE and EVICT. RESIZE is protected with UPDATE (gate InPlacePodVerticalScaling off).
fn is_protected(pub_: &PodUnavailableBudget, operation: PodOperation) -> bool {
    let mut ops: Vec<String> = pub_
        .spec
        .protect_operations
        .iter()
        .flatten()
        .map(|o| o.to_string())
        .collect();
    if ops.is_empty()
        && let Some(value) = pub_
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(PUB_PROTECT_OPERATION_ANNOTATION))
    {
        ops = value
            .split(',')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
    }
    if ops.is_empty() {
        ops = [PubOperation::Delete, PubOperation::Update, PubOperation::Evict]
            .iter()
            .map(ToString::to_string)
            .collect();
    }
    let has = |name: &str| ops.iter().any(|o| o == name);
    has(operation.as_str()) || (operation == PodOperation::Resize && has("UPDATE"))
}

fn forbidden(pub_name: &str, reason: &str) -> String {
    format!("podunavailablebudget.policy.kruise.io \"{pub_name}\" is forbidden: {reason}")
}

/// Runs the procedure for `pod` (its namespace defaults to `namespace`). `Err` is a request error (400).
pub fn check(
    pod: &PodRecord,
    namespace: &str,
    operation: PodOperation,
    dry_run: bool,
    view: &(impl ClusterView + ?Sized),
    now: Timestamp,
) -> Result<Outcome, String> {
    let Some(pub_name) = related_pub_name(&pod.metadata) else {
        return Ok(Outcome::Skipped(Skip::NoRelatedPub));
    };
    let pod_namespace = crate::pod_state::namespace_or(pod, namespace);
    if view.namespace(pod_namespace).is_some_and(|ns| {
        ns.metadata.deletion_timestamp.is_some()
            || ns.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Terminating")
    }) {
        return Ok(Outcome::Skipped(Skip::NamespaceTerminating));
    }
    if annotation(&pod.metadata, POD_PUB_NO_PROTECTION_ANNOTATION).is_some_and(parses_true) {
        return Ok(Outcome::Skipped(Skip::NoProtectAnnotation));
    }
    if !is_ready_for_pub(pod) {
        return Ok(Outcome::Skipped(Skip::NotReady));
    }
    if !is_state_consistent(pod) {
        return Ok(Outcome::Skipped(Skip::NotConsistent));
    }
    let namespace = crate::pod_state::namespace_or(pod, namespace);
    let Some(pub_) = view
        .pod_unavailable_budgets(namespace)
        .into_iter()
        .find(|p| p.metadata.name.as_deref() == Some(pub_name))
    else {
        return Ok(Outcome::Skipped(Skip::PubNotFound));
    };
    let ignored = selects_non_empty(pub_.spec.ignored_pod_selector.as_ref(), &pod.metadata.labels)
        .map_err(|e| e.to_string())?;
    if ignored {
        return Ok(Outcome::Skipped(Skip::IgnoredBySelector));
    }
    let unset;
    let status = match pub_.status.as_ref() {
        Some(status) => status,
        None => {
            unset = PodUnavailableBudgetStatus::default();
            &unset
        }
    };
    if status.desired_available == 0 {
        return Ok(Outcome::Skipped(Skip::NothingDesired));
    }
    if !is_protected(&pub_, operation) {
        return Ok(Outcome::Skipped(Skip::OperationNotProtected));
    }
    let pod_name = pod.metadata.name.clone().unwrap_or_default();
    let recorded = |m: &Option<BTreeMap<String, Time>>| m.as_ref().is_some_and(|m| m.contains_key(&pod_name));
    if recorded(&status.disrupted_pods) || recorded(&status.unavailable_pods) {
        return Ok(Outcome::Skipped(Skip::AlreadyRecorded));
    }
    if status.unavailable_allowed <= 0 {
        return Ok(Outcome::Denied {
            pub_name: pub_name.to_string(),
            message: forbidden(pub_name, "pub unavailable allowed is negative"),
        });
    }
    let size = |m: &Option<BTreeMap<String, Time>>| m.as_ref().map_or(0, BTreeMap::len);
    if size(&status.disrupted_pods) + size(&status.unavailable_pods) > MAX_RECORDED_PODS {
        return Ok(Outcome::Denied {
            pub_name: pub_name.to_string(),
            message: forbidden(
                pub_name,
                "DisruptedPods and UnavailablePods map too big - too many unavailable not confirmed by PUB controller",
            ),
        });
    }
    if dry_run {
        return Ok(Outcome::Spent { write: None });
    }
    let spend = BudgetSpend {
        pod: pod_name,
        operation,
        at: Time(Timestamp::from_second(now.as_second()).unwrap_or(now)),
    };
    Ok(Outcome::Spent {
        write: Some(StatusWrite {
            target: WriteTarget {
                api_version: "policy.kruise.io/v1beta1".into(),
                kind: "PodUnavailableBudget".into(),
                plural: "podunavailablebudgets".into(),
                namespace: namespace.to_string(),
                name: pub_name.to_string(),
            },
            resource_version: Some(pub_.metadata.resource_version.clone().unwrap_or_default()),
            change: StatusChange::SpendBudget(Box::new(spend)),
        }),
    })
}
