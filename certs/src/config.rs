//! What to issue: names, lifetimes and the rotation dwell time.

use std::net::{IpAddr, Ipv4Addr};

use time::Duration;

use crate::CertError;

/// Default CA lifetime: 10 years.
pub const DEFAULT_CA_VALIDITY: Duration = Duration::days(3650);
/// Default serving (leaf) certificate lifetime: 1 year.
pub const DEFAULT_LEAF_VALIDITY: Duration = Duration::days(365);
/// Default time between two CA-rotation phases (see [`crate::plan`]).
pub const DEFAULT_ROTATION_DWELL: Duration = Duration::minutes(2);
/// Upper bound accepted for either validity.
pub const MAX_VALIDITY: Duration = Duration::days(36500);
/// How far `notBefore` is set in the past, so peers with a slow clock accept a fresh certificate.
pub const NOT_BEFORE_BACKDATE: Duration = Duration::minutes(10);

/// Names and lifetimes of the material to issue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertConfig {
    /// DNS SANs of the serving certificate; the first one is also its CN.
    pub dns_names: Vec<String>,
    /// IP SANs of the serving certificate.
    pub ip_addresses: Vec<IpAddr>,
    /// Lifetime of a newly generated CA.
    pub ca_validity: Duration,
    /// Lifetime of a newly issued serving certificate (clamped to its CA's `notAfter`).
    pub leaf_validity: Duration,
    /// Minimum time between CA-rotation phases: long enough for every apiserver and replica to
    /// observe the previous phase's caBundle / files.
    pub rotation_dwell: Duration,
}

impl CertConfig {
    /// SANs `<service>.<namespace>.svc`, `<service>.<namespace>.svc.cluster.local`, `localhost`
    /// and `127.0.0.1`; CA 10 years, leaf 1 year, dwell 2 minutes.
    pub fn for_service(service: &str, namespace: &str) -> Self {
        CertConfig {
            dns_names: vec![
                format!("{service}.{namespace}.svc"),
                format!("{service}.{namespace}.svc.cluster.local"),
                "localhost".to_string(),
            ],
            ip_addresses: vec![IpAddr::V4(Ipv4Addr::LOCALHOST)],
            ca_validity: DEFAULT_CA_VALIDITY,
            leaf_validity: DEFAULT_LEAF_VALIDITY,
            rotation_dwell: DEFAULT_ROTATION_DWELL,
        }
    }

    /// Reject configurations that cannot work: no SAN, non-positive lifetimes, or a CA so short
    /// that the two rotation dwells do not fit in the last third of its life.
    pub fn validate(&self) -> Result<(), CertError> {
        if self.dns_names.is_empty() && self.ip_addresses.is_empty() {
            return Err(CertError::Config(
                "at least one DNS name or IP address is required".into(),
            ));
        }
        if let Some(bad) = self.dns_names.iter().find(|n| !valid_dns_name(n)) {
            return Err(CertError::Config(format!("invalid DNS name {bad:?}")));
        }
        if !self.ca_validity.is_positive() || !self.leaf_validity.is_positive() {
            return Err(CertError::Config("validities must be positive".into()));
        }
        if self.ca_validity > MAX_VALIDITY || self.leaf_validity > MAX_VALIDITY {
            return Err(CertError::Config("validities must not exceed 100 years".into()));
        }
        if self.rotation_dwell.is_negative() {
            return Err(CertError::Config("rotation dwell must not be negative".into()));
        }
        if self.rotation_dwell * 6 >= self.ca_validity {
            return Err(CertError::Config(format!(
                "rotation dwell {} is too long for CA validity {} (need dwell < validity / 6)",
                self.rotation_dwell, self.ca_validity
            )));
        }
        Ok(())
    }

    /// The CN of the serving certificate: the first DNS name, else the first IP address.
    pub(crate) fn common_name(&self) -> String {
        match (self.dns_names.first(), self.ip_addresses.first()) {
            (Some(n), _) => n.clone(),
            (None, Some(ip)) => ip.to_string(),
            (None, None) => String::new(),
        }
    }
}

/// A conservative DNS-name check (letters, digits, `-`, `.`, optional leading `*.`).
fn valid_dns_name(name: &str) -> bool {
    let name = name.strip_prefix("*.").unwrap_or(name);
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn for_service_has_the_four_sans() {
        let cfg = CertConfig::for_service("kruise-webhook-service", "kruise-system");
        assert_eq!(
            cfg.dns_names,
            [
                "kruise-webhook-service.kruise-system.svc",
                "kruise-webhook-service.kruise-system.svc.cluster.local",
                "localhost"
            ]
        );
        assert_eq!(cfg.ip_addresses, [IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        assert_eq!(cfg.common_name(), "kruise-webhook-service.kruise-system.svc");
        cfg.validate().unwrap();
    }

    #[test]
    fn validate_rejects_unusable_configs() {
        let good = CertConfig::for_service("s", "ns");
        let mut c = good.clone();
        c.dns_names.clear();
        c.ip_addresses.clear();
        assert!(c.validate().is_err());
        let mut c = good.clone();
        c.dns_names.push("bad name".into());
        assert!(c.validate().is_err());
        let mut c = good.clone();
        c.leaf_validity = Duration::ZERO;
        assert!(c.validate().is_err());
        let mut c = good.clone();
        c.rotation_dwell = Duration::days(3650);
        assert!(c.validate().is_err());
        let mut c = good.clone();
        c.ca_validity = Duration::MAX;
        assert!(c.validate().is_err());
        let mut c = good;
        c.dns_names.clear();
        assert!(c.validate().is_ok(), "IP-only is fine");
        assert_eq!(c.common_name(), "127.0.0.1");
    }
}
