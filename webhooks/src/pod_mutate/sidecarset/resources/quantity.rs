//! Kubernetes `resource.Quantity` as the resources policy computes with it: parsing (with Kubernetes' error
//! messages), addition, negation, comparison, the milli-value, and the text Kubernetes writes.
//!
//! A value is `unscaled × 10^scale`, exact. Kubernetes switches between an `int64` and an arbitrary-precision
//! representation; the results only differ from an exact computation once a milli-value leaves the `i64`
//! range (Kubernetes then wraps or yields 0), where this module reports [`ERR_RANGE`] instead.

use std::cmp::Ordering;

/// Kubernetes' `ErrFormatWrong`.
pub(crate) const ERR_FORMAT: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// Kubernetes' `ErrSuffix`.
pub(crate) const ERR_SUFFIX: &str = "unable to parse quantity's suffix";
/// A value outside what kruise-rs computes exactly (Kubernetes would wrap it or drop it to 0).
pub(crate) const ERR_RANGE: &str = "kruise-rs: quantity out of the supported range";

/// How a quantity is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// The zero value of a Go `Quantity` (a missing map entry); written as `DecimalExponent`.
    Unset,
    DecimalExponent,
    BinarySI,
    DecimalSI,
}

#[derive(Clone, Debug)]
pub(crate) struct Quantity {
    unscaled: i128,
    scale: i32,
    format: Format,
    /// The parsed text, which Kubernetes keeps (and writes back) while the value is not modified, when the
    /// text looked canonical to its parser.
    text: Option<String>,
}

const MAX_DIGITS: usize = 36;

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// `v × 10^n` (n ≥ 0), `None` on overflow.
fn scale_up(v: i128, n: i32) -> Option<i128> {
    if v == 0 {
        return Some(0);
    }
    v.checked_mul(pow10(u32::try_from(n).ok()?)?)
}

/// `v / 10^n` (n > 0), rounded away from zero.
fn scale_down_away(v: i128, n: i32) -> i128 {
    let Some(d) = u32::try_from(n).ok().and_then(pow10) else {
        return v.signum();
    };
    let (q, r) = (v / d, v % d);
    if r == 0 { q } else { q + v.signum() }
}

impl Quantity {
    /// The zero value of a Go `Quantity`.
    pub(crate) fn unset() -> Quantity {
        Quantity {
            unscaled: 0,
            scale: 0,
            format: Format::Unset,
            text: None,
        }
    }

    /// `resource.NewQuantity(v, DecimalSI)`.
    pub(crate) fn from_int(v: i64) -> Quantity {
        Quantity {
            unscaled: v.into(),
            scale: 0,
            format: Format::DecimalSI,
            text: None,
        }
    }

    /// `resource.NewMilliQuantity(v, DecimalSI)`.
    pub(crate) fn from_milli(v: i64) -> Quantity {
        Quantity {
            unscaled: v.into(),
            scale: -3,
            format: Format::DecimalSI,
            text: None,
        }
    }

