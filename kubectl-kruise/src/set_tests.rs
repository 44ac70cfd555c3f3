use serde_json::json;

use super::*;

fn cloneset() -> Value {
    json!({"metadata": {"name": "web", "resourceVersion": "5"}, "spec": {"template": {"spec": {
    "initContainers": [{"name": "init", "image": "busybox"}],
    "containers": [
        {"name": "web", "image": "nginx:1.27", "env": [{"name": "A", "value": "1"}]},
        {"name": "log", "image": "fluentd", "resources": {"limits": {"cpu": "1"}}},
    ]}}}})
}

#[test]
fn set_image_by_name_and_for_all() {
    let mut o = cloneset();
    set_image(&mut o, Kind::CloneSet, &[("web".into(), "nginx:1.28".into())]).unwrap();
    assert_eq!(
        o["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.28"
    );
    assert_eq!(o["spec"]["template"]["spec"]["containers"][1]["image"], "fluentd");
    set_image(&mut o, Kind::CloneSet, &[("*".into(), "x:1".into())]).unwrap();
    assert_eq!(o["spec"]["template"]["spec"]["initContainers"][0]["image"], "x:1");
    let e = set_image(&mut o, Kind::CloneSet, &[("nope".into(), "x".into())]).unwrap_err();
    assert_eq!(e.to_string(), "unable to find container named \"nope\"");
}

#[test]
fn set_image_on_a_sidecarset_edits_its_own_containers() {
    let mut s = json!({"spec": {"containers": [{"name": "log-agent", "image": "fluent-bit:3.0"}],
                                "initContainers": [{"name": "setup", "image": "busybox"}]}});
    set_image(
        &mut s,
        Kind::SidecarSet,
        &[
            ("log-agent".into(), "fluent-bit:3.1".into()),
            ("setup".into(), "alpine".into()),
        ],
    )
    .unwrap();
    assert_eq!(s["spec"]["containers"][0]["image"], "fluent-bit:3.1");
    assert_eq!(s["spec"]["initContainers"][0]["image"], "alpine");
}

#[test]
fn set_env_adds_replaces_and_removes() {
    let mut o = cloneset();
    set_env(
        &mut o,
        Kind::CloneSet,
        "web",
        &["A=2".into(), "B=x=y".into()],
        true,
    )
    .unwrap();
    assert_eq!(
        o["spec"]["template"]["spec"]["containers"][0]["env"],
        json!([{"name": "A", "value": "2"}, {"name": "B", "value": "x=y"}])
    );
    assert!(
        o["spec"]["template"]["spec"]["containers"][1]
            .get("env")
            .is_none()
    );
    let e = set_env(&mut o, Kind::CloneSet, "web", &["A=3".into()], false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "'A' already has a value (2), and --overwrite is false"
    );
    set_env(&mut o, Kind::CloneSet, "*", &["A-".into(), "B-".into()], true).unwrap();
    assert!(
        o["spec"]["template"]["spec"]["containers"][0]
            .get("env")
            .is_none()
    );
    assert!(set_env(&mut o, Kind::CloneSet, "*", &["=1".into()], true).is_err());
}

#[test]
fn set_resources_merges_limits_and_requests() {
    let mut o = cloneset();
    set_resources(&mut o, Kind::CloneSet, "log", "memory=512Mi", "cpu=100m").unwrap();
    assert_eq!(
        o["spec"]["template"]["spec"]["containers"][1]["resources"],
        json!({"limits": {"cpu": "1", "memory": "512Mi"}, "requests": {"cpu": "100m"}})
    );
    assert!(set_resources(&mut o, Kind::CloneSet, "log", "cpu=lots", "").is_err());
    assert!(set_resources(&mut o, Kind::CloneSet, "log", "", "").is_err());
}

#[test]
fn set_service_account_on_the_template() {
    let mut o = cloneset();
    set_service_account(&mut o, Kind::AdvancedStatefulSet, "reader").unwrap();
    assert_eq!(o["spec"]["template"]["spec"]["serviceAccountName"], "reader");
    assert!(set_service_account(&mut o, Kind::SidecarSet, "reader").is_err());
}
