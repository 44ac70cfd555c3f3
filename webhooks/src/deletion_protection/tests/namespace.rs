//! Namespaces: `Cascading` counts active pods, then bound PVCs.

use super::*;

#[test]
fn namespace_cascading_counts_active_pods_then_bound_pvcs() {
    let inactive_pods = || {
        vec![
            pod("prod", "done", Some("Succeeded"), false),
            pod("prod", "crashed", Some("Failed"), false),
            pod("prod", "going", Some("Running"), true),
            pod("other", "elsewhere", Some("Running"), false),
        ]
    };
    let unbound_pvcs = || {
        vec![
            pvc("prod", "pending", "Pending", false),
            pvc("prod", "lost", "Lost", false),
            pvc("prod", "leaving", "Bound", true),
            pvc("other", "elsewhere", "Bound", false),
        ]
    };
    let with = |extra: Vec<Value>| {
        let mut all = inactive_pods();
        all.extend(unbound_pvcs());
        all.extend(extra);
        view_of(all)
    };
    let cases: Vec<(&str, MemoryView, Outcome)> = vec![
        ("empty namespace", MemoryView::default(), None),
        ("only inactive pods and unbound pvcs", with(vec![]), None),
        (
            "running and pending (no status) pods are active",
            with(vec![
                pod("prod", "web", Some("Running"), false),
                pod("prod", "new", None, false),
                pod("prod", "unknown", Some("Unknown"), false),
            ]),
            cascading(" and active pods 3>0"),
        ),
        (
            "pods are reported before pvcs",
            with(vec![
                pod("prod", "web", Some("Pending"), false),
                pvc("prod", "data", "Bound", false),
            ]),
            cascading(" and active pods 1>0"),
        ),
        (
            "bound pvcs",
            with(vec![
                pvc("prod", "data", "Bound", false),
                pvc("prod", "logs", "Bound", false),
            ]),
            cascading(" and \"Bound\" status pvc 2>0"),
        ),
    ];
    for (name, view, want) in cases {
        let got = outcome(&decide(&namespace_delete("prod", "Cascading"), &view, &on()));
        assert_eq!(got, want, "{name}");
    }
    // Always does not look at the contents.
    let got = outcome(&decide(
        &namespace_delete("prod", "Always"),
        &MemoryView::default(),
        &on(),
    ));
    assert_eq!(got, forbidden(ALWAYS));
}

#[test]
fn namespace_name_falls_back_to_the_request_name() {
    let view = view_of(vec![pod("target", "web", Some("Running"), false)]);
    let old = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"labels": labelled("Cascading")}});
    let got = outcome(&decide(&delete(NS, old), &view, &on()));
    assert_eq!(got, cascading(" and active pods 1>0"));
}
