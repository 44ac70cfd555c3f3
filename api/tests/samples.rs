//! Every CloneSet, SidecarSet, WorkloadSpread, PodUnavailableBudget, Advanced StatefulSet and DaemonSet document under
//! `examples/` must decode into the typed struct of its version, convert to the other
//! version (and decode there), and survive the round trip back, exactly where OpenKruise's
//! conversion is lossless.

use std::path::{Path, PathBuf};

use kruise_api::{apps_v1alpha1, apps_v1beta1, convert_object, decode, policy_v1alpha1, policy_v1beta1};
use serde_json::Value;

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            yaml_files(&path, out);
        } else if matches!(path.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")) {
            out.push(path);
        }
    }
}

struct Doc {
    file: String,
    index: usize,
    value: Value,
}

impl Doc {
    fn label(&self) -> String {
        let name = self.value["metadata"]["name"].as_str().unwrap_or("?");
        format!(
            "{}#{} ({} {name})",
            self.file,
            self.index,
            self.value["kind"].as_str().unwrap_or("?")
        )
    }
    fn api_version(&self) -> &str {
        self.value["apiVersion"].as_str().unwrap_or_default()
    }
}

const KINDS: [(&str, &str); 6] = [
    ("apps.kruise.io", "CloneSet"),
    ("apps.kruise.io", "DaemonSet"),
    ("apps.kruise.io", "StatefulSet"),
    ("apps.kruise.io", "SidecarSet"),
    ("apps.kruise.io", "WorkloadSpread"),
    ("policy.kruise.io", "PodUnavailableBudget"),
];

fn sample_docs() -> Vec<Doc> {
    let root = examples_dir();
    let mut files = Vec::new();
    yaml_files(&root, &mut files);
    let mut docs = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("read sample");
        let file = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
        let values: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        for (index, value) in values.into_iter().enumerate() {
            let group = value["apiVersion"]
                .as_str()
                .and_then(|a| a.split_once('/'))
                .map(|(g, _)| g);
            let kind = value["kind"].as_str();
            if KINDS.iter().any(|(g, k)| Some(*g) == group && Some(*k) == kind) {
                docs.push(Doc {
                    file: file.clone(),
                    index,
                    value,
                });
            }
        }
    }
    docs
}

/// Decodes into the typed struct of the object's own version and re-encodes it.
fn typed_round_trip(value: &Value) -> Result<Value, String> {
    fn rt<T: serde::de::DeserializeOwned + serde::Serialize + PartialEq + std::fmt::Debug>(
        kind: &str,
        value: &Value,
    ) -> Result<Value, String> {
        let typed: T = decode(kind, value).map_err(|e| e.to_string())?;
        let json = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
        let again: T = decode(kind, &json).map_err(|e| format!("re-decoding: {e}"))?;
        if again != typed {
            return Err("typed value changes through serde".into());
        }
        Ok(json)
    }
    let kind = value["kind"].as_str().unwrap_or_default();
    let version = value["apiVersion"]
        .as_str()
        .and_then(|a| a.split_once('/'))
        .map_or("", |(_, v)| v);
    match (kind, version) {
        ("CloneSet", "v1alpha1") => rt::<apps_v1alpha1::CloneSet>(kind, value),
        ("CloneSet", "v1beta1") => rt::<apps_v1beta1::CloneSet>(kind, value),
        ("SidecarSet", "v1alpha1") => rt::<apps_v1alpha1::SidecarSet>(kind, value),
        ("SidecarSet", "v1beta1") => rt::<apps_v1beta1::SidecarSet>(kind, value),
        ("WorkloadSpread", "v1alpha1") => rt::<apps_v1alpha1::WorkloadSpread>(kind, value),
        ("WorkloadSpread", "v1beta1") => rt::<apps_v1beta1::WorkloadSpread>(kind, value),
        ("StatefulSet", "v1alpha1") => rt::<apps_v1alpha1::StatefulSet>(kind, value),
        ("StatefulSet", "v1beta1") => rt::<apps_v1beta1::StatefulSet>(kind, value),
        ("DaemonSet", "v1alpha1") => rt::<apps_v1alpha1::DaemonSet>(kind, value),
        ("DaemonSet", "v1beta1") => rt::<apps_v1beta1::DaemonSet>(kind, value),
        ("PodUnavailableBudget", "v1alpha1") => rt::<policy_v1alpha1::PodUnavailableBudget>(kind, value),
        ("PodUnavailableBudget", "v1beta1") => rt::<policy_v1beta1::PodUnavailableBudget>(kind, value),
        _ => Err(format!("unsupported {kind} {version}")),
    }
}

