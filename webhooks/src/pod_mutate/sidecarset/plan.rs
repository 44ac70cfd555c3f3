//! What one SidecarSet spec injects, prepared once (when the index is built, or when a pinned revision is
//! restored): each sidecar's container JSON with `IS_INJECTED` already appended, its placement, the volumes it
//! references, and the per-pod work it needs (volume sharing, transferEnv, resources policy, hot upgrade).
//! Only the pod-dependent parts are done per review.

use kruise_api::apps_v1beta1::{
    PodInjectPolicyType, ShareVolumePolicyType, SidecarContainer, SidecarContainerUpgradeType, SidecarSetSpec,
};
use kruise_core::sidecarset::{MetadataPatch, metadata_patches, sidecar_list};
use serde_json::{Value, json};

use super::{pod_containers::IS_INJECTED, resources::Policy};

/// Where `transferEnv` finds the source container's name.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    Name(String),
    Label(String),
    Annotation(String),
}

/// One `transferEnv` entry: names de-duplicated and sorted, as OpenKruise iterates them.
#[derive(Clone, Debug)]
pub(crate) struct Transfer {
    pub(crate) source: Source,
    pub(crate) env_names: Vec<String>,
}

/// One sidecar (container or init container) of a SidecarSet.
#[derive(Clone, Debug)]
pub(crate) struct SidecarPlan {
    pub(crate) name: String,
    /// The container as injected when nothing depends on the pod: the SidecarSet's container JSON (its
    /// SidecarSet-only settings dropped) with `{"name":"IS_INJECTED","value":"true"}` appended to `env`.
    pub(crate) base: Value,
    /// `podInjectPolicy: BeforeAppContainer`.
    pub(crate) before: bool,
    /// `Some(empty image)` when injected as a hot-upgrade pair.
    pub(crate) hot_empty_image: Option<String>,
    pub(crate) share_volumes: bool,
    pub(crate) share_devices: bool,
    pub(crate) transfer: Vec<Transfer>,
    /// SidecarSet volumes named by this sidecar's mounts, then devices (repeats allowed, as OpenKruise queues).
    pub(crate) volumes: Vec<Value>,
    /// `resourcesPolicy`: the sidecar's resources are computed from the pod's containers.
    pub(crate) resources: Option<Policy>,
}

impl SidecarPlan {
    /// True when the container is exactly `base` whatever the pod (`resources` aside, which replaces its
    /// `resources`).
    pub(crate) fn is_static(&self) -> bool {
        !self.share_volumes && !self.share_devices && self.transfer.is_empty()
    }

    /// The names this sidecar has in the pod (`C`, or `C-1` and `C-2`).
    pub(crate) fn pod_names(&self) -> Vec<String> {
        if self.hot_empty_image.is_some() {
            vec![format!("{}-1", self.name), format!("{}-2", self.name)]
        } else {
            vec![self.name.clone()]
        }
    }
}

/// What a SidecarSet spec injects.
#[derive(Clone, Debug, Default)]
pub(crate) struct Plan {
    pub(crate) init_containers: Vec<SidecarPlan>,
    pub(crate) containers: Vec<SidecarPlan>,
    /// `spec.imagePullSecrets`, as JSON objects.
    pub(crate) image_pull_secrets: Vec<Value>,
    pub(crate) patch_pod_metadata: Vec<MetadataPatch>,
    /// Sorted, de-duplicated: native init container names and container names (the hash annotation's
    /// `sidecarList`).
    pub(crate) sidecar_list: Vec<String>,
    /// Every init container and container name (excluded from resourcesPolicy targets).
    pub(crate) names: Vec<String>,
}

impl Plan {
    /// Prepares a spec. A sidecar without `podInjectPolicy` (a SidecarSet stored without defaulting) is placed
    /// after the app containers, as OpenKruise's pod webhook does. An error names what makes the SidecarSet
    /// invalid.
    pub(crate) fn new(spec: &SidecarSetSpec) -> Result<Plan, String> {
        let volumes: Vec<&k8s_openapi::api::core::v1::Volume> = spec.volumes.iter().flatten().collect();
        // A name listed twice resolves to its last definition, as OpenKruise's map does.
        let volume_by_name = |name: &str| {
            volumes
                .iter()
                .rev()
                .find(|v| v.name == name)
                .map(|v| serde_json::to_value(v).unwrap_or(Value::Null))
        };
        let mut plan = Plan::default();
        for (index, c) in spec.init_containers.iter().flatten().enumerate() {
            let field = format!("spec.initContainers[{index}]");
            plan.init_containers
                .push(sidecar(c, false, &volume_by_name, &field)?);
        }
        for (index, c) in spec.containers.iter().flatten().enumerate() {
            let field = format!("spec.containers[{index}]");
            plan.containers.push(sidecar(c, true, &volume_by_name, &field)?);
        }
        plan.image_pull_secrets = spec
            .image_pull_secrets
            .iter()
            .flatten()
            .map(|s| serde_json::to_value(s).unwrap_or(Value::Null))
            .collect();
        plan.patch_pod_metadata = metadata_patches(spec)?;
        plan.sidecar_list = sidecar_list(spec);
        plan.names = plan
            .init_containers
            .iter()
            .chain(&plan.containers)
            .map(|c| c.name.clone())
            .collect();
        Ok(plan)
    }
}

