//! A real containerd for tests, started by `scripts/containerd.sh` under a temporary directory. Without
//! containerd and root, [`Containerd::start`] returns `None` (the test skips with a message), unless
//! `KRUISE_REQUIRE_CRI` is set (CI sets it: there the tests must run).
#![allow(dead_code)]

use std::{path::Path, process::Command};

/// The pod sandbox image `scripts/containerd.sh` imports and configures (busybox, sleeping forever).
pub const SANDBOX_IMAGE: &str = "localhost/kruise-playground/sandbox:busybox";

fn script() -> Command {
    super::repo_script::bash_script("containerd.sh")
}

/// A containerd of the test's own; stopped on drop.
pub struct Containerd {
    dir: tempfile::TempDir,
}

impl Containerd {
    pub fn start() -> Option<Containerd> {
        let dir = tempfile::tempdir().unwrap();
        let out = script().arg("start").arg(dir.path()).output().expect("bash runs");
        if out.status.success() {
            return Some(Containerd { dir });
        }
        let why = String::from_utf8_lossy(&out.stderr);
        assert!(
            std::env::var_os("KRUISE_REQUIRE_CRI").is_none(),
            "KRUISE_REQUIRE_CRI is set but containerd did not start: {why}"
        );
        eprintln!("skipped: containerd did not start here (needs root and Debian's containerd): {why}");
        None
    }

    /// Its work directory (the socket is `containerd.sock` in it).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Stops it (the directory stays, so [`Containerd::restart`] brings the same one back).
    pub fn stop(&self) {
        let _ = script().arg("stop").arg(self.dir.path()).status();
    }

    /// Starts it again after [`Containerd::stop`].
    pub fn restart(&self) {
        let out = script()
            .arg("start")
            .arg(self.dir.path())
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "containerd restarts: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Its socket.
    pub fn socket(&self) -> std::path::PathBuf {
        self.dir.path().join("containerd.sock")
    }
}

impl Drop for Containerd {
    fn drop(&mut self) {
        self.stop();
    }
}