    /// `resource.ParseQuantity`.
    pub(crate) fn parse(s: &str) -> Result<Quantity, &'static str> {
        if s.is_empty() {
            return Err(ERR_FORMAT);
        }
        if s == "0" {
            return Ok(Quantity {
                text: Some(s.to_string()),
                ..Quantity::from_int(0)
            });
        }
        let (positive, num, denom, suffix) = split(s)?;
        let (base, exponent, mut format) = interpret(suffix).ok_or(ERR_SUFFIX)?;
        let digits = format!("{num}{denom}");
        let significant = digits.trim_start_matches('0');
        if significant.len() > MAX_DIGITS {
            return Err(ERR_RANGE);
        }
        let mut unscaled: i128 = significant.parse().unwrap_or(0);
        let denom_len = i32::try_from(denom.len()).map_err(|_| ERR_RANGE)?;
        let mut scale;
        if base == 10 {
            scale = exponent.checked_sub(denom_len).ok_or(ERR_RANGE)?;
        } else {
            unscaled = unscaled.checked_mul(1i128 << exponent).ok_or(ERR_RANGE)?;
            scale = -denom_len;
        }
        // Kubernetes keeps the text on its int64 path when it looks canonical.
        let text = fast_path_keeps_text(s, num, denom, format, exponent, scale);
        if !positive {
            unscaled = -unscaled;
        }
        if scale < -9 {
            unscaled = scale_down_away(unscaled, -9 - scale);
            scale = -9;
        }
        if format == Format::BinarySI && unscaled != 0 {
            // Kubernetes caps binary quantities at the int64 maximum, and writes a binary quantity between 0
            // and 1 in decimal.
            let magnitude = Quantity {
                unscaled: unscaled.abs(),
                scale,
                format,
                text: None,
            };
            if magnitude.compare(&Quantity::from_int(i64::MAX)) == Ordering::Greater {
                unscaled = i128::from(i64::MAX) * unscaled.signum();
                scale = 0;
            } else if magnitude.compare(&Quantity::from_int(1)) == Ordering::Less {
                format = Format::DecimalSI;
            }
        }
        Ok(Quantity {
            unscaled,
            scale,
            format,
            text,
        })
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.unscaled == 0
    }

    pub(crate) fn is_negative(&self) -> bool {
        self.unscaled < 0
    }

    fn aligned(&self, other: &Quantity) -> Option<(i128, i128, i32)> {
        let s = self.scale.min(other.scale);
        Some((
            scale_up(self.unscaled, self.scale - s)?,
            scale_up(other.unscaled, other.scale - s)?,
            s,
        ))
    }

    /// `Quantity.Cmp`.
    pub(crate) fn compare(&self, other: &Quantity) -> Ordering {
        match self.aligned(other) {
            Some((a, b, _)) => a.cmp(&b),
            // The operand that cannot be brought to the finer scale is the larger in magnitude.
            None if self.scale > other.scale => self.unscaled.signum().cmp(&0),
            None => 0.cmp(&other.unscaled.signum()),
        }
    }

    /// `Quantity.Add`: a zero receiver takes the operand's format.
    pub(crate) fn add(&mut self, other: &Quantity) -> Result<(), &'static str> {
        if self.is_zero() {
            self.format = other.format;
        }
        let (a, b, s) = self.aligned(other).ok_or(ERR_RANGE)?;
        self.unscaled = a.checked_add(b).ok_or(ERR_RANGE)?;
        self.scale = s;
        self.text = None;
        Ok(())
    }

    /// `Quantity.Neg`.
    pub(crate) fn neg(&mut self) {
        self.unscaled = -self.unscaled;
        self.text = None;
    }

    /// `Quantity.MilliValue`: rounded away from zero.
    pub(crate) fn milli_value(&self) -> Result<i64, &'static str> {
        let milli = if self.scale >= -3 {
            scale_up(self.unscaled, self.scale + 3).ok_or(ERR_RANGE)?
        } else {
            scale_down_away(self.unscaled, -3 - self.scale)
        };
        i64::try_from(milli).map_err(|_| ERR_RANGE)
    }

    /// `Quantity.SetMilli`: the format is kept.
    pub(crate) fn set_milli(&mut self, v: i64) {
        self.unscaled = v.into();
        self.scale = -3;
        self.text = None;
    }

    /// `Quantity.String()`: the kept text, else the canonical form.
    pub(crate) fn to_go_string(&self) -> String {
        match &self.text {
            Some(t) => t.clone(),
            None => self.canonical(),
        }
    }

    fn integer(&self) -> Option<i128> {
        if self.scale >= 0 {
            return scale_up(self.unscaled, self.scale);
        }
        let d = pow10((-self.scale) as u32)?;
        (self.unscaled % d == 0).then_some(self.unscaled / d)
    }

    /// `Quantity.CanonicalizeBytes`.
    fn canonical(&self) -> String {
        if self.unscaled == 0 {
            return "0".into();
        }
        let mut format = self.format;
        if format == Format::BinarySI {
            let small = self.compare(&Quantity::from_int(-1024)) == Ordering::Greater
                && self.compare(&Quantity::from_int(1024)) == Ordering::Less;
            match self.integer() {
                Some(mut v) if !small => {
                    let mut times = 0;
                    while v.abs() >= 1024 && v % 1024 == 0 {
                        v /= 1024;
                        times += 1;
                    }
                    let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
                        .get(times)
                        .copied()
                        .unwrap_or("");
                    return format!("{v}{suffix}");
                }
                _ => format = Format::DecimalSI,
            }
        }
        let (mut m, mut e) = (self.unscaled, self.scale);
        while m % 10 == 0 {
            m /= 10;
            e += 1;
        }
        while e.rem_euclid(3) != 0 {
            match m.checked_mul(10) {
                Some(v) => m = v,
                None => return format!("{m}e{e}"),
            }
            e -= 1;
        }
        let suffix = match format {
            Format::DecimalSI => match e {
                -9 => "n",
                -6 => "u",
                -3 => "m",
                3 => "k",
                6 => "M",
                9 => "G",
                12 => "T",
                15 => "P",
                18 => "E",
                // Kubernetes has no suffix for other exponents and writes none.
                _ => "",
            }
            .to_string(),
            _ if e == 0 => String::new(),
            _ => format!("e{e}"),
        };
        format!("{m}{suffix}")
    }
}

