//! Internal PEM and DER helpers. Nothing here panics on malformed input.

use x509_parser::certificate::X509Certificate;
use x509_parser::pem::Pem;

use crate::CertError;

/// Every PEM block in `text`; an error if there is none or one is malformed.
pub(crate) fn blocks(what: &str, text: &str) -> Result<Vec<Pem>, CertError> {
    let mut out = Vec::new();
    for block in Pem::iter_from_buffer(text.as_bytes()) {
        let block = block.map_err(|e| CertError::BadPem {
            what: what.to_string(),
            reason: e.to_string(),
        })?;
        out.push(block);
    }
    if out.is_empty() {
        return Err(CertError::NoPem {
            what: what.to_string(),
        });
    }
    Ok(out)
}

/// The DER of every `CERTIFICATE` block in `text` (at least one), each checked to parse.
pub(crate) fn cert_ders(what: &str, text: &str) -> Result<Vec<Vec<u8>>, CertError> {
    let mut out = Vec::new();
    for block in blocks(what, text)? {
        if block.label != "CERTIFICATE" {
            return Err(CertError::BadPem {
                what: what.to_string(),
                reason: format!("expected CERTIFICATE block, found {:?}", block.label),
            });
        }
        parse_cert(what, &block.contents)?;
        out.push(block.contents);
    }
    Ok(out)
}

/// The DER of the first certificate in `text`.
pub(crate) fn first_cert_der(what: &str, text: &str) -> Result<Vec<u8>, CertError> {
    cert_ders(what, text)?
        .into_iter()
        .next()
        .ok_or_else(|| CertError::NoPem {
            what: what.to_string(),
        })
}

/// Parse one DER certificate, rejecting trailing bytes.
pub(crate) fn parse_cert<'a>(what: &str, der: &'a [u8]) -> Result<X509Certificate<'a>, CertError> {
    match x509_parser::parse_x509_certificate(der) {
        Ok(([], cert)) => Ok(cert),
        Ok((rest, _)) => Err(CertError::bad_cert(
            what,
            format!("{} trailing bytes", rest.len()),
        )),
        Err(e) => Err(CertError::bad_cert(what, e)),
    }
}

/// Canonical PEM, as rcgen writes it: 64-column base64, LF line endings, trailing newline.
pub(crate) fn encode(label: &str, der: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut b64 = Vec::with_capacity(der.len().div_ceil(3) * 4);
    for chunk in der.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            let c = if i <= chunk.len() {
                ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]
            } else {
                b'='
            };
            b64.push(c);
        }
    }
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.chunks(64) {
        out.extend(line.iter().map(|b| char::from(*b)));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// The first certificate of `text`, re-encoded canonically.
pub(crate) fn canonical_cert(what: &str, text: &str) -> Result<String, CertError> {
    Ok(encode("CERTIFICATE", &first_cert_der(what, text)?))
}

/// The first `... PRIVATE KEY` block of `text`, re-encoded canonically (label kept).
pub(crate) fn canonical_key(what: &str, text: &str) -> Result<String, CertError> {
    let block = blocks(what, text)?
        .into_iter()
        .find(|b| b.label.ends_with("PRIVATE KEY"))
        .ok_or_else(|| CertError::bad_key(what, "no PRIVATE KEY block"))?;
    Ok(encode(&block.label, &block.contents))
}

/// Split text into its `-----BEGIN ...-----` .. `-----END ...-----` blocks, verbatim, each
/// ending with a newline. Text outside blocks is dropped.
pub(crate) fn split_blocks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let after = &rest[start..];
        let Some(end_marker) = after.find("-----END ") else {
            break;
        };
        let tail = &after[end_marker + "-----END ".len()..];
        let Some(close) = tail.find("-----") else { break };
        let block_len = end_marker + "-----END ".len() + close + "-----".len();
        out.push(format!("{}\n", &after[..block_len]));
        rest = &after[block_len..];
    }
    out
}

/// Concatenate PEM texts, one block per line group, each ending in exactly one newline.
pub(crate) fn concat<'a>(parts: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for p in parts {
        let p = p.trim();
        if !p.is_empty() {
            out.push_str(p);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for input in [
            "",
            "hello",
            "-----BEGIN CERTIFICATE-----\nAAAA",
            "-----BEGIN X-----\n@@@\n-----END X-----\n",
        ] {
            assert!(cert_ders("t", input).is_err(), "{input:?}");
        }
        let err = cert_ders("tls.crt", "garbage").unwrap_err().to_string();
        assert!(err.contains("tls.crt"), "{err}");
    }

    #[test]
    fn encode_matches_rcgen_and_canonicalizes() {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["a".to_string()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        assert_eq!(encode("CERTIFICATE", cert.der()), cert.pem());
        assert_eq!(encode("PRIVATE KEY", key.serialized_der()), key.serialize_pem());
        let sloppy = format!("junk\r\n{}\r\n", cert.pem().replace('\n', "\r\n"));
        assert_eq!(canonical_cert("c", &sloppy).unwrap(), cert.pem());
        assert_eq!(
            canonical_key("k", &format!("\n\n{}\n", key.serialize_pem())).unwrap(),
            key.serialize_pem()
        );
        for n in 0..5 {
            let der = vec![0xABu8; n];
            let pem = encode("X", &der);
            assert_eq!(blocks("x", &pem).unwrap()[0].contents, der);
        }
    }

    #[test]
    fn split_keeps_blocks_verbatim() {
        let text =
            "junk\n-----BEGIN A-----\nQUJD\n-----END A-----\nmid\n-----BEGIN B-----\nREVG\n-----END B-----";
        assert_eq!(
            split_blocks(text),
            [
                "-----BEGIN A-----\nQUJD\n-----END A-----\n",
                "-----BEGIN B-----\nREVG\n-----END B-----\n"
            ]
        );
        assert_eq!(concat(["a\n", "", " b "]), "a\nb\n");
    }
}
