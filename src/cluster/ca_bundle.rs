//! Publishes the CA bundle into our webhook configurations and the conversion webhooks of our CRDs,
//! and puts it back when someone overwrites it (every certificate sync re-checks).

use k8s_openapi::{
    ByteString,
    api::admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration},
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{Api, Client, api::PostParams};

/// OpenKruise's configuration object names.
pub const MUTATING_CONFIGURATION: &str = "kruise-mutating-webhook-configuration";
/// OpenKruise's configuration object names.
pub const VALIDATING_CONFIGURATION: &str = "kruise-validating-webhook-configuration";

/// Writes `caBundle` where the apiserver reads it.
#[derive(Clone)]
pub struct CaBundlePublisher {
    client: Client,
    crd_names: Vec<String>,
}

impl CaBundlePublisher {
    /// A publisher for our configurations and the CRDs named `crd_names`.
    pub fn new(client: Client, crd_names: Vec<String>) -> Self {
        CaBundlePublisher { client, crd_names }
    }

    /// Makes every clientConfig carry `bundle_pem`. Every target is tried; the first failure is
    /// returned (and each is logged), so the caller can hold back a rotation step that needs the bundle
    /// to be in place.
    pub async fn publish(&self, bundle_pem: &str) -> Result<(), kube::Error> {
        let bundle = ByteString(bundle_pem.as_bytes().to_vec());
        let mut first_error = None;
        let mut note = |target: &str, result: Result<(), kube::Error>| {
            if let Err(e) = result {
                tracing::warn!(target, error = %e, "could not publish caBundle");
                first_error.get_or_insert(e);
            }
        };
        note(MUTATING_CONFIGURATION, self.publish_mutating(&bundle).await);
        note(VALIDATING_CONFIGURATION, self.publish_validating(&bundle).await);
        for name in &self.crd_names {
            note(name, self.publish_crd(name, &bundle).await);
        }
        first_error.map_or(Ok(()), Err)
    }

    async fn publish_mutating(&self, bundle: &ByteString) -> Result<(), kube::Error> {
        let api: Api<MutatingWebhookConfiguration> = Api::all(self.client.clone());
        let Some(mut config) = api.get_opt(MUTATING_CONFIGURATION).await? else {
            return Ok(());
        };
        let mut changed = false;
        for webhook in config.webhooks.iter_mut().flatten() {
            changed |= set(&mut webhook.client_config.ca_bundle, bundle);
        }
        if changed {
            api.replace(MUTATING_CONFIGURATION, &PostParams::default(), &config)
                .await?;
            tracing::info!(object = MUTATING_CONFIGURATION, "caBundle published");
        }
        Ok(())
    }

    async fn publish_validating(&self, bundle: &ByteString) -> Result<(), kube::Error> {
        let api: Api<ValidatingWebhookConfiguration> = Api::all(self.client.clone());
        let Some(mut config) = api.get_opt(VALIDATING_CONFIGURATION).await? else {
            return Ok(());
        };
        let mut changed = false;
        for webhook in config.webhooks.iter_mut().flatten() {
            changed |= set(&mut webhook.client_config.ca_bundle, bundle);
        }
        if changed {
            api.replace(VALIDATING_CONFIGURATION, &PostParams::default(), &config)
                .await?;
            tracing::info!(object = VALIDATING_CONFIGURATION, "caBundle published");
        }
        Ok(())
    }

    async fn publish_crd(&self, name: &str, bundle: &ByteString) -> Result<(), kube::Error> {
        let api: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        let Some(mut crd) = api.get_opt(name).await? else {
            return Ok(());
        };
        let webhook = crd.spec.conversion.as_mut().and_then(|c| c.webhook.as_mut());
        let Some(client_config) = webhook.and_then(|w| w.client_config.as_mut()) else {
            return Ok(());
        };
        if set(&mut client_config.ca_bundle, bundle) {
            api.replace(name, &PostParams::default(), &crd).await?;
            tracing::info!(crd = name, "caBundle published");
        }
        Ok(())
    }
}

/// Sets the field; true when it changed.
fn set(field: &mut Option<ByteString>, bundle: &ByteString) -> bool {
    if field.as_ref() == Some(bundle) {
        return false;
    }
    *field = Some(bundle.clone());
    true
}
