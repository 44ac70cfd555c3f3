//! What the server serves: one [`ResourceDef`] per group/version/resource, built in or from a CRD.

use serde_json::{Value, json};

use crate::error::GroupResource;

/// A subresource a resource offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subresource {
    /// `/status`: get, update, patch of `.status` only.
    Status,
    /// `/scale`: an `autoscaling/v1 Scale` view of the replicas.
    Scale,
    /// `pods/eviction`: create a `policy/v1 Eviction`.
    Eviction,
    /// `pods/binding`: create a `v1 Binding` (sets `spec.nodeName`).
    Binding,
    /// `namespaces/finalize`: update `spec.finalizers`.
    Finalize,
    /// `pods/ephemeralcontainers`: get, update, patch of `spec.ephemeralContainers` only.
    EphemeralContainers,
}

impl Subresource {
    /// The path segment.
    pub fn name(self) -> &'static str {
        match self {
            Subresource::Status => "status",
            Subresource::Scale => "scale",
            Subresource::Eviction => "eviction",
            Subresource::Binding => "binding",
            Subresource::Finalize => "finalize",
            Subresource::EphemeralContainers => "ephemeralcontainers",
        }
    }

    /// Parses a path segment.
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Status,
            Self::Scale,
            Self::Eviction,
            Self::Binding,
            Self::Finalize,
            Self::EphemeralContainers,
        ]
        .into_iter()
        .find(|x| x.name() == s)
    }
}

/// Where a scale subresource reads and writes (JSON paths as `.spec.replicas`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    /// Desired replicas.
    pub spec_replicas: String,
    /// Observed replicas.
    pub status_replicas: String,
    /// Serialized label selector, if any.
    pub label_selector: Option<String>,
}

/// A printer column of a CRD (`additionalPrinterColumns`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrinterColumn {
    /// Header.
    pub name: String,
    /// `string`, `integer`, `date`, …
    pub type_: String,
    /// Simple JSON path (`.spec.replicas`).
    pub json_path: String,
    /// 0 shows by default; more with `-o wide`.
    pub priority: i64,
}

/// One served resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceDef {
    /// API group; empty for core.
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural name (the path segment).
    pub plural: String,
    /// Singular name.
    pub singular: String,
    /// Kind.
    pub kind: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Short names (`po`, `deploy`).
    pub short_names: Vec<String>,
    /// Categories (`all`).
    pub categories: Vec<String>,
    /// Offered subresources.
    pub subresources: Vec<Subresource>,
    /// Scale subresource paths.
    pub scale: Option<ScalePaths>,
    /// Built-in kinds accept strategic merge patches; custom resources do not.
    pub builtin: bool,
    /// Objects get `metadata.generation` (kinds with a spec).
    pub has_generation: bool,
    /// Immediate deletes answer the deleted object instead of a Success Status.
    pub return_deleted_object: bool,
    /// CRD printer columns (custom resources only).
    pub printer_columns: Vec<PrinterColumn>,
    /// Storage version, conversion and schema (custom resources only).
    pub crd: Option<std::sync::Arc<crate::crd::CrdInfo>>,
}

impl ResourceDef {
    /// `apiVersion` of objects (`v1`, `apps/v1`).
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The group and resource, for error messages.
    pub fn group_resource(&self) -> GroupResource {
        GroupResource::new(&self.group, &self.plural)
    }

    /// Whether the subresource is offered.
    pub fn has(&self, sub: Subresource) -> bool {
        self.subresources.contains(&sub)
    }

