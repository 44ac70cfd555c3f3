//! Issuing a self-signed CA and a serving certificate with rcgen (ECDSA P-256).

use rcgen::string::Ia5String;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
    KeyPair, KeyUsagePurpose, SanType, SerialNumber,
};
use ring::rand::{SecureRandom, SystemRandom};
use time::{Duration, OffsetDateTime, UtcOffset};

use crate::config::NOT_BEFORE_BACKDATE;
use crate::inspect::inspect_named;
use crate::{CertConfig, CertError, CertMaterial, PemPair};

/// Generate a fresh CA and a serving certificate signed by it, valid from `now`
/// (backdated by [`NOT_BEFORE_BACKDATE`]).
pub fn generate(cfg: &CertConfig, now: OffsetDateTime) -> Result<CertMaterial, CertError> {
    cfg.validate()?;
    let now = whole_seconds(now);
    let ca = new_ca(cfg, now)?;
    let leaf = new_leaf(cfg, &ca, now)?;
    Ok(CertMaterial {
        ca,
        next_ca: None,
        previous_ca_cert_pem: None,
        leaf,
        phase_since: now,
    })
}

/// `t` in UTC with the sub-second part dropped (X.509 times have whole seconds).
pub(crate) fn whole_seconds(t: OffsetDateTime) -> OffsetDateTime {
    let t = t.to_offset(UtcOffset::UTC);
    t - Duration::nanoseconds(i64::from(t.nanosecond()))
}