fn sidecar(
    c: &SidecarContainer,
    is_container: bool,
    volume_by_name: &impl Fn(&str) -> Option<Value>,
    field: &str,
) -> Result<SidecarPlan, String> {
    let mut base = serde_json::to_value(&c.container).map_err(|e| format!("{field}: {e}"))?;
    let map = base
        .as_object_mut()
        .ok_or_else(|| format!("{field}: not an object"))?;
    let mut env = match map.remove("env") {
        Some(Value::Array(env)) => env,
        _ => Vec::new(),
    };
    env.push(json!({"name": IS_INJECTED, "value": "true"}));
    map.insert("env".into(), Value::Array(env));
    let before = match &c.pod_inject_policy {
        Some(PodInjectPolicyType::BeforeAppContainer) => true,
        Some(PodInjectPolicyType::AfterAppContainer) => false,
        // A SidecarSet stored without defaulting: OpenKruise's pod webhook places an empty or unknown value
        // after the app containers (`mergeSidecarContainers` in pkg/webhook/pod/mutating/sidecarset.go).
        None | Some(PodInjectPolicyType::Other(_)) => false,
    };
    let native = !is_container && c.restart_policy.as_deref() == Some("Always");
    let hot = c.upgrade_strategy.upgrade_type == Some(SidecarContainerUpgradeType::HotUpgrade);
    let hot_empty_image = (hot && (is_container || native)).then(|| {
        c.upgrade_strategy
            .hot_upgrade_empty_image
            .clone()
            .unwrap_or_default()
    });
    let enabled = |p: Option<&ShareVolumePolicyType>| p == Some(&ShareVolumePolicyType::Enabled);
    let transfer = c
        .transfer_env
        .iter()
        .flatten()
        .filter_map(|t| {
            let mut names: Vec<String> = t.env_names.iter().flatten().cloned().collect();
            if let Some(n) = t.env_name.as_ref().filter(|n| !n.is_empty()) {
                names.push(n.clone());
            }
            names.sort();
            names.dedup();
            let source = match t
                .source_container_name_from
                .as_ref()
                .and_then(|f| f.field_ref.as_ref())
            {
                Some(field_ref) => field_source(&field_ref.field_path)?,
                None => Source::Name(t.source_container_name.clone().unwrap_or_default()),
            };
            Some(Transfer {
                source,
                env_names: names,
            })
        })
        .collect();
    let volumes = c
        .volume_mounts
        .iter()
        .flatten()
        .map(|m| m.name.as_str())
        .chain(c.volume_devices.iter().flatten().map(|d| d.name.as_str()))
        .filter_map(volume_by_name)
        .collect();
    Ok(SidecarPlan {
        name: c.name.clone(),
        base,
        before,
        hot_empty_image,
        share_volumes: enabled(c.share_volume_policy.type_.as_ref()),
        share_devices: enabled(
            c.share_volume_device_policy
                .as_ref()
                .and_then(|p| p.type_.as_ref()),
        ),
        transfer,
        volumes,
        resources: c.resources_policy.as_ref().map(Policy::new),
    })
}

/// `metadata.labels['k']` or `metadata.annotations['k']` with a valid qualified name `k` (lower-cased for
/// annotations); anything else makes OpenKruise skip the entry.
fn field_source(path: &str) -> Option<Source> {
    let (head, rest) = path.split_once('[')?;
    let key = rest.strip_suffix(']')?.strip_prefix('\'')?.strip_suffix('\'')?;
    match head {
        "metadata.labels" if qualified_name(key) => Some(Source::Label(key.to_string())),
        "metadata.annotations" if qualified_name(&key.to_lowercase()) => {
            Some(Source::Annotation(key.to_string()))
        }
        _ => None,
    }
}

fn qualified_name(key: &str) -> bool {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let name_ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && name.as_bytes()[name.len() - 1].is_ascii_alphanumeric();
    let prefix_ok = prefix.is_none_or(|p| {
        !p.is_empty()
            && p.len() <= 253
            && p.split('.').all(|l| {
                !l.is_empty()
                    && l.bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                    && !l.starts_with('-')
                    && !l.ends_with('-')
            })
    });
    name_ok && prefix_ok
}
