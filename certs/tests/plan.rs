//! `plan()` decisions: absent, fresh, corrupt, SAN change, leaf expiry, CA rotation phases.

mod common;

use std::collections::BTreeMap;

use common::{SVC_NAME, cfg, verify};
use kruise_certs::{
    CA_BUNDLE, CertConfig, CertMaterial, PHASE_SINCE, Plan, RotationReason, TLS_CERT, TLS_KEY, generate,
    inspect, inspect_all, plan,
};
use time::macros::datetime;
use time::{Duration, OffsetDateTime};

type Data = BTreeMap<String, Vec<u8>>;

const T0: OffsetDateTime = datetime!(2026-01-01 00:00:00 UTC);

fn short_cfg() -> CertConfig {
    CertConfig {
        ca_validity: Duration::days(30),
        leaf_validity: Duration::days(10),
        rotation_dwell: Duration::hours(1),
        ..cfg()
    }
}

/// Apply `plan` once; returns the reason (None = Keep) and the new stored data.
fn step(stored: &Data, cfg: &CertConfig, now: OffsetDateTime) -> (Option<RotationReason>, Data) {
    match plan(Some(stored), cfg, now).unwrap() {
        Plan::Keep => (None, stored.clone()),
        Plan::Write { material, reason } => (Some(reason), material.to_data()),
    }
}

fn material(d: &Data) -> CertMaterial {
    CertMaterial::from_data(d).unwrap()
}

fn write(stored: Option<&Data>, cfg: &CertConfig, now: OffsetDateTime) -> (RotationReason, CertMaterial) {
    match plan(stored, cfg, now).unwrap() {
        Plan::Write { material, reason } => (reason, material),
        Plan::Keep => panic!("expected a write"),
    }
}

#[test]
fn absent_or_empty_generates() {
    let (reason, m) = write(None, &cfg(), T0);
    assert_eq!(reason, RotationReason::Missing);
    verify(&m.ca_bundle_pem(), &m.leaf.cert_pem, SVC_NAME, T0).unwrap();
    let (reason, _) = write(Some(&Data::new()), &cfg(), T0);
    assert_eq!(reason, RotationReason::Missing);
}

#[test]
fn fresh_material_is_kept() {
    let data = generate(&cfg(), T0).unwrap().to_data();
    for later in [Duration::ZERO, Duration::minutes(1), Duration::days(200)] {
        assert_eq!(
            plan(Some(&data), &cfg(), T0 + later).unwrap(),
            Plan::Keep,
            "+{later}"
        );
    }
    // Unknown extra keys (e.g. added by someone else) do not trigger a write.
    let mut extra = data.clone();
    extra.insert("unrelated".into(), b"x".to_vec());
    assert_eq!(plan(Some(&extra), &cfg(), T0).unwrap(), Plan::Keep);
}

#[test]
fn garbage_everywhere_regenerates_everything() {
    let data = generate(&cfg(), T0).unwrap().to_data();
    let garbage: Data = data
        .keys()
        .map(|k| (k.clone(), b"\xff\x00garbage".to_vec()))
        .collect();
    let (reason, m) = write(Some(&garbage), &cfg(), T0);
    assert!(matches!(reason, RotationReason::Corrupt(_)), "{reason:?}");
    verify(&m.ca_bundle_pem(), &m.leaf.cert_pem, SVC_NAME, T0).unwrap();
    assert_ne!(m.ca.cert_pem, material(&data).ca.cert_pem);
}

