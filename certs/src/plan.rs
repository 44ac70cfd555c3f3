//! Deciding what to do with the stored material: keep it, renew the leaf, or take one step of
//! the overlapping CA rotation.

use std::collections::BTreeMap;
use std::fmt;

use time::OffsetDateTime;

use crate::generate::{new_ca, new_leaf, whole_seconds};
use crate::inspect::{CertInfo, inspect_named, signed_by};
use crate::keys::check_pair;
use crate::material::{
    ACTIVE_CA_CERT, CA_BUNDLE, CA_KEY, KNOWN_KEYS, NEXT_CA_CERT, NEXT_CA_KEY, PREVIOUS_CA_CERT, TLS_CERT,
    TLS_KEY, pair, require_ca, text,
};
use crate::pem::{canonical_cert, canonical_key, split_blocks};
use crate::{CertConfig, CertError, CertMaterial, PemPair, generate};

/// Why [`plan`] wants to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RotationReason {
    /// Nothing stored (absent or empty): everything generated.
    Missing,
    /// Stored data unreadable or inconsistent. A still-valid active CA is kept when it can be
    /// recovered (so the caBundle does not change); otherwise everything is regenerated.
    Corrupt(String),
    /// The active CA expired with no usable successor: everything regenerated.
    CaExpired,
    /// The serving certificate's SANs differ from the configuration: new leaf, same CA.
    SansChanged,
    /// Less than a third of the leaf's lifetime remains: new leaf, same CA.
    LeafExpiring,
    /// The leaf is not usable with the active CA (wrong issuer, outlives the CA, not valid yet,
    /// no serverAuth): new leaf, same CA.
    LeafInvalid(String),
    /// Rotation phase 1: less than a third of the CA's lifetime remains; a successor CA is
    /// added to the bundle. The leaf is still signed by the old CA.
    CaExpiring,
    /// Rotation phase 2: the successor has been in the bundle for the dwell time; it becomes
    /// active and signs a new leaf. The old CA stays in the bundle.
    SwitchLeafToNewCa,
    /// Rotation phase 3: the new leaf has been out for the dwell time; the old CA leaves the bundle.
    DropOldCa,
}

impl fmt::Display for RotationReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing => f.write_str("no certificates stored"),
            Self::Corrupt(e) => write!(f, "stored certificates unusable: {e}"),
            Self::CaExpired => f.write_str("CA expired"),
            Self::SansChanged => f.write_str("serving certificate SANs changed"),
            Self::LeafExpiring => f.write_str("serving certificate in the last third of its lifetime"),
            Self::LeafInvalid(e) => write!(f, "serving certificate unusable: {e}"),
            Self::CaExpiring => f.write_str("CA rotation phase 1: publishing the next CA"),
            Self::SwitchLeafToNewCa => {
                f.write_str("CA rotation phase 2: serving certificate signed by the new CA")
            }
            Self::DropOldCa => f.write_str("CA rotation phase 3: dropping the old CA"),
        }
    }
}

/// The outcome of [`plan`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)] // produced once per resync; boxing would only hurt ergonomics
pub enum Plan {
    /// The stored material is fine; write nothing.
    Keep,
    /// Store `material` (`material.to_data()`), then publish `material.ca_bundle_pem()`.
    Write {
        /// The complete new state.
        material: CertMaterial,
        /// The first reason found; several fixes may be folded into one write when safe.
        reason: RotationReason,
    },
}

/// Decide what to do with what is stored now (`stored` = raw Secret data, `None` = absent).
/// Pure apart from key-generation randomness; `now` is the only clock.
///
/// Rules:
/// * absent / empty → generate (`Missing`); unreadable → `Corrupt`, keeping a valid active CA
///   when one can be recovered;
/// * CA rotation moves **one phase per call**: 1) add a successor CA to the bundle when less
///   than a third of the active CA's life remains; 2) after `rotation_dwell`, make it active and
///   issue a leaf under it, keeping the old CA in the bundle; 3) after another dwell, drop the
///   old CA. A leaf is therefore only ever signed by a CA that was already in the previously
///   stored bundle;
/// * the leaf is renewed under the active CA when its SANs differ, less than a third of its
///   life remains, or it does not chain to / fit in the active CA; it never outlives its CA.
///
/// The caller writes the result, publishes `ca_bundle_pem()` to every webhook configuration,
/// and calls `plan` again later (each resync). A dwell only counts if publication succeeded:
/// before writing a [`RotationReason::SwitchLeafToNewCa`] result, the caller can confirm with
/// [`crate::bundle_trusts`] that the published caBundle already trusts the new leaf.
pub fn plan(
    stored: Option<&BTreeMap<String, Vec<u8>>>,
    cfg: &CertConfig,
    now: OffsetDateTime,
) -> Result<Plan, CertError> {
    cfg.validate()?;
    let now = whole_seconds(now);
    let Some(data) = stored.filter(|d| !d.is_empty()) else {
        return fresh(cfg, now, RotationReason::Missing);
    };
    let (mut m, mut reason) = match CertMaterial::from_data(data) {
        Ok(m) => (m, None),
        Err(e) => match salvage(data, now) {
            Some(m) => (m, Some(RotationReason::Corrupt(e.to_string()))),
            None => return fresh(cfg, now, RotationReason::Corrupt(e.to_string())),
        },
    };
    // Generation failures propagate (retrying later is better than replacing a good CA).
    match advance_ca(&mut m, cfg, now)? {
        CaStep::None => {}
        CaStep::Did(r) => {
            reason.get_or_insert(r);
        }
        CaStep::Regenerate(r) => return fresh(cfg, now, r),
    }
    if let Some(r) = leaf_problem(&m, cfg, now) {
        m.leaf = new_leaf(cfg, &m.ca, now)?;
        reason.get_or_insert(r);
    }
    if reason.is_none()
        && let Some(key) = non_canonical_key(&m, data)
    {
        reason = Some(RotationReason::Corrupt(format!(
            "data key {key:?} is not what the material implies"
        )));
    }
    Ok(match reason {
        None => Plan::Keep,
        Some(reason) => Plan::Write { material: m, reason },
    })
}

