//! SidecarSet: OpenKruise's defaults and hash annotations (`msidecarset.kb.io`), and its validation
//! (`vsidecarset.kb.io`).
//!
//! Defaults (both versions): `updateStrategy.type: RollingUpdate`, `maxUnavailable: 1`, `partition: 0`;
//! per container `podInjectPolicy` (`BeforeAppContainer`, `AfterAppContainer` for init containers),
//! `upgradeStrategy.upgradeType: ColdUpgrade`, `shareVolumePolicy.type: disabled`, the core/v1 container
//! defaults (see [`super::defaults`]) and transferEnv `fieldRef.apiVersion: v1`; volume defaults;
//! `revisionHistoryLimit: 10`; `patchPodMetadata[].patchPolicy: Retain`;
//! `injectionStrategy.revision.policy: Always`. Then `kruise.io/sidecarset-hash` and
//! `kruise.io/sidecarset-hash-without-image` are stamped from the defaulted containers
//! ([`super::gojson`]).
//!
//! Validation follows OpenKruise's `validateSidecarSet`: name (`^[a-zA-Z0-9\-]+$`, at most 63), canary
//! annotations, selectors (required, valid, non-empty), injection strategy (revision must exist),
//! update strategy, containers (policies, transferEnv fieldRefs, resourcesPolicy, then Kubernetes' pod
//! validation of a pod made of the sidecars and volumes), patchPodMetadata (needs the whitelist in
//! `kruise-configuration`, as with OpenKruise's default gates), on UPDATE containers may not be added
//! and their upgradeType may not change; when all that passes, conflicts with every other SidecarSet
//! whose selectors overlap (same container name, a different volume of the same name, conflicting
//! Overwrite annotations).
//! `targetContainersNameRegex` is compiled by the `regex` crate (RE2 syntax, as Go's; the error text is the
//! crate's description in Go's frame) and each resource expression is parsed by the calculator the pod
//! webhook evaluates it with.

use serde_json::{Value, json};

use super::defaults::{Mutator, PullDefault, default_container, default_volumes, path};
use super::field::{ErrorList, GoValue, Path, go_label_selector, go_quote, invalid, required, str_at};
use super::meta::{
    self, qualified_name, selector_conversion_fails, selector_is_empty, validate_label_selector,
    validate_object_meta, validate_positive_int_or_percent,
};
use super::{KRUISE_NAMESPACE, Which, check_decodes, check_version, judged, raw_object, refuse};
use crate::{Decision, pod_mutate::sidecarset::resources, review::AdmissionRequest, view::ClusterView};

/// `kruise.io/sidecarset-hash`.
pub const HASH_ANNOTATION: &str = "kruise.io/sidecarset-hash";
/// `kruise.io/sidecarset-hash-without-image`.
pub const HASH_WITHOUT_IMAGE_ANNOTATION: &str = "kruise.io/sidecarset-hash-without-image";
const CANARY_ANNOTATION: &str = "apps.kruise.io/sidecarset-canary";
const BASE_ANNOTATION: &str = "apps.kruise.io/sidecarset-base";
const GROUP: &str = "apps.kruise.io";
const KIND: &str = "SidecarSet";

