//! Pod helpers shared by the controllers, and the one kube-runtime loop over pods that runs the
//! per-pod passes ([`super::pod_readiness`], [`super::launch_priority`]) — one pod watch for both.

use kruise_api::PodRecord;
use std::{sync::Arc, time::Duration};

use k8s_openapi::{
    api::core::v1::ConfigMap, apimachinery::pkg::apis::meta::v1::LabelSelector, jiff::Timestamp,
};
use kruise_core::selector::{LabelSource, Selector};
use kube::{
    Api, ResourceExt as _,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;

use super::{
    Context, ControllerView, Error,
    control_loop::{self, Next, Pass, Reconciler, Source},
    launch_priority, pod_readiness,
};
use crate::cluster::Change;
use futures::StreamExt as _;
use kruise_core::Lenient;

/// The `apps.kruise.io` workload of kind `W` that controls `object`, if any.
pub fn kruise_controller<W, K>(object: &K) -> Option<kube::runtime::reflector::ObjectRef<W>>
where
    W: kube::Resource<DynamicType = ()>,
    K: kube::Resource,
{
    let owner = kruise_core::kind::controller_ref(object.meta())?;
    (owner.kind == W::kind(&()) && owner.api_version.starts_with("apps.kruise.io/")).then(|| {
        kube::runtime::reflector::ObjectRef::new(&owner.name)
            .within(object.meta().namespace.as_deref().unwrap_or(""))
    })
}

/// Whether `selector` selects `labels` (`metav1.LabelSelectorAsSelector`); an invalid selector
/// selects nothing.
pub fn selects(selector: &LabelSelector, labels: &impl LabelSource) -> bool {
    Selector::parse(Some(selector))
        .valid()
        .is_ok_and(|s| s.matches_labels(labels))
}

/// The pod's annotation `key`.
pub fn annotation<'a>(pod: &'a PodRecord, key: &str) -> Option<&'a str> {
    pod.metadata.annotations.get(key)
}

/// How often a pod waiting on its launch barrier is looked at without a trigger.
const BARRIER_RECHECK: Duration = Duration::from_secs(60);

struct PodPasses;

impl Reconciler for PodPasses {
    /// Pods as the shared cache holds them: no second copy (a pod that does not decode is left alone).
    type Object = Lenient<PodRecord>;
    type Memory = ();
    const DEBOUNCE: Duration = Duration::ZERO;
    const RESYNC: Duration = BARRIER_RECHECK;
    const CONCURRENCY: u16 = 4;
    // The passes decide about terminating pods themselves.
    const WHILE_DELETING: bool = true;

    /// Every pod the shared cache holds once it has listed, then each pod it applies; after a relisting
    /// every pod again.
    fn source(view: &dyn ControllerView) -> Option<Source<Lenient<PodRecord>>> {
        let pods = view.watched_pods()?;
        let store = pods.store()?;
        // Subscribed before the first snapshot, so no change falls between the two.
        let changes = pods.changes();
        let every_pod = {
            let store = store.clone();
            move || {
                let pods: Vec<Lenient<PodRecord>> = store.state().iter().map(|pod| (**pod).clone()).collect();
                futures::stream::iter(pods)
            }
        };
        let first = {
            let pods = pods.clone();
            let every_pod = every_pod.clone();
            futures::stream::once(async move { pods.wait_until_ready().await.is_ok() }).flat_map(
                move |ready| {
                    if ready {
                        every_pod()
                    } else {
                        futures::stream::iter(Vec::new())
                    }
                },
            )
        };
        let later = changes.flat_map(move |change| match change {
            Change::Applied(pod) => futures::stream::iter(vec![Lenient::Decoded(pod)]),
            Change::Deleted(_) => futures::stream::iter(Vec::new()),
            Change::Relisted => every_pod(),
        });
        Some(Source {
            objects: first.chain(later).boxed(),
            store,
        })
    }

