use super::*;

#[test]
fn defaults_are_openkruise_s_but_deletion_protection_resource_distribution_and_image_pull() {
    let gates = FeatureGates::default();
    for gate in Gate::ALL {
        let want = match gate {
            Gate::ResourcesDeletionProtection | Gate::ResourceDistributionGate | Gate::ImagePullJobGate => {
                true
            }
            other => other.openkruise_default(),
        };
        assert_eq!(gates.enabled(*gate), want, "{gate}");
    }
    assert!(!Gate::ResourcesDeletionProtection.openkruise_default());
    assert!(!Gate::ResourceDistributionGate.openkruise_default());
    assert!(!Gate::ImagePullJobGate.openkruise_default());
    assert_eq!(Gate::ALL.len(), 36);
}

#[test]
fn names_round_trip() {
    for gate in Gate::ALL {
        assert_eq!(gate.name().parse::<Gate>(), Ok(*gate));
    }
    assert_eq!("EnhancedLivenessProbe".parse(), Ok(Gate::EnhancedLivenessProbe));
}

#[test]
fn parsing_follows_kubernetes_syntax() {
    type Case = (&'static str, Result<Vec<(Gate, bool)>, &'static str>);
    let cases: &[Case] = &[
        ("", Ok(vec![])),
        (
            "CloneSetPartitionRollback=true",
            Ok(vec![(Gate::CloneSetPartitionRollback, true)]),
        ),
        (
            " ResourcesDeletionProtection = false , WorkloadSpread=0,",
            Ok(vec![
                (Gate::ResourcesDeletionProtection, false),
                (Gate::WorkloadSpread, false),
            ]),
        ),
        (
            "KruisePodReadinessGate=T,KruisePodReadinessGate=F",
            Ok(vec![(Gate::KruisePodReadinessGate, false)]),
        ),
        ("PodWebhook=TRUE", Ok(vec![(Gate::PodWebhook, true)])),
        ("NoSuchGate=true", Err("unrecognized feature gate: NoSuchGate")),
        ("podwebhook=true", Err("unrecognized feature gate: podwebhook")),
        (
            "PodWebhook",
            Err("malformed pair, expect string=bool: \"PodWebhook\""),
        ),
        (
            "PodWebhook=yes",
            Err("invalid value of PodWebhook=yes, err: strconv.ParseBool: parsing \"yes\": invalid syntax"),
        ),
    ];
    for (spec, want) in cases {
        match (FeatureGates::parse(spec), want) {
            (Ok(gates), Ok(changes)) => {
                for (gate, on) in changes {
                    assert_eq!(gates.enabled(*gate), *on, "{spec}: {gate}");
                }
            }
            (Err(e), Err(message)) => assert_eq!(e.to_string(), *message, "{spec}"),
            (got, want) => panic!("{spec}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn a_refused_spec_changes_nothing() {
    let mut gates = FeatureGates::default();
    assert!(gates.apply("CloneSetPartitionRollback=true,Bogus=true").is_err());
    assert_eq!(gates, FeatureGates::default());
}

#[test]
fn dependent_gates_follow_openkruise() {
    let gates =
        FeatureGates::parse("DeletionProtectionForCRDCascadingGate=true,ResourcesDeletionProtection=false")
            .unwrap();
    assert!(!gates.enabled(Gate::DeletionProtectionForCRDCascadingGate));
    let gates = FeatureGates::parse("DeletionProtectionForCRDCascadingGate=true").unwrap();
    assert!(gates.enabled(Gate::DeletionProtectionForCRDCascadingGate));
    let gates = FeatureGates::parse("PodWebhook=false,WorkloadSpread=true").unwrap();
    assert!(!gates.enabled(Gate::WorkloadSpread) && !gates.enabled(Gate::PodUnavailableBudgetDeleteGate));
    let gates = FeatureGates::parse("PreDownloadImageForInPlaceUpdate=true").unwrap();
    assert!(gates.enabled(Gate::ImagePullJobGate));
    let gates = FeatureGates::parse("KruiseDaemon=false,PreDownloadImageForInPlaceUpdate=true").unwrap();
    assert!(!gates.enabled(Gate::ImagePullJobGate) && !gates.enabled(Gate::PodProbeMarkerGate));
}