#[test]
fn corrupt_leaf_keeps_the_ca_and_the_bundle() {
    let original = generate(&cfg(), T0).unwrap();
    let data = original.to_data();
    let truncated = |k: &str| {
        let mut d = data.clone();
        let v = d[k].clone();
        d.insert(k.into(), v[..v.len() / 2].to_vec());
        d
    };
    let swapped_key = {
        let mut d = data.clone();
        d.insert(TLS_KEY.into(), data["ca.key"].clone());
        d
    };
    let other_key = {
        let mut d = data.clone();
        d.insert(
            TLS_KEY.into(),
            generate(&cfg(), T0).unwrap().leaf.key_pem.into_bytes(),
        );
        d
    };
    let ed25519_key = {
        let mut d = data.clone();
        let k = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap();
        d.insert(TLS_KEY.into(), k.serialize_pem().into_bytes());
        d
    };
    let no_phase = {
        let mut d = data.clone();
        d.remove(PHASE_SINCE);
        d
    };
    let bad_phase = {
        let mut d = data.clone();
        d.insert(PHASE_SINCE.into(), b"yesterday".to_vec());
        d
    };
    let cases = [
        ("truncated tls.crt", truncated(TLS_CERT)),
        ("truncated tls.key", truncated(TLS_KEY)),
        ("ca key as tls.key", swapped_key),
        ("another leaf key", other_key),
        ("ed25519 key", ed25519_key),
        ("phase-since missing", no_phase),
        ("phase-since garbage", bad_phase),
    ];
    for (name, broken) in cases {
        let (reason, m) = write(Some(&broken), &cfg(), T0);
        assert!(matches!(reason, RotationReason::Corrupt(_)), "{name}: {reason:?}");
        assert_eq!(m.ca, original.ca, "{name}: CA must be kept");
        assert_eq!(
            m.ca_bundle_pem(),
            original.ca_bundle_pem(),
            "{name}: bundle must not change"
        );
        verify(&original.ca_bundle_pem(), &m.leaf.cert_pem, SVC_NAME, T0).unwrap();
        assert_eq!(
            plan(Some(&m.to_data()), &cfg(), T0).unwrap(),
            Plan::Keep,
            "{name}: converges"
        );
    }
}

#[test]
fn edited_bundle_is_restored() {
    let original = generate(&cfg(), T0).unwrap();
    let mut data = original.to_data();
    let stranger = generate(&cfg(), T0).unwrap();
    data.insert(CA_BUNDLE.into(), stranger.ca_bundle_pem().into_bytes());
    let (reason, m) = write(Some(&data), &cfg(), T0);
    assert!(
        matches!(&reason, RotationReason::Corrupt(e) if e.contains("ca.crt")),
        "{reason:?}"
    );
    assert_eq!(m, original);
}

#[test]
fn sans_change_renews_the_leaf_under_the_same_ca() {
    let original = generate(&cfg(), T0).unwrap();
    let mut renamed = cfg();
    renamed.dns_names[0] = "other-service.kruise-system.svc".into();
    renamed.dns_names.push("extra.example.com".into());
    let (reason, m) = write(Some(&original.to_data()), &renamed, T0 + Duration::days(1));
    assert_eq!(reason, RotationReason::SansChanged);
    assert_eq!(m.ca, original.ca);
    let info = inspect(&m.leaf.cert_pem).unwrap();
    assert_eq!(info.dns_names, renamed.dns_names);
    let t = T0 + Duration::days(1);
    verify(
        &m.ca_bundle_pem(),
        &m.leaf.cert_pem,
        "other-service.kruise-system.svc",
        t,
    )
    .unwrap();
    // Order and case of SANs do not matter.
    let mut reordered = cfg();
    reordered.dns_names.reverse();
    reordered.dns_names[0] = reordered.dns_names[0].to_uppercase();
    assert_eq!(
        plan(Some(&original.to_data()), &reordered, T0).unwrap(),
        Plan::Keep
    );
}

