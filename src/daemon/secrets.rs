//! Pull credentials of a NodeImage's image: its `pullSecrets` are read (a missing one is skipped) and
//! every docker-config entry whose registry is the image's becomes one credential to try, in order.

use std::collections::BTreeMap;

use base64::Engine as _;
use k8s_openapi::api::core::v1::Secret;
use kruise_api::apps_v1beta1::ReferenceObject;
use kruise_cri::v1::AuthConfig;
use serde::Deserialize;

#[derive(Deserialize, Default)]
struct DockerConfig {
    #[serde(default)]
    auths: BTreeMap<String, Entry>,
}

#[derive(Deserialize, Default)]
struct Entry {
    #[serde(default)]
    username: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    auth: String,
}

/// The credentials for `image` (a familiar name) in the referenced secrets.
pub async fn credentials(client: &kube::Client, refs: &[ReferenceObject], image: &str) -> Vec<AuthConfig> {
    let mut out = Vec::new();
    for r in refs {
        let api: kube::Api<Secret> = kube::Api::namespaced(client.clone(), &r.namespace);
        match api.get_opt(&r.name).await {
            Ok(Some(secret)) => out.extend(from_secret(&secret, image)),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(secret = %format!("{}/{}", r.namespace, r.name), error = %e, "reading a pull secret")
            }
        }
    }
    out
}

/// The entries of a `kubernetes.io/dockerconfigjson` (or legacy `dockercfg`) secret matching `image`'s registry.
pub fn from_secret(secret: &Secret, image: &str) -> Vec<AuthConfig> {
    let data = secret.data.as_ref();
    let config: DockerConfig = if let Some(json) = data.and_then(|d| d.get(".dockerconfigjson")) {
        serde_json::from_slice(&json.0).unwrap_or_default()
    } else if let Some(json) = data.and_then(|d| d.get(".dockercfg")) {
        DockerConfig {
            auths: serde_json::from_slice(&json.0).unwrap_or_default(),
        }
    } else {
        return Vec::new();
    };
    let registry = registry_of(image);
    config
        .auths
        .into_iter()
        .filter(|(key, _)| host_of(key) == registry)
        .map(|(key, e)| {
            let (username, password) = if e.username.is_empty() && !e.auth.is_empty() {
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(e.auth.as_bytes())
                    .unwrap_or_default();
                let text = String::from_utf8_lossy(&decoded).into_owned();
                match text.split_once(':') {
                    Some((u, p)) => (u.to_owned(), p.to_owned()),
                    None => (String::new(), String::new()),
                }
            } else {
                (e.username, e.password)
            };
            AuthConfig {
                username,
                password,
                server_address: key,
                ..AuthConfig::default()
            }
        })
        .collect()
}

/// The registry host of a familiar name (`docker.io` when it names none).
fn registry_of(image: &str) -> String {
    match image.split_once('/') {
        Some((first, _)) if first.contains(['.', ':']) || first == "localhost" => first.to_owned(),
        _ => "docker.io".to_owned(),
    }
}

/// The host of a docker-config key (`https://index.docker.io/v1/` → `docker.io`).
fn host_of(key: &str) -> String {
    let key = key.trim_start_matches("https://").trim_start_matches("http://");
    let host = key.split('/').next().unwrap_or(key);
    match host {
        "index.docker.io" | "registry-1.docker.io" => "docker.io".to_owned(),
        other => other.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

    #[test]
    fn entries_of_the_image_s_registry_become_credentials() {
        let config = serde_json::json!({"auths": {
            "127.0.0.1:5000": {"auth": base64::engine::general_purpose::STANDARD.encode("u1:p1")},
            "https://index.docker.io/v1/": {"username": "u2", "password": "p2"},
            "other.example": {"username": "u3", "password": "p3"},
        }});
        let secret = Secret {
            data: Some(
                [(
                    ".dockerconfigjson".to_owned(),
                    ByteString(config.to_string().into_bytes()),
                )]
                .into(),
            ),
            ..Secret::default()
        };
        let local = from_secret(&secret, "127.0.0.1:5000/demo");
        assert_eq!(local.len(), 1);
        assert_eq!(
            (local[0].username.as_str(), local[0].password.as_str()),
            ("u1", "p1")
        );
        let hub = from_secret(&secret, "busybox");
        assert_eq!(hub.len(), 1);
        assert_eq!(hub[0].username, "u2");
        assert!(from_secret(&secret, "quay.io/x/y").is_empty());
        assert!(from_secret(&Secret::default(), "busybox").is_empty());
    }
}
