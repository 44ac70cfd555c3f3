//! What the controllers read as "now" (docs/advancedcronjob.md#clock): the system clock, or in
//! `kruise playground --clock manual` the playground's clock, which a test moves forward. `kruise serve`
//! always runs on the system clock: nothing on its command line can change that.

use std::{fmt, sync::Arc};

use futures::stream::{self, BoxStream, StreamExt as _};
use k8s_openapi::jiff::Timestamp;

/// Another source of time than the system clock.
pub trait TimeSource: Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> Timestamp;
    /// Yields once each time the source jumps forward.
    fn jumps(&self) -> BoxStream<'static, ()>;
}

/// The controllers' clock: cheap to clone.
#[derive(Clone, Default)]
pub struct Clock(Option<Arc<dyn TimeSource>>);

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Clock(source)"
        } else {
            "Clock(system)"
        })
    }
}

impl Clock {
    /// The system clock.
    pub fn system() -> Clock {
        Clock(None)
    }

    /// Time from `source`.
    pub fn from_source(source: Arc<dyn TimeSource>) -> Clock {
        Clock(Some(source))
    }

    /// The current time.
    pub fn now(&self) -> Timestamp {
        self.0.as_ref().map_or_else(Timestamp::now, |s| s.now())
    }

    /// Yields each time the clock jumps forward (never, for the system clock): a controller that
    /// waits for a time passes its objects again then.
    pub fn jumps(&self) -> BoxStream<'static, ()> {
        match &self.0 {
            Some(source) => source.jumps(),
            None => stream::pending().boxed(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    struct Fixed(Mutex<Timestamp>);

    impl TimeSource for Fixed {
        fn now(&self) -> Timestamp {
            *self.0.lock().unwrap()
        }
        fn jumps(&self) -> BoxStream<'static, ()> {
            stream::iter([()]).boxed()
        }
    }

    #[tokio::test]
    async fn a_source_replaces_the_system_clock() {
        let at: Timestamp = "2100-01-01T00:00:00Z".parse().unwrap();
        let clock = Clock::from_source(Arc::new(Fixed(Mutex::new(at))));
        assert_eq!(clock.clone().now(), at);
        assert_eq!(clock.jumps().collect::<Vec<_>>().await, vec![()]);
        let system = Clock::system();
        assert!(system.now() < at);
        // The system clock never jumps: its stream stays pending.
        assert!(futures::poll!(system.jumps().next()).is_pending());
    }
}
