//! The ResourceDistribution controller: the planner is [`kruise_reconcile::resource_distribution`]; this
//! lists a distribution's copies, carries the plan's writes out and writes the status.
//!
//! Memory is bounded by what is distributed: ConfigMaps and Secrets are never cached. Each pass lists
//! the copies of one distribution by their label (`apps.kruise.io/resource-distribution=<uid>`), and the
//! trigger watch sees only labelled objects (kube-runtime's trigger watches keep no store). An object of
//! the same name without the label shows up as an AlreadyExists on create; it is then read by name and
//! judged by the planner's rule (ours: updated; not ours: a conflict, untouched).
//!
//! Triggers: the distribution itself; namespaces (any change re-passes the distributions that select by
//! label, target all namespaces or list that namespace — the watch does not say which labels a namespace
//! had before); copies changed or deleted (by their controller reference).

use std::{sync::Arc, time::Duration};

use futures::{StreamExt as _, stream};
use k8s_openapi::{
    api::core::v1::{ConfigMap, Namespace, Secret},
    apimachinery::pkg::apis::meta::v1::Time,
};
use kruise_api::apps_v1beta1::ResourceDistribution;
use kruise_reconcile::resource_distribution::{
    COPY_LABEL, Decision, Failure, FailureKind, Plan, Step, Template, decide, plan, status,
};
use kube::{
    Api, ResourceExt as _,
    api::{ApiResource, DeleteParams, DynamicObject, ListParams, PostParams, Preconditions},
    runtime::reflector::ObjectRef,
};
use serde_json::Value;

use super::{
    Context, ControllerView, Error,
    control_loop::{self, Known, Next, Pass, Reconciler, Triggers},
};

/// Safety net: every distribution is passed at least this often.
pub const RESYNC: Duration = Duration::from_secs(300);
/// Writes in flight at once within one pass.
const WRITES_IN_FLIGHT: usize = 16;

fn api_resource(kind: &str) -> ApiResource {
    if kind == "Secret" {
        ApiResource::erase::<Secret>(&())
    } else {
        ApiResource::erase::<ConfigMap>(&())
    }
}

/// The distributions a namespace change may concern.
fn distributions_of_namespace(
    ns: &Namespace,
    known: &Known<ResourceDistribution>,
) -> Vec<ObjectRef<ResourceDistribution>> {
    let name = ns.name_any();
    known.refs(|rd| {
        let t = &rd.spec.targets;
        let selects = t
            .namespace_selector
            .match_labels
            .as_ref()
            .is_some_and(|m| !m.is_empty())
            || t.namespace_selector
                .match_expressions
                .as_ref()
                .is_some_and(|e| !e.is_empty());
        t.all_namespaces || selects || t.included_namespaces.names().any(|n| n == name)
    })
}

/// The distribution controlling a copy.
fn distribution_of_copy<W: kube::Resource>(copy: &W) -> Vec<ObjectRef<ResourceDistribution>> {
    copy.meta()
        .owner_references
        .iter()
        .flatten()
        .filter(|o| o.controller == Some(true) && o.kind == "ResourceDistribution")
        .map(|o| ObjectRef::new(&o.name))
        .collect()
}

struct Distributions;

impl Reconciler for Distributions {
    type Object = ResourceDistribution;
    type Memory = ();
    const DEBOUNCE: Duration = Duration::from_millis(200);
    const RESYNC: Duration = RESYNC;

    fn triggers(&self, triggers: Triggers<ResourceDistribution>) -> Triggers<ResourceDistribution> {
        triggers
            .watch(distributions_of_namespace)
            .watch_labelled(COPY_LABEL, |c: &ConfigMap, _: &Known<_>| distribution_of_copy(c))
            .watch_labelled(COPY_LABEL, |s: &Secret, _: &Known<_>| distribution_of_copy(s))
    }

    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<ResourceDistribution>> {
        kruise_core::view::get(view, namespace, name)
    }

