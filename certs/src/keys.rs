//! Does a private key belong to a certificate? PKCS#8 (EC P-256/P-384, RSA, Ed25519),
//! PKCS#1 `RSA PRIVATE KEY` and SEC1 `EC PRIVATE KEY` are understood, so cert-manager output
//! can be checked too.

use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair};
use x509_parser::oid_registry::{
    OID_EC_P256, OID_KEY_TYPE_EC_PUBLIC_KEY, OID_NIST_EC_P384, OID_PKCS1_RSAENCRYPTION, OID_SIG_ED25519,
};
use x509_parser::x509::SubjectPublicKeyInfo;

use crate::CertError;
use crate::pem::{blocks, first_cert_der, parse_cert};

/// Check that `key_pem` is the private key of the first certificate in `cert_pem`.
pub fn check_pair(cert_pem: &str, key_pem: &str) -> Result<(), CertError> {
    check_pair_named("certificate", cert_pem, "private key", key_pem)
}

/// [`check_pair`] with the names of the two inputs used in error messages.
pub(crate) fn check_pair_named(
    cert_what: &str,
    cert_pem: &str,
    key_what: &str,
    key_pem: &str,
) -> Result<(), CertError> {
    let der = first_cert_der(cert_what, cert_pem)?;
    let cert = parse_cert(cert_what, &der)?;
    let spki = cert.public_key();
    let public = public_key_of(key_what, key_pem, spki)?;
    if public != spki.subject_public_key.data.as_ref() {
        return Err(CertError::KeyMismatch {
            what: format!("{key_what} / {cert_what}"),
        });
    }
    Ok(())
}

