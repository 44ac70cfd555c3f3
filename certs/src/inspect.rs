//! Read the facts of a certificate that matter to rotation and to operators.

use std::net::IpAddr;

use time::OffsetDateTime;
use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::GeneralName;

use crate::CertError;
use crate::pem::{cert_ders, parse_cert};

/// What a certificate says, in plain types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertInfo {
    /// Start of validity.
    pub not_before: OffsetDateTime,
    /// End of validity.
    pub not_after: OffsetDateTime,
    /// DNS subject alternative names, in certificate order.
    pub dns_names: Vec<String>,
    /// IP subject alternative names, in certificate order.
    pub ip_addresses: Vec<IpAddr>,
    /// basicConstraints CA:true.
    pub is_ca: bool,
    /// keyUsage keyCertSign.
    pub key_cert_sign: bool,
    /// extendedKeyUsage serverAuth.
    pub server_auth: bool,
    /// Serial number, lowercase hex with `:` separators.
    pub serial_hex: String,
    /// Issuer DN (RFC 4514-ish string).
    pub issuer: String,
    /// Subject DN.
    pub subject: String,
}

impl CertInfo {
    /// `notAfter - notBefore`.
    pub fn lifetime(&self) -> time::Duration {
        self.not_after - self.not_before
    }

    /// `Ok` when `now` is within the validity period, else [`CertError::NotValidNow`].
    pub fn check_valid_at(&self, what: &str, now: OffsetDateTime) -> Result<(), CertError> {
        if now < self.not_before || now > self.not_after {
            return Err(CertError::NotValidNow {
                what: what.to_string(),
                now,
                not_before: self.not_before,
                not_after: self.not_after,
            });
        }
        Ok(())
    }

    /// True when less than a third of the lifetime remains at `now` (or it has expired).
    pub fn in_last_third(&self, now: OffsetDateTime) -> bool {
        (self.not_after - now) * 3 < self.lifetime()
    }
}

/// Inspect the first certificate of a PEM text.
pub fn inspect(cert_pem: &str) -> Result<CertInfo, CertError> {
    inspect_named("certificate", cert_pem)
}

/// Inspect every certificate of a PEM text (for example a caBundle).
pub fn inspect_all(pem: &str) -> Result<Vec<CertInfo>, CertError> {
    cert_ders("certificate bundle", pem)?
        .iter()
        .map(|der| info_of(&parse_cert("certificate bundle", der)?, "certificate bundle"))
        .collect()
}

pub(crate) fn inspect_named(what: &str, cert_pem: &str) -> Result<CertInfo, CertError> {
    let der = crate::pem::first_cert_der(what, cert_pem)?;
    info_of(&parse_cert(what, &der)?, what)
}

fn info_of(cert: &X509Certificate<'_>, what: &str) -> Result<CertInfo, CertError> {
    let mut dns_names = Vec::new();
    let mut ip_addresses = Vec::new();
    let san = cert
        .subject_alternative_name()
        .map_err(|e| CertError::bad_cert(what, e))?;
    for name in san.iter().flat_map(|s| s.value.general_names.iter()) {
        match name {
            GeneralName::DNSName(n) => dns_names.push((*n).to_string()),
            GeneralName::IPAddress(b) => match *b {
                [a, b, c, d] => ip_addresses.push(IpAddr::from([*a, *b, *c, *d])),
                bytes if bytes.len() == 16 => {
                    let mut a = [0u8; 16];
                    a.copy_from_slice(bytes);
                    ip_addresses.push(IpAddr::from(a));
                }
                _ => return Err(CertError::bad_cert(what, "IP SAN of invalid length")),
            },
            _ => {}
        }
    }
    let key_cert_sign = cert
        .key_usage()
        .map_err(|e| CertError::bad_cert(what, e))?
        .is_some_and(|ku| ku.value.key_cert_sign());
    let server_auth = cert
        .extended_key_usage()
        .map_err(|e| CertError::bad_cert(what, e))?
        .is_some_and(|eku| eku.value.server_auth);
    let is_ca = cert
        .basic_constraints()
        .map_err(|e| CertError::bad_cert(what, e))?
        .is_some_and(|bc| bc.value.ca);
    let serial_hex = cert
        .raw_serial()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":");
    Ok(CertInfo {
        not_before: cert.validity().not_before.to_datetime(),
        not_after: cert.validity().not_after.to_datetime(),
        dns_names,
        ip_addresses,
        is_ca,
        key_cert_sign,
        server_auth,
        serial_hex,
        issuer: cert.issuer().to_string(),
        subject: cert.subject().to_string(),
    })
}