fn p(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

/// Applies OpenKruise's SidecarSet defaults and hashes to `m` (either version: the fields are the same).
pub fn apply_defaults(m: &mut Mutator) {
    let us = p(&["spec", "updateStrategy"]);
    m.set_default_zero(&path(&us, &["type"]), json!("RollingUpdate"));
    m.set_default(&path(&us, &["maxUnavailable"]), json!(1));
    m.set_default(&path(&us, &["partition"]), json!(0));
    for (list, inject) in [
        ("initContainers", "AfterAppContainer"),
        ("containers", "BeforeAppContainer"),
    ] {
        for i in 0..m.len(&p(&["spec", list])) {
            let c = p(&["spec", list, &i.to_string()]);
            m.set_default_zero(&path(&c, &["podInjectPolicy"]), json!(inject));
            m.set_default_zero(
                &path(&c, &["upgradeStrategy", "upgradeType"]),
                json!("ColdUpgrade"),
            );
            m.set_default_zero(&path(&c, &["shareVolumePolicy", "type"]), json!("disabled"));
            default_container(m, &c, PullDefault::FromTag, false);
            for j in 0..m.len(&path(&c, &["transferEnv"])) {
                let t = path(&c, &["transferEnv", &j.to_string(), "sourceContainerNameFrom"]);
                if m.has(&path(&t, &["fieldRef"])) {
                    m.set_default_zero(&path(&t, &["fieldRef", "apiVersion"]), json!("v1"));
                }
            }
        }
    }
    default_volumes(m, &p(&["spec", "volumes"]));
    m.set_default(&p(&["spec", "revisionHistoryLimit"]), json!(10));
    for i in 0..m.len(&p(&["spec", "patchPodMetadata"])) {
        m.set_default_zero(
            &p(&["spec", "patchPodMetadata", &i.to_string(), "patchPolicy"]),
            json!("Retain"),
        );
    }
    if m.has(&p(&["spec", "injectionStrategy", "revision"])) {
        m.set_default_zero(
            &p(&["spec", "injectionStrategy", "revision", "policy"]),
            json!("Always"),
        );
    }
    let null = Value::Null;
    let (hash, without_image) = super::gojson::sidecarset_hashes(m.doc.get("spec").unwrap_or(&null));
    m.set_map_entry(&["metadata", "annotations"], HASH_ANNOTATION, &hash);
    m.set_map_entry(
        &["metadata", "annotations"],
        HASH_WITHOUT_IMAGE_ANNOTATION,
        &without_image,
    );
}

fn decode_any_version(version: &str, object: &Value) -> Result<(), Box<Decision>> {
    match version {
        "v1alpha1" => check_decodes::<kruise_api::apps_v1alpha1::SidecarSet>(KIND, object).map(drop),
        _ => check_decodes::<kruise_api::apps_v1beta1::SidecarSet>(KIND, object).map(drop),
    }
}

/// `/mutate-apps-kruise-io-sidecarset`.
pub fn mutate(request: &AdmissionRequest) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    let version = match check_version(request) {
        Ok(v) => v,
        Err(d) => return *d,
    };
    let object = match raw_object(request, Which::New, GROUP, KIND) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    if let Err(d) = decode_any_version(version, &object) {
        return *d;
    }
    // Patch against exactly what was sent: only apiVersion/kind/namespace may have been filled in, and
    // none of those paths are defaulted here.
    let mut m = Mutator::new(request.object.clone().unwrap_or(object));
    apply_defaults(&mut m);
    Decision::patched(m.ops)
}

/// The object as v1beta1 JSON after defaults, for validation.
fn defaulted_v1beta1(request: &AdmissionRequest, which: Which) -> Result<Value, Box<Decision>> {
    let version = check_version(request)?;
    let object = raw_object(request, which, GROUP, KIND)?;
    decode_any_version(version, &object)?;
    let mut m = Mutator::new(object);
    apply_defaults(&mut m);
    kruise_api::convert_object(&m.doc, "apps.kruise.io/v1beta1")
        .map_err(|e| Box::new(Decision::bad_request(e.to_string())))
}

/// `/validate-apps-kruise-io-sidecarset`.
pub fn validate(request: &AdmissionRequest, view: &impl ClusterView) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    let obj = match defaulted_v1beta1(request, Which::New) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    let old = if request.operation == crate::Operation::Update {
        match defaulted_v1beta1(request, Which::Old) {
            Ok(o) => Some(o),
            Err(d) => return *d,
        }
    } else {
        None
    };
    let others: Vec<Value> = view
        .sidecar_sets()
        .iter()
        .filter_map(|s| serde_json::to_value(&**s).ok())
        .collect();
    let errs = validate_sidecarset(&obj, old.as_ref(), &others, view);
    refuse(&errs).unwrap_or_else(Decision::allow)
}

fn annotations(obj: &Value) -> std::collections::BTreeMap<String, String> {
    meta::string_map(obj.pointer("/metadata/annotations"))
}

fn is_canary(obj: &Value) -> (bool, String) {
    let a = annotations(obj);
    let base = a.get(BASE_ANNOTATION).cloned().unwrap_or_default();
    (
        a.get(CANARY_ANNOTATION).map(String::as_str) == Some("true") && !base.is_empty(),
        base,
    )
}