enum Alg {
    Ec(&'static signature::EcdsaSigningAlgorithm),
    Rsa,
    Ed25519,
}

fn alg_of(key_what: &str, spki: &SubjectPublicKeyInfo<'_>) -> Result<Alg, CertError> {
    let oid = &spki.algorithm.algorithm;
    if *oid == OID_KEY_TYPE_EC_PUBLIC_KEY {
        let curve = spki.algorithm.parameters.as_ref().and_then(|p| p.as_oid().ok());
        return match curve {
            Some(c) if c == OID_EC_P256 => Ok(Alg::Ec(&signature::ECDSA_P256_SHA256_ASN1_SIGNING)),
            Some(c) if c == OID_NIST_EC_P384 => Ok(Alg::Ec(&signature::ECDSA_P384_SHA384_ASN1_SIGNING)),
            other => Err(CertError::bad_key(
                key_what,
                format!("unsupported EC curve {other:?}"),
            )),
        };
    }
    if *oid == OID_PKCS1_RSAENCRYPTION {
        return Ok(Alg::Rsa);
    }
    if *oid == OID_SIG_ED25519 {
        return Ok(Alg::Ed25519);
    }
    Err(CertError::bad_key(
        key_what,
        format!("unsupported public key algorithm {oid}"),
    ))
}

/// The raw public key (as in the certificate's SPKI bit string) of the private key in `key_pem`.
fn public_key_of(
    key_what: &str,
    key_pem: &str,
    spki: &SubjectPublicKeyInfo<'_>,
) -> Result<Vec<u8>, CertError> {
    let block = blocks(key_what, key_pem)?
        .into_iter()
        .find(|b| b.label.ends_with("PRIVATE KEY"))
        .ok_or_else(|| CertError::bad_key(key_what, "no PRIVATE KEY block"))?;
    let der = block.contents.as_slice();
    let alg = alg_of(key_what, spki)?;
    let rng = SystemRandom::new();
    let rejected = |e: ring::error::KeyRejected| CertError::bad_key(key_what, e);
    let public = match (block.label.as_str(), alg) {
        ("PRIVATE KEY", Alg::Ec(a)) => EcdsaKeyPair::from_pkcs8(a, der, &rng)
            .map_err(rejected)?
            .public_key()
            .as_ref()
            .to_vec(),
        ("PRIVATE KEY", Alg::Rsa) => RsaKeyPair::from_pkcs8(der)
            .map_err(rejected)?
            .public()
            .as_ref()
            .to_vec(),
        ("PRIVATE KEY", Alg::Ed25519) => Ed25519KeyPair::from_pkcs8_maybe_unchecked(der)
            .map_err(rejected)?
            .public_key()
            .as_ref()
            .to_vec(),
        ("RSA PRIVATE KEY", Alg::Rsa) => RsaKeyPair::from_der(der)
            .map_err(rejected)?
            .public()
            .as_ref()
            .to_vec(),
        ("EC PRIVATE KEY", Alg::Ec(a)) => {
            let (private, public) = sec1_parts(der)
                .ok_or_else(|| CertError::bad_key(key_what, "malformed SEC1 EC private key"))?;
            let public = public.ok_or_else(|| {
                CertError::bad_key(key_what, "SEC1 EC private key without embedded public key")
            })?;
            // ring derives the public key from the private scalar and rejects a mismatch.
            EcdsaKeyPair::from_private_key_and_public_key(a, private, public, &rng).map_err(rejected)?;
            public.to_vec()
        }
        (label, _) => {
            return Err(CertError::bad_key(
                key_what,
                format!("{label:?} block does not fit the certificate's key algorithm (or is encrypted)"),
            ));
        }
    };
    Ok(public)
}

/// One DER TLV: `(tag, value, rest)`.
fn tlv(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&len0, rest) = rest.split_first()?;
    let (len, rest) = if len0 < 0x80 {
        (usize::from(len0), rest)
    } else {
        let n = usize::from(len0 & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

/// SEC1 `ECPrivateKey`: the private scalar and, if present, the uncompressed public point.
fn sec1_parts(der: &[u8]) -> Option<(&[u8], Option<&[u8]>)> {
    let (0x30, body, _) = tlv(der)? else { return None };
    let (0x02, _version, body) = tlv(body)? else {
        return None;
    };
    let (0x04, private, mut body) = tlv(body)? else {
        return None;
    };
    let mut public = None;
    while !body.is_empty() {
        let (tag, value, rest) = tlv(body)?;
        if tag == 0xa1 {
            let (0x03, bits, _) = tlv(value)? else { return None };
            let (&unused, point) = bits.split_first()?;
            if unused != 0 {
                return None;
            }
            public = Some(point);
        }
        body = rest;
    }
    Some((private, public))
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;
    use crate::{CertConfig, generate};

    fn pem(label: &str, der: &[u8]) -> String {
        const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut b64 = String::new();
        for chunk in der.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |acc, (i, b)| acc | u32::from(*b) << (16 - 8 * i));
            for i in 0..4 {
                let c = if i <= chunk.len() {
                    T[(n >> (18 - 6 * i) & 63) as usize] as char
                } else {
                    '='
                };
                b64.push(c);
            }
        }
        let lines: Vec<_> = b64
            .as_bytes()
            .chunks(64)
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect();
        format!(
            "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
            lines.join("\n")
        )
    }

    /// The SEC1 `ECPrivateKey` inside a PKCS#8 document.
    fn sec1_of(pkcs8_pem: &str) -> Vec<u8> {
        let der = blocks("k", pkcs8_pem).unwrap().remove(0).contents;
        let (0x30, body, _) = tlv(&der).unwrap() else {
            panic!()
        };
        let (_, _, body) = tlv(body).unwrap();
        let (_, _, body) = tlv(body).unwrap();
        let (0x04, inner, _) = tlv(body).unwrap() else {
            panic!()
        };
        inner.to_vec()
    }

    #[test]
    fn pkcs8_and_sec1_keys_are_checked() {
        let now = datetime!(2026-01-01 00:00:00 UTC);
        let a = generate(&CertConfig::for_service("s", "ns"), now).unwrap();
        let b = generate(&CertConfig::for_service("s", "ns"), now).unwrap();
        check_pair(&a.leaf.cert_pem, &a.leaf.key_pem).unwrap();
        check_pair(&a.ca.cert_pem, &a.ca.key_pem).unwrap();
        assert!(matches!(
            check_pair(&a.leaf.cert_pem, &b.leaf.key_pem),
            Err(CertError::KeyMismatch { .. })
        ));
        assert!(matches!(
            check_pair(&a.leaf.cert_pem, &a.ca.key_pem),
            Err(CertError::KeyMismatch { .. })
        ));

        let sec1 = pem("EC PRIVATE KEY", &sec1_of(&a.leaf.key_pem));
        assert!(sec1_parts(&sec1_of(&a.leaf.key_pem)).unwrap().1.is_some());
        check_pair(&a.leaf.cert_pem, &sec1).unwrap();
        let other_sec1 = pem("EC PRIVATE KEY", &sec1_of(&b.leaf.key_pem));
        assert!(check_pair(&a.leaf.cert_pem, &other_sec1).is_err());
        // Right label, wrong algorithm family.
        let as_rsa = a.leaf.key_pem.replace("PRIVATE KEY", "RSA PRIVATE KEY");
        assert!(matches!(
            check_pair(&a.leaf.cert_pem, &as_rsa),
            Err(CertError::BadKey { .. })
        ));
    }

    #[test]
    fn ed25519_pkcs8_is_checked() {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap();
        let cert = rcgen::CertificateParams::new(vec!["x".to_string()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        check_pair(&cert.pem(), &key.serialize_pem()).unwrap();
        let other = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap();
        assert!(check_pair(&cert.pem(), &other.serialize_pem()).is_err());
        let p256 = rcgen::KeyPair::generate().unwrap();
        assert!(
            check_pair(&cert.pem(), &p256.serialize_pem()).is_err(),
            "wrong key type"
        );
    }

    #[test]
    fn garbage_keys_are_errors() {
        let now = datetime!(2026-01-01 00:00:00 UTC);
        let a = generate(&CertConfig::for_service("s", "ns"), now).unwrap();
        let half = &a.leaf.key_pem[..a.leaf.key_pem.len() / 2];
        for bad in [
            "",
            "garbage",
            half,
            a.leaf.cert_pem.as_str(),
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        ] {
            assert!(check_pair(&a.leaf.cert_pem, bad).is_err(), "{bad:?}");
        }
        assert!(check_pair("garbage", &a.leaf.key_pem).is_err());
    }

    #[test]
    fn tlv_rejects_truncation() {
        assert_eq!(tlv(&[0x30, 0x03, 1, 2]), None);
        assert_eq!(tlv(&[0x30, 0x82, 0x00]), None);
        assert_eq!(tlv(&[0x04, 0x01, 9, 7]), Some((0x04, &[9u8][..], &[7u8][..])));
        assert_eq!(tlv(&[0x04, 0x81, 0x01, 9]), Some((0x04, &[9u8][..], &[][..])));
        assert!(sec1_parts(&[0x30, 0x00]).is_none());
    }
}
