//! One storage for `v1` and `events.k8s.io/v1` Events, as kube-apiserver keeps one (in the
//! core shape) and serves it in both: `events.k8s.io/v1` objects are converted on the way in and
//! out as kubernetes' `pkg/apis/events/v1/conversion.go` does (`regarding` ↔ `involvedObject`,
//! `note` ↔ `message`, `reportingController` ↔ `reportingComponent`, `deprecatedSource`,
//! `deprecatedFirstTimestamp`, `deprecatedLastTimestamp`, `deprecatedCount` ↔ `source`,
//! `firstTimestamp`, `lastTimestamp`, `count`; the other fields keep their names).

use serde_json::{Map, Value, json};

use crate::resources::ResourceDef;

/// `(events.k8s.io name, core name)` of the renamed fields.
const RENAMED: [(&str, &str); 7] = [
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

/// Whether `def` is `events.k8s.io/v1 events` (stored as core events).
pub fn is_events_api(def: &ResourceDef) -> bool {
    def.group == "events.k8s.io" && def.plural == "events"
}

fn rename(obj: Value, api_version: &str, to_core: bool) -> Value {
    let Value::Object(map) = obj else { return obj };
    let mut out = Map::new();
    for (k, v) in map {
        let renamed = RENAMED
            .iter()
            .find(|(e, c)| if to_core { e == &k } else { c == &k })
            .map(|(e, c)| if to_core { *c } else { *e });
        match renamed {
            Some(name) => out.insert(name.to_string(), v),
            None => out.insert(k, v),
        };
    }
    out.insert("apiVersion".into(), json!(api_version));
    out.insert("kind".into(), json!("Event"));
    Value::Object(out)
}

/// An `events.k8s.io/v1` Event in the core (stored) shape.
pub fn to_core(obj: Value) -> Value {
    rename(obj, "v1", true)
}

/// A stored (core) Event in the `events.k8s.io/v1` shape.
pub fn from_core(obj: Value) -> Value {
    rename(obj, "events.k8s.io/v1", false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_shapes_round_trip() {
        let v1 = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"},
            "regarding": {"kind": "Pod", "name": "web"}, "note": "Created pod", "reason": "SuccessfulCreate",
            "reportingController": "kruise-manager", "reportingInstance": "x", "action": "Create",
            "type": "Normal", "eventTime": "2026-01-01T00:00:00.000000Z", "deprecatedCount": 2});
        let core = to_core(v1.clone());
        assert_eq!(core["involvedObject"]["name"], "web");
        assert_eq!(core["message"], "Created pod");
        assert_eq!(core["reportingComponent"], "kruise-manager");
        assert_eq!(core["count"], 2);
        assert_eq!(core["apiVersion"], "v1");
        assert_eq!(from_core(core), v1);
    }
}
