//! What the verb handlers see of an HTTP request: its path taken apart (`/api/v1/...`,
//! `/apis/<g>/<v>/...`), and its method, query, headers and body.

use std::collections::HashMap;

use axum::{
    body::Bytes,
    http::{HeaderMap, Method, header},
};

/// A resource path taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiPath {
    /// API group ("" for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Namespace of the path, if any.
    pub namespace: Option<String>,
    /// Plural resource.
    pub resource: String,
    /// Object name.
    pub name: Option<String>,
    /// Subresource.
    pub subresource: Option<String>,
}

/// What a path addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `/apis`: the group list.
    Apis,
    /// `/apis/<group>` or `/api` (with an empty group).
    Group(String),
    /// `/api/v1` or `/apis/<group>/<version>`.
    GroupVersion(String, String),
    /// A resource, collection or object.
    Resource(ApiPath),
}

/// Parses a request path.
pub fn parse(path: &str) -> Option<Target> {
    let segs: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api"] => return Some(Target::Group(String::new())),
        ["apis"] => return Some(Target::Apis),
        ["apis", g] => return Some(Target::Group(g.to_string())),
        ["api", v, rest @ ..] => (String::new(), v.to_string(), rest),
        ["apis", g, v, rest @ ..] => (g.to_string(), v.to_string(), rest),
        _ => return None,
    };
    let s = |x: &&str| x.to_string();
    let p = match rest {
        [] => return Some(Target::GroupVersion(group, version)),
        ["namespaces", ns, res, tail @ ..] if !matches!(*res, "status" | "finalize") => {
            if tail.len() > 2 {
                return None;
            }
            ApiPath {
                group,
                version,
                namespace: Some(ns.to_string()),
                resource: res.to_string(),
                name: tail.first().map(s),
                subresource: tail.get(1).map(s),
            }
        }
        [res, tail @ ..] if tail.len() <= 2 => ApiPath {
            group,
            version,
            namespace: None,
            resource: res.to_string(),
            name: tail.first().map(s),
            subresource: tail.get(1).map(s),
        },
        _ => return None,
    };
    Some(Target::Resource(p))
}

/// Everything a verb handler needs from the request.
#[derive(Debug)]
pub struct Request {
    /// HTTP method.
    pub method: Method,
    /// Query parameters.
    pub query: HashMap<String, String>,
    /// Headers.
    pub headers: HeaderMap,
    /// Body.
    pub body: Bytes,
}

impl Request {
    /// The Content-Type without parameters.
    pub fn content_type(&self) -> String {
        self.headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| {
                v.split(';')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_ascii_lowercase()
            })
            .unwrap_or_default()
    }

    /// Whether the client asked for a `meta.k8s.io/v1 Table`.
    pub fn wants_table(&self) -> bool {
        self.headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("as=Table"))
    }

    /// Whether the client asked for `meta.k8s.io/v1 PartialObjectMetadata` (metadata-only clients).
    pub fn wants_metadata(&self) -> bool {
        self.headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("as=PartialObjectMetadata"))
    }

    /// `dryRun=All`.
    pub fn dry_run(&self) -> bool {
        self.query.contains_key("dryRun")
    }

    /// The `fieldValidation` query parameter (`Strict`, `Warn`, `Ignore`), if given.
    pub fn field_validation(&self) -> Option<&str> {
        self.query.get("fieldValidation").map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        let p = |s| match parse(s) {
            Some(Target::Resource(p)) => p,
            other => panic!("{s}: {other:?}"),
        };
        let pod = p("/api/v1/namespaces/ns/pods/a/status");
        assert_eq!(
            (pod.namespace.as_deref(), pod.resource.as_str()),
            (Some("ns"), "pods")
        );
        assert_eq!(
            (pod.name.as_deref(), pod.subresource.as_deref()),
            (Some("a"), Some("status"))
        );
        let ns = p("/api/v1/namespaces/ns/finalize");
        assert_eq!(
            (ns.resource.as_str(), ns.name.as_deref()),
            ("namespaces", Some("ns"))
        );
        let deploys = p("/apis/apps/v1/deployments");
        assert_eq!((deploys.group.as_str(), deploys.name), ("apps", None));
        assert_eq!(
            parse("/apis/apps/v1"),
            Some(Target::GroupVersion("apps".into(), "v1".into()))
        );
        assert_eq!(parse("/apis"), Some(Target::Apis));
        assert_eq!(parse("/foo"), None);
    }
}
