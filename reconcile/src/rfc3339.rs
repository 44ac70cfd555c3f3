//! Times as Kubernetes writes them (`metav1.Time`, Go's `time.RFC3339`): whole seconds, UTC, `Z`.
//!
//! Every in-place update writes the time several times, so years 0–9999 are printed by hand; other
//! years go through jiff.

use k8s_openapi::jiff::Timestamp;

/// Seconds from the Unix epoch to 10000-01-01T00:00:00Z.
const YEAR_10000: i64 = 253_402_300_800;
/// Seconds from 0000-01-01T00:00:00Z to the Unix epoch.
const YEAR_0: i64 = -62_167_219_200;

/// `t` in whole seconds (the fraction cut off), e.g. `2026-01-01T12:00:00Z`.
pub fn rfc3339(t: Timestamp) -> String {
    let secs = t.as_second();
    if !(YEAR_0..YEAR_10000).contains(&secs) {
        return Timestamp::from_second(secs).unwrap_or(t).to_string();
    }
    let (days, secs) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    let mut out = *b"0000-00-00T00:00:00Z";
    put_digits(&mut out[0..4], year);
    put_digits(&mut out[5..7], month);
    put_digits(&mut out[8..10], day);
    put_digits(&mut out[11..13], secs / 3600);
    put_digits(&mut out[14..16], secs / 60 % 60);
    put_digits(&mut out[17..19], secs % 60);
    std::str::from_utf8(&out).unwrap_or_default().to_owned()
}

/// `n` (non-negative) in the decimal digits of `slot`.
fn put_digits(slot: &mut [u8], mut n: i64) {
    for b in slot.iter_mut().rev() {
        *b = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// Year, month and day of a day count from 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jiff(secs: i64) -> String {
        Timestamp::from_second(secs).unwrap().to_string()
    }

    #[test]
    fn times_are_written_in_whole_seconds() {
        let t: Timestamp = "2026-01-01T12:00:00.123456789Z".parse().unwrap();
        assert_eq!(rfc3339(t), "2026-01-01T12:00:00Z");
        let before_epoch: Timestamp = "1969-12-31T23:59:58.5Z".parse().unwrap();
        assert_eq!(
            rfc3339(before_epoch),
            jiff(before_epoch.as_second()),
            "the fraction is cut as jiff's seconds cut it"
        );
    }

    #[test]
    fn the_hand_printer_agrees_with_jiff() {
        let edges = [
            0,
            -1,
            951_782_400, // 2000-02-29
            4_107_542_400,
            YEAR_0,
            YEAR_0 - 1,
            Timestamp::MIN.as_second(),
            Timestamp::MAX.as_second(),
        ];
        let spread = (YEAR_0..Timestamp::MAX.as_second()).step_by(7_919_993);
        for secs in edges.into_iter().chain(spread) {
            let t = Timestamp::from_second(secs).unwrap();
            assert_eq!(rfc3339(t), jiff(secs), "{secs}");
        }
    }
}
