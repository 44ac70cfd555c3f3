//! Image references as NodeImages key them: a familiar name (`busybox`, `127.0.0.1:5000/demo`) and a
//! tag, where a digest (`sha256:…`) takes the tag's place. Joining gives back a pullable reference:
//! `name:tag`, or `name@sha256:…` for a digest (OpenKruise joins digests with `:`, which no runtime
//! accepts: openkruise/kruise#2534).

/// Why a reference does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageRefError {
    /// Empty string.
    #[error("image reference is empty")]
    Empty,
    /// Characters or shape a registry reference cannot have.
    #[error("invalid reference format: {0}")]
    Invalid(String),
}

/// A reference split into familiar name and tag (or digest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    /// Familiar name: without `docker.io/` and `library/`, without tag or digest.
    pub name: String,
    /// The tag (`latest` when none is given), or `sha256:…` for a digest reference.
    pub tag: String,
}

impl ImageRef {
    /// Parses `image` the way Docker's normalised references read it; a reference with both tag and
    /// digest keeps the digest.
    pub fn parse(image: &str) -> Result<ImageRef, ImageRefError> {
        if image.is_empty() {
            return Err(ImageRefError::Empty);
        }
        let invalid = || ImageRefError::Invalid(image.to_owned());
        if image.chars().any(char::is_whitespace) {
            return Err(invalid());
        }
        let (rest, digest) = match image.split_once('@') {
            Some((rest, digest)) => (rest, Some(digest)),
            None => (image, None),
        };
        if let Some(d) = digest {
            let Some((algo, hex)) = d.split_once(':') else {
                return Err(invalid());
            };
            let hex_ok = hex.len() >= 32
                && hex
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase());
            if algo.is_empty() || !hex_ok {
                return Err(invalid());
            }
        }
        // A tag is after the last ':' that follows the last '/'.
        let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
        let (name, tag) = match rest[last_slash..].rfind(':') {
            Some(i) => (&rest[..last_slash + i], Some(&rest[last_slash + i + 1..])),
            None => (rest, None),
        };
        if let Some(t) = tag {
            let ok = !t.is_empty()
                && t.len() <= 128
                && t.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
                && !t.starts_with(['.', '-']);
            if !ok {
                return Err(invalid());
            }
        }
        let name = familiar(name).ok_or_else(invalid)?;
        let tag = match (digest, tag) {
            (Some(d), _) => d.to_owned(),
            (None, Some(t)) => t.to_owned(),
            (None, None) => "latest".to_owned(),
        };
        Ok(ImageRef { name, tag })
    }

    /// Whether the "tag" is a digest.
    pub fn is_digest(&self) -> bool {
        is_digest(&self.tag)
    }

    /// The pullable reference.
    pub fn reference(&self) -> String {
        join(&self.name, &self.tag)
    }
}

/// Whether a NodeImage tag is a digest (`<algorithm>:<hex>`).
pub fn is_digest(tag: &str) -> bool {
    tag.contains(':')
}

/// `name:tag`, or `name@digest` when the tag is a digest.
pub fn join(name: &str, tag: &str) -> String {
    if is_digest(tag) {
        format!("{name}@{tag}")
    } else {
        format!("{name}:{tag}")
    }
}

/// Validates the repository path and strips the default registry and `library/`.
fn familiar(name: &str) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    let mut parts: Vec<&str> = name.split('/').collect();
    let has_domain =
        parts.len() > 1 && (parts[0].contains('.') || parts[0].contains(':') || parts[0] == "localhost");
    let domain = if has_domain { Some(parts.remove(0)) } else { None };
    if let Some(d) = domain
        && !d
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'))
    {
        return None;
    }
    let component_ok = |p: &&str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
            && p.starts_with(|c: char| c.is_ascii_alphanumeric())
            && p.ends_with(|c: char| c.is_ascii_alphanumeric())
    };
    if parts.is_empty() || !parts.iter().all(component_ok) {
        return None;
    }
    let path = parts.join("/");
    Some(match domain {
        None | Some("docker.io" | "index.docker.io") => path
            .strip_prefix("library/")
            .filter(|p| !p.contains('/'))
            .unwrap_or(&path)
            .to_owned(),
        Some(d) => format!("{d}/{path}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn references_split_into_familiar_name_and_tag() {
        let cases: &[(&str, &str, &str)] = &[
            ("busybox", "busybox", "latest"),
            ("busybox:1.36", "busybox", "1.36"),
            ("docker.io/library/busybox:1.36", "busybox", "1.36"),
            ("docker.io/openkruise/guestbook:v1", "openkruise/guestbook", "v1"),
            ("127.0.0.1:5000/demo:v2", "127.0.0.1:5000/demo", "v2"),
            ("127.0.0.1:5000/demo", "127.0.0.1:5000/demo", "latest"),
            ("localhost/a/b:c", "localhost/a/b", "c"),
        ];
        for (image, name, tag) in cases {
            let r = ImageRef::parse(image).unwrap_or_else(|e| panic!("{image}: {e}"));
            assert_eq!((r.name.as_str(), r.tag.as_str()), (*name, *tag), "{image}");
            assert!(!r.is_digest());
        }
    }

    #[test]
    fn a_digest_is_the_tag_and_joins_with_at() {
        let image = format!("127.0.0.1:5000/demo@{DIGEST}");
        let r = ImageRef::parse(&image).unwrap();
        assert_eq!(r.name, "127.0.0.1:5000/demo");
        assert_eq!(r.tag, DIGEST);
        assert!(r.is_digest());
        assert_eq!(r.reference(), image);
        let both = ImageRef::parse(&format!("demo:v2@{DIGEST}")).unwrap();
        assert_eq!(both.reference(), format!("demo@{DIGEST}"));
        assert_eq!(join("demo", "v2"), "demo:v2");
    }

    #[test]
    fn malformed_references_are_refused() {
        for bad in [
            "",
            "Busybox",
            "demo:",
            "demo:v 2",
            "a//b",
            "demo@sha256:xyz",
            ":v1",
            "demo@md5",
        ] {
            assert!(ImageRef::parse(bad).is_err(), "{bad:?}");
        }
    }
}
