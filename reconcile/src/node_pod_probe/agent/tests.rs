use serde_json::json;

use super::*;

fn timing(success: i32, failure: i32) -> Timing {
    Timing::of(
        &serde_json::from_value(json!({"exec": {"command": ["true"]}, "successThreshold": success,
            "failureThreshold": failure}))
        .unwrap(),
    )
}

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + s).unwrap()
}

fn key(probe: &str) -> ProbeKey {
    ("u1".to_string(), probe.to_string())
}

fn spec() -> NodePodProbeSpec {
    serde_json::from_value(json!({"podProbes": [
        {"name": "a", "namespace": "shop", "uid": "u1", "IP": "10.0.0.1", "probes": [
            {"name": "m#one", "containerName": "main", "probe": {"exec": {"command": ["true"]}}},
            {"name": "m#two", "containerName": "main", "probe": {"tcpSocket": {"port": 80}}}]},
        {"name": "b", "namespace": "shop", "uid": "u2", "IP": "10.0.0.2", "probes": [
            {"name": "m#one", "containerName": "main", "probe": {"exec": {"command": ["true"]}}}]}]}))
    .unwrap()
}

#[test]
fn timing_has_openkruise_floors() {
    let t = Timing::of(&Probe::default());
    assert_eq!(
        t,
        Timing {
            period: Duration::from_secs(1),
            initial_delay: Duration::from_secs(1),
            timeout: Duration::from_secs(1),
            success_threshold: 1,
            failure_threshold: 1,
        }
    );
    let t = Timing::of(&serde_json::from_value(json!({"periodSeconds": 7, "timeoutSeconds": -3})).unwrap());
    assert_eq!(
        (t.period, t.timeout),
        (Duration::from_secs(7), Duration::from_secs(1))
    );
}

#[test]
fn a_state_is_published_after_its_threshold_of_equal_results() {
    let t = timing(2, 3);
    let mut s = Streak::default();
    assert_eq!(s.observe(true, &t), None);
    assert_eq!(s.observe(true, &t), Some(ProbeState::Succeeded));
    assert_eq!(s.observe(false, &t), None);
    assert_eq!(s.observe(false, &t), None);
    assert_eq!(s.observe(true, &t), None, "a success breaks the failure streak");
    assert_eq!(s.observe(false, &t), None);
    assert_eq!(s.observe(false, &t), None);
    assert_eq!(s.observe(false, &t), Some(ProbeState::Failed));
    s.reset();
    assert_eq!(s.observe(true, &t), None);
}

#[test]
fn two_probes_on_one_container_keep_their_own_results() {
    let mut r = Results::default();
    r.record(&key("m#one"), "c1", ProbeState::Succeeded, "", at(0));
    r.record(&key("m#two"), "c1", ProbeState::Failed, "refused", at(1));
    assert_eq!(r.get(&key("m#one")).unwrap().state, ProbeState::Succeeded);
    assert_eq!(r.get(&key("m#two")).unwrap().state, ProbeState::Failed);
    let status = serde_json::to_value(r.status(&spec())).unwrap();
    assert_eq!(
        status,
        json!({"podProbeStatuses": [{"name": "a", "namespace": "shop", "uid": "u1", "probeStates": [
            {"name": "m#one", "state": "Succeeded", "lastProbeTime": "2023-11-14T22:13:20Z",
             "lastTransitionTime": "2023-11-14T22:13:20Z"},
            {"name": "m#two", "state": "Failed", "lastProbeTime": "2023-11-14T22:13:21Z",
             "lastTransitionTime": "2023-11-14T22:13:21Z", "message": "refused"}]}]})
    );
}

#[test]
fn events_only_for_state_changes_and_writes_only_when_dirty() {
    let mut r = Results::default();
    r.record(&key("m#one"), "c1", ProbeState::Succeeded, "", at(0));
    assert!(r.write_due(Duration::ZERO));
    let first = r.written();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].state, ProbeState::Succeeded);
    // The same result again: no event, no write, but the probe time moves on.
    r.record(&key("m#one"), "c1", ProbeState::Succeeded, "", at(10));
    assert!(!r.write_due(Duration::from_secs(10)));
    assert!(r.written().is_empty());
    assert_eq!(r.get(&key("m#one")).unwrap().last_transition_time, at(0));
    assert_eq!(r.get(&key("m#one")).unwrap().last_probe_time, at(10));
    assert!(r.write_due(REFRESH), "refreshed every ten minutes");
    // A new message is written but announces nothing.
    r.record(&key("m#one"), "c1", ProbeState::Succeeded, "warm", at(11));
    assert!(r.write_due(Duration::ZERO));
    assert!(r.written().is_empty());
    // Failed, then Succeeded again before a write: one event, for the latest state.
    r.record(&key("m#one"), "c1", ProbeState::Failed, "exit 1", at(12));
    r.record(&key("m#one"), "c1", ProbeState::Succeeded, "", at(13));
    let events = r.written();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].state, ProbeState::Succeeded);
    assert_eq!(r.get(&key("m#one")).unwrap().last_transition_time, at(13));
}

#[test]
fn a_new_container_resets_to_unknown_without_an_event() {
    let mut r = Results::default();
    r.record(&key("m#one"), "c1", ProbeState::Succeeded, "", at(0));
    r.written();
    r.new_container(&key("m#one"), "c2", at(5));
    assert_eq!(r.get(&key("m#one")).unwrap().state, ProbeState::Unknown);
    assert!(r.write_due(Duration::ZERO));
    assert!(r.written().is_empty());
    r.new_container(&key("m#one"), "c2", at(6));
    assert!(!r.write_due(Duration::ZERO), "the same container changes nothing");
    r.record(&key("m#one"), "c2", ProbeState::Succeeded, "", at(7));
    assert_eq!(r.written().len(), 1, "Unknown → Succeeded is a change");
}

#[test]
fn probes_gone_from_the_spec_are_forgotten() {
    let mut r = Results::default();
    r.record(&key("m#one"), "c1", ProbeState::Succeeded, "", at(0));
    r.record(
        &("gone".to_string(), "m#one".to_string()),
        "c9",
        ProbeState::Failed,
        "",
        at(0),
    );
    r.written();
    r.retain(&spec());
    assert!(r.write_due(Duration::ZERO));
    assert!(r.get(&("gone".to_string(), "m#one".to_string())).is_none());
    assert!(r.get(&key("m#one")).is_some());
}

#[test]
fn messages_are_cut_at_1024_bytes_on_a_char_boundary() {
    let long = "é".repeat(600);
    let cut = truncate(&long);
    assert!(cut.len() <= MAX_MESSAGE);
    assert_eq!(cut.len(), 1024);
    assert_eq!(truncate("short"), "short");
}

#[test]
fn a_failed_write_keeps_its_events_pending() {
    let mut r = Results::default();
    r.record(&key("m#one"), "c1", ProbeState::Succeeded, "", at(0));
    let taken = r.written();
    r.record(&key("m#two"), "c1", ProbeState::Failed, "", at(1));
    r.restore(taken);
    assert!(r.write_due(Duration::ZERO));
    let names: Vec<String> = r.written().into_iter().map(|t| t.key.1).collect();
    assert_eq!(names, ["m#one", "m#two"]);
}
