use super::*;
use serde_json::json;

fn s(v: &str) -> IntOrString {
    IntOrString::String(v.into())
}

type Case = (&'static str, IntOrString, i64, Round, Result<i64, &'static str>);

#[test]
fn strict_reading() {
    let cases: &[Case] = &[
        ("an int is taken as is", IntOrString::Int(3), 10, Round::Up, Ok(3)),
        ("a negative int too", IntOrString::Int(-2), 10, Round::Up, Ok(-2)),
        ("20% of 5 up", s("20%"), 5, Round::Up, Ok(1)),
        ("20% of 4 up", s("20%"), 4, Round::Up, Ok(1)),
        ("20% of 4 down", s("20%"), 4, Round::Down, Ok(0)),
        ("50% of 3 up", s("50%"), 3, Round::Up, Ok(2)),
        ("50% of 3 down", s("50%"), 3, Round::Down, Ok(1)),
        ("25% of 10 up", s("25%"), 10, Round::Up, Ok(3)),
        ("100% of 7", s("100%"), 7, Round::Up, Ok(7)),
        ("0% is 0", s("0%"), 7, Round::Up, Ok(0)),
        ("150% of 4", s("150%"), 4, Round::Down, Ok(6)),
        (
            "no % is refused",
            s("20"),
            5,
            Round::Up,
            Err("invalid value for IntOrString: invalid type: string is not a percentage"),
        ),
        (
            "a non-number is refused",
            s("x%"),
            5,
            Round::Up,
            Err(
                "invalid value for IntOrString: invalid value \"x%\": strconv.Atoi: parsing \"x\": invalid syntax",
            ),
        ),
        (
            "a fraction is refused",
            s("12.5%"),
            8,
            Round::Up,
            Err(
                "invalid value for IntOrString: invalid value \"12.5%\": strconv.Atoi: parsing \"12.5\": invalid syntax",
            ),
        ),
    ];
    for (name, v, total, round, want) in cases {
        let got = scaled(v, *total, *round).map_err(|e| e.to_string());
        assert_eq!(got, want.map_err(String::from), "{name}");
    }
}

#[test]
fn lenient_reading() {
    let cases: &[Case] = &[
        ("an int is taken as is", IntOrString::Int(4), 10, Round::Up, Ok(4)),
        ("50% of 5 up", s("50%"), 5, Round::Up, Ok(3)),
        (
            "a string without % is a percentage",
            s("50"),
            5,
            Round::Down,
            Ok(2),
        ),
        ("every % is removed", s("5%0"), 10, Round::Up, Ok(5)),
        (
            "a non-number is refused",
            s("x"),
            5,
            Round::Up,
            Err(
                "invalid value for IntOrString: invalid value \"x\": strconv.Atoi: parsing \"x\": invalid syntax",
            ),
        ),
    ];
    for (name, v, total, round, want) in cases {
        let got = value_from(v, *total, *round).map_err(|e| e.to_string());
        assert_eq!(got, want.map_err(String::from), "{name}");
    }
}

#[test]
fn kruise_reading() {
    let cases: &[Case] = &[
        ("an int is taken as is", IntOrString::Int(3), 10, Round::Up, Ok(3)),
        ("20% of 3 up", s("20%"), 3, Round::Up, Ok(1)),
        ("20% of 3 down", s("20%"), 3, Round::Down, Ok(0)),
        ("a fraction is a float", s("12.5%"), 8, Round::Up, Ok(1)),
        ("12.5% of 7 up", s("12.5%"), 7, Round::Up, Ok(1)),
        ("12.5% of 7 down", s("12.5%"), 7, Round::Down, Ok(0)),
        (
            "no % is refused",
            s("20"),
            5,
            Round::Up,
            Err("invalid type: string is not a percentage"),
        ),
        (
            "a non-number is refused",
            s("x%"),
            5,
            Round::Up,
            Err("strconv.ParseFloat: parsing \"x\": invalid syntax"),
        ),
    ];
    for (name, v, total, round, want) in cases {
        let got = kruise_scaled(v, *total, *round).map_err(|e| e.to_string());
        assert_eq!(got, want.map_err(String::from), "{name}");
    }
}

#[test]
fn integer_rounding_agrees_with_exact_arithmetic() {
    for percent in 0..=200i64 {
        for total in 0..=300i64 {
            let v = s(&format!("{percent}%"));
            let product = percent * total;
            let up = product / 100 + i64::from(product % 100 != 0);
            assert_eq!(scaled(&v, total, Round::Up), Ok(up), "{percent}% of {total}");
            assert_eq!(
                scaled(&v, total, Round::Down),
                Ok(product / 100),
                "{percent}% of {total}"
            );
        }
    }
}

#[test]
fn int_value_is_go_int_value() {
    let cases = [
        (IntOrString::Int(7), 7),
        (s("12"), 12),
        (s("50%"), 0),
        (s("abc"), 0),
        (s("-4"), -4),
        (s("99999999999999999999"), i64::MAX),
    ];
    for (v, want) in cases {
        assert_eq!(int_value(&v), want, "{v:?}");
    }
}

#[test]
fn json_values_read_as_go_decodes_them() {
    assert_eq!(IntOrPercent::from_json(None), Err(IntOrPercentError::Nil));
    assert_eq!(
        IntOrPercent::from_json(Some(&Value::Null)),
        Err(IntOrPercentError::Nil)
    );
    assert_eq!(IntOrPercent::from_json(Some(&json!(3))), Ok(IntOrPercent::Int(3)));
    let v = json!("30%");
    assert_eq!(IntOrPercent::from_json(Some(&v)), Ok(IntOrPercent::Str("30%")));
    assert_eq!(
        kruise_scaled(IntOrPercent::from_json(Some(&v)).unwrap(), 10, Round::Up),
        Ok(3)
    );
    assert_eq!(IntOrPercentError::Nil.to_string(), "nil value for IntOrString");
    assert!(is_percent(&s("5%")) && !is_percent(&s("5")) && !is_percent(&IntOrString::Int(5)));
}

#[test]
fn subset_replicas_rounds_half_up_and_checks_the_range() {
    let pct = |s: &'static str| IntOrPercent::Str(s);
    assert_eq!(subset_replicas(pct("50%"), Some(10)), Ok(5));
    assert_eq!(subset_replicas(pct("25%"), Some(3)), Ok(1)); // 0.75
    assert_eq!(subset_replicas(pct("25%"), Some(2)), Ok(1)); // 0.5 rounds up
    assert_eq!(subset_replicas(pct("25%"), Some(1)), Ok(0)); // 0.25
    assert_eq!(subset_replicas(IntOrPercent::Int(4), None), Ok(4));
    assert_eq!(
        subset_replicas(IntOrPercent::Int(-1), Some(3)),
        Err(SubsetReplicasError::Negative(-1))
    );
    assert_eq!(
        subset_replicas(pct("10%"), None),
        Err(SubsetReplicasError::NoTotal("10%".into()))
    );
    assert_eq!(
        subset_replicas(pct("101%"), Some(3)),
        Err(SubsetReplicasError::Range("101%".into()))
    );
    assert_eq!(
        subset_replicas(pct("3"), Some(3)),
        Err(SubsetReplicasError::NotPercent("3".into()))
    );
    assert!(matches!(
        subset_replicas(pct("1.5%"), Some(3)),
        Err(SubsetReplicasError::Percent(..))
    ));
    assert_eq!(
        SubsetReplicasError::Range("101%".into()).to_string(),
        "subset replicas (101%) should be in range [0, 100]"
    );
}
