//! 25 simulated years of resyncs with short lifetimes (CA 30 days, leaf 10 days): at every step
//! a client that trusts the bundle published at the previous step verifies the leaf served now,
//! the bundle published now still trusts the leaf served at the previous step (lagging
//! replicas), a leaf never outlives its CA, and one more `plan` at the same instant is a no-op.

mod common;

use std::collections::BTreeMap;

use common::{SVC_NAME, cfg, verify};
use kruise_certs::{CertConfig, CertMaterial, Plan, RotationReason, inspect, plan};
use time::macros::datetime;
use time::{Duration, OffsetDateTime};

#[derive(Default, Debug)]
struct Counts {
    writes: usize,
    leaf: usize,
    phase1: usize,
    phase2: usize,
    phase3: usize,
}

fn simulate(dwell: Duration, years: i64) -> Counts {
    let cfg = CertConfig {
        ca_validity: Duration::days(30),
        leaf_validity: Duration::days(10),
        rotation_dwell: dwell,
        ..cfg()
    };
    let start: OffsetDateTime = datetime!(2026-05-01 08:00:00 UTC);
    let end = start + Duration::days(365 * years);
    let mut stored: Option<BTreeMap<String, Vec<u8>>> = None;
    let mut previous: Option<(String, String)> = None; // (bundle, leaf) published at the previous step
    let mut counts = Counts::default();
    let mut now = start;
    let mut i: i64 = 0;
    while now < end {
        let material = match plan(stored.as_ref(), &cfg, now).unwrap() {
            Plan::Keep => CertMaterial::from_data(stored.as_ref().unwrap()).unwrap(),
            Plan::Write { material, reason } => {
                counts.writes += 1;
                match reason {
                    RotationReason::Missing => assert!(stored.is_none(), "{now}: Missing after start"),
                    RotationReason::LeafExpiring => counts.leaf += 1,
                    RotationReason::CaExpiring => counts.phase1 += 1,
                    RotationReason::SwitchLeafToNewCa => counts.phase2 += 1,
                    RotationReason::DropOldCa => counts.phase3 += 1,
                    other => panic!("{now}: unexpected {other:?}"),
                }
                stored = Some(material.to_data());
                material
            }
        };
        let bundle = material.ca_bundle_pem();
        let leaf = &material.leaf.cert_pem;
        let leaf_info = inspect(leaf).unwrap();
        assert!(
            leaf_info.not_after <= material.ca_not_after().unwrap(),
            "{now}: leaf outlives CA"
        );
        assert!(
            leaf_info.not_before <= now && now < leaf_info.not_after,
            "{now}: leaf not valid"
        );
        verify(&bundle, leaf, SVC_NAME, now).unwrap_or_else(|e| panic!("{now}: own bundle: {e}"));
        if let Some((old_bundle, old_leaf)) = &previous {
            verify(old_bundle, leaf, SVC_NAME, now)
                .unwrap_or_else(|e| panic!("{now}: previous bundle vs current leaf: {e}"));
            if inspect(old_leaf).unwrap().not_after > now {
                verify(&bundle, old_leaf, SVC_NAME, now)
                    .unwrap_or_else(|e| panic!("{now}: current bundle vs previous leaf: {e}"));
            }
        }
        assert_eq!(
            plan(stored.as_ref(), &cfg, now).unwrap(),
            Plan::Keep,
            "{now}: not converged"
        );
        previous = Some((bundle, leaf.clone()));
        // Irregular steps between 2 days and 2 days 21 hours.
        now += Duration::days(2) + Duration::hours(7 * (i % 4));
        i += 1;
    }
    counts
}

#[test]
fn no_verification_gap_over_25_years_short_dwell() {
    let c = simulate(Duration::minutes(2), 25);
    // A CA lives ~20-24 days before rotation starts: hundreds of full rotations.
    assert!(c.phase1 > 300, "{c:?}");
    assert_eq!(c.phase1, c.phase2, "{c:?}");
    assert!(c.phase3 + 1 >= c.phase2, "{c:?}");
    assert!(c.leaf > 0, "{c:?}");
}

#[test]
fn no_verification_gap_with_dwell_longer_than_a_step() {
    // Dwell of 4 days: each phase waits for at least one more resync.
    let c = simulate(Duration::days(4), 3);
    assert!(c.phase1 > 20, "{c:?}");
    assert!(c.phase2 + 1 >= c.phase1 && c.phase3 + 1 >= c.phase2, "{c:?}");
}
