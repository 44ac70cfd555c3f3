//! CustomResourceDefinitions: `Cascading` counts the custom resources, behind its gate.

use super::*;

#[test]
fn crd_cascading_counts_active_custom_resources() {
    let other_kinds = || {
        vec![
            json!({"apiVersion": "example.com/v1", "kind": "Bar", "metadata": {"name": "b"}}),
            json!({"apiVersion": "other.io/v1", "kind": "Foo", "metadata": {"name": "f"}}),
        ]
    };
    let with = |extra: Vec<Value>| {
        let mut all = other_kinds();
        all.extend(extra);
        view_of(all)
    };
    let cases: Vec<(&str, MemoryView, Outcome)> = vec![
        ("no custom resources", MemoryView::default(), None),
        ("only other kinds or groups", with(vec![]), None),
        ("only terminating ones", with(vec![foo("x", true)]), None),
        (
            "active ones are counted",
            with(vec![foo("x", false), foo("y", false), foo("z", true)]),
            cascading(" and active CRs 2>0"),
        ),
    ];
    for (name, view, want) in cases {
        assert_eq!(
            outcome(&decide(&crd_delete("Cascading"), &view, &on())),
            want,
            "{name}"
        );
        // v1beta1 CRDs are read the same way.
        let beta = ("apiextensions.k8s.io", "v1beta1", "CustomResourceDefinition");
        let req = delete(beta, object(beta, labelled("Cascading"), crd_spec()));
        assert_eq!(outcome(&decide(&req, &view, &on())), want, "v1beta1: {name}");
    }
}

#[test]
fn crd_cascading_without_its_gate_is_denied_as_openkruise_does() {
    let settings = Settings::default();
    let got = outcome(&decide(
        &crd_delete("Cascading"),
        &MemoryView::default(),
        &settings,
    ));
    assert_eq!(
        got,
        forbidden("feature-gate DeletionProtectionForCRDCascadingGate is not enabled")
    );
    let got = outcome(&decide(&crd_delete("Always"), &MemoryView::default(), &settings));
    assert_eq!(got, forbidden(ALWAYS));
}

/// A view that cannot count custom resources (relies on the trait's default for active ones).
struct Uncounted(MemoryView);

impl ClusterView for Uncounted {
    fn kinds(&self) -> kruise_core::view::Lookups<'_> {
        self.0.kinds()
    }
    fn object(&self, group: &str, kind: &str, namespace: &str, name: &str) -> Option<Arc<Value>> {
        self.0.object(group, kind, namespace, name)
    }
    fn custom_resource_count(&self, _group: &str, _kind: &str) -> Option<usize> {
        None
    }
    fn derived(&self) -> Option<&kruise_core::DerivedCache> {
        None
    }
    fn own_namespace(&self) -> &str {
        self.0.own_namespace()
    }
}

#[test]
fn crd_cascading_fails_closed_when_custom_resources_cannot_be_counted() {
    let got = outcome(&validate(
        &crd_delete("Cascading"),
        &Uncounted(MemoryView::default()),
        &on(),
    ));
    assert_eq!(
        got,
        forbidden(
            "failed to list CRs of example.com/v1, Kind=FooList: custom resources of group \"example.com\", kind \"Foo\" are not known to kruise-rs"
        )
    );
}

#[test]
fn trait_default_counts_every_custom_resource() {
    /// Counts 2 custom resources, terminating or not.
    struct Two(MemoryView);
    impl ClusterView for Two {
        fn kinds(&self) -> kruise_core::view::Lookups<'_> {
            self.0.kinds()
        }
        fn object(&self, _: &str, _: &str, _: &str, _: &str) -> Option<Arc<Value>> {
            None
        }
        fn custom_resource_count(&self, group: &str, kind: &str) -> Option<usize> {
            ((group, kind) == ("example.com", "Foo")).then_some(2)
        }
        fn derived(&self) -> Option<&kruise_core::DerivedCache> {
            None
        }
        fn own_namespace(&self) -> &str {
            "kruise-system"
        }
    }
    let got = outcome(&validate(
        &crd_delete("Cascading"),
        &Two(MemoryView::default()),
        &on(),
    ));
    assert_eq!(got, cascading(" and active CRs 2>0"));
}
