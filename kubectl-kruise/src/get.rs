//! `get all`: kubectl's own tables (the CRDs' printer columns) for every kruise kind in the namespace,
//! one `kubectl get TYPE --show-kind` per kind; kinds the server does not serve are left out.

use std::process::Command;

use crate::{Error, client::KubeFlags};

/// The kinds listed, in kruise-tools' order (those kruise-rs serves, and OpenKruise's others when the
/// cluster has them).
pub const KINDS: &[&str] = &[
    "clonesets.apps.kruise.io",
    "statefulsets.apps.kruise.io",
    "daemonsets.apps.kruise.io",
    "rollouts.rollouts.kruise.io",
    "broadcastjobs.apps.kruise.io",
    "containerrecreaterequests.apps.kruise.io",
    "advancedcronjobs.apps.kruise.io",
    "resourcedistributions.apps.kruise.io",
    "uniteddeployments.apps.kruise.io",
    "sidecarsets.apps.kruise.io",
    "podprobemarkers.apps.kruise.io",
    "imagepulljobs.apps.kruise.io",
    "workloadspreads.apps.kruise.io",
    "podunavailablebudgets.policy.kruise.io",
];

/// kubectl's arguments for the connection flags that were given.
pub fn kubectl_flags(kube: &KubeFlags) -> Vec<String> {
    let mut out = Vec::new();
    let mut flag = |name: &str, value: &Option<String>| {
        if let Some(v) = value {
            out.push(format!("--{name}={v}"));
        }
    };
    flag(
        "kubeconfig",
        &kube.kubeconfig.as_ref().map(|p| p.display().to_string()),
    );
    flag("namespace", &kube.namespace);
    flag("context", &kube.context);
    flag("cluster", &kube.cluster);
    flag("user", &kube.user);
    flag("server", &kube.server);
    flag("token", &kube.token);
    if kube.insecure_skip_tls_verify {
        out.push("--insecure-skip-tls-verify".to_string());
    }
    out
}

/// `get all`.
pub fn run(kube: &KubeFlags, what: &str) -> Result<u8, Error> {
    if what != "all" {
        return Err(Error::Usage(format!(
            "kubectl kruise get only lists `all`; use kubectl get {what}"
        )));
    }
    let kubectl = std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".to_string());
    let mut sections = Vec::new();
    for kind in KINDS {
        let out = Command::new(&kubectl)
            .arg("get")
            .arg(kind)
            .args(["--show-kind", "--ignore-not-found"])
            .args(kubectl_flags(kube))
            .output()
            .map_err(|e| Error::Failed(format!("cannot run {kubectl}: {e}")))?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            if stderr.contains("doesn't have a resource type") {
                continue;
            }
            return Err(Error::Failed(
                stderr.trim().trim_start_matches("error: ").to_string(),
            ));
        }
        let text = String::from_utf8_lossy(&out.stdout).trim_end().to_string();
        if !text.is_empty() {
            sections.push(text);
        }
    }
    if sections.is_empty() {
        let ns = kube.namespace.clone().unwrap_or_else(|| "default".to_string());
        eprintln!("No resources found in {ns} namespace.");
    } else {
        println!("{}", sections.join("\n\n"));
    }
    Ok(0)
}
