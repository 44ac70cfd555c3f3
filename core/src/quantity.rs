//! Kubernetes resource quantities (apimachinery's `resource.Quantity`, `pkg/api/resource/quantity.go`):
//! parsing with its suffixes, exponents and error messages, addition, negation, comparison, the
//! milli-value, rounding up to a scale, and the text Kubernetes writes (the parsed text while it is kept,
//! else the canonical form). The one home of quantity rules in kruise-rs: SidecarSet hashing, the
//! resources policy and the in-place resize check all use it.
//!
//! A value is `unscaled × 10^scale`, exact. Kubernetes switches between an `int64` and an arbitrary-precision
//! representation; the results only differ from an exact computation once a milli-value leaves the `i64`
//! range (Kubernetes then wraps or yields 0), where this module reports [`QuantityError::Range`] instead.

use std::cmp::Ordering;

mod parse;
#[cfg(test)]
mod tests;

use parse::{fast_path_keeps_text, interpret, split};

/// Why a text is not a quantity; the messages are apimachinery's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// apimachinery's `ErrFormatWrong`.
    #[error("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")]
    Format,
    /// apimachinery's `ErrSuffix`.
    #[error("unable to parse quantity's suffix")]
    Suffix,
    /// A value outside what kruise-rs computes exactly (Kubernetes would wrap it or drop it to 0).
    #[error("kruise-rs: quantity out of the supported range")]
    Range,
}

/// How a quantity is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The zero value of a Go `Quantity` (a missing map entry); written as `DecimalExponent`.
    Unset,
    DecimalExponent,
    BinarySI,
    DecimalSI,
}

#[derive(Clone, Debug)]
pub struct Quantity {
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
    pub fn unset() -> Quantity {
        Quantity {
            unscaled: 0,
            scale: 0,
            format: Format::Unset,
            text: None,
        }
    }

    /// `resource.NewQuantity(v, DecimalSI)`.
    pub fn from_int(v: i64) -> Quantity {
        Quantity {
            unscaled: v.into(),
            scale: 0,
            format: Format::DecimalSI,
            text: None,
        }
    }

    /// `resource.NewMilliQuantity(v, DecimalSI)`.
    pub fn from_milli(v: i64) -> Quantity {
        Quantity {
            unscaled: v.into(),
            scale: -3,
            format: Format::DecimalSI,
            text: None,
        }
    }

    /// `resource.ParseQuantity`.
    pub fn parse(s: &str) -> Result<Quantity, QuantityError> {
        if s.is_empty() {
            return Err(QuantityError::Format);
        }
        if s == "0" {
            return Ok(Quantity {
                text: Some(s.to_string()),
                ..Quantity::from_int(0)
            });
        }
        let (positive, num, denom, suffix) = split(s)?;
        let (base, exponent, mut format) = interpret(suffix).ok_or(QuantityError::Suffix)?;
        let digits = format!("{num}{denom}");
        let significant = digits.trim_start_matches('0');
        if significant.len() > MAX_DIGITS {
            return Err(QuantityError::Range);
        }
        let mut unscaled: i128 = significant.parse().unwrap_or(0);
        let denom_len = i32::try_from(denom.len()).map_err(|_| QuantityError::Range)?;
        let mut scale;
        if base == 10 {
            scale = exponent.checked_sub(denom_len).ok_or(QuantityError::Range)?;
        } else {
            unscaled = unscaled
                .checked_mul(1i128 << exponent)
                .ok_or(QuantityError::Range)?;
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

    pub fn is_zero(&self) -> bool {
        self.unscaled == 0
    }

    pub fn is_negative(&self) -> bool {
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
    pub fn compare(&self, other: &Quantity) -> Ordering {
        match self.aligned(other) {
            Some((a, b, _)) => a.cmp(&b),
            // The operand that cannot be brought to the finer scale is the larger in magnitude.
            None if self.scale > other.scale => self.unscaled.signum().cmp(&0),
            None => 0.cmp(&other.unscaled.signum()),
        }
    }

    /// `Quantity.Add`: a zero receiver takes the operand's format.
    pub fn add(&mut self, other: &Quantity) -> Result<(), QuantityError> {
        if self.is_zero() {
            self.format = other.format;
        }
        let (a, b, s) = self.aligned(other).ok_or(QuantityError::Range)?;
        self.unscaled = a.checked_add(b).ok_or(QuantityError::Range)?;
        self.scale = s;
        self.text = None;
        Ok(())
    }

    /// `Quantity.Neg`.
    pub fn neg(&mut self) {
        self.unscaled = -self.unscaled;
        self.text = None;
    }

    /// `Quantity.MilliValue`: rounded away from zero.
    pub fn milli_value(&self) -> Result<i64, QuantityError> {
        let milli = if self.scale >= -3 {
            scale_up(self.unscaled, self.scale + 3).ok_or(QuantityError::Range)?
        } else {
            scale_down_away(self.unscaled, -3 - self.scale)
        };
        i64::try_from(milli).map_err(|_| QuantityError::Range)
    }

    /// `Quantity.SetMilli`: the format is kept.
    pub fn set_milli(&mut self, v: i64) {
        self.unscaled = v.into();
        self.scale = -3;
        self.text = None;
    }

    /// `Quantity.RoundUp`: rounds away from zero to at most `scale` decimal places; the text is kept when
    /// nothing changes. Returns whether the value was exact.
    pub fn round_up(&mut self, scale: i32) -> bool {
        if self.scale >= scale {
            return true;
        }
        let rounded = scale_down_away(self.unscaled, scale - self.scale);
        let exact = scale_up(rounded, scale - self.scale) == Some(self.unscaled);
        self.unscaled = rounded;
        self.scale = scale;
        self.text = None;
        exact
    }

    /// `Quantity.String()` (and what `MarshalJSON` writes): the kept text, else the canonical form.
    pub fn to_go_string(&self) -> String {
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