fn sidecarset_name(name: &str, _prefix: bool) -> Vec<String> {
    let mut errs = Vec::new();
    if name.is_empty() || !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-') {
        errs.push(meta::regex_error(
            "sidecarset name must consist of alphanumeric characters or '-'",
            "^[a-zA-Z0-9\\-]+$",
            &["example-com"],
        ));
    }
    if name.len() > 63 {
        errs.push(meta::max_len_error(63));
    }
    errs
}

/// Go's `%#v` of `metadata.annotations` (a `map[string]string`).
fn go_annotations(obj: &Value) -> GoValue {
    GoValue::Raw(super::field::go_string_map(
        obj.pointer("/metadata/annotations").filter(|v| !v.is_null()),
    ))
}

/// Every check of OpenKruise's `validateSidecarSet` on a defaulted v1beta1 SidecarSet.
pub fn validate_sidecarset(
    obj: &Value,
    old: Option<&Value>,
    others: &[Value],
    view: &impl ClusterView,
) -> ErrorList {
    let mut errs = validate_object_meta(obj.get("metadata"), false, sidecarset_name);
    errs.extend(validate_canary(obj, old, others));
    let null = Value::Null;
    let spec = obj.get("spec").unwrap_or(&null);
    errs.extend(validate_spec(obj, spec, view));
    if let Some(old) = old {
        errs.extend(validate_container_updates(spec, old.get("spec").unwrap_or(&null)));
    }
    if !errs.is_empty() {
        return errs;
    }
    errs.extend(validate_conflicts(obj, others));
    errs
}

fn validate_canary(obj: &Value, old: Option<&Value>, others: &[Value]) -> ErrorList {
    let mut errs = ErrorList::new();
    let (canary, base) = is_canary(obj);
    if !canary {
        return errs;
    }
    let mpath = Path::new("metadata");
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    if base == name {
        errs.push(invalid(
            &mpath,
            go_annotations(obj),
            "base sidecarSet cannot be itself",
        ));
    }
    if let Some(old) = old
        && annotations(old).get(BASE_ANNOTATION) != Some(&base)
    {
        errs.push(invalid(
            &mpath,
            go_annotations(obj),
            format!("annotations[{BASE_ANNOTATION}] is immutable"),
        ));
    }
    match others
        .iter()
        .find(|o| o.pointer("/metadata/name").and_then(Value::as_str) == Some(&base))
    {
        None => errs.push(invalid(
            &mpath,
            go_annotations(obj),
            format!(
                "fetch base sidecarSet[{base}] failed: sidecarsets.apps.kruise.io {} not found",
                go_quote(&base)
            ),
        )),
        Some(b) => {
            if is_canary(b).0 {
                errs.push(invalid(
                    &mpath,
                    go_annotations(obj),
                    "base sidecarSet cannot be canary",
                ));
            }
        }
    }
    if obj.pointer("/spec/updateStrategy/type").and_then(Value::as_str) != Some("NotUpdate") {
        errs.push(invalid(
            &mpath,
            go_annotations(obj),
            "RollingUpdate is not supported for canary sidecarSet",
        ));
    }
    errs
}

fn validate_selector(selector: &Value, path: &Path) -> ErrorList {
    let mut errs = validate_label_selector(Some(selector), path);
    if selector_is_empty(selector) {
        errs.push(invalid(
            path,
            go_label_selector(Some(selector)),
            "empty selector is not valid for sidecarset.",
        ));
    }
    if selector_conversion_fails(Some(selector)) {
        errs.push(invalid(
            &path.child("selector"),
            go_label_selector(Some(selector)),
            "",
        ));
    }
    errs
}

