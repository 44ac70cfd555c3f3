//! The persisted state: active CA, optional next/previous CA, serving pair, phase timestamp.

use std::collections::BTreeMap;
use std::fmt;

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::CertError;
use crate::keys::check_pair_named;
use crate::pem::{canonical_cert, canonical_key, concat, first_cert_der, parse_cert};

/// Data key: every CA a client must trust now (the caBundle), PEM concatenated.
pub const CA_BUNDLE: &str = "ca.crt";
/// Data key: private key of the active CA.
pub const CA_KEY: &str = "ca.key";
/// Data key: certificate of the active CA (the issuer of `tls.crt`).
pub const ACTIVE_CA_CERT: &str = "active-ca.crt";
/// Data key: certificate of the CA that will become active (rotation phase 1).
pub const NEXT_CA_CERT: &str = "next-ca.crt";
/// Data key: private key of the next CA.
pub const NEXT_CA_KEY: &str = "next-ca.key";
/// Data key: certificate of the CA that was active before (rotation phase 2).
pub const PREVIOUS_CA_CERT: &str = "previous-ca.crt";
/// Data key: serving certificate.
pub const TLS_CERT: &str = "tls.crt";
/// Data key: serving private key.
pub const TLS_KEY: &str = "tls.key";
/// Data key: when the current rotation phase began (RFC 3339).
pub const PHASE_SINCE: &str = "phase-since";
/// Every data key this crate reads or writes.
pub const KNOWN_KEYS: [&str; 9] = [
    CA_BUNDLE,
    CA_KEY,
    ACTIVE_CA_CERT,
    NEXT_CA_CERT,
    NEXT_CA_KEY,
    PREVIOUS_CA_CERT,
    TLS_CERT,
    TLS_KEY,
    PHASE_SINCE,
];
/// The keys a serving replica needs (see [`CertMaterial::to_serving_data`]).
pub const SERVING_KEYS: [&str; 3] = [CA_BUNDLE, TLS_CERT, TLS_KEY];

/// A PEM certificate and its PEM (PKCS#8) private key. `Debug` hides the key.
#[derive(Clone, PartialEq, Eq)]
pub struct PemPair {
    /// `-----BEGIN CERTIFICATE-----` ...
    pub cert_pem: String,
    /// `-----BEGIN PRIVATE KEY-----` ...
    pub key_pem: String,
}

impl fmt::Debug for PemPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PemPair")
            .field("cert_pem", &self.cert_pem)
            .field("key_pem", &"[redacted]")
            .finish()
    }
}

/// Everything persisted in the cert Secret (or a directory).
///
/// Invariant kept by [`crate::generate`] and [`crate::plan`]: `leaf` is signed by `ca`, and at
/// most one of `next_ca` (phase 1) and `previous_ca_cert_pem` (phase 2) is set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertMaterial {
    /// The CA that signs the serving certificate.
    pub ca: PemPair,
    /// Phase 1 of CA rotation: the successor CA, already trusted, not yet signing.
    pub next_ca: Option<PemPair>,
    /// Phase 2 of CA rotation: the former CA, still trusted while replicas switch leaves.
    pub previous_ca_cert_pem: Option<String>,
    /// The serving certificate and key.
    pub leaf: PemPair,
    /// When the current rotation phase began (generation time in steady state).
    pub phase_since: OffsetDateTime,
}

impl CertMaterial {
    /// Every CA a client must trust now (previous + active + next), PEM concatenated.
    pub fn ca_bundle_pem(&self) -> String {
        concat(
            self.previous_ca_cert_pem
                .as_deref()
                .into_iter()
                .chain([self.ca.cert_pem.as_str()])
                .chain(self.next_ca.as_ref().map(|n| n.cert_pem.as_str())),
        )
    }

    /// All data keys (see [`KNOWN_KEYS`]); `ca.crt` is the bundle.
    pub fn to_data(&self) -> BTreeMap<String, Vec<u8>> {
        let mut d = BTreeMap::new();
        let mut put = |k: &str, v: &str| {
            d.insert(k.to_string(), v.as_bytes().to_vec());
        };
        put(CA_BUNDLE, &self.ca_bundle_pem());
        put(CA_KEY, &self.ca.key_pem);
        put(ACTIVE_CA_CERT, &self.ca.cert_pem);
        if let Some(next) = &self.next_ca {
            put(NEXT_CA_CERT, &next.cert_pem);
            put(NEXT_CA_KEY, &next.key_pem);
        }
        if let Some(prev) = &self.previous_ca_cert_pem {
            put(PREVIOUS_CA_CERT, prev);
        }
        put(TLS_CERT, &self.leaf.cert_pem);
        put(TLS_KEY, &self.leaf.key_pem);
        put(PHASE_SINCE, &format_time(self.phase_since));
        d
    }