fn fresh(cfg: &CertConfig, now: OffsetDateTime, reason: RotationReason) -> Result<Plan, CertError> {
    Ok(Plan::Write {
        material: generate(cfg, now)?,
        reason,
    })
}

enum CaStep {
    None,
    Did(RotationReason),
    Regenerate(RotationReason),
}

/// At most one CA-rotation phase transition.
fn advance_ca(m: &mut CertMaterial, cfg: &CertConfig, now: OffsetDateTime) -> Result<CaStep, CertError> {
    let ca = match inspect_named(ACTIVE_CA_CERT, &m.ca.cert_pem) {
        Ok(ca) => ca,
        Err(e) => return Ok(CaStep::Regenerate(RotationReason::Corrupt(e.to_string()))),
    };
    // Checked: a stored timestamp near year 9999 must not overflow.
    let dwell_over = m
        .phase_since
        .checked_add(cfg.rotation_dwell)
        .is_some_and(|t| now >= t);
    let phase_in_future = now
        .checked_add(cfg.rotation_dwell)
        .is_some_and(|t| m.phase_since > t);
    if now >= ca.not_after {
        // Clients can no longer use the active CA; switching now is no worse than waiting.
        let next = m.next_ca.take();
        return match next.filter(|n| valid_at(&n.cert_pem, now)) {
            Some(next) => {
                promote(m, next, cfg, now, false)?;
                Ok(CaStep::Did(RotationReason::SwitchLeafToNewCa))
            }
            None => Ok(CaStep::Regenerate(RotationReason::CaExpired)),
        };
    }
    if let Some(prev) = &m.previous_ca_cert_pem {
        if dwell_over || !valid_at(prev, now) {
            m.previous_ca_cert_pem = None;
            m.phase_since = now;
            return Ok(CaStep::Did(RotationReason::DropOldCa));
        }
    } else if let Some(next) = m.next_ca.take() {
        let usable = inspect_named(NEXT_CA_CERT, &next.cert_pem)
            .is_ok_and(|i| i.not_before <= now && !i.in_last_third(now));
        if !usable {
            m.next_ca = Some(new_ca(cfg, now)?);
            m.phase_since = now;
            return Ok(CaStep::Did(RotationReason::CaExpiring));
        }
        if dwell_over {
            promote(m, next, cfg, now, true)?;
            return Ok(CaStep::Did(RotationReason::SwitchLeafToNewCa));
        }
        m.next_ca = Some(next);
    } else {
        if ca.in_last_third(now) {
            m.next_ca = Some(new_ca(cfg, now)?);
            m.phase_since = now;
            return Ok(CaStep::Did(RotationReason::CaExpiring));
        }
        return Ok(CaStep::None);
    }
    if phase_in_future {
        // A bogus or far-future timestamp must not freeze rotation: restart the dwell.
        m.phase_since = now;
        return Ok(CaStep::Did(RotationReason::Corrupt(
            "phase-since lies in the future".into(),
        )));
    }
    Ok(CaStep::None)
}

/// Phase 2: `next` becomes active and signs a new leaf; the old CA is kept as previous.
fn promote(
    m: &mut CertMaterial,
    next: PemPair,
    cfg: &CertConfig,
    now: OffsetDateTime,
    keep_old: bool,
) -> Result<(), CertError> {
    let old = std::mem::replace(&mut m.ca, next);
    m.previous_ca_cert_pem = keep_old.then_some(old.cert_pem);
    m.next_ca = None;
    m.leaf = new_leaf(cfg, &m.ca, now)?;
    m.phase_since = now;
    Ok(())
}