fn present<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn validate_spec(obj: &Value, spec: &Value, view: &impl ClusterView) -> ErrorList {
    let sp = Path::new("spec");
    let mut errs = ErrorList::new();
    let strategy_type = spec.pointer("/updateStrategy/type").and_then(Value::as_str);
    for c in items(spec, "initContainers") {
        if str_at(c, "restartPolicy") == "Always" && strategy_type == Some("RollingUpdate") {
            errs.push(required(
                &sp.child("updateStrategy"),
                "The initContainer in-place upgrade is not currently supported.",
            ));
        }
    }
    match present(spec, "selector") {
        None => errs.push(required(
            &sp.child("selector"),
            "no selector defined for SidecarSet",
        )),
        Some(sel) => errs.extend(validate_selector(sel, &sp.child("selector"))),
    }
    if let Some(ns) = present(spec, "namespaceSelector") {
        errs.extend(validate_selector(ns, &sp.child("namespaceSelector")));
    }
    errs.extend(validate_injection_strategy(obj, spec, view));
    errs.extend(validate_update_strategy(
        spec.get("updateStrategy").unwrap_or(&Value::Null),
        &sp.child("updateStrategy"),
    ));
    let (init, containers) = (items(spec, "initContainers"), items(spec, "containers"));
    if init.is_empty() && containers.is_empty() {
        errs.push(required(
            &sp,
            "no initContainer or container defined for SidecarSet",
        ));
    } else {
        errs.extend(validate_containers(init, containers, items(spec, "volumes")));
    }
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
    let Some(raw) = super::configuration_value(view, "SidecarSet_PatchPodMetadata_WhiteList") else {
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

fn go_opt_string_ptr(v: Option<&Value>) -> String {
    match v.and_then(Value::as_str) {
        None => "(*string)(nil)".into(),
        Some(_) => "(*string)(0xc000000000)".into(),
    }
}

fn validate_injection_strategy(obj: &Value, spec: &Value, view: &impl ClusterView) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(rev) = spec
        .pointer("/injectionStrategy/revision")
        .filter(|r| !r.is_null())
    else {
        return errs;
    };
    let go_rev = || {
        GoValue::Raw(format!(
            "v1beta1.SidecarSetInjectRevision{{CustomVersion:{}, RevisionName:{}, Policy:{}}}",
            go_opt_string_ptr(present(rev, "customVersion")),
            go_opt_string_ptr(present(rev, "revisionName")),
            go_quote(str_at(rev, "policy"))
        ))
    };
    let rpath = Path::new("revision");
    let revision_name = present(rev, "revisionName").and_then(Value::as_str);
    let custom_version = present(rev, "customVersion").and_then(Value::as_str);
    let set_name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let revisions = view.controller_revisions(KRUISE_NAMESPACE);
    let missing = match (revision_name, custom_version) {
        (None, None) => {
            errs.push(invalid(
                &rpath,
                go_rev(),
                "revisionName and customVersion cannot be empty simultaneously",
            ));
            None
        }
        (Some(name), _) => (!revisions.iter().any(|r| r.metadata.name.as_deref() == Some(name)))
            .then(|| format!("controllerrevisions.apps {} not found", go_quote(name))),
        (None, Some(version)) => {
            let found = revisions.iter().any(|r| {
                let labels = r.metadata.labels.as_ref();
                let label = |k: &str| labels.and_then(|l| l.get(k)).map(String::as_str);
                label("kruise.io/sidecarset-name") == Some(set_name)
                    && label("apps.kruise.io/sidecarset-custom-version") == Some(version)
            });
            (!found).then(|| format!("ControllerRevision.apps {} not found", go_quote(set_name)))
        }
    };
    if let Some(err) = missing {
        errs.push(invalid(
            &rpath,
            GoValue::Null,
            format!("Cannot find specific ControllerRevision, err: {err}"),
        ));
    }
    match str_at(rev, "policy") {
        "" | "Always" | "Partial" => {}
        policy => errs.push(invalid(
            &rpath.child("policy"),
            go_rev(),
            format!("Invalid policy {policy}, supported: [Always, Partial]"),
        )),
    }
    errs
}

/// gogo-protobuf's `(*LabelSelector).String()`.
fn gogo_label_selector(sel: &Value) -> String {
    let mut labels: Vec<(String, String)> = meta::string_map(sel.get("matchLabels")).into_iter().collect();
    labels.sort();
    let labels: String = labels.iter().map(|(k, v)| format!("{k}: {v},")).collect();
    let exprs: String = items(sel, "matchExpressions")
        .iter()
        .map(|e| {
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                str_at(e, "key"),
                str_at(e, "operator"),
                meta::string_list(e.get("values")).join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}"
    )
}

/// Go's `%+v` of the update strategy (the value OpenKruise reports for "Partition and Selector cannot be
/// used together"); nested pointers without a `String()` method print as a placeholder address.
fn go_update_strategy(s: &Value) -> String {
    let intstr = |k: &str| match present(s, k) {
        None => "nil".to_string(),
        Some(v) => super::field::int_or_string_text(Some(v)),
    };
    let scatter: Vec<String> = items(s, "scatterStrategy")
        .iter()
        .map(|t| format!("{{Key:{} Value:{}}}", str_at(t, "key"), str_at(t, "value")))
        .collect();
    format!(
        "{{Type:{} Paused:{} Selector:{} Partition:{} MaxUnavailable:{} PriorityStrategy:{} ScatterStrategy:[{}]}}",
        str_at(s, "type"),
        s.get("paused").and_then(Value::as_bool).unwrap_or(false),
        present(s, "selector").map_or("nil".to_string(), gogo_label_selector),
        intstr("partition"),
        intstr("maxUnavailable"),
        if present(s, "priorityStrategy").is_some() {
            "0xc000000000"
        } else {
            "<nil>"
        },
        scatter.join(" ")
    )
}

/// `UpdatePriorityStrategy.FieldsValidation`.
pub fn priority_strategy_error(strategy: Option<&Value>) -> Option<String> {
    let s = strategy.filter(|s| !s.is_null())?;
    let weights = items(s, "weightPriority");
    if !weights.is_empty() && !items(s, "orderPriority").is_empty() {
        return Some("only one of weightPriority and orderPriority can be used".into());
    }
    for w in weights {
        let weight = w.get("weight").and_then(Value::as_i64).unwrap_or(0);
        if !(0..=100).contains(&weight) {
            return Some("weight must be valid number in the range 1-100".into());
        }
        let sel = w.get("matchSelector").unwrap_or(&Value::Null);
        if selector_is_empty(sel) {
            return Some("selector can not be empty".into());
        }
        if selector_conversion_fails(Some(sel)) {
            let bad_op = items(sel, "matchExpressions").iter().find_map(|e| {
                let op = str_at(e, "operator");
                (!matches!(op, "In" | "NotIn" | "Exists" | "DoesNotExist")).then_some(op)
            });
            return Some(match bad_op {
                Some(op) => format!(
                    "invalid selector {} is not a valid label selector operator",
                    go_quote(op)
                ),
                None => "invalid selector".into(),
            });
        }
    }
    for o in items(s, "orderPriority") {
        if str_at(o, "orderedKey").is_empty() {
            return Some("order key can not be empty".into());
        }
    }
    None
}

/// `UpdateScatterStrategy.FieldsValidation`.
pub fn scatter_strategy_error(strategy: Option<&Value>) -> Option<String> {
    let mut seen = std::collections::BTreeSet::new();
    for t in strategy.and_then(Value::as_array).map_or(&[][..], Vec::as_slice) {
        let (k, v) = (str_at(t, "key"), str_at(t, "value"));
        if k.is_empty() {
            return Some("key should not be empty".into());
        }
        if !seen.insert(format!("{k}:{v}")) {
            return Some(format!("duplicated key={k} value={v}"));
        }
    }
    None
}

fn validate_update_strategy(s: &Value, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if str_at(s, "type") != "RollingUpdate" {
        return errs;
    }
    let partition_set = match present(s, "partition") {
        None => false,
        Some(Value::String(_)) => true,
        Some(v) => v.as_i64().unwrap_or(0) != 0,
    };
    if partition_set && present(s, "selector").is_some() {
        errs.push(invalid(
            &Path::new("updateStrategy"),
            go_update_strategy(s),
            "Partition and Selector cannot be used together",
        ));
    }
    if let Some(sel) = present(s, "selector") {
        errs.extend(validate_selector(sel, &path.child("selector")));
    }
    for key in ["partition", "maxUnavailable"] {
        if let Some(v) = present(s, key) {
            errs.extend(validate_positive_int_or_percent(v, &path.child(key)));
        }
    }
    if let Some(e) = priority_strategy_error(s.get("priorityStrategy")) {
        errs.push(required(&path.child("priorityStrategy"), e));
    }
    if let Some(e) = scatter_strategy_error(s.get("scatterStrategy")) {
        errs.push(required(&path.child("scatterStrategy"), e));
    }
    errs
}

fn go_resources_policy(policy: &Value) -> GoValue {
    let ptr = |k: &str, t: &str| match policy.pointer(&format!("/resourcesExpr/{k}")) {
        None | Some(Value::Null) => format!("(*v1beta1.{t})(nil)"),
        Some(_) => format!("(*v1beta1.{t})(0xc000000000)"),
    };
    GoValue::Raw(format!(
        "v1beta1.ResourcesPolicy{{TargetContainersMode:{}, TargetContainersNameRegex:{}, ResourcesExpr:v1beta1.ResourcesExpr{{Limits:{}, Requests:{}}}}}",
        go_quote(str_at(policy, "targetContainersMode")),
        go_quote(str_at(policy, "targetContainersNameRegex")),
        ptr("limits", "ResourceExprLimits"),
        ptr("requests", "ResourceExprRequests"),
    ))
}

fn validate_resources_policy(c: &Value, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(policy) = present(c, "resourcesPolicy") else {
        return errs;
    };
    let non_empty = |k: &str| {
        c.pointer(&format!("/resources/{k}"))
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty())
    };
    if non_empty("limits") || non_empty("requests") {
        errs.push(invalid(
            path,
            go_resources_policy(policy),
            "resourcesPolicy and resources cannot be configured together",
        ));
        return errs;
    }
    if str_at(policy, "targetContainersNameRegex").is_empty() {
        errs.push(required(
            &path.child("targetContainersNameRegex"),
            "invalid empty regex",
        ));
    }
    let regex = str_at(policy, "targetContainersNameRegex");
    if let Some(problem) = resources::regex_problem(regex).filter(|_| !regex.is_empty()) {
        errs.push(invalid(
            &path.child("targetContainersNameRegex"),
            regex,
            format!("invalid regex pattern: {problem}"),
        ));
    }
    let expr = policy.get("resourcesExpr").unwrap_or(&Value::Null);
    let epath = path.child("resourcesExpr");
    if present(expr, "limits").is_none() && present(expr, "requests").is_none() {
        errs.push(invalid(
            &epath,
            GoValue::Raw(
                "v1beta1.ResourcesExpr{Limits:(*v1beta1.ResourceExprLimits)(nil), Requests:(*v1beta1.ResourceExprRequests)(nil)}".into(),
            ),
            "at least one of limits or requests must be configured",
        ));
        return errs;
    }
    for kind in ["limits", "requests"] {
        let Some(exprs) = present(expr, kind) else {
            continue;
        };
        for variable in ["cpu", "memory"] {
            let text = str_at(exprs, variable);
            if let Some(problem) = (!text.is_empty())
                .then(|| resources::expression_problem(text, variable))
                .flatten()
            {
                errs.push(invalid(
                    &epath.child(kind).child(variable),
                    text,
                    format!("invalid expression: {problem}"),
                ));
            }
        }
    }
    errs
}