/// A new self-signed CA: basicConstraints CA:true pathlen 0 (critical), keyCertSign + cRLSign +
/// digitalSignature, valid `now - backdate .. now + ca_validity`.
pub(crate) fn new_ca(cfg: &CertConfig, now: OffsetDateTime) -> Result<PemPair, CertError> {
    let key = KeyPair::generate()?;
    let serial = random_serial()?;
    let mut p = CertificateParams::default();
    p.not_before = now - NOT_BEFORE_BACKDATE;
    p.not_after = now + cfg.ca_validity;
    let tag: String = serial
        .to_bytes()
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect();
    p.distinguished_name = dn(&format!("kruise-webhook-ca@{}-{tag}", now.unix_timestamp()));
    p.serial_number = Some(serial);
    p.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    p.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let cert = p.self_signed(&key)?;
    Ok(PemPair {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// A new serving certificate signed by `ca`: the configured DNS and IP SANs, CN = first DNS
/// name, EKU serverAuth, keyUsage digitalSignature (keyEncipherment is not meaningful for ECDSA
/// keys, RFC 5480 §3). `notAfter` is clamped to the CA's `notAfter`.
pub(crate) fn new_leaf(cfg: &CertConfig, ca: &PemPair, now: OffsetDateTime) -> Result<PemPair, CertError> {
    let ca_info = inspect_named("CA certificate", &ca.cert_pem)?;
    let not_before = (now - NOT_BEFORE_BACKDATE).max(ca_info.not_before);
    let not_after = (now + cfg.leaf_validity).min(ca_info.not_after);
    if not_after <= now {
        return Err(CertError::invalid(
            "CA certificate",
            format!(
                "expired at {}; cannot issue a serving certificate",
                ca_info.not_after
            ),
        ));
    }
    let ca_key = KeyPair::from_pem(&ca.key_pem).map_err(|e| CertError::bad_key("CA key", e))?;
    let issuer = Issuer::from_ca_cert_pem(&ca.cert_pem, ca_key)?;

    let mut p = CertificateParams::default();
    p.not_before = not_before;
    p.not_after = not_after;
    p.serial_number = Some(random_serial()?);
    p.distinguished_name = dn(&cfg.common_name());
    for name in &cfg.dns_names {
        let name = Ia5String::try_from(name.as_str())
            .map_err(|e| CertError::Config(format!("DNS name {name:?}: {e}")))?;
        p.subject_alt_names.push(SanType::DnsName(name));
    }
    p.subject_alt_names
        .extend(cfg.ip_addresses.iter().map(|ip| SanType::IpAddress(*ip)));
    p.is_ca = IsCa::NoCa;
    p.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    p.use_authority_key_identifier_extension = true;
    let key = KeyPair::generate()?;
    let cert = p.signed_by(&key, &issuer)?;
    Ok(PemPair {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

fn dn(common_name: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::OrganizationName, "kruise-rs");
    dn.push(DnType::CommonName, common_name);
    dn
}

/// 128-bit random serial (126 random bits), positive, with no leading zero byte.
fn random_serial() -> Result<SerialNumber, CertError> {
    let mut bytes = [0u8; 16];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| CertError::Generate("system random number generator failed".into()))?;
    bytes[0] = (bytes[0] & 0x7f) | 0x40; // positive, and exactly 16 bytes in DER
    Ok(SerialNumber::from_slice(&bytes))
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr};

    use ::time::macros::datetime;
    use x509_parser::parse_x509_certificate;

    use super::*;
    use crate::pem::first_cert_der;
    use crate::{DEFAULT_CA_VALIDITY, DEFAULT_LEAF_VALIDITY};

    const NOW: OffsetDateTime = datetime!(2026-01-01 00:00:00 UTC);

    fn cfg() -> CertConfig {
        CertConfig::for_service("kruise-webhook-service", "kruise-system")
    }

    #[test]
    fn ca_is_a_critical_ca_with_cert_sign() {
        let m = generate(&cfg(), NOW).unwrap();
        let der = first_cert_der("ca", &m.ca.cert_pem).unwrap();
        let (_, ca) = parse_x509_certificate(&der).unwrap();
        let bc = ca.basic_constraints().unwrap().unwrap();
        assert!(bc.critical && bc.value.ca);
        let ku = ca.key_usage().unwrap().unwrap().value;
        assert!(ku.key_cert_sign() && ku.crl_sign() && ku.digital_signature());
        assert_eq!(ca.validity().not_before.to_datetime(), NOW - NOT_BEFORE_BACKDATE);
        assert_eq!(ca.validity().not_after.to_datetime(), NOW + DEFAULT_CA_VALIDITY);
        assert_eq!(
            ca.public_key().algorithm.algorithm,
            x509_parser::oid_registry::OID_KEY_TYPE_EC_PUBLIC_KEY
        );
        assert!(ca.verify_signature(None).is_ok(), "self-signed");
        assert!(m.ca.key_pem.contains("BEGIN PRIVATE KEY"));
    }

    #[test]
    fn leaf_has_sans_eku_and_bounded_validity() {
        let m = generate(&cfg(), NOW).unwrap();
        let info = crate::inspect(&m.leaf.cert_pem).unwrap();
        assert_eq!(info.dns_names, cfg().dns_names);
        assert_eq!(info.ip_addresses, [IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        assert!(info.server_auth && !info.is_ca && !info.key_cert_sign);
        assert!(
            info.subject
                .contains("CN=kruise-webhook-service.kruise-system.svc"),
            "{}",
            info.subject
        );
        assert_eq!(info.not_before, NOW - NOT_BEFORE_BACKDATE);
        assert_eq!(info.not_after, NOW + DEFAULT_LEAF_VALIDITY);
        assert!(info.not_after <= m.ca_not_after().unwrap());
        let der = first_cert_der("leaf", &m.leaf.cert_pem).unwrap();
        let (_, leaf) = parse_x509_certificate(&der).unwrap();
        let ku = leaf.key_usage().unwrap().unwrap().value;
        assert!(ku.digital_signature() && !ku.key_cert_sign());
        assert!(leaf.basic_constraints().unwrap().is_none_or(|bc| !bc.value.ca));
        assert!(crate::inspect::signed_by(&m.leaf.cert_pem, &m.ca.cert_pem).unwrap());
        crate::check_pair(&m.leaf.cert_pem, &m.leaf.key_pem).unwrap();
    }

    #[test]
    fn leaf_is_clamped_to_its_ca() {
        let mut c = cfg();
        c.ca_validity = Duration::days(30);
        c.leaf_validity = Duration::days(365);
        let m = generate(&c, NOW).unwrap();
        assert_eq!(m.leaf_not_after().unwrap(), m.ca_not_after().unwrap());
        // Issuing late in the CA's life clamps too, and an expired CA refuses to issue.
        let late = new_leaf(&c, &m.ca, NOW + Duration::days(29)).unwrap();
        assert_eq!(
            crate::inspect(&late.cert_pem).unwrap().not_after,
            NOW + Duration::days(30)
        );
        assert!(new_leaf(&c, &m.ca, NOW + Duration::days(31)).is_err());
    }

    #[test]
    fn serials_are_random_and_positive() {
        let a = generate(&cfg(), NOW).unwrap();
        let b = generate(&cfg(), NOW).unwrap();
        let sa = crate::inspect(&a.leaf.cert_pem).unwrap().serial_hex;
        let sb = crate::inspect(&b.leaf.cert_pem).unwrap().serial_hex;
        assert_ne!(sa, sb);
        assert_eq!(sa.split(':').count(), 16);
        assert_ne!(
            crate::inspect(&a.ca.cert_pem).unwrap().subject,
            crate::inspect(&b.ca.cert_pem).unwrap().subject
        );
    }

    #[test]
    fn sub_second_now_is_truncated() {
        let m = generate(&cfg(), NOW + Duration::milliseconds(750)).unwrap();
        assert_eq!(m.phase_since, NOW);
    }
}
