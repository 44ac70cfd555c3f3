//! Test hook: the API server restarting, as its clients see it. A restart takes the listener down —
//! every connection is cut, open watches included, and the port refuses connections — for a chosen
//! time, then serves again on the same port with the same certificate and the same objects (etcd
//! outlives a kube-apiserver restart). The watch history is forgotten, as a restarted watch cache
//! begins at the current resourceVersion: a watch resumed from before is answered 410 `Expired`.
//!
//! The data plane (nodes, kubelet, the built-in controllers) keeps running meanwhile, as kubelets
//! and kube-controller-manager do while kube-apiserver is away; their writes land in the store at
//! once where real ones would wait for the server to come back.
//!
//! Asked for with `POST /playground/restart` `{"downSeconds": N}` (`kubectl create --raw
//! /playground/restart -f -`) or [`Restarts::request`]; the serving loop (`serving` module) carries
//! it out.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::watch;

/// The longest a restart may keep the server down.
pub const MAX_DOWN: Duration = Duration::from_secs(300);

/// A requested restart: the how-manieth, and for how long the port stays closed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Restart {
    /// Requests so far, this one included.
    pub number: u64,
    /// How long the server stays down.
    pub down: Duration,
}

/// Restart requests, from the API or a test, to the serving loop.
#[derive(Debug)]
pub struct Restarts {
    requested: watch::Sender<Restart>,
    completed: AtomicU64,
}

impl Default for Restarts {
    fn default() -> Self {
        Restarts {
            requested: watch::channel(Restart::default()).0,
            completed: AtomicU64::new(0),
        }
    }
}

/// Why a restart was not requested.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RestartError {
    /// Longer than [`MAX_DOWN`].
    #[error("downSeconds must be at most {max} (got {0:?})", max = MAX_DOWN.as_secs())]
    TooLong(Duration),
}

impl Restarts {
    /// Asks for a restart keeping the server down for `down`; returns the request's number.
    pub fn request(&self, down: Duration) -> Result<u64, RestartError> {
        if down > MAX_DOWN {
            return Err(RestartError::TooLong(down));
        }
        let mut number = 0;
        self.requested.send_modify(|r| {
            r.number += 1;
            r.down = down;
            number = r.number;
        });
        Ok(number)
    }

    /// Restarts finished so far (the server listening again).
    pub fn completed(&self) -> u64 {
        self.completed.load(Ordering::SeqCst)
    }

    /// The requests, for the serving loop.
    pub(crate) fn subscribe(&self) -> watch::Receiver<Restart> {
        self.requested.subscribe()
    }

    /// The serving loop listens again.
    pub(crate) fn complete(&self) {
        self.completed.fetch_add(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_numbered_and_bounded() {
        let restarts = Restarts::default();
        let mut rx = restarts.subscribe();
        assert_eq!(restarts.request(Duration::from_secs(2)), Ok(1));
        assert!(rx.has_changed().unwrap());
        assert_eq!(
            *rx.borrow_and_update(),
            Restart {
                number: 1,
                down: Duration::from_secs(2)
            }
        );
        assert_eq!(
            restarts.request(Duration::from_secs(301)),
            Err(RestartError::TooLong(Duration::from_secs(301)))
        );
        assert!(!rx.has_changed().unwrap(), "a refused request is not sent");
        assert_eq!(restarts.completed(), 0);
        restarts.complete();
        assert_eq!(restarts.completed(), 1);
    }
}
