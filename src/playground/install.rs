//! Installs kruise-rs into the playground as `manifests/` does in a real cluster: the
//! `kruise-system` namespace, the webhook Service, the CRDs and both webhook configurations
//! (`caBundle` empty: kruise-rs publishes it), then waits until kruise-rs serves.

use std::time::{Duration, Instant};

use k8s_openapi::api::{
    admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration},
    core::v1::{Namespace, Service},
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{Api, Client, api::PostParams};
use serde_json::json;

use super::{NAMESPACE, PlaygroundError, SERVICE, serve::Kruise};
use crate::cluster::ca_bundle::{MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION};

/// How long kruise-rs may take to publish its caBundle and sync its caches.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);

async fn create<K>(api: &Api<K>, object: &K) -> Result<(), kube::Error>
where
    K: kube::Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
{
    match api.create(&PostParams::default(), object).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Namespace, Service, CRDs, webhook configurations.
pub async fn install(client: &Client) -> Result<(), kube::Error> {
    let ns: Namespace =
        serde_json::from_value(json!({"metadata": {"name": NAMESPACE}})).map_err(kube::Error::SerdeError)?;
    create(&Api::all(client.clone()), &ns).await?;
    let service: Service = serde_json::from_value(json!({
        "metadata": {"name": SERVICE, "namespace": NAMESPACE},
        "spec": {"selector": {"app.kubernetes.io/name": "kruise-rs"},
                 "ports": [{"port": 443, "targetPort": 9876}]},
    }))
    .map_err(kube::Error::SerdeError)?;
    create(&Api::namespaced(client.clone(), NAMESPACE), &service).await?;
    let crds = Api::all(client.clone());
    for crd in kruise_api::crds() {
        create(&crds, &crd).await?;
    }
    if let Some(mutating) = crate::registrations::mutating_configuration(NAMESPACE, SERVICE) {
        create(
            &Api::<MutatingWebhookConfiguration>::all(client.clone()),
            &mutating,
        )
        .await?;
    }
    let validating = crate::registrations::validating_configuration(NAMESPACE, SERVICE);
    create(
        &Api::<ValidatingWebhookConfiguration>::all(client.clone()),
        &validating,
    )
    .await?;
    Ok(())
}

fn published<'a>(mut bundles: impl Iterator<Item = Option<&'a k8s_openapi::ByteString>>) -> bool {
    bundles.all(|b| b.is_some_and(|b| !b.0.is_empty()))
}

/// Waits until both configurations carry the caBundle and the caches are synced.
pub async fn wait_ready(client: &Client, kruise: &Kruise) -> Result<(), PlaygroundError> {
    let start = Instant::now();
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    loop {
        let m = mutating.get(MUTATING_CONFIGURATION).await?;
        let v = validating.get(VALIDATING_CONFIGURATION).await?;
        let m_ok = published(
            m.webhooks
                .iter()
                .flatten()
                .map(|w| w.client_config.ca_bundle.as_ref()),
        );
        let v_ok = published(
            v.webhooks
                .iter()
                .flatten()
                .map(|w| w.client_config.ca_bundle.as_ref()),
        );
        let caches = kruise.readiness().check().is_ok();
        // The playground converts custom resources through the CRDs' conversion webhook: it
        // must trust kruise-rs there too.
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        let mut crds_ok = true;
        for crd in kruise_api::crds() {
            let stored = crds.get(&crd.metadata.name.unwrap_or_default()).await?;
            let webhook = stored.spec.conversion.and_then(|c| c.webhook);
            crds_ok &= published(
                webhook
                    .iter()
                    .map(|w| w.client_config.as_ref().and_then(|c| c.ca_bundle.as_ref())),
            );
        }
        if m_ok && v_ok && caches && crds_ok {
            return Ok(());
        }
        if start.elapsed() > READY_TIMEOUT {
            let why = if caches {
                "caBundle not published"
            } else {
                "caches not synced"
            };
            return Err(PlaygroundError::NotReady(READY_TIMEOUT, why));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
