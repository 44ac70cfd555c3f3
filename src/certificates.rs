//! Keeps the served certificate current: generates, rotates and reloads it without dropping connections.
//!
//! Three stores:
//! - `Dir` (standalone): material in `--cert-dir` (`ca.crt`, `tls.crt`, `tls.key`, plus the CA key and
//!   rotation state), created when absent, reused while valid, rotated by `kruise_certs::plan`.
//! - `External` (`--cert-mode external`): something else (cert-manager) writes `tls.crt` / `tls.key`; we
//!   poll a content fingerprint (kubelet swaps a `..data` symlink, which file watches miss) and reload.
//! - `Secret` (cluster): the `kruise-webhook-certs` Secret is the source of truth for every replica; the
//!   CA bundle is published into our webhook configurations and CRDs.

use std::{path::PathBuf, sync::Arc, time::Duration};

use axum_server::tls_rustls::RustlsConfig;
use kruise_certs::{CertConfig, CertMaterial, Plan};
use time::OffsetDateTime;
use tokio::sync::Mutex;

use crate::{
    cluster::CertSecret,
    server::{health::Readiness, metrics::Metrics, tls},
};

/// Where certificates live.
pub enum CertStore {
    /// Generated and rotated by us in a directory (standalone).
    Dir(PathBuf),
    /// Provided by someone else in a directory; only served.
    External(PathBuf),
    /// Generated and rotated by us in a Secret shared by all replicas (cluster).
    Secret(Box<CertSecret>),
}

