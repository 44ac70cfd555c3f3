//! Table-driven cases for the CRD webhooks (`tests/fixtures/crd/*.json`): every rule allowed and denied
//! with OpenKruise's exact message, and defaults applied (checked to decode and to be idempotent).

use crate::common;

use common::crd::run_fixture_file;

#[test]
fn sidecarset_defaults() {
    run_fixture_file("sidecarset_mutate");
}

#[test]
fn sidecarset_validation() {
    run_fixture_file("sidecarset_validate");
}

#[test]
fn cloneset_defaults() {
    run_fixture_file("cloneset_mutate");
}

#[test]
fn cloneset_validation() {
    run_fixture_file("cloneset_validate");
}

#[test]
fn podunavailablebudget_validation() {
    run_fixture_file("pub_validate");
}

#[test]
fn workloadspread_validation() {
    run_fixture_file("workloadspread_validate");
}

#[test]
fn statefulset_defaults() {
    run_fixture_file("statefulset_mutate");
}

#[test]
fn statefulset_validation() {
    run_fixture_file("statefulset_validate");
}

#[test]
fn daemonset_defaults() {
    run_fixture_file("daemonset_mutate");
}

#[test]
fn daemonset_validation() {
    run_fixture_file("daemonset_validate");
}

#[test]
fn podprobemarker_validation() {
    run_fixture_file("podprobemarker_validate");
}

#[test]
fn nodeimage_validation() {
    run_fixture_file("nodeimage_validate");
}
