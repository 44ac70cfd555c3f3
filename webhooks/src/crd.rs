//! Validating and defaulting webhooks for OpenKruise's custom resources: SidecarSet, CloneSet,
//! PodUnavailableBudget and WorkloadSpread, with OpenKruise's rules, paths and messages.
//!
//! | Path | Kind | What |
//! |---|---|---|
//! | `/mutate-apps-kruise-io-sidecarset` | SidecarSet | defaults + `kruise.io/sidecarset-hash(-without-image)` |
//! | `/validate-apps-kruise-io-sidecarset` | SidecarSet | validation, conflicts with other SidecarSets |
//! | `/mutate-apps-kruise-io-cloneset` | CloneSet | defaults (and pod-template defaults) |
//! | `/validate-apps-kruise-io-cloneset` | CloneSet | deletion protection, then validation and immutable fields |
//! | `/mutate-apps-kruise-io-statefulset` | Advanced StatefulSet | defaults (and pod-template defaults) |
//! | `/validate-apps-kruise-io-statefulset` | Advanced StatefulSet | deletion protection, then validation and immutable fields |
//! | `/mutate-apps-kruise-io-broadcastjob` | BroadcastJob | defaults (and pod-template defaults) |
//! | `/validate-apps-kruise-io-broadcastjob` | BroadcastJob | validation |
//! | `/mutate-apps-kruise-io-advancedcronjob` | AdvancedCronJob | defaults (and pod-template defaults) |
//! | `/validate-apps-kruise-io-advancedcronjob` | AdvancedCronJob | validation and immutable fields |
//! | `/validate-apps-kruise-io-v1alpha1-ephemeraljob` | EphemeralJob | the template's ephemeral containers |
//! | `/mutate-apps-kruise-io-daemonset` | Advanced DaemonSet | defaults (no pod-template defaults) |
//! | `/validate-apps-kruise-io-daemonset` | Advanced DaemonSet | validation and immutable fields |
//! | `/validate-policy-kruise-io-podunavailablebudget` | PodUnavailableBudget | validation, conflicts |
//! | `/validate-apps-kruise-io-workloadspread` | WorkloadSpread | validation, conflicts |
//! | `/validate-apps-kruise-io-resourcedistribution` | ResourceDistribution | gate, resource and targets |
//! | `/mutate-apps-kruise-io-nodeimage` | NodeImage | defaults (`createdAt`, pull policy), tags sorted |
//! | `/validate-apps-kruise-io-nodeimage` | NodeImage | gate, at most 256 images, tags (non-empty, unique, createdAt, version, pull policy with TTL) |
//! | `/mutate-apps-kruise-io-imagepulljob`, `/mutate-apps-kruise-io-imagelistpulljob` | ImagePullJob, ImageListPullJob | defaults |
//! | `/validate-apps-kruise-io-imagepulljob`, `/validate-apps-kruise-io-imagelistpulljob` | ImagePullJob, ImageListPullJob | gate, image(s), selectors, parallelism, completion policy |
//! | `/mutate-apps-kruise-io-uniteddeployment` | UnitedDeployment | defaults (StatefulSet template: pod-template defaults) |
//! | `/validate-apps-kruise-io-uniteddeployment` | UnitedDeployment | deletion protection, then validation and immutable fields |
//! | `/validate-apps-kruise-io-persistentpodstate` | PersistentPodState | target, topology, weights, immutable target, conflicts |
//!
//! OpenKruise has no defaulting webhook for PodUnavailableBudget or WorkloadSpread (their CRD schemas
//! carry the defaults), so kruise-rs has none either.
//!
//! **Messages.** A refusal carries every error found, as OpenKruise's `allErrs.ToAggregate()` prints them:
//! one error bare (`spec.selector: Required value: no selector defined for SidecarSet`), several as
//! `[e1, e2]`; see [`field`]. The apiserver shows it as `admission webhook "<name>" denied the request:
//! <message>`. The code is **422** with reason `Invalid` for every kind (OpenKruise answers 500 for
//! SidecarSet, 400 for PodUnavailableBudget and WorkloadSpread, 422 for CloneSet, all without a
//! reason). A request kruise-rs cannot read (no object, wrong JSON types, unknown version) is a 400
//! naming the problem.
//!
//! **Versions.** SidecarSet, PodUnavailableBudget and WorkloadSpread are validated as `v1beta1` after
//! conversion, exactly as OpenKruise does, so paths name v1beta1 fields (a v1alpha1 SidecarSet's
//! `spec.namespace` is checked as `spec.namespaceSelector`; a v1alpha1 WorkloadSpread's
//! `requiredNodeSelectorTerm` as `requiredNodeSelector`). CloneSet is validated in the version it
//! arrives in, with that version's rules, as OpenKruise does. Defaults are written in the version sent.
//!
//! **Validation sees defaulted objects.** In a cluster the mutating webhooks run first; the validating
//! handlers apply the same defaults in memory before checking, so a validating call alone (e.g. `kruise
//! admit`) judges the object the apiserver would store, not an intermediate one.

