//! SidecarSet injection (step 3 of `/mutate-pod`), table-driven: each fixture under
//! `tests/fixtures/sidecarset/` gives a pod, the cluster objects (SidecarSets, Namespaces,
//! ControllerRevisions) and the pod expected after the returned patch is applied (or the denial), with
//! the warnings. Every case runs the step alone (the whole resulting pod is compared) and the whole
//! `/mutate-pod` pipeline (only the fields injection owns are compared, so other steps may add theirs),
//! and checks that the result is a valid Pod, that the patch stays on the paths injection owns, and that
//! running the step again on its own output adds nothing.

use crate::common;

use common::sidecarset::{Case, load_cases, run_case};

#[test]
fn fixtures() {
    let cases: Vec<Case> = load_cases();
    assert!(cases.len() >= 30, "fixtures went missing: {}", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(e) = std::panic::catch_unwind(|| run_case(case)) {
            let message = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failures.push(format!("{}: {message}", case.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing fixtures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Rewrites the expectations of every fixture from the current behaviour (`cargo test -p kruise-webhooks
/// --test integration sidecarset:: -- --ignored bless`); review the diff before committing it.
#[test]
#[ignore]
fn bless() {
    use common::sidecarset::{apply, fixtures_dir, normalise, step, view_of};
    use serde_json::{Value, json};
    for entry in std::fs::read_dir(fixtures_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let mut cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for case in &mut cases {
            let objects: Vec<Value> = serde_json::from_value(case["objects"].clone()).unwrap_or_default();
            let namespace = case["namespace"].as_str().unwrap_or("default").to_string();
            let pod = case["pod"].clone();
            let view = view_of(&objects);
            let expect = match step(&view, &namespace, &pod) {
                Err(d) => json!({"denied": {"code": d.code, "message": d.message}}),
                Ok(out) => {
                    let mut result = apply(&pod, &out.patch);
                    normalise(&mut result);
                    let mut e = json!({"warnings": out.warnings});
                    if result != pod {
                        e["pod"] = result;
                    }
                    e
                }
            };
            case["expect"] = expect;
        }
        let text = serde_json::to_string_pretty(&cases).unwrap();
        std::fs::write(&path, text + "\n").unwrap();
    }
}