    /// The discovery `APIResource` entries: the resource and its subresources.
    pub fn discovery(&self) -> Vec<Value> {
        let mut verbs = vec![
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ];
        if self.plural == "namespaces" {
            verbs.retain(|v| *v != "deletecollection");
        }
        let mut main = json!({
            "name": self.plural, "singularName": self.singular, "namespaced": self.namespaced,
            "kind": self.kind, "verbs": verbs,
        });
        if !self.short_names.is_empty() {
            main["shortNames"] = json!(self.short_names);
        }
        if !self.categories.is_empty() {
            main["categories"] = json!(self.categories);
        }
        let mut out = vec![main];
        for sub in &self.subresources {
            let name = format!("{}/{}", self.plural, sub.name());
            let mut entry = json!({"name": name, "singularName": "", "namespaced": self.namespaced});
            let (kind, verbs, group_version) = match sub {
                Subresource::Status => (self.kind.as_str(), vec!["get", "patch", "update"], None),
                Subresource::Scale => (
                    "Scale",
                    vec!["get", "patch", "update"],
                    Some(("autoscaling", "v1")),
                ),
                Subresource::Eviction => ("Eviction", vec!["create"], Some(("policy", "v1"))),
                Subresource::Binding => ("Binding", vec!["create"], None),
                Subresource::Finalize => (self.kind.as_str(), vec!["update"], None),
                Subresource::EphemeralContainers => {
                    (self.kind.as_str(), vec!["get", "patch", "update"], None)
                }
            };
            if let Some((g, v)) = group_version {
                entry["group"] = json!(g);
                entry["version"] = json!(v);
            }
            entry["kind"] = json!(kind);
            entry["verbs"] = json!(verbs);
            out.push(entry);
        }
        out
    }
}

struct B {
    gv: &'static str,
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
    short: &'static [&'static str],
    subs: &'static [Subresource],
    generation: bool,
}

const NS: bool = true;
const CLUSTER: bool = false;

fn replicas_scale() -> ScalePaths {
    ScalePaths {
        spec_replicas: ".spec.replicas".into(),
        status_replicas: ".status.replicas".into(),
        label_selector: Some(".status.selector".into()),
    }
}

