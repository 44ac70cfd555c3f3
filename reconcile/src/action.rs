//! What a plan asks the controller loop to do. Each action is one API call the loop can make as is;
//! the loop executes them in order and stops at the first failure (the next reconcile re-plans).

use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use serde_json::Value;

/// One API call.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Create a ControllerRevision.
    CreateRevision(Box<ControllerRevision>),
    /// Replace a ControllerRevision (rollback: its `.revision` was bumped).
    UpdateRevision(Box<ControllerRevision>),
    /// Delete a ControllerRevision (history truncation).
    DeleteRevision {
        /// Revision name.
        name: String,
    },
    /// Create a PVC for a pod about to be created. Record a `create` scale expectation first.
    CreatePvc(Box<PersistentVolumeClaim>),
    /// Create a pod. Record a `create` scale expectation first.
    CreatePod(Box<Pod>),
    /// Create a pod from `template` bound to `node` (`spec.nodeName`): a planner that starts many
    /// pods differing only in their node builds the template once per pass; the loop makes each pod
    /// ([`Action::pod_on_node`]) when it sends it.
    CreatePodOnNode {
        /// The pod, without a node.
        template: Arc<Pod>,
        /// The node it is bound to.
        node: String,
    },
    /// Delete a pod (precondition on its uid). Record a `delete` scale expectation first.
    DeletePod {
        /// Pod name.
        name: String,
        /// Pod uid, for a delete precondition.
        uid: Option<String>,
    },
    /// Delete a PVC. Record a `delete` scale expectation first.
    DeletePvc {
        /// PVC name.
        name: String,
    },
    /// Strategic-merge patch of a PVC (ownerReference hand-over to its pod).
    PatchPvc {
        /// PVC name.
        name: String,
        /// The patch.
        patch: Value,
    },
    /// Strategic-merge patch of a pod. When the patch carries `metadata.resourceVersion` the write is
    /// conditional (409 on a stale view). Record a resourceVersion expectation with the answer.
    PatchPod {
        /// Pod name.
        name: String,
        /// Why: a short machine-readable word (`lifecycle`, `inPlaceUpdate`, `specifiedDelete`, …).
        reason: &'static str,
        /// The patch.
        patch: Value,
    },
    /// Strategic-merge patch of `pods/status` (conditions).
    PatchPodStatus {
        /// Pod name.
        name: String,
        /// The patch, shared: a pass sets the same condition on every pod it starts updating.
        patch: Arc<Value>,
    },
    /// Replace `spec.scaleStrategy.podsToDelete` of the CloneSet (names of pods that no longer exist
    /// are dropped).
    SetPodsToDelete(Vec<String>),
    /// Emit an event on the CloneSet.
    Event {
        /// `Normal` or `Warning`.
        type_: &'static str,
        /// Event reason (`SuccessfulCreate`, `ScaleUpLimited`, …).
        reason: &'static str,
        /// Message.
        message: String,
    },
}

impl Action {
    /// The pod a [`Action::CreatePodOnNode`] creates: its template with `spec.nodeName` set.
    pub fn pod_on_node(template: &Pod, node: &str) -> Pod {
        let mut pod = template.clone();
        pod.spec.get_or_insert_with(Default::default).node_name = Some(node.to_owned());
        pod
    }

    /// A Normal event.
    pub fn normal(reason: &'static str, message: String) -> Action {
        Action::Event {
            type_: "Normal",
            reason,
            message,
        }
    }

    /// A Warning event.
    pub fn warning(reason: &'static str, message: String) -> Action {
        Action::Event {
            type_: "Warning",
            reason,
            message,
        }
    }
}