    async fn pass(
        self: Arc<Self>,
        pod: Arc<Lenient<PodRecord>>,
        pass: Pass<Lenient<PodRecord>, ()>,
    ) -> Result<Next, Error> {
        let Some(pod) = pod.decoded() else {
            return Ok(Next::Idle);
        };
        let context = &pass.context;
        let namespace = pod.namespace().unwrap_or_default();
        let name = pod.name_any();
        let api: Api<PodRecord> = Api::namespaced(context.client.clone(), &namespace);
        if let Some(patch) = pod_readiness::plan(pod, Timestamp::now()) {
            match api
                .patch_status(&name, &PatchParams::default(), &Patch::Strategic(&patch))
                .await
            {
                Ok(_) => tracing::info!(pod = %name, %namespace, "KruisePodReady initialised"),
                // Changed meanwhile (perhaps by another writer of the condition): the watch brings the
                // new version and the next pass decides again.
                Err(kube::Error::Api(s)) if s.is_conflict() || s.is_not_found() => {}
                Err(e) => return Err(e.into()),
            }
        }
        if launch_priority::wanted(pod) {
            return launch_barrier(pod, context, &namespace, &name).await;
        }
        Ok(Next::Idle)
    }
}

/// Runs the per-pod passes over every pod until aborted.
pub async fn run(context: Context) {
    control_loop::run(context, PodPasses).await;
}

async fn launch_barrier(
    pod: &PodRecord,
    context: &Context,
    namespace: &str,
    name: &str,
) -> Result<Next, Error> {
    let maps: Api<ConfigMap> = Api::namespaced(context.client.clone(), namespace);
    let pods: Api<PodRecord> = Api::namespaced(context.client.clone(), namespace);
    let barrier_name = launch_priority::barrier_name(name);
    let mut barrier = maps.get_opt(&barrier_name).await?;
    // At most two rounds: create the barrier, then act on it.
    for _ in 0..2 {
        let steps = launch_priority::plan(pod, barrier.as_ref());
        let mut created = None;
        for step in steps {
            match step {
                launch_priority::Step::CreateBarrier(cm) => {
                    created = Some(match maps.create(&PostParams::default(), &cm).await {
                        Ok(cm) => cm,
                        Err(kube::Error::Api(s)) if s.is_already_exists() => maps.get(&barrier_name).await?,
                        Err(e) => return Err(e.into()),
                    });
                    tracing::info!(pod = %name, namespace, "launch barrier created");
                }
                launch_priority::Step::AddKey(key) => {
                    let patch = json!({"data": {key.as_str(): "true"}});
                    maps.patch(&barrier_name, &PatchParams::default(), &Patch::Merge(&patch))
                        .await?;
                    tracing::info!(pod = %name, namespace, %key, "launch priority released");
                }
                launch_priority::Step::MarkCompleted => {
                    let patch = json!({"metadata": {"annotations":
                        {launch_priority::COMPLETED_ANNOTATION: "true"}}});
                    pods.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                        .await?;
                }
            }
        }
        match created {
            Some(cm) => barrier = Some(cm),
            None => break,
        }
    }
    // Container readiness changes are pod updates, which trigger the next pass; the requeue is a net.
    Ok(Next::After(BARRIER_RECHECK))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn selectors() {
        let labels: BTreeMap<String, String> = [("app".to_string(), "web".to_string())].into();
        let by_label: LabelSelector = serde_json::from_value(json!({"matchLabels": {"app": "web"}})).unwrap();
        let other: LabelSelector = serde_json::from_value(json!({"matchLabels": {"app": "db"}})).unwrap();
        let invalid: LabelSelector =
            serde_json::from_value(json!({"matchExpressions": [{"key": "app", "operator": "Bogus"}]}))
                .unwrap();
        assert!(selects(&by_label, &labels));
        assert!(!selects(&other, &labels));
        assert!(!selects(&invalid, &labels));
    }
}