/// The built-in resources.
pub fn builtins() -> Vec<ResourceDef> {
    use Subresource::*;
    #[rustfmt::skip]
    let table = [
        B { gv: "v1", plural: "namespaces", kind: "Namespace", namespaced: CLUSTER, short: &["ns"], subs: &[Status, Finalize], generation: false },
        B { gv: "v1", plural: "pods", kind: "Pod", namespaced: NS, short: &["po"], subs: &[Status, Eviction, Binding, EphemeralContainers], generation: true },
        B { gv: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: NS, short: &["cm"], subs: &[], generation: false },
        B { gv: "v1", plural: "secrets", kind: "Secret", namespaced: NS, short: &[], subs: &[], generation: false },
        B { gv: "v1", plural: "services", kind: "Service", namespaced: NS, short: &["svc"], subs: &[Status], generation: false },
        B { gv: "v1", plural: "endpoints", kind: "Endpoints", namespaced: NS, short: &["ep"], subs: &[], generation: false },
        B { gv: "v1", plural: "events", kind: "Event", namespaced: NS, short: &["ev"], subs: &[], generation: false },
        B { gv: "v1", plural: "nodes", kind: "Node", namespaced: CLUSTER, short: &["no"], subs: &[Status], generation: false },
        B { gv: "v1", plural: "persistentvolumes", kind: "PersistentVolume", namespaced: CLUSTER, short: &["pv"], subs: &[Status], generation: false },
        B { gv: "v1", plural: "persistentvolumeclaims", kind: "PersistentVolumeClaim", namespaced: NS, short: &["pvc"], subs: &[Status], generation: false },
        B { gv: "v1", plural: "serviceaccounts", kind: "ServiceAccount", namespaced: NS, short: &["sa"], subs: &[], generation: false },
        B { gv: "v1", plural: "resourcequotas", kind: "ResourceQuota", namespaced: NS, short: &["quota"], subs: &[Status], generation: false },
        B { gv: "v1", plural: "limitranges", kind: "LimitRange", namespaced: NS, short: &["limits"], subs: &[], generation: false },
        B { gv: "rbac.authorization.k8s.io/v1", plural: "roles", kind: "Role", namespaced: NS, short: &[], subs: &[], generation: false },
        B { gv: "rbac.authorization.k8s.io/v1", plural: "rolebindings", kind: "RoleBinding", namespaced: NS, short: &[], subs: &[], generation: false },
        B { gv: "rbac.authorization.k8s.io/v1", plural: "clusterroles", kind: "ClusterRole", namespaced: CLUSTER, short: &[], subs: &[], generation: false },
        B { gv: "rbac.authorization.k8s.io/v1", plural: "clusterrolebindings", kind: "ClusterRoleBinding", namespaced: CLUSTER, short: &[], subs: &[], generation: false },
        B { gv: "apps/v1", plural: "deployments", kind: "Deployment", namespaced: NS, short: &["deploy"], subs: &[Status, Scale], generation: true },
        B { gv: "apps/v1", plural: "replicasets", kind: "ReplicaSet", namespaced: NS, short: &["rs"], subs: &[Status, Scale], generation: true },
        B { gv: "apps/v1", plural: "statefulsets", kind: "StatefulSet", namespaced: NS, short: &["sts"], subs: &[Status, Scale], generation: true },
        B { gv: "apps/v1", plural: "daemonsets", kind: "DaemonSet", namespaced: NS, short: &["ds"], subs: &[Status], generation: true },
        B { gv: "batch/v1", plural: "jobs", kind: "Job", namespaced: NS, short: &[], subs: &[Status], generation: true },
        B { gv: "batch/v1", plural: "cronjobs", kind: "CronJob", namespaced: NS, short: &["cj"], subs: &[Status], generation: true },
        B { gv: "apps/v1", plural: "controllerrevisions", kind: "ControllerRevision", namespaced: NS, short: &[], subs: &[], generation: false },
        B { gv: "events.k8s.io/v1", plural: "events", kind: "Event", namespaced: NS, short: &["ev"], subs: &[], generation: false },
        B { gv: "coordination.k8s.io/v1", plural: "leases", kind: "Lease", namespaced: NS, short: &[], subs: &[], generation: false },
        B { gv: "policy/v1", plural: "poddisruptionbudgets", kind: "PodDisruptionBudget", namespaced: NS, short: &["pdb"], subs: &[Status], generation: true },
        B { gv: "admissionregistration.k8s.io/v1", plural: "mutatingwebhookconfigurations", kind: "MutatingWebhookConfiguration", namespaced: CLUSTER, short: &[], subs: &[], generation: true },
        B { gv: "admissionregistration.k8s.io/v1", plural: "validatingwebhookconfigurations", kind: "ValidatingWebhookConfiguration", namespaced: CLUSTER, short: &[], subs: &[], generation: true },
        B { gv: "apiextensions.k8s.io/v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition", namespaced: CLUSTER, short: &["crd", "crds"], subs: &[Status], generation: true },
    ];
    table
        .into_iter()
        .map(|b| {
            let (group, version) = b.gv.split_once('/').unwrap_or(("", b.gv));
            let all = matches!(
                b.plural,
                "pods"
                    | "services"
                    | "deployments"
                    | "replicasets"
                    | "statefulsets"
                    | "daemonsets"
                    | "jobs"
                    | "cronjobs"
            );
            let has_scale = b.subs.contains(&Subresource::Scale);
            ResourceDef {
                group: group.into(),
                version: version.into(),
                plural: b.plural.into(),
                singular: b.kind.to_lowercase(),
                kind: b.kind.into(),
                namespaced: b.namespaced,
                short_names: b.short.iter().map(|s| s.to_string()).collect(),
                categories: if all { vec!["all".into()] } else { vec![] },
                subresources: b.subs.to_vec(),
                scale: has_scale.then(replicas_scale),
                builtin: true,
                has_generation: b.generation,
                return_deleted_object: matches!(b.plural, "pods" | "services" | "namespaces"),
                printer_columns: vec![],
                crd: None,
            }
        })
        .collect()
}