/// Paths present in `original` that the typed model dropped (values equal to Go zero values
/// are ignored: the typed encoding omits them like Go's `omitempty`).
fn dropped_fields(original: &Value, typed: &Value, path: &str, out: &mut Vec<String>) {
    match (original, typed) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                let child = format!("{path}.{k}");
                match b.get(k) {
                    Some(bv) => dropped_fields(v, bv, &child, out),
                    None if is_zero(v) => {}
                    None => out.push(child),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                dropped_fields(x, y, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// Fields kept verbatim from upstream samples although the API does not know them.
const KNOWN_UPSTREAM_TYPOS: [(&str, &str); 3] = [
    (
        "openkruise-samples/config-samples/apps_v1beta1_statefulset.yaml",
        ".spec.foo",
    ),
    (
        "openkruise-samples/config-samples/apps_v1alpha1_sidecarset.yaml",
        ".spec.containers[1].resourcesPolicy.targetContainerMode",
    ),
    (
        "openkruise-samples/config-samples/apps_v1alpha1_sidecarset.yaml",
        ".spec.containers[1].resourcesPolicy.resourceExpr",
    ),
];

/// Why a round trip of this document is expected to differ from the input, following
/// OpenKruise's one-way mappings; `None` means it must come back exactly.
fn expected_loss(doc: &Value) -> Option<&'static str> {
    let kind = doc["kind"].as_str()?;
    let alpha = doc["apiVersion"].as_str()?.ends_with("/v1alpha1");
    let spec = &doc["spec"];
    match (kind, alpha) {
        ("SidecarSet", true) if spec["namespace"].as_str().is_some_and(|s| !s.is_empty()) => {
            Some("spec.namespace becomes a namespaceSelector")
        }
        ("CloneSet", true) => {
            let strategy = &spec["updateStrategy"];
            match strategy["type"].as_str() {
                None => Some("unset updateStrategy.type becomes ReCreate"),
                Some("OnDelete") if strategy.as_object().is_some_and(|o| o.len() > 1) => {
                    Some("OnDelete drops the rolling-update fields")
                }
                _ => None,
            }
        }
        ("CloneSet", false) => {
            let strategy = &spec["updateStrategy"];
            let rolling = &strategy["rollingUpdate"];
            if strategy["type"].is_null()
                || (strategy["type"] == "RollingUpdate" && rolling["podUpdatePolicy"].is_null())
            {
                Some("RollingUpdate gains an explicit ReCreate podUpdatePolicy")
            } else if spec["scaleStrategy"]["excludePreparingDelete"] == true
                && doc["metadata"]["labels"]["apps.kruise.io/cloneset-scaling-exclude-preparing-delete"]
                    != "true"
            {
                Some("excludePreparingDelete has no v1alpha1 form")
            } else {
                None
            }
        }
        ("DaemonSet", true) if spec["updateStrategy"]["rollingUpdate"]["rollingUpdateType"] == "Surging" => {
            Some("Surging becomes Standard with surge")
        }
        ("DaemonSet", false)
            if spec["scaleStrategy"]["partitionedScaling"] == true
                && doc["metadata"]["annotations"]["daemonset.kruise.io/progressive-create-pod"] != "true" =>
        {
            Some("partitionedScaling leaves the progressive-creation annotation behind")
        }
        ("PodUnavailableBudget", false)
            if !spec["protectOperations"].is_null()
                || !spec["protectTotalReplicas"].is_null()
                || !spec["ignoredPodSelector"].is_null() =>
        {
            Some("v1beta1-only PUB fields become (or lose to) v1alpha1 annotations")
        }
        _ => None,
    }
}

#[test]
fn every_sample_decodes_converts_and_round_trips() {
    let docs = sample_docs();
    let mut failures = Vec::new();
    let mut lossy = Vec::new();
    let mut seen = [0usize; 2];
    for doc in &docs {
        let label = doc.label();
        let mine = doc.file.starts_with("openkruise-samples");
        let mut has_unknown_fields = false;
        match typed_round_trip(&doc.value) {
            Err(e) => {
                failures.push(format!("{label}: does not decode: {e}"));
                continue;
            }
            Ok(typed) => {
                let mut dropped = Vec::new();
                dropped_fields(&doc.value, &typed, "", &mut dropped);
                dropped.retain(|p| !KNOWN_UPSTREAM_TYPOS.contains(&(doc.file.as_str(), p.as_str())));
                if !dropped.is_empty() {
                    has_unknown_fields = true;
                    let msg = format!(
                        "{label}: fields unknown to {}: {}",
                        doc.api_version(),
                        dropped.join(", ")
                    );
                    if mine {
                        failures.push(msg);
                    } else {
                        // Not this crate's file: report, do not fail.
                        eprintln!("warning: {msg}");
                    }
                }
            }
        }
        let (group, version) = doc.api_version().split_once('/').expect("group/version");
        let other = if version == "v1alpha1" {
            "v1beta1"
        } else {
            "v1alpha1"
        };
        seen[usize::from(version == "v1beta1")] += 1;
        let converted = match convert_object(&doc.value, &format!("{group}/{other}")) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{label}: conversion to {other} failed: {e}"));
                continue;
            }
        };
        if let Err(e) = typed_round_trip(&converted) {
            failures.push(format!("{label}: converted {other} form does not decode: {e}"));
            continue;
        }
        let back = match convert_object(&converted, doc.api_version()) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{label}: conversion back failed: {e}"));
                continue;
            }
        };
        if back != doc.value {
            // Conversion, like OpenKruise's typed one, does not carry fields the version lacks.
            let unknown = has_unknown_fields.then_some("fields unknown to its version are not carried over");
            match expected_loss(&doc.value).or(unknown) {
                Some(reason) => lossy.push(format!("{label}: {reason}")),
                None => failures.push(format!(
                    "{label}: round trip differs\n  before: {}\n  after:  {}",
                    doc.value, back
                )),
            }
        }
        // Whatever was lost, a second trip must not lose more.
        match convert_object(&back, &format!("{group}/{other}")) {
            Ok(again) if again == converted => {}
            Ok(again) => failures.push(format!(
                "{label}: second trip changes the {other} form\n  first:  {converted}\n  second: {again}"
            )),
            Err(e) => failures.push(format!("{label}: second trip failed: {e}")),
        }
        // The typed helpers accept either version.
        let helper = match doc.value["kind"].as_str() {
            Some("CloneSet") => kruise_api::cloneset_to_v1beta1(&doc.value).map(|_| ()),
            Some("SidecarSet") => kruise_api::sidecarset_to_v1beta1(&doc.value).map(|_| ()),
            Some("WorkloadSpread") => kruise_api::workloadspread_to_v1beta1(&doc.value).map(|_| ()),
            Some("StatefulSet") => kruise_api::statefulset_to_v1beta1(&doc.value).map(|_| ()),
            Some("DaemonSet") => kruise_api::daemonset_to_v1beta1(&doc.value).map(|_| ()),
            _ => kruise_api::podunavailablebudget_to_v1beta1(&doc.value).map(|_| ()),
        };
        if let Err(e) = helper {
            failures.push(format!("{label}: typed v1beta1 helper failed: {e}"));
        }
    }
    for l in &lossy {
        eprintln!("expected one-way mapping: {l}");
    }
    assert!(
        failures.is_empty(),
        "{} sample failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        seen[0] >= 10 && seen[1] >= 5,
        "too few samples found: {seen:?} (v1alpha1, v1beta1)"
    );
}