    async fn pass(
        self: Arc<Self>,
        rd: Arc<ResourceDistribution>,
        pass: Pass<ResourceDistribution, ()>,
    ) -> Result<Next, Error> {
        let name = rd.name_any();
        let template = match Template::new(&rd) {
            Ok(t) => t,
            Err(e) => {
                // As OpenKruise: an unusable resource waits for a spec change, without retries.
                tracing::warn!(distribution = %name, error = %e, "ResourceDistribution not distributed");
                return Ok(Next::Idle);
            }
        };
        let client = &pass.context.client;
        let all: Api<DynamicObject> = Api::all_with(client.clone(), &api_resource(&template.kind));
        let uid = rd.metadata.uid.clone().unwrap_or_default();
        let listed = all
            .list(&ListParams::default().labels(&format!("{COPY_LABEL}={uid}")))
            .await?;
        let copies: Vec<Value> = listed
            .items
            .iter()
            .filter_map(|o| serde_json::to_value(o).ok())
            .collect();
        let namespaces = pass.context.view.kinds().namespaces.list(None);
        let plan = match plan(&rd, namespaces.iter().map(|n| &**n), &copies) {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(distribution = %name, error = %e, "ResourceDistribution not distributed");
                return Ok(Next::Idle);
            }
        };
        let failures = carry_out(client, &plan).await;
        let now = Time(k8s_openapi::jiff::Timestamp::now());
        let new_status = status(&rd, &plan.desired, &failures, &now);
        if rd.status.as_ref() != Some(&new_status) {
            pass.write_status(&rd, &new_status).await?;
            tracing::info!(distribution = %name, desired = new_status.desired, succeeded = new_status.succeeded,
                failed = new_status.failed, "ResourceDistribution status updated");
        }
        let retried: Vec<String> = failures
            .iter()
            .filter(|f| f.kind.retried())
            .map(|f| format!("{} in {}: {}", f.kind.condition(), f.namespace, f.reason))
            .collect();
        if !retried.is_empty() {
            return Err(Error::Partial {
                what: "ResourceDistribution writes failed",
                message: retried.join("; "),
            });
        }
        Ok(Next::Resync)
    }
}

/// Runs the plan's writes (a few at once); returns every failure, the plan's own included.
async fn carry_out(client: &kube::Client, plan: &Plan) -> Vec<Failure> {
    let resource = api_resource(&plan.template.kind);
    let writes: Vec<_> = plan
        .steps
        .iter()
        .map(|step| write(client, &resource, &plan.template, step))
        .collect();
    let results: Vec<Option<Failure>> = stream::iter(writes)
        .buffer_unordered(WRITES_IN_FLIGHT)
        .collect()
        .await;
    let mut failures = plan.failures.clone();
    failures.extend(results.into_iter().flatten());
    failures
}

fn failure(namespace: &str, kind: FailureKind, error: impl std::fmt::Display) -> Option<Failure> {
    Some(Failure {
        namespace: namespace.to_string(),
        kind,
        reason: error.to_string(),
    })
}

fn status_reason(error: &kube::Error) -> Option<&str> {
    match error {
        kube::Error::Api(s) => Some(s.reason.as_str()),
        _ => None,
    }
}

/// One write; `None` when it succeeded.
async fn write(
    client: &kube::Client,
    resource: &ApiResource,
    template: &Template,
    step: &Step,
) -> Option<Failure> {
    let api = |namespace: &str| Api::<DynamicObject>::namespaced_with(client.clone(), namespace, resource);
    match step {
        Step::Create { namespace, body } => {
            let object: DynamicObject = serde_json::from_value(body.clone()).ok()?;
            match api(namespace).create(&PostParams::default(), &object).await {
                Ok(_) => None,
                Err(e) if status_reason(&e) == Some("AlreadyExists") => {
                    // Not in the labelled list: someone else's, or ours with the label taken off.
                    resolve_existing(client, resource, template, namespace).await
                }
                Err(e) => failure(namespace, FailureKind::CreateResourceFailed, e),
            }
        }
        Step::Update { namespace, body } => update(&api(namespace), template, namespace, body).await,
        Step::Delete { namespace, uid } => {
            let params = DeleteParams {
                preconditions: Some(Preconditions {
                    uid: uid.clone(),
                    resource_version: None,
                }),
                ..DeleteParams::default()
            };
            match api(namespace).delete(&template.name, &params).await {
                Ok(_) => None,
                Err(e) if status_reason(&e) == Some("NotFound") => None,
                Err(e) => failure(namespace, FailureKind::DeleteResourceFailed, e),
            }
        }
    }
}

async fn update(
    api: &Api<DynamicObject>,
    template: &Template,
    namespace: &str,
    body: &Value,
) -> Option<Failure> {
    let object: DynamicObject = serde_json::from_value(body.clone()).ok()?;
    match api.replace(&template.name, &PostParams::default(), &object).await {
        Ok(_) => None,
        Err(e) => failure(namespace, FailureKind::UpdateResourceFailed, e),
    }
}

/// After an AlreadyExists: reads the object and applies the planner's rule to it.
async fn resolve_existing(
    client: &kube::Client,
    resource: &ApiResource,
    template: &Template,
    namespace: &str,
) -> Option<Failure> {
    let api = Api::<DynamicObject>::namespaced_with(client.clone(), namespace, resource);
    let existing = match api.get(&template.name).await {
        Ok(o) => serde_json::to_value(o).ok()?,
        Err(e) => return failure(namespace, FailureKind::GetResourceFailed, e),
    };
    match decide(template, namespace, Some(&existing)) {
        Decision::Update(body) => update(&api, template, namespace, &body).await,
        Decision::Conflict => failure(
            namespace,
            FailureKind::ConflictOccurred,
            kruise_reconcile::resource_distribution::CONFLICT_REASON,
        ),
        Decision::InSync | Decision::Create(_) => None,
    }
}

/// Runs the ResourceDistribution controller until aborted.
pub async fn run(context: Context) {
    control_loop::run(context, Distributions).await;
}
