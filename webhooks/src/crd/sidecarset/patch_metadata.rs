//! `spec.patchPodMetadata`, and the whitelist in `kruise-configuration` that allows it.

use serde_json::{Value, json};

use super::{items, present, sidecarset_name};
use crate::crd::field::{ErrorList, Path, required, str_at};
use crate::crd::meta::{self, selector_conversion_fails, validate_object_meta};
use crate::view::ClusterView;

/// `spec.patchPodMetadata`: allowed by the whitelist, annotations present and valid, a patchPolicy, no
/// annotation patched twice.
pub(super) fn validate_patch_pod_metadata(obj: &Value, spec: &Value, view: &impl ClusterView) -> ErrorList {
    let sp = Path::new("spec");
    let mut errs = ErrorList::new();
    let patches = items(spec, "patchPodMetadata");
    if !patches.is_empty()
        && let Err(e) = patch_metadata_whitelist(obj, patches, view)
    {
        errs.push(required(&sp.child("patchPodMetadata"), e));
    }
    let mut keys = std::collections::BTreeSet::new();
    for patch in patches {
        let annotations = patch.get("annotations").and_then(Value::as_object);
        if annotations.is_none_or(|a| a.is_empty()) {
            errs.push(required(
                &sp.child("patchPodMetadata"),
                "no annotations defined for SidecarSet",
            ));
        } else {
            let fake = json!({"name": "fake-name", "annotations": patch.get("annotations")});
            errs.extend(
                validate_object_meta(Some(&fake), false, sidecarset_name)
                    .into_iter()
                    .map(|mut e| {
                        e.field = e.field.replacen("metadata", "patchPodMetadata", 1);
                        e
                    }),
            );
        }
        if str_at(patch, "patchPolicy").is_empty() {
            errs.push(required(
                &sp.child("patchPodMetadata"),
                "no patchPolicy defined for patchPodMetadata",
            ));
        }
        for k in annotations.into_iter().flat_map(|a| a.keys()) {
            if !keys.insert(k.clone()) {
                errs.push(required(
                    &sp.child("patchPodMetadata"),
                    format!("patch annotation[{k}] already exist"),
                ));
            }
        }
    }
    errs
}

/// OpenKruise's `ValidateSidecarSetPatchMetadataWhitelist` with the gate
/// SidecarSetPatchPodMetadataDefaultsAllowed off (its default).
fn patch_metadata_whitelist(obj: &Value, patches: &[Value], view: &impl ClusterView) -> Result<(), String> {
    let Some(raw) = crate::crd::configuration_value(view, "SidecarSet_PatchPodMetadata_WhiteList") else {
        return Err("SidecarSet patch metadata whitelist not found".into());
    };
    let whitelist: Value = serde_json::from_str(&raw).map_err(|e| e.to_string())?;
    let labels = meta::string_map(obj.pointer("/metadata/labels"));
    let mut exprs: Vec<String> = Vec::new();
    for rule in items(&whitelist, "rules") {
        if let Some(sel) = present(rule, "selector") {
            if selector_conversion_fails(Some(sel)) {
                return Err("invalid selector in the patch metadata whitelist".into());
            }
            if !meta::selector_matches(sel, &labels) {
                continue;
            }
        }
        exprs.extend(meta::string_list(rule.get("allowedAnnotationKeyExprs")));
    }
    if exprs.is_empty() {
        return Err("sidecarSet patch metadata annotation is not allowed".into());
    }
    for patch in patches {
        for key in patch
            .get("annotations")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|a| a.keys())
        {
            if !exprs.iter().any(|e| simple_regex_match(e, key)) {
                return Err(format!(
                    "sidecarSet patch metadata annotation({key}) is not allowed"
                ));
            }
        }
    }
    Ok(())
}

/// A small subset of Go regular expressions, as whitelists use them: literal text with `.`, `.*`, `^`,
/// `$` and `\.`; unanchored like Go's `MatchString`.
fn simple_regex_match(expr: &str, text: &str) -> bool {
    fn tokens(expr: &str) -> Vec<(Option<char>, bool)> {
        // (None = any char, star)
        let mut out = Vec::new();
        let mut chars = expr.chars().peekable();
        while let Some(c) = chars.next() {
            let atom = match c {
                '.' => None,
                '\\' => chars.next(),
                c => Some(c),
            };
            let star = chars.peek() == Some(&'*');
            if star {
                chars.next();
            }
            out.push((atom, star));
        }
        out
    }
    fn matches(t: &[(Option<char>, bool)], s: &[char], anchored_end: bool) -> bool {
        match t.first() {
            None => !anchored_end || s.is_empty(),
            Some(&(atom, star)) => {
                let ok = |c: char| atom.is_none_or(|a| a == c);
                if star {
                    matches(&t[1..], s, anchored_end)
                        || (!s.is_empty() && ok(s[0]) && matches(t, &s[1..], anchored_end))
                } else {
                    !s.is_empty() && ok(s[0]) && matches(&t[1..], &s[1..], anchored_end)
                }
            }
        }
    }
    let (start, e) = match expr.strip_prefix('^') {
        Some(rest) => (true, rest),
        None => (false, expr),
    };
    let (end, e) = match e.strip_suffix('$') {
        Some(rest) if !rest.ends_with('\\') => (true, rest),
        _ => (false, e),
    };
    let t = tokens(e);
    let s: Vec<char> = text.chars().collect();
    if start {
        return matches(&t, &s, end);
    }
    (0..=s.len()).any(|i| matches(&t, &s[i..], end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitelist_regex_subset() {
        assert!(simple_regex_match("^app\\.io/.*$", "app.io/x"));
        assert!(!simple_regex_match("^app\\.io/.*$", "appxio/x"));
        assert!(simple_regex_match("key", "a-key-b"));
        assert!(!simple_regex_match("^key$", "a-key"));
        assert!(simple_regex_match(".*", ""));
    }
}
