//! `bash scripts/<name>` of this repository, from either the root crate's or a member crate's tests.
#![allow(dead_code)]

use std::{path::Path, process::Command};

/// A `bash` command running `scripts/<name>`.
pub fn bash_script(name: &str) -> Command {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = [
        here.join("scripts").join(name),
        here.join("../scripts").join(name),
    ]
    .into_iter()
    .find(|p| p.exists())
    .unwrap_or_else(|| panic!("scripts/{name} not found"));
    let mut command = Command::new("bash");
    command.arg(path);
    command
}
