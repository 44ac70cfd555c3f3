//! Times as Kubernetes writes them (`metav1.Time`, Go's `time.RFC3339`): whole seconds, UTC, `Z`.

use k8s_openapi::jiff::Timestamp;

/// `t` in whole seconds (rounded down, as Go's formatting does), e.g. `2026-01-01T12:00:00Z`.
pub fn rfc3339(t: Timestamp) -> String {
    let floor = t.as_second() - i64::from(t.subsec_nanosecond() < 0);
    Timestamp::from_second(floor).unwrap_or(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_in_whole_seconds() {
        let t: Timestamp = "2026-01-01T12:00:00.123456789Z".parse().unwrap();
        assert_eq!(rfc3339(t), "2026-01-01T12:00:00Z");
        let before_epoch: Timestamp = "1969-12-31T23:59:58.5Z".parse().unwrap();
        assert_eq!(rfc3339(before_epoch), "1969-12-31T23:59:58Z");
    }
}
