//! The playground's clock: the system clock plus an offset that only a manual clock lets a test move
//! forward (`GET`/`POST /playground/clock`, `kruise playground --clock manual`). Objects'
//! `creationTimestamp`, the CronJob controller's schedules and the Job controller's times and
//! deadlines read it; other timestamps (pod and node conditions, events, `managedFields`) stay on
//! the system clock, which a manual clock is never behind.

use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;
use tokio::sync::watch;

/// A shared clock: cheap to clone, every clone sees the same time.
#[derive(Clone, Debug)]
pub struct Clock {
    manual: bool,
    offset: Arc<watch::Sender<Duration>>,
}

/// Why the clock did not move.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClockError {
    /// The system clock cannot be moved.
    #[error("the playground runs on the system clock; start it with --clock manual to advance time")]
    NotManual,
    /// The move would overflow.
    #[error("cannot advance the clock by {0:?}")]
    TooFar(Duration),
}

impl Default for Clock {
    fn default() -> Self {
        Clock::system()
    }
}

impl Clock {
    /// The system clock.
    pub fn system() -> Clock {
        Clock {
            manual: false,
            offset: Arc::new(watch::Sender::new(Duration::ZERO)),
        }
    }

    /// The system clock plus an offset [`Clock::advance`] moves forward.
    pub fn manual() -> Clock {
        Clock {
            manual: true,
            ..Clock::system()
        }
    }

    /// Whether [`Clock::advance`] may move it.
    pub fn is_manual(&self) -> bool {
        self.manual
    }

    /// How far ahead of the system clock it is.
    pub fn offset(&self) -> Duration {
        *self.offset.borrow()
    }

    /// The current time.
    pub fn now(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc() + self.offset()
    }

    /// Moves a manual clock forward by `by`; returns the new time.
    pub fn advance(&self, by: Duration) -> Result<OffsetDateTime, ClockError> {
        if !self.manual {
            return Err(ClockError::NotManual);
        }
        let mut result = Ok(());
        self.offset.send_modify(|offset| match offset.checked_add(by) {
            Some(o) => *offset = o,
            None => result = Err(ClockError::TooFar(by)),
        });
        result.map(|()| self.now())
    }

    /// A receiver that sees every move (`changed()` resolves after each [`Clock::advance`]).
    pub fn subscribe(&self) -> watch::Receiver<Duration> {
        self.offset.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_forward_for_every_clone_and_the_system_clock_does_not() {
        let clock = Clock::manual();
        let other = clock.clone();
        let seen = other.subscribe();
        let before = other.now();
        clock.advance(Duration::from_secs(3600)).unwrap();
        assert_eq!(other.offset(), Duration::from_secs(3600));
        assert!(other.now() - before >= time::Duration::hours(1));
        assert!(seen.has_changed().unwrap());
        assert_eq!(
            Clock::system().advance(Duration::from_secs(1)),
            Err(ClockError::NotManual)
        );
        assert_eq!(Clock::system().offset(), Duration::ZERO);
    }
}