/// Does a client trusting `bundle_pem` accept `cert_pem`'s signature? True when some
/// certificate in the bundle is its issuer (name and signature; validity is not checked). Use it
/// to confirm that every published caBundle already trusts a leaf before serving that leaf.
pub fn bundle_trusts(bundle_pem: &str, cert_pem: &str) -> bool {
    crate::pem::split_blocks(bundle_pem)
        .iter()
        .any(|issuer| signed_by(cert_pem, issuer).unwrap_or(false))
}

/// Is the first certificate of `cert_pem` signed by the first certificate of `issuer_pem`?
pub(crate) fn signed_by(cert_pem: &str, issuer_pem: &str) -> Result<bool, CertError> {
    let der = crate::pem::first_cert_der("certificate", cert_pem)?;
    let cert = parse_cert("certificate", &der)?;
    let issuer_der = crate::pem::first_cert_der("issuer certificate", issuer_pem)?;
    let issuer = parse_cert("issuer certificate", &issuer_der)?;
    Ok(cert.issuer() == issuer.subject() && cert.verify_signature(Some(issuer.public_key())).is_ok())
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;
    use crate::{CertConfig, generate};

    #[test]
    fn validity_is_checked_at_both_ends() {
        let issued = datetime!(2026-01-01 00:00:00 UTC);
        let leaf = generate(&CertConfig::for_service("s", "ns"), issued)
            .unwrap()
            .leaf;
        let info = inspect(&leaf.cert_pem).unwrap();
        assert!(info.check_valid_at("serving certificate", issued).is_ok());
        for outside in [
            info.not_before - time::Duration::SECOND,
            info.not_after + time::Duration::SECOND,
        ] {
            let err = info.check_valid_at("serving certificate", outside).unwrap_err();
            assert!(matches!(err, CertError::NotValidNow { .. }), "{err}");
            assert!(
                err.to_string()
                    .starts_with("serving certificate is not valid at "),
                "{err}"
            );
        }
    }

    #[test]
    fn inspect_all_reads_a_bundle_and_errors_on_garbage() {
        let now = datetime!(2026-01-01 00:00:00 UTC);
        let a = generate(&CertConfig::for_service("s", "ns"), now).unwrap();
        let b = generate(&CertConfig::for_service("s", "ns"), now).unwrap();
        let bundle = crate::pem::concat([a.ca.cert_pem.as_str(), b.ca.cert_pem.as_str()]);
        let infos = inspect_all(&bundle).unwrap();
        assert_eq!(infos.len(), 2);
        assert!(
            infos
                .iter()
                .all(|i| i.is_ca && i.key_cert_sign && i.issuer == i.subject)
        );
        assert!(infos[0].lifetime() > time::Duration::days(3649));
        assert!(!infos[0].in_last_third(now));
        assert!(infos[0].in_last_third(now + time::Duration::days(2500)));
        for bad in [
            "",
            "garbage",
            &a.ca.cert_pem[..a.ca.cert_pem.len() / 2],
            &a.ca.key_pem,
        ] {
            assert!(inspect(bad).is_err(), "{bad:?}");
        }
        assert!(signed_by(&a.leaf.cert_pem, &a.ca.cert_pem).unwrap());
        assert!(!signed_by(&a.leaf.cert_pem, &b.ca.cert_pem).unwrap());
        assert!(bundle_trusts(&bundle, &a.leaf.cert_pem) && bundle_trusts(&bundle, &b.leaf.cert_pem));
        assert!(!bundle_trusts(&b.ca.cert_pem, &a.leaf.cert_pem));
        assert!(!bundle_trusts("garbage", &a.leaf.cert_pem) && !bundle_trusts(&bundle, "garbage"));
    }
}
