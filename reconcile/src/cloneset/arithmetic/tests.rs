use super::*;

const OLD: PodFacts = PodFacts {
    new: false,
    preparing_delete: false,
    specified_delete: false,
    available: true,
};
const NEW: PodFacts = PodFacts { new: true, ..OLD };

fn unavailable(f: PodFacts) -> PodFacts {
    PodFacts {
        available: false,
        ..f
    }
}
fn to_delete(f: PodFacts) -> PodFacts {
    PodFacts {
        specified_delete: true,
        ..f
    }
}
fn pre_deleting(f: PodFacts) -> PodFacts {
    PodFacts {
        preparing_delete: true,
        ..f
    }
}

fn pods(groups: &[(usize, PodFacts)]) -> Vec<PodFacts> {
    groups
        .iter()
        .flat_map(|(n, f)| std::iter::repeat_n(*f, *n))
        .collect()
}

fn params(replicas: i64, partition: i64, max_surge: i64, max_unavailable: i64) -> Params {
    Params {
        replicas,
        partition,
        max_surge,
        max_unavailable,
        scale_max_unavailable: i64::from(i32::MAX),
        ..Params::default()
    }
}

#[test]
fn partition_resolution() {
    let s = |v: &str| Some(IntOrString::String(v.into()));
    let cases: &[(&str, Option<IntOrString>, i32, i64)] = &[
        ("unset is 0", None, 5, 0),
        ("an int is kept", Some(IntOrString::Int(2)), 5, 2),
        (
            "an int above replicas is clamped",
            Some(IntOrString::Int(9)),
            5,
            5,
        ),
        ("a negative int is clamped to 0", Some(IntOrString::Int(-1)), 5, 0),
        ("a percent rounds up", s("30%"), 5, 2),
        ("99% of 4 keeps one pod to update", s("99%"), 4, 3),
        ("90% of 10 is 9", s("90%"), 10, 9),
        ("a fractional percent is OpenKruise's float", s("12.5%"), 8, 1),
        ("12.5% of 9 rounds up", s("12.5%"), 9, 2),
        ("100% keeps every pod", s("100%"), 4, 4),
        ("a percent with one replica keeps it", s("99%"), 1, 1),
        (
            "an int equal to replicas keeps every pod",
            Some(IntOrString::Int(4)),
            4,
            4,
        ),
    ];
    for (name, v, replicas, want) in cases {
        assert_eq!(
            partition_replicas(v.as_ref(), *replicas).unwrap(),
            *want,
            "{name}"
        );
    }
}

#[test]
fn params_follow_openkruise_defaults_and_rounding() {
    use kruise_api::apps_v1beta1::{
        CloneSetUpdateStrategy, CloneSetUpdateStrategyType, RollingUpdateCloneSetStrategy,
    };
    let cs = |ru: Option<RollingUpdateCloneSetStrategy>, type_: Option<CloneSetUpdateStrategyType>| {
        let mut cs = CloneSet::new("cs", Default::default());
        cs.spec.replicas = Some(4);
        cs.spec.update_strategy = CloneSetUpdateStrategy {
            type_,
            rolling_update: ru,
        };
        cs
    };
    let s = |v: &str| Some(IntOrString::String(v.into()));
    let ru = |surge, unavailable, paused| RollingUpdateCloneSetStrategy {
        max_surge: surge,
        max_unavailable: unavailable,
        paused,
        ..Default::default()
    };
    let cases = [
        (
            "default maxUnavailable 20% rounds up without surge",
            cs(Some(ru(None, None, false)), None),
            0,
            1,
        ),
        (
            "maxUnavailable rounds down with surge",
            cs(Some(ru(s("25%"), s("30%"), false)), None),
            1,
            1,
        ),
        (
            "20% rounds down to 0 with surge",
            cs(Some(ru(Some(IntOrString::Int(1)), None, false)), None),
            1,
            0,
        ),
        (
            "paused forces maxSurge to 0 (and maxUnavailable rounds up)",
            cs(Some(ru(s("50%"), s("30%"), true)), None),
            0,
            2,
        ),
        (
            "OnDelete with rollingUpdate still reads it",
            cs(
                Some(ru(s("50%"), None, false)),
                Some(CloneSetUpdateStrategyType::OnDelete),
            ),
            2,
            0,
        ),
        (
            "OnDelete without rollingUpdate uses floor(20%)",
            cs(None, Some(CloneSetUpdateStrategyType::OnDelete)),
            0,
            0,
        ),
        ("no rollingUpdate uses floor(20%)", cs(None, None), 0, 0),
    ];
    for (name, cs, surge, unavailable) in cases {
        let p = Params::resolve(&cs, false, false).unwrap();
        assert_eq!((p.max_surge, p.max_unavailable), (surge, unavailable), "{name}");
        assert_eq!(p.scale_max_unavailable, i64::from(i32::MAX), "{name}");
    }
}