pub mod advancedcronjob;
pub mod broadcastjob;
pub mod cloneset;
pub mod containerrecreaterequest;
pub mod daemonset;
pub mod defaults;
pub mod ephemeraljob;
pub mod field;
pub mod imagepulljob;
pub mod meta;
pub mod nodeimage;
pub mod persistentpodstate;
pub mod podprobemarker;
pub mod podspec;
pub mod podunavailablebudget;
pub mod resourcedistribution;
pub mod sidecarset;
pub mod statefulset;
pub mod uniteddeployment;
pub mod workloadspread;

use serde_json::Value;

use crate::{
    Decision,
    review::{AdmissionRequest, Operation},
};

/// The namespace whose ControllerRevisions (SidecarSet history) and `kruise-configuration` ConfigMap
/// are consulted, as OpenKruise's `POD_NAMESPACE`.
pub const KRUISE_NAMESPACE: &str = "kruise-system";

/// The name of OpenKruise's configuration ConfigMap.
pub const KRUISE_CONFIGURATION: &str = "kruise-configuration";

/// Which object of the request to read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Which {
    New,
    Old,
}

/// The served version of the request (`request.resource.version`, else `request.kind.version`).
pub(crate) fn request_version(request: &AdmissionRequest) -> &str {
    if request.resource.version.is_empty() {
        &request.kind.version
    } else {
        &request.resource.version
    }
}

/// The raw object (or old object) of a request, with `apiVersion` and `kind` filled in from the request
/// when the object lacks them, and (for namespaced kinds) `metadata.namespace` from `request.namespace`
/// when empty. A missing object or one that is not a JSON object is a 400.
pub(crate) fn raw_object(
    request: &AdmissionRequest,
    which: Which,
    group: &str,
    kind: &str,
) -> Result<Value, Box<Decision>> {
    let namespaced = !matches!(kind, "SidecarSet" | "ResourceDistribution" | "NodeImage");
    let object = match which {
        Which::New => request.object.as_ref(),
        Which::Old => request.old_object.as_ref(),
    };
    let mut object = match object {
        None | Some(Value::Null) => {
            return Err(Box::new(Decision::bad_request("there is no content to decode")));
        }
        Some(v) => v.clone(),
    };
    let Some(map) = object.as_object_mut() else {
        return Err(Box::new(Decision::bad_request(format!(
            "{kind} object is not a JSON object"
        ))));
    };
    let version = request_version(request);
    if !map.get("apiVersion").is_some_and(Value::is_string) {
        map.insert("apiVersion".into(), Value::String(format!("{group}/{version}")));
    }
    if !map.get("kind").is_some_and(Value::is_string) {
        map.insert("kind".into(), Value::String(kind.to_string()));
    }
    if namespaced
        && !request.namespace.is_empty()
        && let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut)
        && meta
            .get("namespace")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
    {
        meta.insert("namespace".into(), Value::String(request.namespace.clone()));
    }
    Ok(object)
}

/// The version check every handler makes first: `v1alpha1` or `v1beta1`, else a 400 as OpenKruise's
/// `unsupported version: <v>`.
pub(crate) fn check_version(request: &AdmissionRequest) -> Result<&str, Box<Decision>> {
    match request_version(request) {
        v @ ("v1alpha1" | "v1beta1") => Ok(v),
        v => Err(Box::new(Decision::bad_request(format!(
            "unsupported version: {v}"
        )))),
    }
}

/// True for the operations the CRD webhooks judge (CREATE and UPDATE); others are allowed untouched.
pub(crate) fn judged(request: &AdmissionRequest) -> bool {
    matches!(request.operation, Operation::Create | Operation::Update) && request.sub_resource().is_none()
}

/// The refusal for a non-empty error list.
pub(crate) fn refuse(errors: &[field::FieldError]) -> Option<Decision> {
    field::aggregate(errors).map(|message| Decision::deny(422, "Invalid", message))
}

/// The value without its `null` object entries, at every depth (a field set to `null` is a field left
/// out), so templates compare as Kubernetes stores them.
pub(crate) fn strip_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), strip_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_nulls).collect()),
        v => v.clone(),
    }
}

/// Decodes `value` into `T` (to check the shape of what was sent); a type error is a 400 naming the field.
pub(crate) fn check_decodes<T: serde::de::DeserializeOwned>(
    kind: &str,
    value: &Value,
) -> Result<T, Box<Decision>> {
    kruise_api::decode::<T>(kind, value).map_err(|e| Box::new(Decision::bad_request(e.to_string())))
}

/// A value from OpenKruise's `kruise-configuration` ConfigMap, if the view holds it.
pub(crate) fn configuration_value(view: &impl crate::view::ClusterView, key: &str) -> Option<String> {
    let cm = view.object("", "ConfigMap", KRUISE_NAMESPACE, KRUISE_CONFIGURATION)?;
    cm.get("data")?.get(key)?.as_str().map(String::from)
}
