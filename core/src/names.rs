//! Label, annotation and environment variable names read or written by more than one crate of
//! kruise-rs, each spelled once. Names owned by one API type live with it in `kruise-api`.

/// Namespaces no webhook sees (the namespaceSelector of every registration), so kruise-rs never blocks the
/// control plane or itself; no pod there is ever injected.
pub const EXCLUDED_NAMESPACES: &[&str] = &["kube-system", "kruise-system"];

/// Label that protects an object from deletion (OpenKruise `pkg/apis/policy/v1alpha1`
/// `DeletionProtectionKey`).
pub const DELETE_PROTECTION_LABEL: &str = "policy.kruise.io/delete-protection";

/// Label of the ReplicaSet (and pods) of a Deployment revision (`apps.DefaultDeploymentUniqueLabelKey`).
pub const POD_TEMPLATE_HASH_LABEL: &str = "pod-template-hash";
/// Label of a pod's controller revision (`apps.ControllerRevisionHashLabelKey`).
pub const CONTROLLER_REVISION_HASH_LABEL: &str = "controller-revision-hash";
/// Annotation ranking pods for scale-down (`core.PodDeletionCost`).
pub const POD_DELETION_COST_ANNOTATION: &str = "controller.kubernetes.io/pod-deletion-cost";

/// Environment variable that makes a container wait for its launch-priority barrier (OpenKruise
/// `pkg/util/containerlaunchpriority`).
pub const CONTAINER_BARRIER_ENV: &str = "KRUISE_CONTAINER_BARRIER";
/// Environment variable carrying a container's launch priority.
pub const CONTAINER_PRIORITY_ENV: &str = "KRUISE_CONTAINER_PRIORITY";

/// A SidecarSet's hash: on the SidecarSet, and on pods as the per-SidecarSet records.
pub const SIDECARSET_HASH_ANNOTATION: &str = "kruise.io/sidecarset-hash";
/// The same hash computed without images (only image changes can be applied in place).
pub const SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION: &str = "kruise.io/sidecarset-hash-without-image";
/// Pod annotation listing the SidecarSets injected into the pod, sorted, comma-separated (OpenKruise
/// `pkg/control/sidecarcontrol` `SidecarSetListAnnotation`).
pub const SIDECARSET_INJECTED_LIST_ANNOTATION: &str = "kruise.io/sidecarset-injected-list";
/// Environment variable marking a container as an injected sidecar (value `true`).
pub const SIDECAR_INJECTED_ENV: &str = "IS_INJECTED";

/// The node label (key, value) of virtual-kubelet (serverless) nodes, which run no node agent
/// (OpenKruise `VirtualKubelet`).
pub const VIRTUAL_KUBELET_LABEL: (&str, &str) = ("type", "virtual-kubelet");

/// A node with `labels` is a virtual-kubelet (serverless) node.
pub fn is_virtual_kubelet(labels: Option<&std::collections::BTreeMap<String, String>>) -> bool {
    let (key, value) = VIRTUAL_KUBELET_LABEL;
    labels.and_then(|l| l.get(key)).is_some_and(|v| v == value)
}

/// Pod annotation carrying, for a serverless provider, the PodProbeMarker probes that apply to the pod
/// (a JSON array, marker policies left out).
pub const POD_PROBE_ANNOTATION: &str = "kruise.io/podprobe";
/// Pod annotation naming the PodProbeMarkers whose probes are in [`POD_PROBE_ANNOTATION`], sorted,
/// comma-separated.
pub const POD_PROBE_MARKER_LIST_ANNOTATION: &str = "kruise.io/podprobemarker-list";
