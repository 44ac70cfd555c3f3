//! Table-driven `/mutate-pod` cases (tests/fixtures/pod_mutate/*.json) run through the real pipeline:
//! the pod after the patch (checked to be a valid Pod), the status writes, and that a second run on the
//! output adds nothing.

use crate::common;

use common::pod_mutate::{check_case, fixture_cases};

fn run_fixtures(prefix: &str) {
    let cases = fixture_cases(prefix);
    assert!(!cases.is_empty(), "no fixtures for {prefix}");
    for (file, case) in &cases {
        check_case(file, case);
    }
}

#[test]
fn readiness_gate() {
    run_fixtures("readiness_gate");
}

#[test]
fn workloadspread() {
    run_fixtures("workloadspread");
}

#[test]
fn launch_priority() {
    run_fixtures("launch_priority");
}

#[test]
fn pub_annotation() {
    run_fixtures("pub_annotation");
}
