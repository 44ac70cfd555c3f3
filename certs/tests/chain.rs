//! The generated chain verifies with rustls/webpki (ring), for the Service name and 127.0.0.1.

mod common;

use common::{SVC_NAME, cfg, verify, verify_chain};
use kruise_certs::generate;
use time::Duration;
use time::macros::datetime;

#[test]
fn chain_verifies_for_every_san_and_only_those() {
    let now = datetime!(2026-03-01 12:00:00 UTC);
    let m = generate(&cfg(), now).unwrap();
    let bundle = m.ca_bundle_pem();
    for name in [
        SVC_NAME,
        "kruise-webhook-service.kruise-system.svc.cluster.local",
        "localhost",
        "127.0.0.1",
    ] {
        verify(&bundle, &m.leaf.cert_pem, name, now).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    for name in [
        "kruise-webhook-service.other.svc",
        "evil.example.com",
        "127.0.0.2",
        "kruise-webhook-service",
    ] {
        assert!(
            verify(&bundle, &m.leaf.cert_pem, name, now).is_err(),
            "{name} must not verify"
        );
    }
}

#[test]
fn chain_respects_validity_and_backdating() {
    let now = datetime!(2026-03-01 12:00:00 UTC);
    let m = generate(&cfg(), now).unwrap();
    let bundle = m.ca_bundle_pem();
    // A peer whose clock is 5 minutes slow still accepts a certificate issued just now.
    verify(&bundle, &m.leaf.cert_pem, SVC_NAME, now - Duration::minutes(5)).unwrap();
    assert!(verify(&bundle, &m.leaf.cert_pem, SVC_NAME, now - Duration::hours(1)).is_err());
    verify(&bundle, &m.leaf.cert_pem, SVC_NAME, now + Duration::days(364)).unwrap();
    assert!(verify(&bundle, &m.leaf.cert_pem, SVC_NAME, now + Duration::days(366)).is_err());
}

#[test]
fn another_ca_does_not_verify_the_leaf() {
    let now = datetime!(2026-03-01 12:00:00 UTC);
    let a = generate(&cfg(), now).unwrap();
    let b = generate(&cfg(), now).unwrap();
    assert!(verify(&b.ca_bundle_pem(), &a.leaf.cert_pem, SVC_NAME, now).is_err());
    // A bundle holding both (rotation overlap) accepts either leaf.
    let both = format!("{}{}", a.ca_bundle_pem(), b.ca_bundle_pem());
    verify(&both, &a.leaf.cert_pem, SVC_NAME, now).unwrap();
    verify(&both, &b.leaf.cert_pem, SVC_NAME, now).unwrap();
}

#[test]
fn leaf_cannot_act_as_an_intermediate() {
    // A certificate "issued" with the serving key must not verify, even when the leaf is sent
    // as an intermediate: the leaf carries no basicConstraints CA:true.
    let now = datetime!(2026-03-01 12:00:00 UTC);
    let m = generate(&cfg(), now).unwrap();
    let leaf_key = rcgen::KeyPair::from_pem(&m.leaf.key_pem).unwrap();
    let issuer = rcgen::Issuer::from_ca_cert_pem(&m.leaf.cert_pem, leaf_key).unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["evil.example.com".to_string()]).unwrap();
    params.not_before = now - Duration::hours(1);
    params.not_after = now + Duration::days(1);
    let evil = params
        .signed_by(&rcgen::KeyPair::generate().unwrap(), &issuer)
        .unwrap();
    let err = verify_chain(
        &m.ca_bundle_pem(),
        &evil.pem(),
        &m.leaf.cert_pem,
        "evil.example.com",
        now,
    );
    assert!(err.is_err(), "a leaf-signed certificate verified");
}
