//! The one registry of the kinds kruise-rs reads.
//!
//! A kind is declared once, in the [`registry!`] call at the bottom of this file: its Rust type (which
//! says group, version, kind and plural through [`kube::Resource`]), whether it is namespaced, whether
//! it has a status kruise-rs writes, whether the API server may not serve it, and how older versions
//! convert. The declaration generates the [`Kinds`] struct holding one store per kind, so every
//! backend — the in-memory view of `kruise admit`, the reflector caches of a cluster, the borrowed
//! [`Lookups`] a webhook reads — has a store for every kind, or does not compile.
//! `docs/adding-a-kind.md` walks through adding one.

use std::fmt::Debug;

use k8s_openapi::api::{
    apps::v1::{ControllerRevision, Deployment, ReplicaSet, StatefulSet},
    batch::v1::Job,
    core::v1::{Namespace, Node, PersistentVolumeClaim},
};
use kruise_api::{
    PodRecord,
    apps_v1alpha1::{AdvancedCronJob, BroadcastJob, EphemeralJob, NodePodProbe, PodProbeMarker},
    apps_v1beta1::{
        CloneSet, ContainerRecreateRequest, DaemonSet as AdvancedDaemonSet, ImageListPullJob, ImagePullJob,
        NodeImage, PersistentPodState, ResourceDistribution, SidecarSet, StatefulSet as AdvancedStatefulSet,
        UnitedDeployment, WorkloadSpread,
    },
    policy_v1beta1::PodUnavailableBudget,
};
use serde_json::Value;

use crate::decode::{self, DecodeError};
pub use crate::kind::{Backend, Kind, Lookup, is};

/// A kind with a store in [`Kinds`]: the typed way to reach it.
pub trait Registered: Kind {
    /// This kind's store.
    fn store<B: Backend>(kinds: &Kinds<B>) -> &B::Store<Self>;
    /// This kind's store, mutably.
    fn store_mut<B: Backend>(kinds: &mut Kinds<B>) -> &mut B::Store<Self>;
}

/// Makes the store of each kind, for [`Kinds::new`].
pub trait MakeStore<B: Backend> {
    fn make<K: Registered>(&mut self) -> B::Store<K>;
}

/// Visits the store of each kind ([`Kinds::each`]).
pub trait EachKind<B: Backend> {
    fn visit<K: Registered>(&mut self, store: &B::Store<K>);
}

/// Works on the store of the one kind named by group and kind ([`Kinds::with_kind`]).
pub trait ForKind<B: Backend> {
    type Output;
    fn call<K: Registered>(self, store: &B::Store<K>) -> Self::Output;
}

/// Like [`ForKind`], mutably ([`Kinds::with_kind_mut`]).
pub trait ForKindMut<B: Backend> {
    type Output;
    fn call<K: Registered>(self, store: &mut B::Store<K>) -> Self::Output;
}

/// The stores of a view, borrowed: what a view hands out (`ClusterView::kinds`).
pub struct Borrowed<'a>(std::marker::PhantomData<&'a ()>);

impl<'a> Backend for Borrowed<'a> {
    type Store<K: Kind> = &'a dyn Lookup<K>;
}

/// Every registered kind's objects, borrowed from a view.
pub type Lookups<'a> = Kinds<Borrowed<'a>>;

impl Lookups<'_> {
    /// The objects of kind `K`.
    pub fn of<K: Registered>(&self) -> &dyn Lookup<K> {
        *K::store(self)
    }
}