#[test]
fn leaf_in_last_third_is_renewed_under_the_same_ca() {
    let original = generate(&cfg(), T0).unwrap();
    let data = original.to_data();
    let lifetime = inspect(&original.leaf.cert_pem).unwrap().lifetime();
    let not_after = original.leaf_not_after().unwrap();
    assert_eq!(
        plan(Some(&data), &cfg(), not_after - lifetime / 3 - Duration::hours(1)).unwrap(),
        Plan::Keep
    );
    for now in [
        not_after - lifetime / 3 + Duration::hours(1),
        not_after + Duration::days(3),
    ] {
        let (reason, m) = write(Some(&data), &cfg(), now);
        assert_eq!(reason, RotationReason::LeafExpiring);
        assert_eq!(m.ca, original.ca);
        assert_eq!(m.phase_since, original.phase_since, "no CA phase change");
        verify(&original.ca_bundle_pem(), &m.leaf.cert_pem, SVC_NAME, now).unwrap();
    }
}

#[test]
fn leaf_from_another_ca_is_replaced() {
    let original = generate(&cfg(), T0).unwrap();
    let stranger = generate(&cfg(), T0).unwrap();
    let mut data = original.to_data();
    data.insert(TLS_CERT.into(), stranger.leaf.cert_pem.into_bytes());
    data.insert(TLS_KEY.into(), stranger.leaf.key_pem.into_bytes());
    let (reason, m) = write(Some(&data), &cfg(), T0);
    assert!(
        matches!(&reason, RotationReason::LeafInvalid(e) if e.contains("active CA")),
        "{reason:?}"
    );
    assert_eq!(m.ca, original.ca);
}

#[test]
fn ca_rotation_walks_three_phases_with_dwell() {
    let cfg = short_cfg();
    let g = generate(&cfg, T0).unwrap();
    let old_ca = g.ca.clone();
    let mut data = g.to_data();
    // Keep the leaf fresh until the CA enters its last third (day 20).
    let (r, d) = step(&data, &cfg, T0 + Duration::days(8));
    assert_eq!(r, Some(RotationReason::LeafExpiring));
    data = d;
    let (r, d) = step(&data, &cfg, T0 + Duration::days(16));
    assert_eq!(r, Some(RotationReason::LeafExpiring));
    data = d;

    // Phase 1 at day 21: the next CA joins the bundle; the leaf stays with the old CA.
    let t1 = T0 + Duration::days(21);
    let (r, d) = step(&data, &cfg, t1);
    assert_eq!(r, Some(RotationReason::CaExpiring));
    let m = material(&d);
    assert_eq!(m.ca, old_ca);
    let next = m.next_ca.clone().expect("next CA");
    assert_eq!(inspect_all(&m.ca_bundle_pem()).unwrap().len(), 2);
    assert_eq!(
        m.leaf.cert_pem,
        material(&data).leaf.cert_pem,
        "leaf untouched in phase 1"
    );
    assert_eq!(m.phase_since, t1);
    let bundle1 = m.ca_bundle_pem();
    data = d;

    // Within the dwell nothing changes.
    let (r, _) = step(&data, &cfg, t1 + Duration::minutes(59));
    assert_eq!(r, None);

    // Phase 2: the next CA becomes active and signs the leaf; old CA still trusted.
    let t2 = t1 + Duration::hours(1);
    let (r, d) = step(&data, &cfg, t2);
    assert_eq!(r, Some(RotationReason::SwitchLeafToNewCa));
    let m = material(&d);
    assert_eq!(m.ca, next);
    assert_eq!(m.previous_ca_cert_pem.as_deref(), Some(old_ca.cert_pem.as_str()));
    assert!(m.next_ca.is_none());
    verify(&bundle1, &m.leaf.cert_pem, SVC_NAME, t2).expect("phase-1 bundle trusts the phase-2 leaf");
    verify(&m.ca_bundle_pem(), &material(&data).leaf.cert_pem, SVC_NAME, t2).expect("lagging replica's leaf");
    let bundle2 = m.ca_bundle_pem();
    assert_eq!(inspect_all(&bundle2).unwrap().len(), 2);
    data = d;
    assert_eq!(step(&data, &cfg, t2 + Duration::minutes(30)).0, None);

    // Phase 3: the old CA leaves the bundle.
    let t3 = t2 + Duration::hours(1);
    let (r, d) = step(&data, &cfg, t3);
    assert_eq!(r, Some(RotationReason::DropOldCa));
    let m = material(&d);
    assert_eq!(m.ca, next);
    assert_eq!(m.previous_ca_cert_pem, None);
    assert_eq!(m.ca_bundle_pem().trim(), next.cert_pem.trim());
    verify(&bundle2, &m.leaf.cert_pem, SVC_NAME, t3).unwrap();
    verify(&m.ca_bundle_pem(), &m.leaf.cert_pem, SVC_NAME, t3).unwrap();
    assert_eq!(step(&d, &cfg, t3 + Duration::days(1)).0, None);
}

