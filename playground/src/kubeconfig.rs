//! Kubeconfig for a playground: one cluster trusting its CA, one user with a bearer token (the
//! server accepts any), one context with namespace `default`.

use base64::Engine as _;

use crate::error::ClientError;

/// The kubeconfig YAML.
pub fn render(server: &str, ca_pem: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: playground
  cluster:
    server: {server}
    certificate-authority-data: {ca}
users:
- name: playground
  user:
    token: playground-token
contexts:
- name: playground
  context:
    cluster: playground
    user: playground
    namespace: default
current-context: playground
"
    )
}

/// The kube client configuration of a kubeconfig.
pub async fn config(yaml: &str) -> Result<kube::Config, ClientError> {
    let kc = kube::config::Kubeconfig::from_yaml(yaml)?;
    Ok(kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default()).await?)
}
