//! `kruise completion SHELL` prints a completion script naming every subcommand.

use std::process::Command;

#[test]
fn completion_scripts_for_bash_zsh_and_fish() {
    for shell in ["bash", "zsh", "fish"] {
        let out = Command::new(env!("CARGO_BIN_EXE_kruise"))
            .args(["completion", shell])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{shell}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let script = String::from_utf8(out.stdout).unwrap();
        for sub in ["serve", "admit", "crds", "playground", "completion"] {
            assert!(script.contains(sub), "{shell} script lacks {sub}");
        }
    }
    let out = Command::new(env!("CARGO_BIN_EXE_kruise"))
        .args(["completion", "tcsh"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}
