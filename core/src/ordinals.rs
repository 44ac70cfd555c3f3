//! Advanced StatefulSet ordinals: `reserveOrdinals` entries (integers, or `"a-b"` for an inclusive
//! range) and the ordinals a set's pods take — counting up from `ordinals.start`, skipping reserved
//! ones, until `replicas` are found. One rule for the validating webhook and the planner
//! (OpenKruise: `pkg/util/api/asts.go`).

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// Why a `reserveOrdinals` range string is invalid, worded as OpenKruise's `ParseRange` error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    /// Not two parts separated by one `-`, or start above end.
    #[error("invalid range {0}")]
    Invalid(String),
    /// A part is not a decimal integer (Go's `strconv.Atoi` message).
    #[error("strconv.Atoi: parsing {quoted}: {reason}", quoted = go_quote(.0), reason = .1)]
    NotAnInteger(String, &'static str),
}

fn go_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// `strconv.Atoi` for one part: an optional sign and decimal digits.
fn atoi(part: &str) -> Result<i64, RangeError> {
    let digits = part.strip_prefix(['+', '-']).unwrap_or(part);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(RangeError::NotAnInteger(part.to_string(), "invalid syntax"));
    }
    part.parse::<i64>()
        .map_err(|_| RangeError::NotAnInteger(part.to_string(), "value out of range"))
}

/// `"a-b"` as the inclusive range `(a, b)`.
pub fn parse_range(s: &str) -> Result<(i64, i64), RangeError> {
    let parts: Vec<&str> = s.split('-').collect();
    let [start, end] = parts[..] else {
        return Err(RangeError::Invalid(s.to_string()));
    };
    let (start, end) = (atoi(start)?, atoi(end)?);
    if start > end {
        return Err(RangeError::Invalid(s.to_string()));
    }
    Ok((start, end))
}

/// True when `s` is digits, a dash, digits (the webhook's syntax check, separate from [`parse_range`]).
pub fn is_range_syntax(s: &str) -> bool {
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit());
    s.split_once('-').is_some_and(|(a, b)| digits(a) && digits(b))
}

/// The reserved ordinals. An invalid range makes the whole set empty, as OpenKruise does at runtime.
/// Ranges larger than `limit` members are cut at `limit` ordinals past their start (a set never needs
/// more than `start + replicas + reserved` of them).
pub fn reserved(list: &[IntOrString], limit: i64) -> BTreeSet<i64> {
    let mut out = BTreeSet::new();
    for elem in list {
        match elem {
            IntOrString::Int(n) => {
                out.insert(i64::from(*n));
            }
            IntOrString::String(s) => match parse_range(s) {
                Ok((a, b)) => out.extend(a..=b.min(a.saturating_add(limit))),
                Err(_) => return BTreeSet::new(),
            },
        }
    }
    out
}

/// The ordinals of a set's pods: from `start` upward, skipping `reserved`, `replicas` of them.
pub fn in_range(start: i64, replicas: i64, reserved: &BTreeSet<i64>) -> Vec<i64> {
    let mut out = Vec::new();
    let mut ordinal = start;
    while (out.len() as i64) < replicas.max(0) {
        if !reserved.contains(&ordinal) {
            out.push(ordinal);
        }
        ordinal += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ios(items: &[&str]) -> Vec<IntOrString> {
        items
            .iter()
            .map(|s| match s.parse::<i32>() {
                Ok(n) => IntOrString::Int(n),
                Err(_) => IntOrString::String((*s).to_string()),
            })
            .collect()
    }

    #[test]
    fn ranges_parse_as_openkruise_parses_them() {
        assert_eq!(parse_range("3-5"), Ok((3, 5)));
        assert_eq!(parse_range("4-4"), Ok((4, 4)));
        assert_eq!(parse_range("+1-2"), Ok((1, 2)), "Atoi takes a sign");
        assert_eq!(parse_range("5-3").unwrap_err().to_string(), "invalid range 5-3");
        assert_eq!(
            parse_range("1-2-3").unwrap_err().to_string(),
            "invalid range 1-2-3"
        );
        assert_eq!(parse_range("7").unwrap_err().to_string(), "invalid range 7");
        assert_eq!(
            parse_range("a-2").unwrap_err().to_string(),
            "strconv.Atoi: parsing \"a\": invalid syntax"
        );
        assert!(is_range_syntax("3-5"));
        assert!(!is_range_syntax("+1-2"));
        assert!(!is_range_syntax("3-"));
        assert!(!is_range_syntax("1-2-3"));
    }

    #[test]
    fn pods_take_the_first_unreserved_ordinals_from_start() {
        // (start, replicas, reserveOrdinals, ordinals)
        let cases: &[(i64, i64, &[&str], &[i64])] = &[
            (0, 3, &[], &[0, 1, 2]),
            (2, 4, &["1", "3"], &[2, 4, 5, 6]),
            (0, 3, &["1"], &[0, 2, 3]),
            (0, 3, &["0", "2-5"], &[1, 6, 7]),
            (0, 1, &["0", "2-5"], &[1]),
            (0, 2, &["1", "bad"], &[0, 1]),
            (4, 2, &[], &[4, 5]),
            (0, 0, &["0"], &[]),
        ];
        for (start, replicas, reserve, want) in cases {
            let set = reserved(&ios(reserve), 1000);
            assert_eq!(
                in_range(*start, *replicas, &set),
                *want,
                "{start} {replicas} {reserve:?}"
            );
        }
    }

    #[test]
    fn a_huge_range_is_bounded() {
        let set = reserved(&ios(&["0-2000000000"]), 10);
        assert_eq!(set.len(), 11);
        assert_eq!(in_range(0, 2, &set), [11, 12]);
    }
}