fn valid_at(cert_pem: &str, now: OffsetDateTime) -> bool {
    inspect_named("certificate", cert_pem).is_ok_and(|i| i.not_before <= now && now < i.not_after)
}

/// Why the stored leaf must be replaced, if it must.
fn leaf_problem(m: &CertMaterial, cfg: &CertConfig, now: OffsetDateTime) -> Option<RotationReason> {
    let leaf = match inspect_named(TLS_CERT, &m.leaf.cert_pem) {
        Ok(i) => i,
        Err(e) => return Some(RotationReason::Corrupt(e.to_string())),
    };
    if let Err(e) = check_pair(&m.leaf.cert_pem, &m.leaf.key_pem) {
        return Some(RotationReason::Corrupt(e.to_string()));
    }
    let ca = match inspect_named(ACTIVE_CA_CERT, &m.ca.cert_pem) {
        Ok(i) => i,
        Err(e) => return Some(RotationReason::Corrupt(e.to_string())),
    };
    let invalid = |s: &str| Some(RotationReason::LeafInvalid(s.to_string()));
    if !signed_by(&m.leaf.cert_pem, &m.ca.cert_pem).unwrap_or(false) {
        return invalid("not signed by the active CA");
    }
    if leaf.not_after > ca.not_after {
        return invalid("outlives its CA");
    }
    if leaf.not_before > now {
        return invalid("not valid yet");
    }
    if leaf.is_ca || !leaf.server_auth {
        return invalid("not a serverAuth end-entity certificate");
    }
    if !same_sans(&leaf, cfg) {
        return Some(RotationReason::SansChanged);
    }
    if leaf.in_last_third(now) {
        return Some(RotationReason::LeafExpiring);
    }
    None
}

fn same_sans(leaf: &CertInfo, cfg: &CertConfig) -> bool {
    let mut have = leaf
        .dns_names
        .iter()
        .map(|n| n.to_ascii_lowercase())
        .collect::<Vec<_>>();
    let mut want = cfg
        .dns_names
        .iter()
        .map(|n| n.to_ascii_lowercase())
        .collect::<Vec<_>>();
    have.sort();
    have.dedup();
    want.sort();
    want.dedup();
    let mut have_ip = leaf.ip_addresses.clone();
    let mut want_ip = cfg.ip_addresses.clone();
    have_ip.sort();
    have_ip.dedup();
    want_ip.sort();
    want_ip.dedup();
    have == want && have_ip == want_ip
}

/// The first known key whose stored value differs from what `m` would write (e.g. an edited
/// `ca.crt` bundle, or a leftover `next-ca.key`).
fn non_canonical_key(m: &CertMaterial, stored: &BTreeMap<String, Vec<u8>>) -> Option<&'static str> {
    let want = m.to_data();
    KNOWN_KEYS.into_iter().find(|k| stored.get(*k) != want.get(*k))
}

/// Recover what can be recovered from unreadable data: a valid active CA (from `active-ca.crt`,
/// else the cert in `ca.crt` matching `ca.key`), a valid next or previous CA, and the leaf pair
/// if it parses. The phase timestamp restarts at `now`, so any dwell starts over (safe).
fn salvage(data: &BTreeMap<String, Vec<u8>>, now: OffsetDateTime) -> Option<CertMaterial> {
    let key = text(data, CA_KEY).ok()?;
    let mut candidates: Vec<String> = text(data, ACTIVE_CA_CERT).ok().into_iter().collect();
    if let Ok(bundle) = text(data, CA_BUNDLE) {
        candidates.extend(split_blocks(&bundle));
    }
    let usable_ca = |pem: &str| require_ca("CA", pem).is_ok() && valid_at(pem, now);
    let cert_pem = candidates
        .into_iter()
        .find(|c| usable_ca(c) && check_pair(c, &key).is_ok())?;
    let ca = PemPair {
        cert_pem: canonical_cert(ACTIVE_CA_CERT, &cert_pem).ok()?,
        key_pem: canonical_key(CA_KEY, &key).ok()?,
    };
    let mut next_ca = pair(data, NEXT_CA_CERT, NEXT_CA_KEY)
        .ok()
        .filter(|n| usable_ca(&n.cert_pem));
    let previous_ca_cert_pem = text(data, PREVIOUS_CA_CERT)
        .ok()
        .filter(|p| usable_ca(p))
        .and_then(|p| canonical_cert(PREVIOUS_CA_CERT, &p).ok())
        .filter(|p| *p != ca.cert_pem);
    if previous_ca_cert_pem.is_some() {
        next_ca = None;
    }
    let leaf = pair(data, TLS_CERT, TLS_KEY).unwrap_or_else(|_| PemPair {
        cert_pem: String::new(),
        key_pem: String::new(),
    });
    Some(CertMaterial {
        ca,
        next_ca,
        previous_ca_cert_pem,
        leaf,
        phase_since: now,
    })
}
