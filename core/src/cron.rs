//! Cron schedules as a Kubernetes CronJob accepts them (robfig/cron's `ParseStandard`): five fields or
//! an `@hourly`-style descriptor, optionally prefixed `TZ=<zone>` or `CRON_TZ=<zone>`, evaluated in an
//! IANA time zone. Parsing and evaluation are the `croner` crate's (POSIX/Vixie semantics: when both
//! day fields are restricted a day matching either runs), zones `chrono-tz`'s.

use std::str::FromStr as _;

use chrono::{DateTime, TimeZone as _, Utc};
use chrono_tz::Tz;
use croner::Cron;
use k8s_openapi::jiff::Timestamp;

/// A schedule that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// Not five fields or a known descriptor, or a field croner rejects.
    #[error("unparseable schedule {schedule:?}: {reason}")]
    Unparseable {
        /// The schedule as written.
        schedule: String,
        /// Why.
        reason: String,
    },
    /// An unknown IANA zone.
    #[error("unknown time zone {0:?}")]
    UnknownTimeZone(String),
}

/// A parsed schedule in its zone.
#[derive(Debug, Clone)]
pub struct Schedule {
    cron: Cron,
    zone: Tz,
}

const DESCRIPTORS: &[(&str, &str)] = &[
    ("@yearly", "0 0 1 1 *"),
    ("@annually", "0 0 1 1 *"),
    ("@monthly", "0 0 1 * *"),
    ("@weekly", "0 0 * * 0"),
    ("@daily", "0 0 * * *"),
    ("@midnight", "0 0 * * *"),
    ("@hourly", "0 * * * *"),
];

/// The IANA time zone `name` (case-sensitive, as Go's `time.LoadLocation` on Linux).
pub fn time_zone(name: &str) -> Result<Tz, ScheduleError> {
    name.parse::<Tz>()
        .map_err(|_| ScheduleError::UnknownTimeZone(name.to_owned()))
}

impl Schedule {
    /// Parses `schedule` in `time_zone` (UTC when absent; a `TZ=` prefix wins, as in OpenKruise the
    /// webhook forbids both).
    pub fn parse(schedule: &str, time_zone: Option<&str>) -> Result<Schedule, ScheduleError> {
        let unparseable = |reason: &str| ScheduleError::Unparseable {
            schedule: schedule.to_owned(),
            reason: reason.to_owned(),
        };
        let mut text = schedule.trim();
        let mut zone_name = time_zone.filter(|z| !z.is_empty());
        for prefix in ["CRON_TZ=", "TZ="] {
            if let Some(rest) = text.strip_prefix(prefix) {
                let (zone, rest) = rest
                    .split_once(char::is_whitespace)
                    .ok_or_else(|| unparseable("no fields after the time zone"))?;
                zone_name = Some(zone);
                text = rest.trim();
            }
        }
        let zone = match zone_name {
            None => Tz::UTC,
            Some(name) => self::time_zone(name)?,
        };
        let pattern = if text.starts_with('@') {
            DESCRIPTORS
                .iter()
                .find(|(d, _)| d.eq_ignore_ascii_case(text))
                .map(|(_, p)| *p)
                .ok_or_else(|| unparseable("unknown descriptor"))?
        } else {
            if text.split_whitespace().count() != 5 {
                return Err(unparseable("expected exactly 5 fields"));
            }
            text
        };
        let cron = Cron::from_str(pattern).map_err(|e| unparseable(&e.to_string()))?;
        Ok(Schedule { cron, zone })
    }

    /// The first scheduled time strictly after `t`.
    pub fn next_after(&self, t: Timestamp) -> Option<Timestamp> {
        let at: DateTime<Tz> = Utc
            .timestamp_opt(t.as_second(), 0)
            .single()?
            .with_timezone(&self.zone);
        let next = self.cron.find_next_occurrence(&at, false).ok()?;
        Timestamp::from_second(next.timestamp()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn what_parses_and_what_does_not() {
        for ok in [
            "*/1 * * * *",
            "0 3 * * mon-fri",
            "@hourly",
            "TZ=Asia/Shanghai 0 0 * * *",
        ] {
            assert!(Schedule::parse(ok, None).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "* * * *",
            "0 0 * * * *",
            "@every-minute",
            "61 * * * *",
            "TZ=Mars/Base 0 0 * * *",
        ] {
            assert!(Schedule::parse(bad, None).is_err(), "{bad}");
        }
        assert_eq!(
            Schedule::parse("* * * * *", Some("Nowhere/Land")).unwrap_err(),
            ScheduleError::UnknownTimeZone("Nowhere/Land".into())
        );
        assert!(time_zone("Europe/Paris").is_ok());
        assert!(time_zone("europe/paris").is_err());
    }

    #[test]
    fn next_times_follow_the_zone() {
        let s = Schedule::parse("0 9 * * *", Some("Asia/Tokyo")).unwrap();
        assert_eq!(
            s.next_after(at("2026-01-01T00:00:00Z")),
            Some(at("2026-01-02T00:00:00Z"))
        );
        let minutely = Schedule::parse("*/1 * * * *", None).unwrap();
        assert_eq!(
            minutely.next_after(at("2026-01-01T00:00:30Z")),
            Some(at("2026-01-01T00:01:00Z"))
        );
    }
}