/// `fieldpath.SplitMaybeSubscriptedPath`: `metadata.labels['k']` → (`metadata.labels`, `k`).
fn split_subscript(path: &str) -> Option<(&str, &str)> {
    let inner = path.strip_suffix("']")?;
    let (p, key) = inner.split_once("['")?;
    Some((p, key))
}

fn validate_transfer_env(c: &Value, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for t in items(c, "transferEnv") {
        let Some(fs) = t
            .pointer("/sourceContainerNameFrom/fieldRef")
            .filter(|v| !v.is_null())
        else {
            continue;
        };
        let fpath = path.child("fieldRef");
        let (api, fp) = (str_at(fs, "apiVersion"), str_at(fs, "fieldPath"));
        if api.is_empty() {
            errs.push(required(&fpath.child("apiVersion"), ""));
            continue;
        }
        if fp.is_empty() {
            errs.push(required(&fpath.child("fieldPath"), ""));
            continue;
        }
        let converted = if api != "v1" {
            Err(format!("unsupported pod version: {api}"))
        } else {
            match split_subscript(fp) {
                Some((p @ ("metadata.annotations" | "metadata.labels"), _)) => Ok(p),
                Some((p, _)) => Err(format!("field path not supported: {p}")),
                None => Err(format!("field label not supported: {fp}")),
            }
        };
        match converted {
            Err(e) => errs.push(invalid(
                &fpath.child("fieldPath"),
                fp,
                format!("error converting fieldPath: {e}"),
            )),
            Ok(p) => {
                let (_, sub) = split_subscript(fp).unwrap_or(("", ""));
                let key = if p == "metadata.annotations" {
                    sub.to_lowercase()
                } else {
                    sub.to_string()
                };
                errs.extend(qualified_name(&key).into_iter().map(|m| invalid(&fpath, sub, m)));
            }
        }
    }
    errs
}

