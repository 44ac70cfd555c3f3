//! What kubelet writes on the sandboxes and containers it creates, which is how a node agent finds a
//! pod's containers in the runtime (docs/node-agent.md): the label and annotation names, and the
//! container hash kubelet compares to decide that a container must be recreated.

use kruise_core::go;

/// Label (sandboxes and containers): the pod's name.
pub const POD_NAME: &str = "io.kubernetes.pod.name";
/// Label (sandboxes and containers): the pod's namespace.
pub const POD_NAMESPACE: &str = "io.kubernetes.pod.namespace";
/// Label (sandboxes and containers): the pod's uid.
pub const POD_UID: &str = "io.kubernetes.pod.uid";
/// Label (containers): the container's name in the pod spec.
pub const CONTAINER_NAME: &str = "io.kubernetes.container.name";
/// Annotation (containers): [`container_hash`] in lower-case hex.
pub const CONTAINER_HASH: &str = "io.kubernetes.container.hash";
/// Annotation (containers): how many times this container of the pod was restarted before this one.
pub const CONTAINER_RESTART_COUNT: &str = "io.kubernetes.container.restartCount";
/// Annotation (containers): the pod's `terminationGracePeriodSeconds`.
pub const POD_TERMINATION_GRACE_PERIOD: &str = "io.kubernetes.pod.terminationGracePeriod";
/// Annotation (containers): the pod's `deletionGracePeriodSeconds`, when it is being deleted.
pub const POD_DELETION_GRACE_PERIOD: &str = "io.kubernetes.pod.deletionGracePeriod";
/// Annotation (containers): the container's `lifecycle.preStop` handler as JSON, when it has one.
pub const CONTAINER_PRE_STOP_HANDLER: &str = "io.kubernetes.container.preStopHandler";
/// Annotation (containers): the container's `ports` as JSON, when it has some.
pub const CONTAINER_PORTS: &str = "io.kubernetes.container.ports";
/// Annotation (containers): the container's `terminationMessagePath`.
pub const CONTAINER_TERMINATION_MESSAGE_PATH: &str = "io.kubernetes.container.terminationMessagePath";

/// The hash kubelet (1.31 and later) gives a container: Kubernetes' `DeepHashObject` of
/// `{"image":…,"name":…}` as Go marshals it. It changes exactly when the container's name or image
/// changes, and a change makes kubelet stop the container and create it again.
pub fn container_hash(name: &str, image: &str) -> u64 {
    let mut json = String::from("{\"image\":");
    go::json_string(image, &mut json);
    json.push_str(",\"name\":");
    go::json_string(name, &mut json);
    json.push('}');
    u64::from(go::deep_hash_json(json.as_bytes()))
}

/// [`container_hash`] as the annotation carries it.
pub fn container_hash_hex(name: &str, image: &str) -> String {
    format!("{:x}", container_hash(name, image))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_container_hash_follows_name_and_image_only() {
        let v1 = container_hash("app", "127.0.0.1:5000/demo:v1");
        assert_eq!(v1, container_hash("app", "127.0.0.1:5000/demo:v1"));
        assert_ne!(v1, container_hash("app", "127.0.0.1:5000/demo:v2"));
        assert_ne!(v1, container_hash("web", "127.0.0.1:5000/demo:v1"));
        // Go escapes `<` in the JSON it hashes: the same text hashes the same.
        assert_eq!(
            u64::from(go::deep_hash_json(br#"{"image":"a\u003cb","name":"x\"y"}"#)),
            container_hash("x\"y", "a<b")
        );
        assert_eq!(
            container_hash_hex("app", "img"),
            format!("{:x}", container_hash("app", "img"))
        );
    }
}
