//! The webhook table: every admission path kruise-rs serves and the handler behind it.
//!
//! A path appears here only once its handler is real; `manifests/` lists only these paths (a test in the
//! binary checks it).

use crate::{Decision, review::AdmissionRequest, view::ClusterView};
use kruise_core::Settings;

/// Declares every webhook once: its variant, OpenKruise path, handler and registrations. Generates the
/// [`Webhook`] enum with [`Webhook::ALL`], [`Webhook::path`], [`Webhook::handle`], and [`REGISTRATIONS`].
macro_rules! webhooks {
    ($(
        $(#[$doc:meta])*
        $variant:ident {
            path: $path:literal,
            handler: |$request:ident, $view:ident, $settings:ident| $handler:expr,
            registrations: [$({
                name: $name:literal,
                rules: [$($rule:expr),+ $(,)?],
                scope: $scope:ident,
                side_effects: $effects:ident,
                failure_policy: $policy:ident $(,)?
            }),+ $(,)?] $(,)?
        }
    ),+ $(,)?) => {
        /// An admission webhook served by kruise-rs, named after its OpenKruise path.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Webhook {
            $($(#[$doc])* $variant),+
        }

        impl Webhook {
            /// Every webhook, in declaration order.
            pub const ALL: &'static [Webhook] = &[$(Webhook::$variant),+];

            /// The URL path, exactly as OpenKruise names it.
            pub fn path(self) -> &'static str {
                match self {
                    $(Webhook::$variant => $path),+
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
                    $(Webhook::$variant => {
                        #[allow(unused_variables)]
                        let ($request, $view, $settings) = (request, view, settings);
                        $handler
                    }),+
                }
            }
        }

        /// Every registration with the webhook it sends requests to, in declaration order: the order of
        /// the entries of our (and OpenKruise's) webhook configurations.
        pub const REGISTRATIONS: &[(Webhook, crate::registration::Registration)] = &[$($(
            (
                Webhook::$variant,
                crate::registration::Registration {
                    name: $name,
                    rules: &[$($rule),+],
                    scope: crate::registration::Scope::$scope,
                    side_effects: crate::registration::SideEffects::$effects,
                    failure_policy: crate::registration::FailurePolicy::$policy,
                },
            )
        ),+),+];
    };
}

use crate::registration::{CU, CUD, KRUISE_VERSIONS, rule};

webhooks! {
    /// Pod mutation on CREATE: readiness gate, WorkloadSpread (records its booking: NoneOnDryRun), SidecarSet
    /// injection, container launch priority, PUB annotation.
    MutatePod {
        path: "/mutate-pod",
        handler: |request, view, settings| crate::pod_mutate::mutate(request, view, settings),
        registrations: [{
            name: "mpod.kb.io",
            rules: [rule("", &["v1"], "pods", &["CREATE"])],
            scope: AllObjects,
            side_effects: NoneOnDryRun,
            failure_policy: Fail,
        }],
    },
    MutateCloneSet {
        path: "/mutate-apps-kruise-io-cloneset",
        handler: |request, view, settings| crate::crd::cloneset::mutate(request),
        registrations: [{
            name: "mcloneset.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "clonesets", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    MutateAdvancedStatefulSet {
        path: "/mutate-apps-kruise-io-statefulset",
        handler: |request, view, settings| crate::crd::statefulset::mutate(request, settings),
        registrations: [{
            name: "mstatefulset.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "statefulsets", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    MutateUnitedDeployment {
        path: "/mutate-apps-kruise-io-uniteddeployment",
        handler: |request, view, settings| crate::crd::uniteddeployment::mutate(request, settings),
        registrations: [{
            name: "muniteddeployment.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "uniteddeployments", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    MutateAdvancedDaemonSet {
        path: "/mutate-apps-kruise-io-daemonset",
        handler: |request, view, settings| crate::crd::daemonset::mutate(request),
        registrations: [{
            name: "mdaemonset.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "daemonsets", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    MutateBroadcastJob {
        path: "/mutate-apps-kruise-io-broadcastjob",
        handler: |request, view, settings| crate::crd::broadcastjob::mutate(request, settings),
        registrations: [{
            name: "mbroadcastjob.kb.io",
            rules: [rule("apps.kruise.io", &["v1alpha1"], "broadcastjobs", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    MutateAdvancedCronJob {
        path: "/mutate-apps-kruise-io-advancedcronjob",
        handler: |request, view, settings| crate::crd::advancedcronjob::mutate(request, settings),
        registrations: [{
            name: "madvancedcronjob.kb.io",
            rules: [rule("apps.kruise.io", &["v1alpha1"], "advancedcronjobs", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    MutateSidecarSet {
        path: "/mutate-apps-kruise-io-sidecarset",
        handler: |request, view, settings| crate::crd::sidecarset::mutate(request),
        registrations: [{
            name: "msidecarset.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "sidecarsets", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    /// PodUnavailableBudget protection and WorkloadSpread accounting: they write status, never in dry run.
    ValidatePod {
        path: "/validate-pod",
        handler: |request, view, settings| crate::pod_validate::validate(request, view, settings),
        registrations: [
            {
                name: "vpod.kb.io",
                rules: [rule("", &["v1"], "pods", &["UPDATE", "DELETE"])],
                scope: AllObjects,
                side_effects: NoneOnDryRun,
                failure_policy: Fail,
            },
            {
                name: "vpodeviction.kb.io",
                rules: [rule("", &["v1"], "pods/eviction", &["CREATE"])],
                scope: AllObjects,
                side_effects: NoneOnDryRun,
                failure_policy: Fail,
            },
        ],
    },
    ValidateNamespace {
        path: "/validate-namespace",
        handler: |request, view, settings| crate::deletion_protection::validate(request, view, settings),
        registrations: [{
            name: "vnamespace.kb.io",
            rules: [rule("", &["v1"], "namespaces", CUD)],
            scope: DeleteProtected,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    ValidateCustomResourceDefinition {
        path: "/validate-customresourcedefinition",
        handler: |request, view, settings| crate::deletion_protection::validate(request, view, settings),
        registrations: [{
            name: "vcustomresourcedefinition.kb.io",
            rules: [rule("apiextensions.k8s.io", &["v1"], "customresourcedefinitions", CUD)],
            scope: DeleteProtected,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    ValidateDeployment {
        path: "/validate-apps-deployment",
        handler: |request, view, settings| crate::deletion_protection::validate(request, view, settings),
        registrations: [{
            name: "vbuiltindeployment.kb.io",
            rules: [rule("apps", &["v1"], "deployments", CUD)],
            scope: DeleteProtected,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    ValidateReplicaSet {
        path: "/validate-apps-replicaset",
        handler: |request, view, settings| crate::deletion_protection::validate(request, view, settings),
        registrations: [{
            name: "vbuiltinreplicaset.kb.io",
            rules: [rule("apps", &["v1"], "replicasets", CUD)],
            scope: DeleteProtected,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    ValidateStatefulSet {
        path: "/validate-apps-statefulset",
        handler: |request, view, settings| crate::deletion_protection::validate(request, view, settings),
        registrations: [{
            name: "vbuiltinstatefulset.kb.io",
            rules: [rule("apps", &["v1"], "statefulsets", CUD)],
            scope: DeleteProtected,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    ValidateService {
        path: "/validate-service",
        handler: |request, view, settings| crate::deletion_protection::validate(request, view, settings),
        registrations: [{
            name: "vservice.kb.io",
            rules: [rule("", &["v1"], "services", CUD)],
            scope: DeleteProtected,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    ValidateIngress {
        path: "/validate-ingress",
        handler: |request, view, settings| crate::deletion_protection::validate(request, view, settings),
        registrations: [{
            name: "vingress.kb.io",
            rules: [rule("networking.k8s.io", &["v1"], "ingresses", CUD)],
            scope: DeleteProtected,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    ValidateWorkloadSpread {
        path: "/validate-apps-kruise-io-workloadspread",
        handler: |request, view, settings| crate::crd::workloadspread::validate(request, view),
        registrations: [{
            name: "vworkloadspread.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "workloadspreads", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    /// CloneSet validation and deletion protection: sees every CloneSet.
    ValidateCloneSet {
        path: "/validate-apps-kruise-io-cloneset",
        handler: |request, view, settings| crate::crd::cloneset::validate(request, view, settings),
        registrations: [{
            name: "vcloneset.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "clonesets", CUD)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    /// Advanced StatefulSet validation and deletion protection: sees every Advanced StatefulSet.
    ValidateAdvancedStatefulSet {
        path: "/validate-apps-kruise-io-statefulset",
        handler: |request, view, settings| crate::crd::statefulset::validate(request, view, settings),
        registrations: [{
            name: "vstatefulset.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "statefulsets", CUD)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    /// Advanced DaemonSet validation (OpenKruise has no DELETE rule for it).
    ValidateAdvancedDaemonSet {
        path: "/validate-apps-kruise-io-daemonset",
        handler: |request, view, settings| crate::crd::daemonset::validate(request, view, settings),
        registrations: [{
            name: "vdaemonset.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "daemonsets", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    /// BroadcastJob validation.
    ValidateBroadcastJob {
        path: "/validate-apps-kruise-io-broadcastjob",
        handler: |request, view, settings| crate::crd::broadcastjob::validate(request, view, settings),
        registrations: [{
            name: "vbroadcastjob.kb.io",
            rules: [rule("apps.kruise.io", &["v1alpha1"], "broadcastjobs", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    /// EphemeralJob validation.
    ValidateEphemeralJob {
        path: "/validate-apps-kruise-io-v1alpha1-ephemeraljob",
        handler: |request, view, settings| crate::crd::ephemeraljob::validate(request, view, settings),
        registrations: [{
            name: "vephemeraljobs.kb.io",
            rules: [rule("apps.kruise.io", &["v1alpha1"], "ephemeraljobs", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    /// AdvancedCronJob validation.
    ValidateAdvancedCronJob {
        path: "/validate-apps-kruise-io-advancedcronjob",
        handler: |request, view, settings| crate::crd::advancedcronjob::validate(request, view, settings),
        registrations: [{
            name: "vadvancedcronjob.kb.io",
            rules: [rule("apps.kruise.io", &["v1alpha1"], "advancedcronjobs", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    /// ContainerRecreateRequest defaults, pod lookup and immutability (one mutating path, as OpenKruise).
    MutateContainerRecreateRequest {
        path: "/mutate-apps-kruise-io-containerrecreaterequest",
        handler: |request, view, settings| crate::crd::containerrecreaterequest::mutate(request, view, settings),
        registrations: [{
            name: "mcontainerrecreaterequest.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "containerrecreaterequests", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    /// NodeImage defaults (createdAt, pull policy) and tags sorted.
    MutateNodeImage {
        path: "/mutate-apps-kruise-io-nodeimage",
        handler: |request, view, settings| crate::crd::nodeimage::mutate(request),
        registrations: [{
            name: "mnodeimage.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "nodeimages", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    /// NodeImage validation (gate, images, tags).
    ValidateNodeImage {
        path: "/validate-apps-kruise-io-nodeimage",
        handler: |request, view, settings| crate::crd::nodeimage::validate(request, settings),
        registrations: [{
            name: "vnodeimage.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "nodeimages", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    /// ImagePullJob defaults.
    MutateImagePullJob {
        path: "/mutate-apps-kruise-io-imagepulljob",
        handler: |request, view, settings| crate::crd::imagepulljob::mutate(request, false),
        registrations: [{
            name: "mimagepulljob.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "imagepulljobs", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    /// ImagePullJob validation.
    ValidateImagePullJob {
        path: "/validate-apps-kruise-io-imagepulljob",
        handler: |request, view, settings| crate::crd::imagepulljob::validate(request, settings, false),
        registrations: [{
            name: "vimagepulljob.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "imagepulljobs", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    /// ImageListPullJob defaults.
    MutateImageListPullJob {
        path: "/mutate-apps-kruise-io-imagelistpulljob",
        handler: |request, view, settings| crate::crd::imagepulljob::mutate(request, true),
        registrations: [{
            name: "mimagelistpulljob.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "imagelistpulljobs", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    /// ImageListPullJob validation.
    ValidateImageListPullJob {
        path: "/validate-apps-kruise-io-imagelistpulljob",
        handler: |request, view, settings| crate::crd::imagepulljob::validate(request, settings, true),
        registrations: [{
            name: "vimagelistpulljob.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "imagelistpulljobs", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    /// UnitedDeployment validation and deletion protection: sees every UnitedDeployment.
    ValidateUnitedDeployment {
        path: "/validate-apps-kruise-io-uniteddeployment",
        handler: |request, view, settings| crate::crd::uniteddeployment::validate(request, view, settings),
        registrations: [{
            name: "vuniteddeployment.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "uniteddeployments", CUD)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    ValidatePodUnavailableBudget {
        path: "/validate-policy-kruise-io-podunavailablebudget",
        handler: |request, view, settings| crate::crd::podunavailablebudget::validate(request, view),
        registrations: [{
            name: "vpodunavailablebudget.kb.io",
            rules: [rule("policy.kruise.io", KRUISE_VERSIONS, "podunavailablebudgets", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    /// PodProbeMarker validation (needs PodProbeMarkerGate and KruiseDaemon).
    ValidatePodProbeMarker {
        path: "/validate-apps-kruise-io-podprobemarker",
        handler: |request, view, settings| crate::crd::podprobemarker::validate(request, view, settings),
        registrations: [{
            name: "vpodprobemarker.kb.io",
            rules: [rule("apps.kruise.io", &["v1alpha1"], "podprobemarkers", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    ValidatePersistentPodState {
        path: "/validate-apps-kruise-io-persistentpodstate",
        handler: |request, view, settings| crate::crd::persistentpodstate::validate(request, view),
        registrations: [{
            name: "vpersistentpodstate.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "persistentpodstates", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    ValidateResourceDistribution {
        path: "/validate-apps-kruise-io-resourcedistribution",
        handler: |request, view, settings| crate::crd::resourcedistribution::validate(request, settings),
        registrations: [{
            name: "vresourcedistribution.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "resourcedistributions", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
    ValidateSidecarSet {
        path: "/validate-apps-kruise-io-sidecarset",
        handler: |request, view, settings| crate::crd::sidecarset::validate(request, view),
        registrations: [{
            name: "vsidecarset.kb.io",
            rules: [rule("apps.kruise.io", KRUISE_VERSIONS, "sidecarsets", CU)],
            scope: AllObjects,
            side_effects: None,
            failure_policy: Fail,
        }],
    },
}

impl Webhook {
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

    /// This webhook's registrations.
    pub fn registrations(self) -> impl Iterator<Item = &'static crate::registration::Registration> {
        REGISTRATIONS
            .iter()
            .filter(move |(w, _)| *w == self)
            .map(|(_, r)| r)
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

    #[test]
    fn every_webhook_is_registered_and_names_are_unique() {
        for w in Webhook::ALL {
            assert!(w.registrations().next().is_some(), "{w:?} has no registration");
        }
        let mut names: Vec<_> = REGISTRATIONS.iter().map(|(_, r)| r.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), REGISTRATIONS.len());
    }
}
