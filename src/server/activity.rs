//! What one connection is doing (requests in flight, when the last exchange ended, whether a next
//! request's head is arriving), for its timeouts and for telling hyper's own answers from ours.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

/// What a connection is doing, as its timeouts need it. Times are milliseconds since `start`; 0 = unset.
pub(super) struct Activity {
    start: Instant,
    in_flight: AtomicUsize,
    /// Requests handed to the service so far.
    requests: AtomicU64,
    /// When the last request ended (or the handshake did).
    last_exchange: AtomicU64,
    /// When bytes arrived while no request was in flight: the head of a next request is coming.
    pending_since: AtomicU64,
}

impl Activity {
    pub(super) fn new() -> Self {
        Activity {
            start: Instant::now(),
            in_flight: AtomicUsize::new(0),
            requests: AtomicU64::new(0),
            last_exchange: AtomicU64::new(0),
            pending_since: AtomicU64::new(0),
        }
    }

    pub(super) fn now(&self) -> u64 {
        // Never 0, which means unset.
        self.start.elapsed().as_millis() as u64 + 1
    }

    pub(super) fn bytes_read(&self) {
        if self.in_flight.load(Ordering::Acquire) == 0 {
            let _ = self
                .pending_since
                .compare_exchange(0, self.now(), Ordering::AcqRel, Ordering::Acquire);
        }
    }

    pub(super) fn request_started(self: &Arc<Self>) -> InFlight {
        self.requests.fetch_add(1, Ordering::AcqRel);
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.pending_since.store(0, Ordering::Release);
        InFlight(self.clone())
    }

    /// Requests handed to the service so far.
    pub(super) fn requests(&self) -> u64 {
        self.requests.load(Ordering::Acquire)
    }

    pub(super) fn exchange_ended(&self) {
        self.last_exchange.store(self.now(), Ordering::Release);
        self.pending_since.store(0, Ordering::Release);
    }

    /// How long a request header has been arriving, if one is.
    pub(super) fn header_pending_for(&self) -> Option<Duration> {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        match self.pending_since.load(Ordering::Acquire) {
            0 => None,
            since => Some(Duration::from_millis(self.now().saturating_sub(since))),
        }
    }

    /// How long the connection has had no request, if it has none. Over HTTP/1.1, bytes of a next
    /// request count as one; h2 has control frames (pings, window updates) between requests.
    pub(super) fn idle_for(&self, h2: bool) -> Option<Duration> {
        let arriving = !h2 && self.pending_since.load(Ordering::Acquire) != 0;
        if self.in_flight.load(Ordering::Acquire) > 0 || arriving {
            return None;
        }
        let since = self.last_exchange.load(Ordering::Acquire);
        Some(Duration::from_millis(self.now().saturating_sub(since)))
    }
}

/// A request being handled; its end is the connection's last exchange.
pub(super) struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.last_exchange.store(self.0.now(), Ordering::Release);
        }
    }
}