/// Declares the registered kinds: `field: Type { namespaced, status, optional, convert }`.
macro_rules! registry {
    ($(
        $(#[$doc:meta])*
        $field:ident: $ty:ty {
            namespaced: $namespaced:literal,
            status: $status:literal,
            optional: $optional:literal,
            convert: $convert:expr $(,)?
        }
    ),* $(,)?) => {
        /// One store per registered kind, in a backend `B`.
        pub struct Kinds<B: Backend> {
            $( $(#[$doc])* pub $field: B::Store<$ty>, )*
        }

        $(
            impl Kind for $ty {
                const NAMESPACED: bool = $namespaced;
                const HAS_STATUS: bool = $status;
                const OPTIONAL: bool = $optional;
                fn decode(object: Value) -> Result<Self, DecodeError> {
                    let convert: Option<fn(&Value) -> Result<$ty, kruise_api::ConversionError>> = $convert;
                    match convert {
                        Some(convert) => decode::converted(object, convert),
                        None => decode::typed(object),
                    }
                }
            }

            impl Registered for $ty {
                fn store<B: Backend>(kinds: &Kinds<B>) -> &B::Store<Self> {
                    &kinds.$field
                }
                fn store_mut<B: Backend>(kinds: &mut Kinds<B>) -> &mut B::Store<Self> {
                    &mut kinds.$field
                }
            }
        )*

        /// True when the kind named by API group and kind is registered.
        pub fn registered(group: &str, kind: &str) -> bool {
            false $( || is::<$ty>(group, kind) )*
        }

        impl<B: Backend> Kinds<B> {
            /// Every store, made by `make`.
            pub fn new(make: &mut impl MakeStore<B>) -> Self {
                Kinds { $( $field: make.make::<$ty>(), )* }
            }

            /// Visits every store, in declaration order.
            pub fn each(&self, visitor: &mut impl EachKind<B>) {
                $( visitor.visit::<$ty>(&self.$field); )*
            }

            /// Calls `f` with the store of the kind named by API group and kind; `None` when that kind
            /// is not registered.
            pub fn with_kind<F: ForKind<B>>(&self, group: &str, kind: &str, f: F) -> Option<F::Output> {
                $( if is::<$ty>(group, kind) { return Some(f.call::<$ty>(&self.$field)); } )*
                None
            }

            /// Like [`with_kind`](Self::with_kind), mutably.
            pub fn with_kind_mut<F: ForKindMut<B>>(
                &mut self,
                group: &str,
                kind: &str,
                f: F,
            ) -> Option<F::Output> {
                $( if is::<$ty>(group, kind) { return Some(f.call::<$ty>(&mut self.$field)); } )*
                None
            }

            /// Every store, borrowed for reading.
            pub fn lookups(&self) -> Lookups<'_> {
                Kinds { $( $field: &self.$field, )* }
            }
        }

        impl<B: Backend> Clone for Kinds<B>
        where
            $( B::Store<$ty>: Clone, )*
        {
            fn clone(&self) -> Self {
                Kinds { $( $field: self.$field.clone(), )* }
            }
        }

        impl<B: Backend> Default for Kinds<B>
        where
            $( B::Store<$ty>: Default, )*
        {
            fn default() -> Self {
                Kinds { $( $field: Default::default(), )* }
            }
        }

        impl<B: Backend> Debug for Kinds<B> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let mut map = f.debug_map();
                $( map.entry(&stringify!($field), &Lookup::<$ty>::generation(&self.$field)); )*
                map.finish()
            }
        }
    };
}