fn validate_containers(init: &[Value], containers: &[Value], volumes: &[Value]) -> ErrorList {
    let root = Path::new("spec");
    let mut errs = ErrorList::new();
    for (i, c) in init.iter().enumerate() {
        let ip = root.index(i);
        if let Some(policy) = present(c, "resourcesPolicy") {
            if str_at(c, "restartPolicy") != "Always" {
                errs.push(invalid(
                    &ip.child("resourcesPolicy"),
                    go_resources_policy(policy),
                    "resourcesPolicy is only supported for containers with RestartPolicy Always",
                ));
            }
            errs.extend(validate_resources_policy(c, &ip.child("resourcesPolicy")));
        }
    }
    for (i, c) in containers.iter().enumerate() {
        let ip = root.index(i);
        let inject = str_at(c, "podInjectPolicy");
        if !matches!(inject, "BeforeAppContainer" | "AfterAppContainer") {
            errs.push(invalid(
                &root.child("container").child("podInjectPolicy"),
                inject,
                "unsupported pod inject policy",
            ));
        }
        let share = c
            .pointer("/shareVolumePolicy/type")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !matches!(share, "enabled" | "disabled") {
            errs.push(invalid(
                &root.child("container").child("shareVolumePolicy"),
                GoValue::Raw(format!("v1beta1.ShareVolumePolicy{{Type:{}}}", go_quote(share))),
                "unsupported share volume policy",
            ));
        }
        errs.extend(validate_transfer_env(c, &ip.child("transferEnv")));
        errs.extend(validate_resources_policy(c, &ip.child("resourcesPolicy")));
    }
    let containers = if containers.is_empty() {
        vec![
            json!({"name": "test", "image": "busybox", "imagePullPolicy": "IfNotPresent",
            "terminationMessagePolicy": "File"}),
        ]
    } else {
        containers.to_vec()
    };
    let fake = json!({"dnsPolicy": "ClusterFirst", "restartPolicy": "Always",
        "initContainers": init, "containers": containers, "volumes": volumes,
        "serviceAccountName": "default", "terminationGracePeriodSeconds": 30});
    errs.extend(super::podspec::validate_pod_spec(&fake, &root, true));
    errs
}