#[test]
fn leaf_renewed_in_phase_one_stays_with_the_old_ca_and_inside_it() {
    let cfg = CertConfig {
        leaf_validity: Duration::days(25),
        ..short_cfg()
    };
    let g = generate(&cfg, T0).unwrap();
    // Day 21: leaf (25 days, so it has 4 of 25 days left) expiring and CA in its last third.
    let (r, d) = step(&g.to_data(), &cfg, T0 + Duration::days(21));
    assert_eq!(r, Some(RotationReason::CaExpiring));
    let m = material(&d);
    assert!(kruise_certs::inspect(&m.leaf.cert_pem).unwrap().not_after <= m.ca_not_after().unwrap());
    assert_ne!(m.leaf, g.leaf, "leaf renewed in the same write");
    verify(
        &g.ca_bundle_pem(),
        &m.leaf.cert_pem,
        SVC_NAME,
        T0 + Duration::days(21),
    )
    .unwrap();
    assert_eq!(
        m.leaf_not_after().unwrap(),
        m.ca_not_after().unwrap(),
        "clamped to the old CA"
    );
}

#[test]
fn expired_ca_without_successor_regenerates() {
    let cfg = short_cfg();
    let g = generate(&cfg, T0).unwrap();
    let (r, m) = write(Some(&g.to_data()), &cfg, T0 + Duration::days(31));
    assert_eq!(r, RotationReason::CaExpired);
    assert_ne!(m.ca, g.ca);
}

#[test]
fn expired_ca_with_successor_switches_without_waiting() {
    let cfg = short_cfg();
    let g = generate(&cfg, T0).unwrap();
    let (_, d) = step(&g.to_data(), &cfg, T0 + Duration::days(21));
    let next = material(&d).next_ca.unwrap();
    // Down for ten days: the old CA expired meanwhile.
    let (r, m) = write(Some(&d), &cfg, T0 + Duration::days(31));
    assert_eq!(r, RotationReason::SwitchLeafToNewCa);
    assert_eq!(m.ca, next);
    assert_eq!(m.previous_ca_cert_pem, None, "an expired CA is not kept");
}

#[test]
fn future_phase_timestamp_restarts_the_dwell() {
    let cfg = short_cfg();
    let g = generate(&cfg, T0).unwrap();
    let t1 = T0 + Duration::days(21);
    let (_, mut d) = step(&g.to_data(), &cfg, t1);
    d.insert(PHASE_SINCE.into(), b"2999-01-01T00:00:00Z".to_vec());
    let (r, d) = step(&d, &cfg, t1 + Duration::minutes(5));
    assert!(matches!(r, Some(RotationReason::Corrupt(_))), "{r:?}");
    assert_eq!(material(&d).phase_since, t1 + Duration::minutes(5));
    assert!(material(&d).next_ca.is_some());
    assert_eq!(step(&d, &cfg, t1 + Duration::minutes(64)).0, None);
    assert_eq!(
        step(&d, &cfg, t1 + Duration::minutes(65)).0,
        Some(RotationReason::SwitchLeafToNewCa)
    );
}