    /// Only what a serving replica needs: `ca.crt` (bundle), `tls.crt`, `tls.key` — no CA key.
    pub fn to_serving_data(&self) -> BTreeMap<String, Vec<u8>> {
        let mut d = self.to_data();
        d.retain(|k, _| SERVING_KEYS.contains(&k.as_str()));
        d
    }

    /// Parse and validate stored data: every certificate parses, every key matches its
    /// certificate, CAs are self-signed CAs. PEM text is re-encoded canonically (so sloppy text
    /// makes [`crate::plan`] rewrite it). Does not judge expiry or issuer (that is [`crate::plan`]'s job).
    /// `ca.crt` is ignored: it is derived.
    pub fn from_data(data: &BTreeMap<String, Vec<u8>>) -> Result<Self, CertError> {
        let ca = pair(data, ACTIVE_CA_CERT, CA_KEY)?;
        require_ca(ACTIVE_CA_CERT, &ca.cert_pem)?;
        let next_ca = match (data.contains_key(NEXT_CA_CERT), data.contains_key(NEXT_CA_KEY)) {
            (false, false) => None,
            _ => {
                let next = pair(data, NEXT_CA_CERT, NEXT_CA_KEY)?;
                require_ca(NEXT_CA_CERT, &next.cert_pem)?;
                Some(next)
            }
        };
        let previous_ca_cert_pem = match data.contains_key(PREVIOUS_CA_CERT) {
            false => None,
            true => {
                let prev = text(data, PREVIOUS_CA_CERT)?;
                require_ca(PREVIOUS_CA_CERT, &prev)?;
                Some(canonical_cert(PREVIOUS_CA_CERT, &prev)?)
            }
        };
        if next_ca.is_some() && previous_ca_cert_pem.is_some() {
            return Err(CertError::invalid(
                NEXT_CA_CERT,
                "both a next and a previous CA are stored (at most one rotation phase at a time)",
            ));
        }
        let leaf = pair(data, TLS_CERT, TLS_KEY)?;
        let phase = text(data, PHASE_SINCE)?;
        let phase_since = OffsetDateTime::parse(phase.trim(), &Rfc3339)
            .map_err(|e| CertError::invalid(PHASE_SINCE, format!("not an RFC 3339 time: {e}")))?;
        Ok(CertMaterial {
            ca,
            next_ca,
            previous_ca_cert_pem,
            leaf,
            phase_since,
        })
    }

    /// `notAfter` of the serving certificate.
    pub fn leaf_not_after(&self) -> Result<OffsetDateTime, CertError> {
        Ok(crate::inspect::inspect_named(TLS_CERT, &self.leaf.cert_pem)?.not_after)
    }

    /// `notAfter` of the active CA.
    pub fn ca_not_after(&self) -> Result<OffsetDateTime, CertError> {
        Ok(crate::inspect::inspect_named(ACTIVE_CA_CERT, &self.ca.cert_pem)?.not_after)
    }
}

/// RFC 3339 in UTC, whole seconds.
pub(crate) fn format_time(t: OffsetDateTime) -> String {
    let t = crate::generate::whole_seconds(t);
    t.format(&Rfc3339)
        .unwrap_or_else(|_| t.unix_timestamp().to_string())
}

pub(crate) fn text(data: &BTreeMap<String, Vec<u8>>, key: &str) -> Result<String, CertError> {
    let bytes = data
        .get(key)
        .ok_or_else(|| CertError::Missing(format!("data key {key:?}")))?;
    String::from_utf8(bytes.clone()).map_err(|_| CertError::invalid(key, "not UTF-8"))
}

pub(crate) fn pair(
    data: &BTreeMap<String, Vec<u8>>,
    cert_key: &str,
    key_key: &str,
) -> Result<PemPair, CertError> {
    let cert_pem = text(data, cert_key)?;
    let key_pem = text(data, key_key)?;
    check_pair_named(cert_key, &cert_pem, key_key, &key_pem)?;
    Ok(PemPair {
        cert_pem: canonical_cert(cert_key, &cert_pem)?,
        key_pem: canonical_key(key_key, &key_pem)?,
    })
}

/// The first certificate in `pem` must be a validly self-signed CA allowed to sign certificates.
pub(crate) fn require_ca(what: &str, pem: &str) -> Result<(), CertError> {
    let der = first_cert_der(what, pem)?;
    let cert = parse_cert(what, &der)?;
    if cert.verify_signature(None).is_err() {
        return Err(CertError::bad_cert(
            what,
            "CA certificate is not validly self-signed",
        ));
    }
    if !cert.is_ca() {
        return Err(CertError::bad_cert(
            what,
            "not a CA (basicConstraints CA:true missing)",
        ));
    }
    if let Ok(Some(ku)) = cert.key_usage()
        && !ku.value.key_cert_sign()
    {
        return Err(CertError::bad_cert(what, "CA key usage lacks keyCertSign"));
    }
    Ok(())
}
