//! apimachinery's label key and value syntax (`validation.IsQualifiedName`, `IsValidLabelValue`).

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, at most 63 characters.
fn is_name_token(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// A DNS-1123 subdomain: dot-separated lowercase labels, at most 253 characters.
pub fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

/// A label key: an optional DNS-subdomain prefix and `/`, then a name token.
pub fn is_qualified_name(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, name)) => is_dns_subdomain(prefix) && is_name_token(name),
        None => is_name_token(key),
    }
}

/// A label value: empty, or a name token.
pub fn is_label_value(value: &str) -> bool {
    value.is_empty() || is_name_token(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_values() {
        let keys = [
            ("app", true),
            ("apps.kruise.io/x", true),
            ("kubernetes.io/metadata.name", true),
            ("My_key.1", true),
            ("bad key", false),
            ("/x", false),
            ("a/b/c", false),
            ("Upper.io/x", false),
            ("-x", false),
            ("", false),
            (&"k".repeat(64), false),
        ];
        for (key, want) in keys {
            assert_eq!(is_qualified_name(key), want, "{key:?}");
        }
        let values = [
            ("", true),
            ("web", true),
            ("a.b_c-1", true),
            ("-x", false),
            ("a b", false),
        ];
        for (value, want) in values {
            assert_eq!(is_label_value(value), want, "{value:?}");
        }
        assert!(!is_label_value(&"v".repeat(64)));
    }
}