fn validate_container_updates(spec: &Value, old: &Value) -> ErrorList {
    let path = Path::new("spec.containers");
    let mut errs = ErrorList::new();
    let old_strategies: std::collections::BTreeMap<&str, &str> = items(old, "containers")
        .iter()
        .map(|c| {
            (
                str_at(c, "name"),
                c.pointer("/upgradeStrategy/upgradeType")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
            )
        })
        .collect();
    for c in items(spec, "containers") {
        let name = str_at(c, "name");
        let upgrade = c
            .pointer("/upgradeStrategy/upgradeType")
            .and_then(Value::as_str)
            .unwrap_or("");
        match old_strategies.get(name) {
            Some(old) => {
                if !old.is_empty() && upgrade != *old {
                    errs.push(invalid(
                        &path.child("upgradeStrategy").child("upgradeType"),
                        name,
                        format!("container {name} upgradeType is immutable"),
                    ));
                }
            }
            None => errs.push(invalid(
                &path.child("name"),
                name,
                format!("container {name} is not found"),
            )),
        }
    }
    errs
}

/// A volume with the core/v1 volume defaults applied.
fn defaulted_volume(volume: &Value) -> Value {
    let mut m = Mutator::new(json!([volume]));
    default_volumes(&mut m, &[]);
    m.doc.as_array_mut().and_then(|a| a.pop()).unwrap_or(Value::Null)
}

