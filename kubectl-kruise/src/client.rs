//! kubectl's connection flags (`--kubeconfig`, `-n`, `--context`, `-s`, `--token`, …) turned into a
//! kube client, and the hand-off of built-in kinds to kubectl itself.

use std::path::PathBuf;

use clap::Args;
use kube::{
    Api, Client, Config,
    api::{ApiResource, DynamicObject},
    config::{KubeConfigOptions, Kubeconfig},
};

use crate::Error;

/// The flags kubectl uses to reach a cluster.
#[derive(Args, Clone, Debug, Default)]
pub struct KubeFlags {
    /// Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, global = true, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// The namespace scope of this request (default: the context's, else `default`).
    #[arg(short = 'n', long, global = true)]
    pub namespace: Option<String>,
    /// The kubeconfig context to use.
    #[arg(long, global = true)]
    pub context: Option<String>,
    /// The kubeconfig cluster to use.
    #[arg(long, global = true)]
    pub cluster: Option<String>,
    /// The kubeconfig user to use.
    #[arg(long, global = true)]
    pub user: Option<String>,
    /// The address and port of the Kubernetes API server.
    #[arg(short = 's', long, global = true)]
    pub server: Option<String>,
    /// Bearer token for authentication to the API server.
    #[arg(long, global = true)]
    pub token: Option<String>,
    /// Do not verify the server's certificate (insecure).
    #[arg(long, global = true)]
    pub insecure_skip_tls_verify: bool,
}

/// A client and the namespace commands act in.
#[derive(Clone)]
pub struct Session {
    pub client: Client,
    pub namespace: String,
}

impl KubeFlags {
    /// Loads the kubeconfig (with the flags' overrides) and builds a client.
    pub async fn connect(&self) -> Result<Session, Error> {
        let options = KubeConfigOptions {
            context: self.context.clone(),
            cluster: self.cluster.clone(),
            user: self.user.clone(),
        };
        let config_error = |e: kube::config::KubeconfigError| Error::Failed(e.to_string());
        let mut config = match &self.kubeconfig {
            Some(path) => {
                let file = Kubeconfig::read_from(path).map_err(config_error)?;
                Config::from_custom_kubeconfig(file, &options)
                    .await
                    .map_err(config_error)?
            }
            None => Config::from_kubeconfig(&options).await.map_err(config_error)?,
        };
        if let Some(server) = &self.server {
            config.cluster_url = server
                .parse()
                .map_err(|e| Error::Usage(format!("invalid --server {server:?}: {e}")))?;
        }
        if let Some(token) = &self.token {
            config.auth_info.token = Some(secrecy::SecretString::from(token.clone()));
        }
        if self.insecure_skip_tls_verify {
            config.accept_invalid_certs = true;
        }
        let namespace = self
            .namespace
            .clone()
            .unwrap_or_else(|| config.default_namespace.clone());
        let client = Client::try_from(config).map_err(|e| Error::Failed(e.to_string()))?;
        Ok(Session { client, namespace })
    }
}

impl Session {
    /// The namespaced API of `resource` in the session's namespace.
    pub fn api(&self, resource: &ApiResource) -> Api<DynamicObject> {
        if resource.kind == "SidecarSet" {
            Api::all_with(self.client.clone(), resource)
        } else {
            Api::namespaced_with(self.client.clone(), &self.namespace, resource)
        }
    }
}

/// Runs `kubectl` with the plugin's own arguments (built-in kinds are kubectl's business) and
/// returns its exit code.
pub fn delegate_to_kubectl() -> Result<u8, Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let kubectl = std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".to_string());
    let status = std::process::Command::new(&kubectl)
        .args(&args)
        .status()
        .map_err(|e| Error::Failed(format!("cannot run {kubectl}: {e}")))?;
    Ok(status.code().map_or(1, |c| u8::try_from(c).unwrap_or(1)))
}

/// Runs `kubectl ARGS` for a built-in kind the plugin reached through another object (a Rollout's
/// workload): its output goes to stdout, its error (without kubectl's `error: `) is returned.
pub fn run_kubectl(args: &[String]) -> Result<(), Error> {
    let kubectl = std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".to_string());
    let out = std::process::Command::new(&kubectl)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::inherit())
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|e| Error::Failed(format!("cannot run {kubectl}: {e}")))?;
    if out.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&out.stderr);
    Err(kubectl_error(text.trim_end(), out.status.code()))
}

/// What kubectl printed on failure, as this plugin's error (an API error stays one).
fn kubectl_error(text: &str, code: Option<i32>) -> Error {
    if let Some((reason, message)) = text
        .strip_prefix("Error from server (")
        .and_then(|rest| rest.split_once("): "))
    {
        return Error::Api {
            reason: reason.to_string(),
            message: message.to_string(),
        };
    }
    match text.strip_prefix("error: ").unwrap_or(text) {
        "" => Error::Failed(format!(
            "kubectl exited with code {}",
            code.map_or("none".to_string(), |c| c.to_string())
        )),
        message => Error::Failed(message.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_failures_print_as_they_did() {
        let api = kubectl_error(
            "Error from server (NotFound): deployments.apps \"shop\" not found",
            Some(1),
        );
        assert_eq!(
            api.printed(),
            "Error from server (NotFound): deployments.apps \"shop\" not found"
        );
        assert_eq!(
            kubectl_error("error: no rollout history found", Some(1)).printed(),
            "error: no rollout history found"
        );
        assert_eq!(
            kubectl_error("", Some(3)).printed(),
            "error: kubectl exited with code 3"
        );
    }
}