#[test]
fn round_trip_in_every_phase() {
    let cfg = short_cfg();
    let mut data = generate(&cfg, T0).unwrap().to_data();
    let mut seen = 0;
    for hours in [0, 21 * 24, 21 * 24 + 1, 21 * 24 + 2] {
        let (_, d) = step(&data, &cfg, T0 + Duration::hours(hours));
        data = d;
        let m = material(&data);
        assert_eq!(m.to_data(), data);
        assert_eq!(CertMaterial::from_data(&m.to_data()).unwrap(), m);
        seen += usize::from(m.next_ca.is_some()) + 2 * usize::from(m.previous_ca_cert_pem.is_some());
        assert!(m.leaf_not_after().unwrap() <= m.ca_not_after().unwrap());
    }
    assert_eq!(seen, 3, "saw a next CA and a previous CA");
}

#[test]
fn debug_output_hides_private_keys() {
    let m = generate(&cfg(), T0).unwrap();
    let shown = format!(
        "{m:?} {:?}",
        Plan::Write {
            material: m.clone(),
            reason: RotationReason::Missing
        }
    );
    assert!(!shown.contains("PRIVATE KEY"), "{shown}");
    assert!(shown.contains("[redacted]"));
}

#[test]
fn invalid_config_is_an_error() {
    let bad = CertConfig {
        dns_names: vec![],
        ip_addresses: vec![],
        ..cfg()
    };
    assert!(plan(None, &bad, T0).is_err());
    assert!(generate(&bad, T0).is_err());
}

#[test]
fn random_damage_never_panics_and_always_converges() {
    let cfg = short_cfg();
    // One state per phase: steady, phase 1 (next CA), phase 2 (previous CA).
    let steady = generate(&cfg, T0).unwrap().to_data();
    let (_, phase1) = step(&steady, &cfg, T0 + Duration::days(21));
    let (_, phase2) = step(&phase1, &cfg, T0 + Duration::days(21) + Duration::hours(1));
    let now = T0 + Duration::days(21) + Duration::hours(1);
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rand = move |n: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) as usize) % n.max(1)
    };
    for round in 0..900 {
        let base = [&steady, &phase1, &phase2][round % 3];
        let mut data = base.clone();
        let keys: Vec<String> = data.keys().cloned().collect();
        let key = &keys[rand(keys.len())];
        let value = data.get_mut(key).unwrap();
        match rand(5) {
            0 => value.truncate(rand(value.len())),
            1 => {
                let i = rand(value.len());
                value[i] ^= 1 << rand(8);
            }
            2 => {
                data.remove(key);
            }
            3 => {
                let donor = base[&keys[rand(keys.len())]].clone();
                data.insert(key.clone(), donor);
            }
            _ => value.splice(0..0, b"\xfe\xff\x00".iter().copied()).for_each(drop),
        }
        let result = plan(Some(&data), &cfg, now).unwrap();
        let m = match result {
            Plan::Keep => material(&data),
            Plan::Write { material, .. } => material,
        };
        verify(&m.ca_bundle_pem(), &m.leaf.cert_pem, SVC_NAME, now)
            .unwrap_or_else(|e| panic!("{round} {key}: {e}"));
        assert_eq!(
            plan(Some(&m.to_data()), &cfg, now).unwrap(),
            Plan::Keep,
            "{round} {key}: converges"
        );
    }
}

#[test]
fn far_future_phase_timestamp_does_not_overflow() {
    let cfg = short_cfg();
    let (_, mut d) = step(
        &generate(&cfg, T0).unwrap().to_data(),
        &cfg,
        T0 + Duration::days(21),
    );
    d.insert(PHASE_SINCE.into(), b"9999-12-31T23:59:59Z".to_vec());
    let (r, _) = step(&d, &cfg, T0 + Duration::days(21));
    assert!(matches!(r, Some(RotationReason::Corrupt(_))), "{r:?}");
}