fn validate_conflicts(obj: &Value, others: &[Value]) -> ErrorList {
    let sp = Path::new("spec");
    let mut errs = ErrorList::new();
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let (canary, base) = is_canary(obj);
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let ns_overlap = |other: &Value| match (
        present(spec, "namespaceSelector"),
        other.pointer("/spec/namespaceSelector").filter(|v| !v.is_null()),
    ) {
        (Some(a), Some(b)) => meta::selectors_overlap(Some(a), Some(b)),
        _ => true,
    };
    let mut init_in_others = std::collections::BTreeMap::new();
    let mut containers_in_others = std::collections::BTreeMap::new();
    let mut volumes_in_others: std::collections::BTreeMap<String, &Value> = Default::default();
    let mut annotations_in_others = std::collections::BTreeMap::new();
    for other in others {
        let other_name = other
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        if (canary && base == other_name) || other_name == name {
            continue;
        }
        let ospec = other.get("spec").unwrap_or(&Value::Null);
        if !(ns_overlap(other)
            && meta::selectors_overlap(present(spec, "selector"), present(ospec, "selector")))
        {
            continue;
        }
        for c in items(ospec, "initContainers") {
            init_in_others.insert(str_at(c, "name").to_string(), other_name.to_string());
        }
        for c in items(ospec, "containers") {
            containers_in_others.insert(str_at(c, "name").to_string(), other_name.to_string());
        }
        for v in items(ospec, "volumes") {
            volumes_in_others.insert(str_at(v, "name").to_string(), other);
        }
        for patch in items(ospec, "patchPodMetadata") {
            let policy = str_at(patch, "patchPolicy");
            if policy == "Retain" {
                continue;
            }
            for key in patch
                .get("annotations")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|a| a.keys())
            {
                annotations_in_others.insert(key.clone(), (other_name.to_string(), policy.to_string()));
            }
        }
    }
    for (list, seen) in [
        ("initContainers", &init_in_others),
        ("containers", &containers_in_others),
    ] {
        for c in items(spec, list) {
            let cname = str_at(c, "name");
            if let Some(other) = seen.get(cname) {
                errs.push(invalid(
                    &sp.child("containers"),
                    cname,
                    format!("container {cname} already exist in {other}"),
                ));
            }
        }
    }
    for v in items(spec, "volumes") {
        let vname = str_at(v, "name");
        if let Some(other) = volumes_in_others.get(vname) {
            // Both sides as defaulting leaves them: a stored SidecarSet may never have been defaulted.
            let same = items(other.get("spec").unwrap_or(&Value::Null), "volumes")
                .iter()
                .find(|ov| str_at(ov, "name") == vname)
                .is_some_and(|ov| defaulted_volume(ov) == defaulted_volume(v));
            if !same {
                let other_name = other
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                errs.push(invalid(
                    &sp.child("volumes"),
                    vname,
                    format!("volume {vname} is in conflict with sidecarset {other_name}"),
                ));
            }
        }
    }
    for patch in items(spec, "patchPodMetadata") {
        let policy = str_at(patch, "patchPolicy");
        if policy == "Retain" {
            continue;
        }
        for key in patch
            .get("annotations")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|a| a.keys())
        {
            if let Some((other, other_policy)) = annotations_in_others.get(key)
                && (policy == "Overwrite" || other_policy == "Overwrite")
            {
                errs.push(invalid(
                    &sp.child("patchPodMetadata"),
                    key.as_str(),
                    format!("annotation {key} is in conflict with sidecarset {other}"),
                ));
            }
        }
    }
    errs
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

    #[test]
    fn openkruise_mutating_test_vector() {
        // pkg/webhook/sidecarset/mutating/sidecarset_mutating_test.go
        let mut m = Mutator::new(
            json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
            "metadata": {"name": "sidecarset-test", "resourceVersion": "123"},
            "spec": {"containers": [{"name": "dns-f", "image": "dns:1.0"}],
                "patchPodMetadata": [{"annotations": {"key1": "value1"}}],
                "injectionStrategy": {"revision": {"customVersion": "1"}}}}),
        );
        apply_defaults(&mut m);
        let a = &m.doc["metadata"]["annotations"];
        assert_eq!(
            a[HASH_ANNOTATION],
            "6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684"
        );
        assert_eq!(
            a[HASH_WITHOUT_IMAGE_ANNOTATION],
            "82684vwf9d4cb4wz4vffx4ddfbb47ww4z4wwxdbwb8w2zbb7zvf4524cdd49bv94"
        );
        assert_eq!(m.doc["spec"]["injectionStrategy"]["revision"]["policy"], "Always");
        assert_eq!(m.doc["spec"]["patchPodMetadata"][0]["patchPolicy"], "Retain");
    }
}
