//! The webhook table: every admission path kruise-rs serves and the handler behind it.
//!
//! A path appears here only once its handler is real; `manifests/` lists only these paths (a test in the
//! binary checks it).

use crate::{Decision, review::AdmissionRequest, view::ClusterView};
use kruise_core::Settings;

/// An admission webhook served by kruise-rs, named after its OpenKruise path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Webhook {
    MutatePod,
    ValidatePod,
    ValidateNamespace,
    ValidateCustomResourceDefinition,
    ValidateDeployment,
    ValidateReplicaSet,
    ValidateStatefulSet,
    ValidateService,
    ValidateIngress,
    ValidateCloneSet,
    ValidateAdvancedStatefulSet,
    ValidateUnitedDeployment,
    MutateSidecarSet,
    ValidateSidecarSet,
    MutateCloneSet,
    ValidatePodUnavailableBudget,
    ValidateWorkloadSpread,
}

impl Webhook {
    /// Every webhook, in the order of OpenKruise's configurations.
    pub const ALL: &'static [Webhook] = &[
        Webhook::MutatePod,
        Webhook::ValidatePod,
        Webhook::ValidateNamespace,
        Webhook::ValidateCustomResourceDefinition,
        Webhook::ValidateDeployment,
        Webhook::ValidateReplicaSet,
        Webhook::ValidateStatefulSet,
        Webhook::ValidateService,
        Webhook::ValidateIngress,
        Webhook::ValidateCloneSet,
        Webhook::ValidateAdvancedStatefulSet,
        Webhook::ValidateUnitedDeployment,
        Webhook::MutateSidecarSet,
        Webhook::ValidateSidecarSet,
        Webhook::MutateCloneSet,
        Webhook::ValidatePodUnavailableBudget,
        Webhook::ValidateWorkloadSpread,
    ];

    /// The URL path, exactly as OpenKruise names it.
    pub fn path(self) -> &'static str {
        match self {
            Webhook::MutatePod => "/mutate-pod",
            Webhook::ValidatePod => "/validate-pod",
            Webhook::ValidateNamespace => "/validate-namespace",
            Webhook::ValidateCustomResourceDefinition => "/validate-customresourcedefinition",
            Webhook::ValidateDeployment => "/validate-apps-deployment",
            Webhook::ValidateReplicaSet => "/validate-apps-replicaset",
            Webhook::ValidateStatefulSet => "/validate-apps-statefulset",
            Webhook::ValidateService => "/validate-service",
            Webhook::ValidateIngress => "/validate-ingress",
            Webhook::ValidateCloneSet => "/validate-apps-kruise-io-cloneset",
            Webhook::ValidateAdvancedStatefulSet => "/validate-apps-kruise-io-statefulset",
            Webhook::ValidateUnitedDeployment => "/validate-apps-kruise-io-uniteddeployment",
            Webhook::MutateSidecarSet => "/mutate-apps-kruise-io-sidecarset",
            Webhook::ValidateSidecarSet => "/validate-apps-kruise-io-sidecarset",
            Webhook::MutateCloneSet => "/mutate-apps-kruise-io-cloneset",
            Webhook::ValidatePodUnavailableBudget => "/validate-policy-kruise-io-podunavailablebudget",
            Webhook::ValidateWorkloadSpread => "/validate-apps-kruise-io-workloadspread",
        }
    }

    /// The webhook served at `path`, if any.
    pub fn from_path(path: &str) -> Option<Webhook> {
        Webhook::ALL.iter().copied().find(|w| w.path() == path)
    }

    /// A short name for logs and metrics: the path without its leading slash.
    pub fn name(self) -> &'static str {
        &self.path()[1..]
    }

    /// True for mutating webhooks (their answers may carry a patch).
    pub fn is_mutating(self) -> bool {
        self.path().starts_with("/mutate-")
    }

    /// [`Webhook::handle`] for a caller that can lend the request mutably: `/mutate-pod` then works on the
    /// request's own pod instead of a copy. The request is unchanged afterwards.
    pub fn handle_mut(
        self,
        request: &mut AdmissionRequest,
        view: &impl ClusterView,
        settings: &Settings,
    ) -> Decision {
        match self {
            Webhook::MutatePod => crate::pod_mutate::mutate_in_place(request, view, settings),
            other => other.handle(request, view, settings),
        }
    }

    /// Decides one request.
    pub fn handle(
        self,
        request: &AdmissionRequest,
        view: &impl ClusterView,
        settings: &Settings,
    ) -> Decision {
        match self {
            Webhook::MutatePod => crate::pod_mutate::mutate(request, view, settings),
            Webhook::ValidatePod => crate::pod_validate::validate(request, view, settings),
            Webhook::ValidateNamespace
            | Webhook::ValidateCustomResourceDefinition
            | Webhook::ValidateDeployment
            | Webhook::ValidateReplicaSet
            | Webhook::ValidateStatefulSet
            | Webhook::ValidateService
            | Webhook::ValidateIngress
            | Webhook::ValidateAdvancedStatefulSet
            | Webhook::ValidateUnitedDeployment => {
                crate::deletion_protection::validate(request, view, settings)
            }
            Webhook::ValidateCloneSet => crate::crd::cloneset::validate(request, view, settings),
            Webhook::MutateSidecarSet => crate::crd::sidecarset::mutate(request),
            Webhook::ValidateSidecarSet => crate::crd::sidecarset::validate(request, view),
            Webhook::MutateCloneSet => crate::crd::cloneset::mutate(request),
            Webhook::ValidatePodUnavailableBudget => {
                crate::crd::podunavailablebudget::validate(request, view)
            }
            Webhook::ValidateWorkloadSpread => crate::crd::workloadspread::validate(request, view),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_and_are_unique() {
        for w in Webhook::ALL {
            assert_eq!(Webhook::from_path(w.path()), Some(*w));
        }
        let mut paths: Vec<_> = Webhook::ALL.iter().map(|w| w.path()).collect();
        paths.sort();
        paths.dedup();
        assert_eq!(paths.len(), Webhook::ALL.len());
        assert_eq!(Webhook::from_path("/"), None);
    }
}