registry! {
    /// Namespaces (deletion protection of namespaces, SidecarSet namespace selectors).
    namespaces: Namespace { namespaced: false, status: false, optional: false, convert: None },
    /// Nodes: the WorkloadSpread controller adopts pods by their node's labels and taints.
    nodes: Node { namespaced: false, status: false, optional: false, convert: None },
    /// Pods, as the slim [`PodRecord`].
    pods: PodRecord { namespaced: true, status: false, optional: false, convert: None },
    persistent_volume_claims: PersistentVolumeClaim {
        namespaced: true, status: false, optional: false, convert: None,
    },
    /// ControllerRevisions (SidecarSet revisions live in kruise-rs's namespace).
    controller_revisions: ControllerRevision {
        namespaced: true, status: false, optional: false, convert: None,
    },
    deployments: Deployment { namespaced: true, status: false, optional: false, convert: None },
    replica_sets: ReplicaSet { namespaced: true, status: false, optional: false, convert: None },
    /// `apps/v1` StatefulSets.
    stateful_sets: StatefulSet { namespaced: true, status: false, optional: false, convert: None },
    jobs: Job { namespaced: true, status: false, optional: false, convert: None },
    sidecar_sets: SidecarSet {
        namespaced: false, status: true, optional: false,
        convert: Some(kruise_api::sidecarset_to_v1beta1),
    },
    pod_unavailable_budgets: PodUnavailableBudget {
        namespaced: true, status: true, optional: false,
        convert: Some(kruise_api::podunavailablebudget_to_v1beta1),
    },
    workload_spreads: WorkloadSpread {
        namespaced: true, status: true, optional: false,
        convert: Some(kruise_api::workloadspread_to_v1beta1),
    },
    clone_sets: CloneSet {
        namespaced: true, status: true, optional: false,
        convert: Some(kruise_api::cloneset_to_v1beta1),
    },
    /// OpenKruise's Advanced StatefulSets (`apps.kruise.io` `StatefulSet`), read as v1beta1.
    advanced_stateful_sets: AdvancedStatefulSet {
        namespaced: true, status: false, optional: false,
        convert: Some(kruise_api::statefulset_to_v1beta1),
    },
    /// BroadcastJobs (`apps.kruise.io/v1alpha1`, the only version served).
    broadcast_jobs: BroadcastJob { namespaced: true, status: true, optional: false, convert: None },
    /// AdvancedCronJobs (`apps.kruise.io/v1alpha1`, the only version served).
    advanced_cron_jobs: AdvancedCronJob { namespaced: true, status: true, optional: false, convert: None },
    /// EphemeralJobs (`apps.kruise.io/v1alpha1`, the only version served).
    ephemeral_jobs: EphemeralJob { namespaced: true, status: true, optional: false, convert: None },
    /// OpenKruise's Advanced DaemonSets (`apps.kruise.io` `DaemonSet`), read as v1beta1.
    advanced_daemon_sets: AdvancedDaemonSet {
        namespaced: true, status: false, optional: false,
        convert: Some(kruise_api::daemonset_to_v1beta1),
    },
    /// ResourceDistributions (cluster-scoped), read as v1beta1. Their copies (ConfigMaps, Secrets) are
    /// not cached: the controller lists them by label per pass (`docs/resource-distribution.md`).
    resource_distributions: ResourceDistribution {
        namespaced: false, status: true, optional: false,
        convert: Some(kruise_api::resourcedistribution_to_v1beta1),
    },
    /// NodeImages (cluster-scoped, one per node), read as v1beta1.
    node_images: NodeImage {
        namespaced: false, status: true, optional: false,
        convert: Some(kruise_api::nodeimage_to_v1beta1),
    },
    /// ImagePullJobs, read as v1beta1.
    image_pull_jobs: ImagePullJob {
        namespaced: true, status: true, optional: false,
        convert: Some(kruise_api::imagepulljob_to_v1beta1),
    },
    /// ImageListPullJobs, read as v1beta1.
    image_list_pull_jobs: ImageListPullJob {
        namespaced: true, status: true, optional: false,
        convert: Some(kruise_api::imagelistpulljob_to_v1beta1),
    },
    /// UnitedDeployments, read as v1beta1; their subset workloads are the StatefulSets, Advanced
    /// StatefulSets, CloneSets and Deployments above (`docs/uniteddeployment.md`).
    united_deployments: UnitedDeployment {
        namespaced: true, status: true, optional: false,
        convert: Some(kruise_api::uniteddeployment_to_v1beta1),
    },
    /// PersistentPodStates, read as v1beta1: the pod webhook injects their recorded topology and
    /// their controller records it (`docs/persistentpodstate.md`).
    persistent_pod_states: PersistentPodState {
        namespaced: true, status: true, optional: false,
        convert: Some(kruise_api::persistentpodstate_to_v1beta1),
    },
    /// ContainerRecreateRequests, read as v1beta1: their webhook and manager controller
    /// (`docs/containerrecreaterequest.md`); the node agent watches its own node's.
    container_recreate_requests: ContainerRecreateRequest {
        namespaced: true, status: true, optional: false,
        convert: Some(kruise_api::containerrecreaterequest_to_v1beta1),
    },
    /// PodProbeMarkers (`apps.kruise.io/v1alpha1`, the only version served): their webhook and the
    /// manager controller that places their probes in NodePodProbes (`docs/podprobemarker.md`).
    pod_probe_markers: PodProbeMarker { namespaced: true, status: true, optional: false, convert: None },
    /// NodePodProbes (cluster-scoped, one per node): the probes the node agent runs and their results.
    node_pod_probes: NodePodProbe { namespaced: false, status: true, optional: false, convert: None },
}