#[test]
fn samples_cover_the_documented_features() {
    let docs = sample_docs();
    let has = |pred: &dyn Fn(&Value) -> bool| docs.iter().any(|d| pred(&d.value));
    let alpha = |v: &Value, kind: &str| {
        v["kind"] == kind && v["apiVersion"].as_str().is_some_and(|a| a.ends_with("v1alpha1"))
    };
    assert!(has(&|v| alpha(v, "CloneSet")
        && v["spec"]["updateStrategy"]["type"] == "InPlaceIfPossible"
        && !v["spec"]["updateStrategy"]["partition"].is_null()
        && !v["spec"]["updateStrategy"]["maxUnavailable"].is_null()
        && !v["spec"]["updateStrategy"]["maxSurge"].is_null()));
    let containers = |v: &Value| v["spec"]["containers"].as_array().cloned().unwrap_or_default();
    assert!(has(&|v| alpha(v, "SidecarSet")
        && containers(v).iter().any(|c| !c["transferEnv"].is_null())
        && containers(v).iter().any(|c| !c["shareVolumePolicy"].is_null())));
    assert!(has(&|v| alpha(v, "SidecarSet")
        && containers(v)
            .iter()
            .any(|c| c["upgradeStrategy"]["upgradeType"] == "HotUpgrade")));
    assert!(has(
        &|v| alpha(v, "PodUnavailableBudget") && !v["spec"]["targetRef"].is_null()
    ));
    assert!(has(
        &|v| alpha(v, "PodUnavailableBudget") && !v["spec"]["selector"].is_null()
    ));
    let subsets = |v: &Value| v["spec"]["subsets"].as_array().cloned().unwrap_or_default();
    assert!(has(&|v| alpha(v, "WorkloadSpread")
        && subsets(v)
            .iter()
            .any(|s| !s["requiredNodeSelectorTerm"].is_null())
        && subsets(v).iter().any(|s| !s["tolerations"].is_null())
        && subsets(v).iter().any(|s| !s["patch"].is_null())
        && subsets(v).iter().any(|s| s["maxReplicas"].is_i64())));
    assert!(has(
        &|v| alpha(v, "WorkloadSpread") && subsets(v).iter().any(|s| s["maxReplicas"].is_string())
    ));
    let rolling = |v: &Value| v["spec"]["updateStrategy"]["rollingUpdate"].clone();
    assert!(has(&|v| alpha(v, "StatefulSet")
        && rolling(v)["podUpdatePolicy"] == "InPlaceIfPossible"
        && !rolling(v)["partition"].is_null()));
    let beta = |v: &Value, kind: &str| {
        v["kind"] == kind && v["apiVersion"].as_str().is_some_and(|a| a.ends_with("v1beta1"))
    };
    assert!(has(&|v| beta(v, "StatefulSet")
        && v["spec"]["reserveOrdinals"]
            .as_array()
            .is_some_and(|r| r.iter().any(Value::is_string))
        && !v["spec"]["ordinals"].is_null()
        && !v["spec"]["scaleStrategy"]["maxUnavailable"].is_null()
        && !v["spec"]["persistentVolumeClaimRetentionPolicy"].is_null()
        && !v["status"]["volumeClaims"].is_null()));
}
