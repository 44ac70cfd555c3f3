//! The resource types the plugin understands, as kubectl spells them (`cloneset`, `clone`,
//! `clonesets.apps.kruise.io`, `asts`, …), and `TYPE/NAME` or `TYPE NAME…` arguments.
//!
//! A fixed table instead of discovery: every name resolves without a round trip, and `statefulset`
//! means the built-in kind (as kubectl resolves it); the Advanced StatefulSet is `asts` or
//! `statefulsets.apps.kruise.io`.

use kube::api::ApiResource;

use crate::Error;

/// A kind the plugin handles itself, or a built-in one it hands to kubectl.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    CloneSet,
    AdvancedStatefulSet,
    AdvancedDaemonSet,
    SidecarSet,
    BroadcastJob,
    ContainerRecreateRequest,
    /// Kruise Rollout (`rollouts.kruise.io`); its served version is asked of the server.
    Rollout,
    Pod,
    /// Deployment, StatefulSet, DaemonSet, ReplicaSet…: kubectl's own commands apply.
    Native,
}

/// `(kind, API kind, group, version, plural, names)`.
type Row = (
    Kind,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
);

const TABLE: &[Row] = &[
    (
        Kind::CloneSet,
        "CloneSet",
        "apps.kruise.io",
        "v1alpha1",
        "clonesets",
        &[
            "cloneset",
            "clonesets",
            "clone",
            "cloneset.apps.kruise.io",
            "clonesets.apps.kruise.io",
        ],
    ),
    (
        Kind::AdvancedStatefulSet,
        "StatefulSet",
        "apps.kruise.io",
        "v1beta1",
        "statefulsets",
        &[
            "asts",
            "statefulset.apps.kruise.io",
            "statefulsets.apps.kruise.io",
            "advancedstatefulset",
        ],
    ),
    (
        Kind::AdvancedDaemonSet,
        "DaemonSet",
        "apps.kruise.io",
        "v1beta1",
        "daemonsets",
        &[
            "ads",
            "daemon",
            "daemonset.apps.kruise.io",
            "daemonsets.apps.kruise.io",
            "advanceddaemonset",
        ],
    ),
    (
        Kind::SidecarSet,
        "SidecarSet",
        "apps.kruise.io",
        "v1alpha1",
        "sidecarsets",
        &[
            "sidecarset",
            "sidecarsets",
            "sidecarset.apps.kruise.io",
            "sidecarsets.apps.kruise.io",
        ],
    ),
    (
        Kind::BroadcastJob,
        "BroadcastJob",
        "apps.kruise.io",
        "v1alpha1",
        "broadcastjobs",
        &[
            "broadcastjob",
            "broadcastjobs",
            "bcj",
            "broadcastjobs.apps.kruise.io",
        ],
    ),
    (
        Kind::ContainerRecreateRequest,
        "ContainerRecreateRequest",
        "apps.kruise.io",
        "v1alpha1",
        "containerrecreaterequests",
        &[
            "containerrecreaterequest",
            "containerrecreaterequests",
            "crr",
            "containerrecreaterequests.apps.kruise.io",
        ],
    ),
    (
        Kind::Rollout,
        "Rollout",
        "rollouts.kruise.io",
        "v1beta1",
        "rollouts",
        &[
            "rollout",
            "rollouts",
            "rollouts.kruise.io",
            "rollout.rollouts.kruise.io",
            "rollouts.rollouts.kruise.io",
        ],
    ),
    (Kind::Pod, "Pod", "", "v1", "pods", &["pod", "pods", "po"]),
];

/// Built-in workload names kubectl resolves itself.
const NATIVE: &[&str] = &[
    "deployment",
    "deployments",
    "deploy",
    "deployment.apps",
    "deployments.apps",
    "statefulset",
    "statefulsets",
    "sts",
    "statefulset.apps",
    "statefulsets.apps",
    "daemonset",
    "daemonsets",
    "ds",
    "daemonset.apps",
    "daemonsets.apps",
    "replicaset",
    "replicasets",
    "rs",
    "job",
    "jobs",
    "cronjob",
    "cronjobs",
    "cj",
];

/// A resolved resource type.
#[derive(Clone, Debug)]
pub struct Type {
    pub kind: Kind,
    /// What the user wrote (for kubectl, and for messages).
    pub written: String,
    resource: Option<ApiResource>,
    /// The version was written (`rollouts.v1alpha1.rollouts.kruise.io`), not to be discovered.
    pub pinned: bool,
}

impl Type {
    /// Resolves a type name as kubectl spells it.
    pub fn parse(name: &str) -> Result<Type, Error> {
        let lower = name.to_ascii_lowercase();
        if let Some(version) = lower
            .strip_prefix("rollouts.")
            .and_then(|rest| rest.strip_suffix(".rollouts.kruise.io"))
            .filter(|v| ["v1alpha1", "v1beta1"].contains(v))
        {
            let mut ty = Type::parse("rollouts")?.with_version(version);
            ty.written = name.to_string();
            ty.pinned = true;
            return Ok(ty);
        }
        for (kind, kind_name, group, version, plural, names) in TABLE {
            if names.contains(&lower.as_str()) {
                let api_version = if group.is_empty() {
                    version.to_string()
                } else {
                    format!("{group}/{version}")
                };
                return Ok(Type {
                    kind: *kind,
                    written: name.to_string(),
                    resource: Some(ApiResource {
                        group: group.to_string(),
                        version: version.to_string(),
                        api_version,
                        kind: kind_name.to_string(),
                        plural: plural.to_string(),
                    }),
                    pinned: false,
                });
            }
        }
        if NATIVE.contains(&lower.as_str()) {
            return Ok(Type {
                kind: Kind::Native,
                written: name.to_string(),
                resource: None,
                pinned: false,
            });
        }
        Err(Error::Usage(format!(
            "the server doesn't have a resource type \"{name}\""
        )))
    }

