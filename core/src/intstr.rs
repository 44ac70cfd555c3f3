//! Int-or-percent values (`intstr.IntOrString`) resolved against a total, with the three readings
//! OpenKruise's call sites use:
//!
//! | function | Go original | a string is | percent number |
//! | --- | --- | --- | --- |
//! | [`scaled`] | apimachinery `intstr.GetScaledValueFromIntOrPercent` | `N%` only | integer |
//! | [`value_from`] | apimachinery `intstr.GetValueFromIntOrPercent` (deprecated) | always a percentage, every `%` removed | integer |
//! | [`kruise_scaled`] | OpenKruise `pkg/util/tools.go` `GetScaledValueFromIntOrPercent` | `N%` only | float (`12.5%`) |
//!
//! UnitedDeployment's subset replicas have a fourth reading, [`subset_replicas`] (OpenKruise's
//! `ParseSubsetReplicas`): `N%` with an integer `N` in 0–100, rounded half up, and no negative int.
//!
//! An int is taken as is; a percentage is `ceil` or `floor` of `N * total / 100` ([`Round`]). Error
//! texts are the Go functions' own. [`int_value`] is `IntOrString.IntValue()`.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::Value;

use crate::go;

/// How a percentage of a total is rounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    Up,
    Down,
}

impl Round {
    /// `Up` when `up`.
    pub fn up_if(up: bool) -> Round {
        if up { Round::Up } else { Round::Down }
    }
}

/// An int-or-percent as written: an integer or a string (typed, or read from JSON).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IntOrPercent<'a> {
    Int(i64),
    Str(&'a str),
}

impl<'a> From<&'a IntOrString> for IntOrPercent<'a> {
    fn from(value: &'a IntOrString) -> Self {
        match value {
            IntOrString::Int(i) => IntOrPercent::Int(i64::from(*i)),
            IntOrString::String(s) => IntOrPercent::Str(s),
        }
    }
}

impl<'a> IntOrPercent<'a> {
    /// Reads a JSON value as Go decodes an `*IntOrString`: a missing or `null` value is nil (an
    /// error), a string is a string, anything else an integer (a non-integer counts 0).
    pub fn from_json(value: Option<&'a Value>) -> Result<Self, IntOrPercentError> {
        match value {
            None | Some(Value::Null) => Err(IntOrPercentError::Nil),
            Some(Value::String(s)) => Ok(IntOrPercent::Str(s)),
            Some(v) => Ok(IntOrPercent::Int(v.as_i64().unwrap_or(0))),
        }
    }

    /// A string ending in `%`.
    pub fn is_percent(self) -> bool {
        matches!(self, IntOrPercent::Str(s) if s.ends_with('%'))
    }
}

/// Why an int-or-percent cannot be resolved, worded as the Go function that refused it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IntOrPercentError {
    /// A nil pointer.
    #[error("nil value for IntOrString")]
    Nil,
    /// OpenKruise's reading: a string without a trailing `%`.
    #[error("invalid type: string is not a percentage")]
    NotPercent,
    /// OpenKruise's reading: the number before `%` is not a float.
    #[error("strconv.ParseFloat: parsing {}: invalid syntax", go::quote(.0))]
    Float(String),
    /// apimachinery's readings, prefixed as `intstr` prefixes them.
    #[error("invalid value for IntOrString: {0}")]
    Apimachinery(Invalid),
}

/// What apimachinery's `intstr` found wrong with a string.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    #[error("invalid type: string is not a percentage")]
    NotPercent,
    /// The string as written, and `strconv.Atoi`'s error.
    #[error("invalid value {q}: {1}", q = go::quote(.0))]
    Int(String, String),
}

/// A parsed value: an integer, or a percentage to scale.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Number {
    Int(i64),
    Percent(f64),
}

fn atoi(written: &str, digits: &str) -> Result<f64, IntOrPercentError> {
    go::atoi(digits)
        .map(|n| n as f64)
        .map_err(|(_, e)| IntOrPercentError::Apimachinery(Invalid::Int(written.to_string(), e)))
}

fn scale(number: Number, total: i64, round: Round) -> i64 {
    match number {
        Number::Int(i) => i,
        Number::Percent(p) => {
            let x = p * total as f64 / 100.0;
            (match round {
                Round::Up => x.ceil(),
                Round::Down => x.floor(),
            }) as i64
        }
    }
}

/// An int as is, or the percentage `percent` reads from the string, scaled against `total`.
fn resolve(
    value: IntOrPercent<'_>,
    total: i64,
    round: Round,
    percent: impl FnOnce(&str) -> Result<f64, IntOrPercentError>,
) -> Result<i64, IntOrPercentError> {
    let number = match value {
        IntOrPercent::Int(i) => Number::Int(i),
        IntOrPercent::Str(s) => Number::Percent(percent(s)?),
    };
    Ok(scale(number, total, round))
}