/// Each row: name, params, pods, current == update, expected diffs.
#[test]
fn diffs() {
    let d = Diffs::default;
    let rows: Vec<(&str, Params, Vec<PodFacts>, bool, Diffs)> = vec![
        (
            "steady state does nothing",
            params(3, 0, 0, 1),
            pods(&[(3, NEW)]),
            true,
            d(),
        ),
        (
            "scale up from zero creates replicas at the update revision",
            params(3, 0, 0, 1),
            vec![],
            true,
            Diffs {
                scale_up_num: 3,
                scale_up_limit: 3,
                ..d()
            },
        ),
        (
            "scale up with a partition creates the missing old pods first",
            params(4, 2, 0, 1),
            pods(&[(1, OLD)]),
            false,
            Diffs {
                scale_up_num: 3,
                scale_up_num_old_revision: 1,
                scale_up_limit: 3,
                ..d()
            },
        ),
        (
            "scaleStrategy.maxUnavailable limits scale-up by the unavailable pods",
            Params {
                scale_max_unavailable: 2,
                ..params(5, 0, 0, 1)
            },
            pods(&[(1, unavailable(NEW))]),
            true,
            Diffs {
                scale_up_num: 4,
                scale_up_limit: 1,
                ..d()
            },
        ),
        (
            "scale down prefers the old revision down to the partition",
            params(2, 1, 0, 1),
            pods(&[(2, OLD), (2, NEW)]),
            false,
            Diffs {
                scale_down_num: 2,
                scale_down_num_old_revision: 1,
                delete_ready_limit: 3,
                ..d()
            },
        ),
        (
            "worked example 1 (recreate rollout): five old pods, update one at a time",
            params(5, 0, 0, 1),
            pods(&[(5, OLD)]),
            false,
            Diffs {
                update_num: 5,
                update_max_unavailable: 1,
                ..d()
            },
        ),
        (
            "worked example 1: the specified-delete pod may be deleted though ready",
            params(5, 0, 0, 1),
            pods(&[(4, OLD), (1, to_delete(OLD))]),
            false,
            Diffs {
                delete_ready_limit: 1,
                update_num: 5,
                update_max_unavailable: 1,
                ..d()
            },
        ),
        (
            "worked example 1: after the delete one pod is created at the update revision",
            params(5, 0, 0, 1),
            pods(&[(4, OLD)]),
            false,
            Diffs {
                scale_up_num: 1,
                scale_up_limit: 1,
                update_num: 4,
                update_max_unavailable: 0,
                ..d()
            },
        ),
        (
            "worked example 2 (surge rollout): one surge pod is created at the update revision",
            params(4, 0, 1, 0),
            pods(&[(4, OLD)]),
            false,
            Diffs {
                scale_up_num: 1,
                scale_up_limit: 1,
                use_surge: 1,
                update_num: 4,
                ..d()
            },
        ),
        (
            "worked example 2: while the surge pod is unavailable the budget is one",
            params(4, 0, 1, 0),
            pods(&[(4, OLD), (1, unavailable(NEW))]),
            false,
            Diffs {
                use_surge: 1,
                update_num: 3,
                update_max_unavailable: 1,
                ..d()
            },
        ),
        (
            "worked example 2: the finished rollout scales back down to replicas",
            params(4, 0, 1, 0),
            pods(&[(5, NEW)]),
            true,
            Diffs {
                scale_down_num: 1,
                delete_ready_limit: 1,
                ..d()
            },
        ),
        (
            "worked example 3: partition 99% of 4 updates exactly one pod",
            params(4, 3, 0, 1),
            pods(&[(4, OLD)]),
            false,
            Diffs {
                update_num: 1,
                update_max_unavailable: 1,
                ..d()
            },
        ),
        (
            "worked example 3: nothing more once one pod is updated",
            params(4, 3, 0, 1),
            pods(&[(3, OLD), (1, NEW)]),
            false,
            d(),
        ),
        (
            "without the rollback gate pods never return to the current revision",
            params(4, 3, 0, 1),
            pods(&[(4, NEW)]),
            false,
            d(),
        ),
        (
            "with the rollback gate a raised partition rolls pods back",
            Params {
                partition_rollback: true,
                ..params(4, 3, 0, 1)
            },
            pods(&[(1, OLD), (3, NEW)]),
            false,
            Diffs {
                update_num: -2,
                update_max_unavailable: 1,
                ..d()
            },
        ),
        (
            "rollback with surge creates the surge pod at the current revision",
            Params {
                partition_rollback: true,
                ..params(4, 3, 1, 0)
            },
            pods(&[(1, OLD), (3, NEW)]),
            false,
            Diffs {
                scale_up_num: 1,
                scale_up_num_old_revision: 3,
                scale_up_limit: 1,
                use_surge: 1,
                use_surge_old_revision: 1,
                update_num: -2,
                ..d()
            },
        ),
        (
            "specified-delete pods beyond maxUnavailable use surge to keep capacity",
            params(4, 0, 1, 0),
            pods(&[(3, NEW), (1, to_delete(NEW))]),
            true,
            Diffs {
                scale_up_num: 1,
                scale_up_limit: 1,
                use_surge: 1,
                ..d()
            },
        ),
        (
            "an old specified-delete pod surges at the current revision",
            params(4, 2, 1, 0),
            pods(&[(1, OLD), (1, to_delete(OLD)), (2, NEW)]),
            false,
            Diffs {
                scale_up_num: 1,
                scale_up_num_old_revision: 1,
                scale_up_limit: 1,
                use_surge: 1,
                use_surge_old_revision: 1,
                ..d()
            },
        ),
        (
            "PreparingDelete pods count in the total and as unavailable",
            params(3, 0, 0, 1),
            pods(&[(3, NEW), (1, pre_deleting(NEW))]),
            true,
            Diffs {
                scale_down_num: 1,
                delete_ready_limit: 1,
                ..d()
            },
        ),
        (
            "excludePreparingDelete replaces a PreparingDelete pod",
            Params {
                exclude_preparing_delete: true,
                ..params(3, 0, 0, 1)
            },
            pods(&[(2, NEW), (1, pre_deleting(NEW))]),
            true,
            Diffs {
                scale_up_num: 1,
                scale_up_limit: 1,
                ..d()
            },
        ),
        (
            "unavailable pods shrink the ready-delete budget",
            params(2, 0, 0, 1),
            pods(&[(2, NEW), (1, unavailable(NEW))]),
            true,
            Diffs {
                scale_down_num: 1,
                delete_ready_limit: 1,
                ..d()
            },
        ),
        (
            "an unavailable surplus pod leaves no ready-delete budget when maxUnavailable is 0",
            params(2, 0, 0, 0),
            pods(&[(2, NEW), (2, unavailable(NEW))]),
            true,
            Diffs {
                scale_down_num: 2,
                delete_ready_limit: 0,
                ..d()
            },
        ),
    ];
    for (name, p, pods, same, want) in rows {
        assert_eq!(calculate(&p, &pods, same), want, "{name}");
    }
}
