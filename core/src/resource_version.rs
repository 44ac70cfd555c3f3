//! `metadata.resourceVersion` as kruise-rs compares it. The API calls it opaque, but every
//! apiserver (etcd's revision) and our playground write a decimal counter, and controllers must
//! tell an older cached copy from a newer one (OpenKruise compares them as integers too, e.g.
//! `pkg/util/expectations` `ResourceVersionExpectation`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// The resourceVersion as a number (`None` when absent or not decimal).
pub fn parse(resource_version: &str) -> Option<u64> {
    resource_version.parse().ok()
}

/// The object's resourceVersion as a number.
pub fn of(meta: &ObjectMeta) -> Option<u64> {
    parse(meta.resource_version.as_deref()?)
}

/// The object's resourceVersion as a number, 0 when it has none (orders before any stored object).
pub fn of_or_zero(meta: &ObjectMeta) -> u64 {
    of(meta).unwrap_or(0)
}

/// Whether `candidate` is newer than `current` (an unreadable version is never newer, and anything
/// readable is newer than an unreadable one).
pub fn is_newer(candidate: &ObjectMeta, current: &ObjectMeta) -> bool {
    match (of(candidate), of(current)) {
        (Some(c), Some(o)) => c > o,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(rv: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            resource_version: rv.map(String::from),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn parsing() {
        let cases = [
            (Some("42"), Some(42), 42),
            (Some("0"), Some(0), 0),
            (Some("abc"), None, 0),
            (Some(""), None, 0),
            (Some("-1"), None, 0),
            (None, None, 0),
        ];
        for (rv, want, or_zero) in cases {
            assert_eq!(of(&meta(rv)), want, "{rv:?}");
            assert_eq!(of_or_zero(&meta(rv)), or_zero, "{rv:?}");
        }
    }

    #[test]
    fn newer_compares_numbers_not_text() {
        let cases = [
            (Some("10"), Some("9"), true),
            (Some("9"), Some("10"), false),
            (Some("7"), Some("7"), false),
            (Some("1"), None, true),
            (None, Some("1"), false),
            (Some("x"), Some("1"), false),
            (None, None, false),
        ];
        for (candidate, current, want) in cases {
            assert_eq!(
                is_newer(&meta(candidate), &meta(current)),
                want,
                "{candidate:?} vs {current:?}"
            );
        }
    }
}
