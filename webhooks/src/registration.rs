//! How a webhook is registered with kube-apiserver, as data: its OpenKruise webhook name, the rules that
//! send requests to it, its scope, side effects and failure policy. Each webhook declares its registrations
//! beside its path and handler ([`crate::table`]); the `kruise` binary builds the
//! Mutating/ValidatingWebhookConfiguration objects (and `manifests/webhooks.yaml`) from them, and
//! `kruise admit -f` routes objects with the same rules.

pub use kruise_core::names::EXCLUDED_NAMESPACES;

/// One admission rule: requests for `resource` of `group` in one of `versions`, for one of `operations`.
#[derive(Debug)]
pub struct Rule {
    pub group: &'static str,
    pub versions: &'static [&'static str],
    pub resource: &'static str,
    pub operations: &'static [&'static str],
}

impl Rule {
    /// True when this rule sends `operation` on `resource` of `group`/`version`.
    pub fn matches(&self, group: &str, version: &str, resource: &str, operation: &str) -> bool {
        self.group == group
            && self.versions.contains(&version)
            && self.resource == resource
            && self.operations.contains(&operation)
    }
}

/// Which objects of the matching namespaces are sent (every registration also excludes
/// [`EXCLUDED_NAMESPACES`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every object.
    AllObjects,
    /// Only objects carrying the deletion-protection label (an objectSelector `Exists` on it).
    DeleteProtected,
}

/// `sideEffects` of a registration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SideEffects {
    None,
    /// The webhook writes status, never on a dry run.
    NoneOnDryRun,
}

impl SideEffects {
    pub fn as_str(self) -> &'static str {
        match self {
            SideEffects::None => "None",
            SideEffects::NoneOnDryRun => "NoneOnDryRun",
        }
    }
}

/// `failurePolicy` of a registration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailurePolicy {
    Fail,
    Ignore,
}

impl FailurePolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            FailurePolicy::Fail => "Fail",
            FailurePolicy::Ignore => "Ignore",
        }
    }
}

/// One webhook entry of a configuration.
#[derive(Debug)]
pub struct Registration {
    /// The webhook name, as OpenKruise's (e.g. `vnamespace.kb.io`).
    pub name: &'static str,
    pub rules: &'static [Rule],
    pub scope: Scope,
    pub side_effects: SideEffects,
    pub failure_policy: FailurePolicy,
}

/// `CREATE`, `UPDATE`.
pub(crate) const CU: &[&str] = &["CREATE", "UPDATE"];
/// `CREATE`, `UPDATE`, `DELETE`.
pub(crate) const CUD: &[&str] = &["CREATE", "UPDATE", "DELETE"];
/// The served versions of OpenKruise's kinds.
pub(crate) const KRUISE_VERSIONS: &[&str] = &["v1alpha1", "v1beta1"];

/// A rule for one resource.
pub(crate) const fn rule(
    group: &'static str,
    versions: &'static [&'static str],
    resource: &'static str,
    operations: &'static [&'static str],
) -> Rule {
    Rule {
        group,
        versions,
        resource,
        operations,
    }
}
