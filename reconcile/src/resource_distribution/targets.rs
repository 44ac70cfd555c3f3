//! Which namespaces a distribution targets: (all | included | selector) − excluded − the system
//! namespaces, as OpenKruise's `listNamespacesForDistributor` and `matchViaTargets`.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Namespace;
use kruise_api::apps_v1beta1::ResourceDistributionTargets;
use kruise_core::selector::Selector;

/// Namespaces never targeted, whatever the distribution says.
pub const SYSTEM_NAMESPACES: [&str; 2] = ["kube-system", "kube-public"];

/// `targets.namespaceSelector` does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid targets.namespaceSelector: {0}")]
pub struct InvalidSelector(pub String);

/// The parsed targets of one distribution.
pub struct Targets<'a> {
    targets: &'a ResourceDistributionTargets,
    /// `None` when the selector is empty (it then matches nothing, as in OpenKruise).
    selector: Option<Selector<'a>>,
}

impl<'a> Targets<'a> {
    /// Parses the targets; an invalid selector is an error.
    pub fn new(targets: &'a ResourceDistributionTargets) -> Result<Self, InvalidSelector> {
        let s = &targets.namespace_selector;
        let empty = s.match_labels.as_ref().is_none_or(BTreeMap::is_empty)
            && s.match_expressions.as_ref().is_none_or(Vec::is_empty);
        let selector = if empty {
            None
        } else {
            let parsed = Selector::parse(Some(s));
            parsed.valid().map_err(InvalidSelector)?;
            Some(parsed)
        };
        Ok(Targets { targets, selector })
    }

    fn excluded(&self, name: &str) -> bool {
        SYSTEM_NAMESPACES.contains(&name) || self.targets.excluded_namespaces.names().any(|n| n == name)
    }

    /// Whether a namespace with this name and these labels is a target.
    pub fn matches(&self, name: &str, labels: Option<&BTreeMap<String, String>>) -> bool {
        if self.excluded(name) {
            return false;
        }
        if self.targets.all_namespaces || self.targets.included_namespaces.names().any(|n| n == name) {
            return true;
        }
        let empty = BTreeMap::new();
        self.selector
            .as_ref()
            .is_some_and(|s| s.matches_labels(labels.unwrap_or(&empty)))
    }

    /// The targeted namespaces, sorted: every existing namespace that matches plus, unless
    /// `allNamespaces`, the included names that do not exist (they are reported as missing).
    pub fn matched<'n>(&self, namespaces: impl IntoIterator<Item = &'n Namespace>) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = namespaces
            .into_iter()
            .filter_map(|ns| {
                let name = ns.metadata.name.as_deref()?;
                self.matches(name, ns.metadata.labels.as_ref())
                    .then(|| name.to_string())
            })
            .collect();
        if !self.targets.all_namespaces {
            out.extend(
                self.targets
                    .included_namespaces
                    .names()
                    .filter(|n| !self.excluded(n))
                    .map(str::to_string),
            );
        }
        out
    }
}

/// A namespace that is gone for a distribution's purpose: being deleted.
pub fn terminating(namespace: &Namespace) -> bool {
    namespace.metadata.deletion_timestamp.is_some()
        || namespace.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Terminating")
}
