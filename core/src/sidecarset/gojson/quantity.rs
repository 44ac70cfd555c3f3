//! `resource.Quantity` as Go's `MarshalJSON` writes it, for the hashed encoding.

/// `resource.Quantity` in canonical form (what `MarshalJSON` writes), rounded up to milli precision when
/// `milli` (`SetDefaults_ResourceList`). Values it cannot parse are returned unchanged.
pub fn canonical_quantity(s: &str, milli: bool) -> String {
    parse_quantity(s)
        .and_then(|q| q.canonical(milli))
        .unwrap_or_else(|| s.to_string())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    DecimalSI,
    BinarySI,
    DecimalExponent,
}

struct Quantity {
    negative: bool,
    /// value = mantissa * 10^exp10
    mantissa: u128,
    exp10: i32,
    format: Format,
}

fn parse_quantity(s: &str) -> Option<Quantity> {
    let s = s.trim();
    let (negative, rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let num_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(num_end);
    if number.is_empty() || number == "." || number.matches('.').count() > 1 {
        return None;
    }
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    let digits = format!("{int_part}{frac_part}");
    let mut mantissa: u128 = digits.trim_start_matches('0').parse().unwrap_or(0);
    if digits.trim_start_matches('0').len() > 30 {
        return None;
    }
    let mut exp10 = -(frac_part.len() as i32);
    let (format, binary_pow) = match suffix {
        "" => (Format::DecimalSI, 0),
        "n" => {
            exp10 -= 9;
            (Format::DecimalSI, 0)
        }
        "u" => {
            exp10 -= 6;
            (Format::DecimalSI, 0)
        }
        "m" => {
            exp10 -= 3;
            (Format::DecimalSI, 0)
        }
        "k" => {
            exp10 += 3;
            (Format::DecimalSI, 0)
        }
        "M" => {
            exp10 += 6;
            (Format::DecimalSI, 0)
        }
        "G" => {
            exp10 += 9;
            (Format::DecimalSI, 0)
        }
        "T" => {
            exp10 += 12;
            (Format::DecimalSI, 0)
        }
        "P" => {
            exp10 += 15;
            (Format::DecimalSI, 0)
        }
        "E" => {
            exp10 += 18;
            (Format::DecimalSI, 0)
        }
        "Ki" => (Format::BinarySI, 1),
        "Mi" => (Format::BinarySI, 2),
        "Gi" => (Format::BinarySI, 3),
        "Ti" => (Format::BinarySI, 4),
        "Pi" => (Format::BinarySI, 5),
        "Ei" => (Format::BinarySI, 6),
        e if e.starts_with(['e', 'E']) => {
            let n: i32 = e[1..].parse().ok()?;
            exp10 += n;
            (Format::DecimalExponent, 0)
        }
        _ => return None,
    };
    for _ in 0..binary_pow {
        mantissa = mantissa.checked_mul(1024)?;
    }
    Some(Quantity {
        negative,
        mantissa,
        exp10,
        format,
    })
}

impl Quantity {
    fn round_up_to(&mut self, scale: i32) {
        if self.exp10 >= scale {
            return;
        }
        let mut divisor: u128 = 1;
        for _ in 0..(scale - self.exp10) {
            divisor = divisor.saturating_mul(10);
        }
        let q = self.mantissa / divisor;
        let r = self.mantissa % divisor;
        self.mantissa = if r > 0 { q + 1 } else { q };
        self.exp10 = scale;
    }

    fn canonical(mut self, milli: bool) -> Option<String> {
        // Parsing keeps nano precision (rounding up); defaulting a ResourceList rounds up to milli.
        self.round_up_to(-9);
        if milli {
            self.round_up_to(-3);
        }
        if self.mantissa == 0 {
            return Some("0".to_string());
        }
        let sign = if self.negative { "-" } else { "" };
        // Normalise: strip trailing zeros into the exponent.
        while self.mantissa.is_multiple_of(10) {
            self.mantissa /= 10;
            self.exp10 += 1;
        }
        let mut format = self.format;
        if format == Format::BinarySI {
            // Integer value needed, and |v| >= 1024, else DecimalSI.
            if self.exp10 < 0 {
                format = Format::DecimalSI;
            } else {
                let mut value = self.mantissa;
                for _ in 0..self.exp10 {
                    value = value.checked_mul(10)?;
                }
                if value < 1024 {
                    format = Format::DecimalSI;
                } else {
                    let mut exp = 0;
                    while value.is_multiple_of(1024) && exp < 6 {
                        value /= 1024;
                        exp += 1;
                    }
                    let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][exp];
                    return Some(format!("{sign}{value}{suffix}"));
                }
            }
        }
        let (mut mantissa, mut exp) = (self.mantissa, self.exp10);
        match exp.rem_euclid(3) {
            1 => {
                mantissa = mantissa.checked_mul(10)?;
                exp -= 1;
            }
            2 => {
                mantissa = mantissa.checked_mul(100)?;
                exp -= 2;
            }
            _ => {}
        }
        let suffix = match (format, exp) {
            (Format::DecimalExponent, 0) => String::new(),
            (Format::DecimalExponent, e) => format!("e{e}"),
            (_, -9) => "n".into(),
            (_, -6) => "u".into(),
            (_, -3) => "m".into(),
            (_, 0) => String::new(),
            (_, 3) => "k".into(),
            (_, 6) => "M".into(),
            (_, 9) => "G".into(),
            (_, 12) => "T".into(),
            (_, 15) => "P".into(),
            (_, 18) => "E".into(),
            (_, e) => format!("e{e}"),
        };
        Some(format!("{sign}{mantissa}{suffix}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities() {
        for (input, want) in [
            ("100m", "100m"),
            ("0.5", "500m"),
            ("1", "1"),
            ("1000m", "1"),
            ("1024Mi", "1Gi"),
            ("1.5Gi", "1536Mi"),
            ("512", "512"),
            ("1k", "1k"),
            ("1000", "1k"),
            ("1500", "1500"),
            ("0.0001", "1m"),
            ("1e3", "1e3"),
            ("100Ki", "100Ki"),
            ("0", "0"),
            ("junk", "junk"),
        ] {
            assert_eq!(canonical_quantity(input, true), want, "{input}");
        }
    }
}