/// Kubernetes' scanner: sign, numerator (leading zeros dropped), denominator and suffix.
fn split(s: &str) -> Result<(bool, &str, &str, &str), &'static str> {
    let b = s.as_bytes();
    let end = b.len();
    let mut pos = 0;
    let mut positive = true;
    match b[0] {
        b'-' => {
            positive = false;
            pos = 1;
        }
        b'+' => pos = 1,
        _ => {}
    }
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos == end {
        return Ok((positive, "0", "", ""));
    }
    let start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    let num = if pos == start { "0" } else { &s[start..pos] };
    if pos == end {
        return Ok((positive, num, "", ""));
    }
    let mut denom = "";
    if b[pos] == b'.' {
        pos += 1;
        let start = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &s[start..pos];
        if pos == end {
            return Ok((positive, num, denom, ""));
        }
    }
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && matches!(b[pos], b'-' | b'+') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos == end {
        Ok((positive, num, denom, &s[suffix_start..]))
    } else {
        Err(ERR_FORMAT)
    }
}

/// The suffix's base, exponent and format.
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    let decimal = |e| Some((10, e, Format::DecimalSI));
    let binary = |e| Some((2, e, Format::BinarySI));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        s if s.len() > 1 && s.starts_with(['e', 'E']) => {
            let e: i64 = s[1..].parse().ok()?;
            // Go truncates the int64 to int32.
            Some((10, e as i32, Format::DecimalExponent))
        }
        _ => None,
    }
}

/// Whether Kubernetes' int64 parsing path applies and keeps `s` as the quantity's text.
fn fast_path_keeps_text(
    s: &str,
    num: &str,
    denom: &str,
    format: Format,
    exponent: i32,
    scale: i32,
) -> Option<String> {
    let total = i32::try_from(num.len() + denom.len()).ok()?;
    let precision = match format {
        Format::BinarySI if denom.is_empty() => {
            let n = i32::try_from(num.len()).ok()?;
            15 - n - (exponent as f32 * 3.0 / 10.0) as i32 - 1
        }
        Format::BinarySI => -1,
        _ => 18 - total,
    };
    if precision < 0 || scale < -9 {
        return None;
    }
    let shifted = format!("{num}{denom}");
    let value: i64 = shifted.parse().ok()?;
    if format == Format::BinarySI {
        value.checked_mul(1i64.checked_shl(exponent as u32)?)?;
        (exponent % 10 == 0 && value & 7 != 0).then(|| s.to_string())
    } else {
        (scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0')).then(|| s.to_string())
    }
}

#[cfg(test)]
mod tests {
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
            ("", ERR_FORMAT),
            ("1e5m", ERR_FORMAT),
            ("abc", ERR_FORMAT),
            ("1ki", ERR_SUFFIX),
            ("1e", ERR_SUFFIX),
            ("1Mb", ERR_FORMAT),
            ("1MM", ERR_SUFFIX),
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
        assert_eq!(q("1e40").milli_value(), Err(ERR_RANGE));
        let mut unset = Quantity::unset();
        unset.add(&q("1Ki")).unwrap();
        assert_eq!(unset.to_go_string(), "1Ki");
    }
}