/// Why a certificate sync failed. The old certificate keeps being served.
#[derive(Debug, thiserror::Error)]
pub enum CertSyncError {
    #[error(transparent)]
    Certs(#[from] kruise_certs::CertError),
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    #[error("certificate Secret: {0}")]
    Secret(#[from] crate::cluster::SecretError),
}

/// The served certificate and how to refresh it.
pub struct CertManager {
    config: CertConfig,
    store: CertStore,
    tls: Mutex<Option<(String, RustlsConfig)>>,
    metrics: Arc<Metrics>,
    readiness: Arc<Readiness>,
}

impl CertManager {
    /// A manager; nothing is loaded until [`CertManager::sync`].
    pub fn new(
        config: CertConfig,
        store: CertStore,
        metrics: Arc<Metrics>,
        readiness: Arc<Readiness>,
    ) -> Self {
        CertManager {
            config,
            store,
            tls: Mutex::new(None),
            metrics,
            readiness,
        }
    }

    /// How often [`CertManager::run`] re-checks: an external pair every 10 s; our own material every
    /// half rotation dwell, at most every 60 s (a phase's certificate is served by every replica
    /// before the next phase may start).
    pub fn interval(&self) -> Duration {
        match self.store {
            CertStore::External(_) => Duration::from_secs(10),
            _ => {
                let half = self.config.rotation_dwell.whole_milliseconds() / 2;
                Duration::from_millis(u64::try_from(half).unwrap_or(0).clamp(1_000, 60_000))
            }
        }
    }

    /// The rustls configuration the server must use (after the first successful sync).
    pub async fn rustls_config(&self) -> Option<RustlsConfig> {
        self.tls.lock().await.as_ref().map(|(_, c)| c.clone())
    }

    /// Brings the served certificate up to date with the store at time `now`.
    pub async fn sync(&self, now: OffsetDateTime) -> Result<(), CertSyncError> {
        let (cert_pem, key_pem, ca_not_after) = match &self.store {
            CertStore::Dir(dir) => {
                let material = self.sync_dir(dir, now)?;
                let ca_not_after = material.ca_not_after()?;
                (material.leaf.cert_pem, material.leaf.key_pem, Some(ca_not_after))
            }
            CertStore::External(dir) => {
                let files = kruise_certs::dir::read_serving(dir)?;
                kruise_certs::check_pair(&files.cert_pem, &files.key_pem)?;
                // Someone else rotates it: an expired or not yet valid one is refused like a broken pair.
                kruise_certs::inspect(&files.cert_pem)?.check_valid_at("serving certificate", now)?;
                (files.cert_pem, files.key_pem, None)
            }
            CertStore::Secret(secret) => {
                let material = secret.sync(&self.config, now).await?;
                let ca_not_after = material.ca_not_after()?;
                (material.leaf.cert_pem, material.leaf.key_pem, Some(ca_not_after))
            }
        };
        self.serve(&cert_pem, &key_pem).await?;
        let leaf = kruise_certs::inspect(&cert_pem)?;
        self.metrics
            .set_cert_expiry("serving", leaf.not_after.unix_timestamp());
        if let Some(ca) = ca_not_after {
            self.metrics.set_cert_expiry("ca", ca.unix_timestamp());
        }
        self.readiness.set_certs_loaded();
        Ok(())
    }

    fn sync_dir(&self, dir: &std::path::Path, now: OffsetDateTime) -> Result<CertMaterial, CertSyncError> {
        let stored = kruise_certs::dir::read(dir)?;
        match kruise_certs::plan(stored.as_ref(), &self.config, now)? {
            Plan::Keep => {
                // `plan` said Keep, so the stored data is present and valid.
                let data = stored.unwrap_or_default();
                Ok(CertMaterial::from_data(&data)?)
            }
            Plan::Write { material, reason } => {
                tracing::info!(dir = %dir.display(), %reason, "writing webhook certificates");
                kruise_certs::dir::write(dir, &material.to_data())?;
                Ok(material)
            }
        }
    }

    /// Swaps the served certificate when it changed; new handshakes use it, open connections continue.
    async fn serve(&self, cert_pem: &str, key_pem: &str) -> Result<(), CertSyncError> {
        let mut current = self.tls.lock().await;
        if current.as_ref().is_some_and(|(pem, _)| pem == cert_pem) {
            return Ok(());
        }
        let config = tls::server_config(cert_pem, key_pem)?;
        match current.as_mut() {
            Some((pem, rustls)) => {
                rustls.reload_from_config(config);
                *pem = cert_pem.to_string();
                tracing::info!("serving certificate reloaded");
            }
            None => *current = Some((cert_pem.to_string(), RustlsConfig::from_config(config))),
        }
        self.metrics.cert_reloads.inc();
        Ok(())
    }

    /// Re-syncs forever; failures are logged and counted, and the old certificate keeps being served.
    pub async fn run(self: Arc<Self>) {
        let mut ticker = tokio::time::interval(self.interval());
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The first tick is immediate and the caller has just synced.
        ticker.tick().await;
        loop {
            ticker.tick().await;
            if let Err(e) = self.sync(OffsetDateTime::now_utc()).await {
                self.metrics.cert_errors.inc();
                tracing::warn!(error = %e, "certificate sync failed; keeping the current certificate");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manager(store: CertStore, dwell_seconds: i64) -> CertManager {
        let mut config = CertConfig::for_service("svc", "ns");
        config.rotation_dwell = time::Duration::seconds(dwell_seconds);
        CertManager::new(
            config,
            store,
            Arc::new(Metrics::new()),
            Arc::new(Readiness::new(false)),
        )
    }

    #[test]
    fn resync_is_half_the_dwell_between_one_second_and_a_minute() {
        let dir = || CertStore::Dir("d".into());
        assert_eq!(manager(dir(), 120).interval(), Duration::from_secs(60));
        assert_eq!(manager(dir(), 3600).interval(), Duration::from_secs(60));
        assert_eq!(manager(dir(), 6).interval(), Duration::from_secs(3));
        assert_eq!(manager(dir(), 1).interval(), Duration::from_secs(1));
        let external = CertStore::External("d".into());
        assert_eq!(manager(external, 6).interval(), Duration::from_secs(10));
    }
}
