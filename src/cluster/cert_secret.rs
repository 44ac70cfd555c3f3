//! The `kruise-webhook-certs` Secret: the one source of truth for every replica's certificates.
//!
//! Any replica creates it only if absent (create; on 409 read the winner's), so replicas never serve
//! different CAs; rotations are written with the read resourceVersion as a precondition.

use std::collections::BTreeMap;

use k8s_openapi::{ByteString, api::core::v1::Secret};
use kruise_certs::{CertConfig, CertMaterial, Plan, RotationReason};
use kube::{
    Api, Client,
    api::{ObjectMeta, PostParams},
};
use time::OffsetDateTime;

use super::CaBundlePublisher;

/// Why the certificate Secret could not be synced.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("API request on Secret {name}: {source}")]
    Api {
        name: String,
        #[source]
        source: Box<kube::Error>,
    },
    #[error("Secret {name}: {source}")]
    Certs {
        name: String,
        #[source]
        source: kruise_certs::CertError,
    },
    #[error("Secret {name} kept changing under us; will retry")]
    Contended { name: String },
    #[error(
        "caBundle could not be published, so the serving certificate is not switched to the new CA yet: {0}"
    )]
    NotPublished(#[source] Box<kube::Error>),
}

/// The certificate Secret and where to publish its CA bundle.
pub struct CertSecret {
    api: Api<Secret>,
    name: String,
    publisher: CaBundlePublisher,
}

fn to_bytes(data: Option<&BTreeMap<String, ByteString>>) -> Option<BTreeMap<String, Vec<u8>>> {
    data.map(|d| d.iter().map(|(k, v)| (k.clone(), v.0.clone())).collect())
}

impl CertSecret {
    /// The Secret `name` in `namespace`.
    pub fn new(client: Client, namespace: &str, name: &str, publisher: CaBundlePublisher) -> Self {
        CertSecret {
            api: Api::namespaced(client, namespace),
            name: name.to_string(),
            publisher,
        }
    }

    fn api_error(&self, e: kube::Error) -> SecretError {
        SecretError::Api {
            name: self.name.clone(),
            source: Box::new(e),
        }
    }

    /// Reads the Secret, creates or rotates it when `kruise_certs::plan` says so, publishes the CA
    /// bundle, and returns the material to serve.
    pub async fn sync(&self, config: &CertConfig, now: OffsetDateTime) -> Result<CertMaterial, SecretError> {
        let certs = |source| SecretError::Certs {
            name: self.name.clone(),
            source,
        };
        for _attempt in 0..5 {
            let existing = self
                .api
                .get_opt(&self.name)
                .await
                .map_err(|e| self.api_error(e))?;
            let stored = existing.as_ref().and_then(|s| to_bytes(s.data.as_ref()));
            let material = match kruise_certs::plan(stored.as_ref(), config, now).map_err(certs)? {
                Plan::Keep => CertMaterial::from_data(&stored.unwrap_or_default()).map_err(certs)?,
                Plan::Write { material, reason } => {
                    // Phase 2 of a CA rotation serves a leaf signed by the new CA: only once the bundle that
                    // trusts it is in place everywhere kube-apiserver reads it.
                    if matches!(reason, RotationReason::SwitchLeafToNewCa) {
                        let bundle = material.ca_bundle_pem();
                        self.publisher
                            .publish(&bundle)
                            .await
                            .map_err(|e| SecretError::NotPublished(Box::new(e)))?;
                    }
                    let data = material
                        .to_data()
                        .into_iter()
                        .map(|(k, v)| (k, ByteString(v)))
                        .collect();
                    let secret = Secret {
                        metadata: ObjectMeta {
                            name: Some(self.name.clone()),
                            resource_version: existing
                                .as_ref()
                                .and_then(|s| s.metadata.resource_version.clone()),
                            labels: existing.as_ref().and_then(|s| s.metadata.labels.clone()),
                            ..ObjectMeta::default()
                        },
                        data: Some(data),
                        type_: Some("Opaque".into()),
                        ..Secret::default()
                    };
                    let written = match existing {
                        None => self.api.create(&PostParams::default(), &secret).await,
                        Some(_) => {
                            self.api
                                .replace(&self.name, &PostParams::default(), &secret)
                                .await
                        }
                    };
                    match written {
                        Ok(_) => {
                            tracing::info!(secret = %self.name, %reason, "webhook certificates written");
                            material
                        }
                        // Another replica won the race: use what it wrote.
                        Err(kube::Error::Api(s)) if s.is_already_exists() || s.is_conflict() => continue,
                        Err(e) => return Err(self.api_error(e)),
                    }
                }
            };
            // A failed publish is retried at the next sync; the old bundle still trusts what is served.
            let _ = self.publisher.publish(&material.ca_bundle_pem()).await;
            return Ok(material);
        }
        Err(SecretError::Contended {
            name: self.name.clone(),
        })
    }
}
