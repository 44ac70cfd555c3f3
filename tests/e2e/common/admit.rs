//! `kruise admit` as a process, run from the repository root.

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

/// Runs `kruise admit <args>` with `stdin` as its input; returns its exit status and output.
pub fn admit(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kruise"))
        .arg("admit")
        .args(args)
        .current_dir(super::repo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}
