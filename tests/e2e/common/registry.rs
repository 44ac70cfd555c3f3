//! A container registry on 127.0.0.1 for tests, started by `scripts/registry.sh` under a temporary
//! directory. Without docker-registry, skopeo and root, [`Registry::start`] returns `None` (the test skips
//! with a message), unless `KRUISE_REQUIRE_CRI` is set (CI sets it).
#![allow(dead_code)]

use std::{net::TcpListener, process::Command};

fn script() -> Command {
    super::repo_script::bash_script("registry.sh")
}

/// A registry of the test's own; stopped on drop.
pub struct Registry {
    dir: tempfile::TempDir,
    port: u16,
}

impl Registry {
    pub fn start() -> Option<Registry> {
        let dir = tempfile::tempdir().unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let out = script()
            .arg("start")
            .arg(dir.path())
            .arg(port.to_string())
            .output()
            .expect("bash runs");
        if out.status.success() {
            return Some(Registry { dir, port });
        }
        let why = String::from_utf8_lossy(&out.stderr);
        assert!(
            std::env::var_os("KRUISE_REQUIRE_CRI").is_none(),
            "KRUISE_REQUIRE_CRI is set but the registry did not start: {why}"
        );
        eprintln!(
            "skipped: the registry did not start here (needs root and Debian's docker-registry): {why}"
        );
        None
    }

    /// Pushes a small image as `NAME:TAG`; returns its full reference `127.0.0.1:PORT/NAME:TAG`.
    pub fn push(&self, name_tag: &str) -> String {
        let out = script()
            .arg("push")
            .arg(self.dir.path())
            .arg(self.port.to_string())
            .arg(name_tag)
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "push {name_tag}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.reference(name_tag)
    }

    /// `127.0.0.1:PORT/NAME:TAG`, pushed or not.
    pub fn reference(&self, name_tag: &str) -> String {
        format!("127.0.0.1:{}/{name_tag}", self.port)
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = script().arg("stop").arg(self.dir.path()).status();
    }
}
