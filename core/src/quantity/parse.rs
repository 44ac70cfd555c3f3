//! apimachinery's quantity scanner: the text's parts, its suffix, and whether the text is kept.

use super::Format;
use super::QuantityError;

/// Kubernetes' scanner: sign, numerator (leading zeros dropped), denominator and suffix.
pub(super) fn split(s: &str) -> Result<(bool, &str, &str, &str), QuantityError> {
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
        Err(QuantityError::Format)
    }
}

/// The suffix's base, exponent and format.
pub(super) fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
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
pub(super) fn fast_path_keeps_text(
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