/// apimachinery's `intstr.GetScaledValueFromIntOrPercent`: a string must be `N%`, `N` an integer.
pub fn scaled<'a>(
    value: impl Into<IntOrPercent<'a>>,
    total: i64,
    round: Round,
) -> Result<i64, IntOrPercentError> {
    resolve(value.into(), total, round, |s| {
        let digits = s
            .strip_suffix('%')
            .ok_or(IntOrPercentError::Apimachinery(Invalid::NotPercent))?;
        atoi(s, digits)
    })
}

/// apimachinery's deprecated `intstr.GetValueFromIntOrPercent`: every string is a percentage, with
/// or without `%` (all `%` signs are removed before reading the integer).
pub fn value_from<'a>(
    value: impl Into<IntOrPercent<'a>>,
    total: i64,
    round: Round,
) -> Result<i64, IntOrPercentError> {
    resolve(value.into(), total, round, |s| atoi(s, &s.replace('%', "")))
}

/// OpenKruise's `util.GetScaledValueFromIntOrPercent`: a string must end in `%`, the number before
/// it is a float (`"12.5%"` is accepted).
pub fn kruise_scaled<'a>(
    value: impl Into<IntOrPercent<'a>>,
    total: i64,
    round: Round,
) -> Result<i64, IntOrPercentError> {
    resolve(value.into(), total, round, |s| {
        let digits = s.strip_suffix('%').ok_or(IntOrPercentError::NotPercent)?;
        // Go's `ParseFloat` takes no surrounding spaces; Rust's parser agrees on the rest of what
        // the API stores (signs, exponents, `inf`, `nan`).
        digits
            .parse()
            .map_err(|_| IntOrPercentError::Float(digits.to_string()))
    })
}

/// Go's `IntOrString.IntValue()`: the integer, or the string read by `strconv.Atoi` (0 when it is
/// not an integer, e.g. a percentage; clamped to 64 bits on overflow).
pub fn int_value<'a>(value: impl Into<IntOrPercent<'a>>) -> i64 {
    match value.into() {
        IntOrPercent::Int(i) => i,
        IntOrPercent::Str(s) => go::atoi(s).unwrap_or_else(|(clamped, _)| clamped),
    }
}

/// A string ending in `%` (how OpenKruise tells a percentage `maxReplicas` from an integer one).
pub fn is_percent(value: &IntOrString) -> bool {
    IntOrPercent::from(value).is_percent()
}

/// Why a UnitedDeployment subset's `replicas` / `minReplicas` / `maxReplicas` cannot be read (the
/// texts of OpenKruise's `ParseSubsetReplicas`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SubsetReplicasError {
    #[error("subset replicas ({0}) should not be less than 0")]
    Negative(i64),
    #[error("subsetReplicas ({0}) should not be string when unitedDeployment replicas is empty")]
    NoTotal(String),
    #[error("subset replicas ({0}) only support integer value or percentage value with a suffix '%'")]
    NotPercent(String),
    #[error("subset replicas ({0}) should be correct percentage integer: {1}")]
    Percent(String, String),
    #[error("subset replicas ({0}) should be in range [0, 100]")]
    Range(String),
}

/// OpenKruise's `ParseSubsetReplicas`: an int (not negative) as is; `N%` (integer `N`, 0–100) of
/// `total` rounded half up. A percentage needs a total (`spec.replicas` set).
pub fn subset_replicas<'a>(
    value: impl Into<IntOrPercent<'a>>,
    total: Option<i64>,
) -> Result<i64, SubsetReplicasError> {
    let s = match value.into() {
        IntOrPercent::Int(i) if i < 0 => return Err(SubsetReplicasError::Negative(i)),
        IntOrPercent::Int(i) => return Ok(i),
        IntOrPercent::Str(s) => s,
    };
    let Some(total) = total.filter(|t| *t >= 0) else {
        return Err(SubsetReplicasError::NoTotal(s.to_string()));
    };
    let digits = s
        .strip_suffix('%')
        .ok_or_else(|| SubsetReplicasError::NotPercent(s.to_string()))?;
    let percent = go::atoi(digits).map_err(|(_, e)| SubsetReplicasError::Percent(s.to_string(), e))?;
    if !(0..=100).contains(&percent) {
        return Err(SubsetReplicasError::Range(s.to_string()));
    }
    Ok((total as f64 * percent as f64 / 100.0 + 0.5).floor() as i64)
}

#[cfg(test)]
#[path = "intstr_tests.rs"]
mod tests;
