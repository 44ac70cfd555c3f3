//! Table tests of [`super::Quantity`] against apimachinery's behaviour.

use super::*;

fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

#[test]
fn parses_and_writes_as_kubernetes() {
    for (input, text) in [
        ("100m", "100m"),
        ("0.5", "500m"),
        ("1", "1"),
        ("1000m", "1"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("1000", "1k"),
        ("1500", "1500"),
        ("0.0001", "100u"),
        ("1e3", "1e3"),
        ("1E3", "1E3"),
        ("100Ki", "100Ki"),
        ("0", "0"),
        ("08m", "08m"),
        ("+5m", "+5m"),
        ("5.m", "5.m"),
        ("0.5Ki", "512"),
        ("0.1Ki", "102400m"),
        ("1.0000000001", "1000000001n"),
        ("1n", "1n"),
        ("-1.5Gi", "-1536Mi"),
        ("000", "0"),
        (".", "0"),
    ] {
        assert_eq!(q(input).to_go_string(), text, "{input}");
    }
    for input in ["08m", "+5m", "1E3"] {
        let mut v = q(input);
        v.neg();
        v.neg();
        assert_ne!(
            v.to_go_string(),
            input,
            "{input}: the text goes when the value changes"
        );
    }
}

#[test]
fn parse_errors_are_kubernetes_messages() {
    for (input, error) in [
        ("", QuantityError::Format),
        ("1e5m", QuantityError::Format),
        ("abc", QuantityError::Format),
        ("1ki", QuantityError::Suffix),
        ("1e", QuantityError::Suffix),
        ("1Mb", QuantityError::Format),
        ("1MM", QuantityError::Suffix),
    ] {
        assert_eq!(Quantity::parse(input).err(), Some(error), "{input}");
    }
}

#[test]
fn arithmetic() {
    let mut a = Quantity::from_int(0);
    a.add(&q("200Mi")).unwrap();
    a.add(&q("400Mi")).unwrap();
    assert_eq!(a.to_go_string(), "600Mi");
    assert_eq!(a.milli_value(), Ok(629_145_600_000));
    assert_eq!(q("1n").milli_value(), Ok(1));
    assert_eq!(q("-1n").milli_value(), Ok(-1));
    let mut b = q("100m");
    b.set_milli(1500);
    assert_eq!(b.to_go_string(), "1500m");
    let mut m = q("1Gi");
    m.set_milli(1_500);
    assert_eq!(
        m.to_go_string(),
        "1500m",
        "a fraction of a byte is written as DecimalSI"
    );
    m.set_milli(1_025_000);
    assert_eq!(m.to_go_string(), "1025");
    assert_eq!(q("1Gi").compare(&q("1024Mi")), Ordering::Equal);
    assert_eq!(q("1e30").compare(&q("1n")), Ordering::Greater);
    assert_eq!(q("1n").compare(&q("1e30")), Ordering::Less);
    assert_eq!(q("1e40").milli_value(), Err(QuantityError::Range));
    let mut unset = Quantity::unset();
    unset.add(&q("1Ki")).unwrap();
    assert_eq!(unset.to_go_string(), "1Ki");
}

#[test]
fn round_up_keeps_the_text_when_nothing_changes() {
    // What a defaulted ResourceList (`SetDefaults_ResourceList`: round up to milli) marshals to.
    for (input, text) in [
        ("100m", "100m"),
        ("0.5", "500m"),
        ("1000m", "1"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("512", "512"),
        ("1k", "1k"),
        ("1000", "1k"),
        ("0.0001", "1m"),
        ("1e3", "1e3"),
        ("100Ki", "100Ki"),
        ("08m", "08m"),
        ("1n", "1m"),
        ("-1n", "-1m"),
        ("1.0005", "1001m"),
    ] {
        let mut v = q(input);
        v.round_up(-3);
        assert_eq!(v.to_go_string(), text, "{input}");
    }
    let mut v = q("1.5");
    assert!(v.round_up(-3), "exact");
    let mut v = q("1.0001");
    assert!(!v.round_up(-3), "rounded");
    assert_eq!(v.milli_value(), Ok(1001));
}

#[test]
fn comparison_is_by_value() {
    for (a, b) in [
        ("100m", "0.1"),
        ("1Ki", "1024"),
        ("1e3", "1k"),
        ("1Gi", "1073741824"),
        ("0", "0m"),
    ] {
        assert_eq!(q(a).compare(&q(b)), Ordering::Equal, "{a} = {b}");
    }
    assert_eq!(q("1").compare(&q("999m")), Ordering::Greater);
    assert_eq!(q("-1").compare(&q("0")), Ordering::Less);
    assert_eq!(q("1e400").compare(&q("1")), Ordering::Greater);
    assert_eq!(Quantity::parse("lots").err(), Some(QuantityError::Format));
}