    /// The API resource (not for [`Kind::Native`]).
    pub fn resource(&self) -> Result<&ApiResource, Error> {
        self.resource
            .as_ref()
            .ok_or_else(|| Error::Usage(format!("{} is handled by kubectl", self.written)))
    }

    /// The same type in another version of its group.
    pub fn with_version(mut self, version: &str) -> Type {
        if let Some(r) = &mut self.resource {
            r.version = version.to_string();
            r.api_version = format!("{}/{version}", r.group);
        }
        self
    }

    /// `Rollout.rollouts.kruise.io`: the group-kind as apimachinery prints it.
    pub fn group_kind(&self) -> String {
        match &self.resource {
            Some(r) if r.group.is_empty() => r.kind.clone(),
            Some(r) => format!("{}.{}", r.kind, r.group),
            None => self.written.clone(),
        }
    }

    /// `cloneset.apps.kruise.io`: how kubectl names the kind in its output lines.
    pub fn qualified(&self) -> String {
        match &self.resource {
            Some(r) if r.group.is_empty() => r.kind.to_ascii_lowercase(),
            Some(r) => format!("{}.{}", r.kind.to_ascii_lowercase(), r.group),
            None => self.written.clone(),
        }
    }

    /// `clonesets.apps.kruise.io`: how kubectl names the resource in its error messages.
    pub fn resource_string(&self) -> String {
        match &self.resource {
            Some(r) if r.group.is_empty() => r.plural.clone(),
            Some(r) => format!("{}.{}", r.plural, r.group),
            None => self.written.clone(),
        }
    }
}

/// One named object.
#[derive(Clone, Debug)]
pub struct Target {
    pub ty: Type,
    pub name: String,
}

impl Target {
    /// `cloneset.apps.kruise.io/web`.
    pub fn display(&self) -> String {
        format!("{}/{}", self.ty.qualified(), self.name)
    }
}

/// Reads `TYPE/NAME…` or `TYPE NAME…` arguments, as kubectl does.
pub fn targets(args: &[String]) -> Result<Vec<Target>, Error> {
    let Some(first) = args.first() else {
        return Err(Error::Usage("required resource not specified".to_string()));
    };
    if first.contains('/') {
        return args
            .iter()
            .map(|arg| {
                let (ty, name) = arg.split_once('/').ok_or_else(|| {
                    Error::Usage(format!(
                        "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl kruise get resource/<resource_name>' instead of 'kubectl kruise get resource resource/<resource_name>'), got {arg:?}"
                    ))
                })?;
                if name.is_empty() {
                    return Err(Error::Usage(format!("arguments in resource/name form must have a single resource and name, got {arg:?}")));
                }
                Ok(Target {
                    ty: Type::parse(ty)?,
                    name: name.to_string(),
                })
            })
            .collect();
    }
    let ty = Type::parse(first)?;
    if args.len() < 2 {
        return Err(Error::Usage(format!(
            "resource name may not be empty: give {first}/NAME or {first} NAME"
        )));
    }
    Ok(args[1..]
        .iter()
        .map(|name| Target {
            ty: ty.clone(),
            name: name.clone(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn type_slash_name_and_type_then_names() {
        let t = targets(&args(&["clone/web", "cloneset/db"])).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].display(), "cloneset.apps.kruise.io/web");
        assert_eq!(t[1].name, "db");
        let t = targets(&args(&["asts", "a", "b"])).unwrap();
        assert_eq!(t[1].display(), "statefulset.apps.kruise.io/b");
        assert_eq!(t[0].ty.resource_string(), "statefulsets.apps.kruise.io");
    }

    #[test]
    fn built_in_kinds_go_to_kubectl_and_unknown_ones_are_errors() {
        assert_eq!(Type::parse("deploy").unwrap().kind, Kind::Native);
        assert_eq!(Type::parse("statefulset").unwrap().kind, Kind::Native);
        assert_eq!(
            Type::parse("statefulsets.apps.kruise.io").unwrap().kind,
            Kind::AdvancedStatefulSet
        );
        assert!(matches!(Type::parse("widget"), Err(Error::Usage(m)) if m.contains("\"widget\"")));
        assert!(targets(&args(&["cloneset"])).is_err());
        for name in [
            "rollout",
            "rollouts",
            "rollouts.kruise.io",
            "rollout.rollouts.kruise.io",
        ] {
            let ty = Type::parse(name).unwrap();
            assert_eq!(ty.kind, Kind::Rollout);
            assert!(!ty.pinned);
            assert_eq!(ty.qualified(), "rollout.rollouts.kruise.io");
            assert_eq!(ty.resource_string(), "rollouts.rollouts.kruise.io");
            assert_eq!(ty.group_kind(), "Rollout.rollouts.kruise.io");
        }
        let pinned = Type::parse("rollouts.v1alpha1.rollouts.kruise.io").unwrap();
        assert!(pinned.pinned);
        assert_eq!(
            pinned.resource().unwrap().api_version,
            "rollouts.kruise.io/v1alpha1"
        );
        assert!(Type::parse("rollouts.v2.rollouts.kruise.io").is_err());
        assert!(targets(&[]).is_err());
    }
}
