//! Readiness: certificates loaded and, in a cluster, caches synced; not while shutting down.

use std::sync::atomic::{AtomicBool, Ordering};

/// What must be true before the server reports ready.
#[derive(Debug)]
pub struct Readiness {
    certs_loaded: AtomicBool,
    caches_synced: AtomicBool,
    shutting_down: AtomicBool,
}

impl Readiness {
    /// `needs_caches` is false in standalone mode (state comes from files).
    pub fn new(needs_caches: bool) -> Self {
        Readiness {
            certs_loaded: AtomicBool::new(false),
            caches_synced: AtomicBool::new(!needs_caches),
            shutting_down: AtomicBool::new(false),
        }
    }

    /// The serving certificate is in place.
    pub fn set_certs_loaded(&self) {
        self.certs_loaded.store(true, Ordering::Release);
    }

    /// Every reflector cache has synced.
    pub fn set_caches_synced(&self) {
        self.caches_synced.store(true, Ordering::Release);
    }

    /// Shutdown has begun: unready for good, so endpoints stop routing here.
    pub fn set_shutting_down(&self) {
        self.shutting_down.store(true, Ordering::Release);
    }

    /// `Ok` when ready, else what is missing.
    pub fn check(&self) -> Result<(), &'static str> {
        if self.shutting_down.load(Ordering::Acquire) {
            return Err("shutting down");
        }
        if !self.certs_loaded.load(Ordering::Acquire) {
            return Err("webhook certificates not loaded yet");
        }
        if !self.caches_synced.load(Ordering::Acquire) {
            return Err("cluster caches not synced yet");
        }
        Ok(())
    }
}
