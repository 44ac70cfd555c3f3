//! Int-or-percent fields resolved against a replica count, on `kruise-core`'s rule, with the field
//! named in the error.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_core::intstr::{self, Round};

/// An int-or-percent value that cannot be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid int-or-percent value {value:?} for {field}")]
pub struct InvalidIntOrPercent {
    /// The field path, e.g. `updateStrategy.rollingUpdate.partition`.
    pub field: &'static str,
    /// The value as written.
    pub value: String,
}

/// Resolves an int-or-percent against `total`, rounded up or down: apimachinery's
/// `intstr.GetScaledValueFromIntOrPercent` (a string must be `N%`).
pub fn scaled(
    value: &IntOrString,
    total: i32,
    round_up: bool,
    field: &'static str,
) -> Result<i64, InvalidIntOrPercent> {
    intstr::scaled(value, i64::from(total), Round::up_if(round_up)).map_err(|_| invalid(value, field))
}

pub(crate) fn invalid(value: &IntOrString, field: &'static str) -> InvalidIntOrPercent {
    InvalidIntOrPercent {
        field,
        value: match value {
            IntOrString::Int(i) => i.to_string(),
            IntOrString::String(s) => s.clone(),
        },
    }
}

/// [`scaled`] as the `int32` the Kubernetes fields hold; a result out of that range is invalid too.
pub fn scaled_i32(
    value: &IntOrString,
    total: i32,
    round_up: bool,
    field: &'static str,
) -> Result<i32, InvalidIntOrPercent> {
    let scaled = scaled(value, total, round_up, field)?;
    i32::try_from(scaled).map_err(|_| InvalidIntOrPercent {
        field,
        value: match value {
            IntOrString::Int(i) => i.to_string(),
            IntOrString::String(s) => s.clone(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_or_percent_resolution() {
        let s = |v: &str| IntOrString::String(v.into());
        type Case = (&'static str, IntOrString, i32, bool, Result<i64, ()>);
        let cases: &[Case] = &[
            ("an int is taken as is", IntOrString::Int(3), 10, true, Ok(3)),
            ("20% of 5 rounded up is 1", s("20%"), 5, true, Ok(1)),
            ("20% of 4 rounded up is 1", s("20%"), 4, true, Ok(1)),
            ("20% of 4 rounded down is 0", s("20%"), 4, false, Ok(0)),
            ("50% of 3 rounded up is 2", s("50%"), 3, true, Ok(2)),
            ("50% of 3 rounded down is 1", s("50%"), 3, false, Ok(1)),
            ("0% is 0", s("0%"), 7, true, Ok(0)),
            ("a string without % is invalid", s("20"), 5, true, Err(())),
            ("a non-number is invalid", s("x%"), 5, true, Err(())),
        ];
        for (name, v, total, up, want) in cases {
            assert_eq!(scaled(v, *total, *up, "f").map_err(|_| ()), *want, "{name}");
        }
    }
}
