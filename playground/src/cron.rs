//! Standard five-field cron schedules as CronJobs take them (the `robfig/cron` parser the
//! CronJob controller uses): minute, hour, day of month, month, day of week; `*`, `?`, lists,
//! ranges, steps, month and weekday names, and the `@yearly`, `@annually`, `@monthly`,
//! `@weekly`, `@daily`, `@midnight`, `@hourly` descriptors. When both day fields are restricted a
//! day matching either runs. Times are UTC.

use time::{Date, Month, OffsetDateTime, Time};

/// A parsed schedule: the allowed values of each field as bit sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    minutes: u64,
    hours: u64,
    days: u64,
    months: u64,
    weekdays: u64,
    /// Day of month or day of week was `*`/`?` (robfig: then the other one alone decides).
    any_day: bool,
    any_weekday: bool,
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const WEEKDAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

fn value(s: &str, names: &[&str], offset: u32) -> Option<u32> {
    let lower = s.to_ascii_lowercase();
    names
        .iter()
        .position(|n| *n == lower)
        .map(|i| i as u32 + offset)
        .or_else(|| s.parse().ok())
}

/// One field: a bit set over `min..=max`, and whether it was `*`/`?`.
fn field(text: &str, min: u32, max: u32, names: &[&str]) -> Option<(u64, bool)> {
    let mut bits = 0u64;
    for part in text.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => (r, s.parse::<u32>().ok().filter(|s| *s > 0)?),
            None => (part, 1),
        };
        let (lo, hi) = match range {
            "*" | "?" => (min, max),
            _ => match range.split_once('-') {
                Some((a, b)) => (value(a, names, min)?, value(b, names, min)?),
                None => {
                    let v = value(range, names, min)?;
                    (v, if step > 1 { max } else { v })
                }
            },
        };
        // Sunday may be written 7.
        let top = if names.len() == 7 { 7 } else { max };
        if lo < min || hi > top || lo > hi {
            return None;
        }
        bits |= (lo..=hi).step_by(step as usize).fold(0, |b, v| b | 1 << v);
    }
    if names.len() == 7 && bits & 1 << 7 != 0 {
        bits = (bits & !(1 << 7)) | 1;
    }
    Some((bits, matches!(text, "*" | "?")))
}

impl Schedule {
    /// Parses a schedule; `None` if it is not valid.
    pub fn parse(spec: &str) -> Option<Schedule> {
        let spec = match spec.trim() {
            "@yearly" | "@annually" => "0 0 1 1 *",
            "@monthly" => "0 0 1 * *",
            "@weekly" => "0 0 * * 0",
            "@daily" | "@midnight" => "0 0 * * *",
            "@hourly" => "0 * * * *",
            other => other,
        };
        let f: Vec<&str> = spec.split_whitespace().collect();
        let [mi, h, dom, mo, dow] = f.as_slice() else {
            return None;
        };
        let (minutes, _) = field(mi, 0, 59, &[])?;
        let (hours, _) = field(h, 0, 23, &[])?;
        let (days, any_day) = field(dom, 1, 31, &[])?;
        // Month names are 1-based: `jan` is 1.
        let (months, _) = field(mo, 1, 12, &MONTHS)?;
        let (weekdays, any_weekday) = field(dow, 0, 6, &WEEKDAYS)?;
        Some(Schedule {
            minutes,
            hours,
            days,
            months,
            weekdays,
            any_day,
            any_weekday,
        })
    }

    fn day_matches(&self, d: Date) -> bool {
        let dom = self.days & (1 << d.day()) != 0;
        let dow = self.weekdays & (1 << d.weekday().number_days_from_sunday()) != 0;
        if self.any_day || self.any_weekday {
            dom && dow
        } else {
            dom || dow
        }
    }

    /// The first scheduled minute strictly after `t`, within five years.
    pub fn next_after(&self, t: OffsetDateTime) -> Option<OffsetDateTime> {
        let start = t.replace_second(0).ok()?.replace_nanosecond(0).ok()? + time::Duration::minutes(1);
        let mut date = start.date();
        let mut first_day = true;
        let limit = date.year() + 5;
        while date.year() <= limit {
            if self.months & (1 << u8::from(date.month())) == 0 {
                let (y, m) = match date.month() {
                    Month::December => (date.year() + 1, Month::January),
                    m => (date.year(), m.next()),
                };
                date = Date::from_calendar_date(y, m, 1).ok()?;
                first_day = false;
                continue;
            }
            if self.day_matches(date) {
                let from = if first_day { start.time() } else { Time::MIDNIGHT };
                for h in u32::from(from.hour())..24 {
                    if self.hours & (1 << h) == 0 {
                        continue;
                    }
                    let m0 = if h == u32::from(from.hour()) {
                        u32::from(from.minute())
                    } else {
                        0
                    };
                    if let Some(m) = (m0..60).find(|m| self.minutes & (1 << m) != 0) {
                        let time = Time::from_hms(h as u8, m as u8, 0).ok()?;
                        return Some(date.with_time(time).assume_utc());
                    }
                }
            }
            date = date.next_day()?;
            first_day = false;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    fn next(spec: &str, t: OffsetDateTime) -> OffsetDateTime {
        Schedule::parse(spec).unwrap().next_after(t).unwrap()
    }

    #[test]
    fn fields_and_descriptors() {
        let t = datetime!(2026-11-25 16:17:29 UTC); // a Wednesday
        assert_eq!(next("* * * * *", t), datetime!(2026-11-25 16:18 UTC));
        assert_eq!(next("*/15 * * * *", t), datetime!(2026-11-25 16:30 UTC));
        assert_eq!(next("5 4 * * *", t), datetime!(2026-11-26 04:05 UTC));
        assert_eq!(next("0 9-17/4 * * mon-fri", t), datetime!(2026-11-25 17:00 UTC));
        assert_eq!(
            next("0 9-17/4 * * mon-fri", datetime!(2026-11-27 17:00 UTC)),
            datetime!(2026-11-30 09:00 UTC)
        );
        assert_eq!(next("0 0 1 jan *", t), datetime!(2027-01-01 00:00 UTC));
        assert_eq!(next("@weekly", t), datetime!(2026-11-29 00:00 UTC));
        assert_eq!(
            next("0 0 * * 7", t),
            datetime!(2026-11-29 00:00 UTC),
            "7 is Sunday"
        );
        assert_eq!(next("@hourly", t), datetime!(2026-11-25 17:00 UTC));
        // Both day fields restricted: either matches (the 1st, or a Friday).
        assert_eq!(next("0 0 1 * fri", t), datetime!(2026-11-27 00:00 UTC));
        let never = Schedule::parse("0 0 31 2 *").unwrap();
        assert_eq!(never.next_after(t), None, "February has no 31st");
    }

    #[test]
    fn invalid_schedules() {
        for bad in [
            "",
            "* * * *",
            "60 * * * *",
            "* * 0 * *",
            "*/0 * * * *",
            "5-1 * * * *",
            "x * * * *",
        ] {
            assert_eq!(Schedule::parse(bad), None, "{bad}");
        }
    }
}
