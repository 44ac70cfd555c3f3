//! CRD checks: generated files are current, schemas are structural, sizes fit `kubectl apply`.
//!
//! Regenerate the files with `UPDATE_CRDS=1 cargo test -p kruise-api --test crds`.

use std::path::PathBuf;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kruise_api::crd::{crd_files, crds, crds_yaml};
use serde_json::Value;

fn crd_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../manifests/crds")
}

#[test]
fn manifest_files_match_generated_crds() {
    let dir = crd_dir();
    let update = std::env::var_os("UPDATE_CRDS").is_some_and(|v| !v.is_empty() && v != "0");
    if update {
        std::fs::create_dir_all(&dir).expect("create manifests/crds");
    }
    let mut stale = Vec::new();
    for (name, yaml) in crd_files() {
        let path = dir.join(&name);
        if update {
            std::fs::write(&path, &yaml).expect("write CRD file");
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(on_disk) if on_disk == yaml => {}
            Ok(_) => stale.push(format!("{name} differs")),
            Err(e) => stale.push(format!("{name}: {e}")),
        }
    }
    assert!(
        stale.is_empty(),
        "manifests/crds is out of date ({}); regenerate with `UPDATE_CRDS=1 cargo test -p kruise-api --test crds`",
        stale.join(", ")
    );
}

/// The CRD of a plural (the list grows as kinds are added; tests name the kind they check).
fn by_plural<'a>(all: &'a [CustomResourceDefinition], plural: &str) -> &'a CustomResourceDefinition {
    all.iter()
        .find(|c| c.spec.names.plural == plural)
        .unwrap_or_else(|| panic!("no CRD {plural}"))
}

#[test]
fn each_crd_is_small_enough_for_client_side_apply() {
    for (name, yaml) in crd_files() {
        // kubectl stores the whole object in an annotation limited to 256 KiB.
        assert!(yaml.len() < 128 * 1024, "{name} is {} bytes", yaml.len());
    }
}

#[test]
fn crds_have_both_versions_and_webhook_conversion() {
    let all = crds();
    let names: Vec<_> = all
        .iter()
        .map(|c| c.metadata.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(
        names,
        [
            "advancedcronjobs.apps.kruise.io",
            "broadcastjobs.apps.kruise.io",
            "clonesets.apps.kruise.io",
            "containerrecreaterequests.apps.kruise.io",
            "daemonsets.apps.kruise.io",
            "ephemeraljobs.apps.kruise.io",
            "imagelistpulljobs.apps.kruise.io",
            "imagepulljobs.apps.kruise.io",
            "nodeimages.apps.kruise.io",
            "nodepodprobes.apps.kruise.io",
            "persistentpodstates.apps.kruise.io",
            "podprobemarkers.apps.kruise.io",
            "podunavailablebudgets.policy.kruise.io",
            "resourcedistributions.apps.kruise.io",
            "sidecarsets.apps.kruise.io",
            "statefulsets.apps.kruise.io",
            "uniteddeployments.apps.kruise.io",
            "workloadspreads.apps.kruise.io"
        ]
    );
    // BroadcastJob, AdvancedCronJob, EphemeralJob, PodProbeMarker and NodePodProbe are served in v1alpha1 only, as OpenKruise first shipped them.
    let all: Vec<_> = all
        .into_iter()
        .filter(|c| {
            !matches!(
                c.spec.names.kind.as_str(),
                "BroadcastJob" | "AdvancedCronJob" | "EphemeralJob" | "PodProbeMarker" | "NodePodProbe"
            )
        })
        .collect();
    for crd in &all {
        let versions: Vec<_> = crd
            .spec
            .versions
            .iter()
            .map(|v| (v.name.as_str(), v.served, v.storage))
            .collect();
        assert_eq!(
            versions,
            [("v1alpha1", true, false), ("v1beta1", true, true)],
            "{names:?}"
        );
        let conv = crd.spec.conversion.as_ref().expect("conversion");
        assert_eq!(conv.strategy, "Webhook");
        let hook = conv.webhook.as_ref().expect("webhook");
        assert_eq!(hook.conversion_review_versions, ["v1"]);
        let svc = hook
            .client_config
            .as_ref()
            .and_then(|c| c.service.as_ref())
            .expect("service");
        assert_eq!(svc.namespace, "kruise-system");
        assert_eq!(svc.name, "kruise-webhook-service");
        assert_eq!(svc.path.as_deref(), Some("/convert"));
        assert_eq!(svc.port, Some(443));
    }
    for crd in &all {
        let cluster_scoped =
            ["sidecarsets", "resourcedistributions", "nodeimages"].contains(&crd.spec.names.plural.as_str());
        let scope = if cluster_scoped { "Cluster" } else { "Namespaced" };
        assert_eq!(crd.spec.scope, scope, "{:?}", crd.metadata.name);
    }
}

/// Index of the CRD with this plural in `all`.
#[test]
fn short_names_printer_columns_and_scale_match_openkruise() {
    let all = crds();
    let short = |p: &str| {
        by_plural(&all, p)
            .spec
            .names
            .short_names
            .clone()
            .unwrap_or_default()
    };
    assert_eq!(short("clonesets"), ["clone"]);
    assert_eq!(short("podunavailablebudgets"), ["pub"]);
    assert_eq!(short("resourcedistributions"), ["distributor"]);
    assert!(short("sidecarsets").is_empty());
    assert_eq!(short("statefulsets"), ["sts", "asts"]);
    assert_eq!(short("workloadspreads"), ["ws"]);
    // OpenKruise declares no short names for the image pre-pull kinds.
    for plural in ["nodeimages", "imagepulljobs", "imagelistpulljobs"] {
        assert!(short(plural).is_empty(), "{plural}");
    }
    assert_eq!(short("uniteddeployments"), ["ud"]);
    // OpenKruise declares neither a short name nor columns for PersistentPodState; ours are additions.
    assert_eq!(short("persistentpodstates"), ["pps"]);
    assert_eq!(short("containerrecreaterequests"), ["crr"]);
    let columns = |p: &str| -> Vec<String> {
        by_plural(&all, p).spec.versions[1]
            .additional_printer_columns
            .clone()
            .unwrap_or_default()
            .into_iter()
            .map(|c| format!("{}={}", c.name, c.json_path))
            .collect()
    };
    assert_eq!(
        columns("clonesets"),
        [
            "DESIRED=.spec.replicas",
            "UPDATED=.status.updatedReplicas",
            "UPDATED_READY=.status.updatedReadyReplicas",
            "UPDATED_AVAILABLE=.status.updatedAvailableReplicas",
            "READY=.status.readyReplicas",
            "TOTAL=.status.replicas",
            "AGE=.metadata.creationTimestamp",
            "CONTAINERS=.spec.template.spec.containers[*].name",
            "IMAGES=.spec.template.spec.containers[*].image",
            "SELECTOR=.status.labelSelector",
        ]
    );
    assert_eq!(
        columns("statefulsets"),
        [
            "DESIRED=.spec.replicas",
            "CURRENT=.status.replicas",
            "UPDATED=.status.updatedReplicas",
            "READY=.status.readyReplicas",
            "AGE=.metadata.creationTimestamp",
            "CONTAINERS=.spec.template.spec.containers[*].name",
            "IMAGES=.spec.template.spec.containers[*].image",
        ]
    );
    assert_eq!(
        columns("workloadspreads"),
        [
            "WorkloadName=.spec.targetRef.name",
            "WorkloadKind=.spec.targetRef.kind",
            "Adaptive=.spec.scheduleStrategy.type[?(@ == \"Adaptive\")]",
            "Age=.metadata.creationTimestamp",
        ]
    );
    assert_eq!(
        columns("resourcedistributions"),
        [
            "TOTAL=.status.desired",
            "SUCCEED=.status.succeeded",
            "FAILED=.status.failed"
        ]
    );
    assert_eq!(
        columns("persistentpodstates"),
        ["TARGET=.spec.targetRef.name", "AGE=.metadata.creationTimestamp"]
    );
    assert_eq!(
        columns("containerrecreaterequests"),
        [
            "PHASE=.status.phase",
            "POD=.spec.podName",
            "NODE=.metadata.labels.crr\\.apps\\.kruise\\.io/node-name",
            "AGE=.metadata.creationTimestamp"
        ]
    );
    for v in &by_plural(&all, "persistentpodstates").spec.versions {
        let sub = v.subresources.as_ref().expect("subresources");
        assert!(sub.status.is_some() && sub.scale.is_none(), "status only");
    }
    assert_eq!(short("daemonsets"), ["daemon", "ads"]);
    assert_eq!(
        columns("daemonsets"),
        [
            "DESIRED=.status.desiredNumberScheduled",
            "CURRENT=.status.currentNumberScheduled",
            "READY=.status.numberReady",
            "UP-TO-DATE=.status.updatedNumberScheduled",
            "AVAILABLE=.status.numberAvailable",
            "AGE=.metadata.creationTimestamp",
            "CONTAINERS=.spec.template.spec.containers[*].name",
            "IMAGES=.spec.template.spec.containers[*].image",
        ]
    );
    assert_eq!(
        columns("uniteddeployments"),
        [
            "DESIRED=.spec.replicas",
            "CURRENT=.status.replicas",
            "UPDATED=.status.updatedReplicas",
            "READY=.status.readyReplicas",
            "AGE=.metadata.creationTimestamp",
        ]
    );
    for v in &by_plural(&all, "daemonsets").spec.versions {
        let sub = v.subresources.as_ref().expect("subresources");
        assert!(
            sub.status.is_some() && sub.scale.is_none(),
            "status only, no scale"
        );
    }
    for v in by_plural(&all, "clonesets")
        .spec
        .versions
        .iter()
        .chain(&by_plural(&all, "statefulsets").spec.versions)
        .chain(&by_plural(&all, "uniteddeployments").spec.versions)
    {
        let scale = v
            .subresources
            .as_ref()
            .and_then(|s| s.scale.as_ref())
            .expect("scale subresource");
        assert_eq!(scale.spec_replicas_path, ".spec.replicas");
        assert_eq!(scale.status_replicas_path, ".status.replicas");
        assert_eq!(
            scale.label_selector_path.as_deref(),
            Some(".status.labelSelector")
        );
    }
    for crd in &all {
        for v in &crd.spec.versions {
            assert!(v.subresources.as_ref().and_then(|s| s.status.as_ref()).is_some());
        }
    }
}

/// Walks a schema node and records every violation of the structural-schema rules we rely on.
fn check_structural(node: &Value, path: &str, errors: &mut Vec<String>) {
    let Some(obj) = node.as_object() else {
        errors.push(format!("{path}: schema is not an object"));
        return;
    };
    for forbidden in ["$ref", "definitions", "$defs"] {
        if obj.contains_key(forbidden) {
            errors.push(format!("{path}: has {forbidden}"));
        }
    }
    let preserve = obj.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    let int_or_string = obj.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    if !obj.contains_key("type") && !preserve && !int_or_string {
        errors.push(format!("{path}: no type"));
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(branches) = obj.get(key).and_then(Value::as_array) {
            if !obj.contains_key("type") && !int_or_string {
                errors.push(format!("{path}: {key} without a type"));
            }
            for b in branches {
                // Branches may only restate value validations, never declare types/properties.
                if let Some(b) = b.as_object() {
                    for bad in [
                        "type",
                        "properties",
                        "items",
                        "additionalProperties",
                        "description",
                    ] {
                        if b.contains_key(bad) {
                            errors.push(format!("{path}: {key} branch declares {bad}"));
                        }
                    }
                }
            }
        }
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, child) in props {
            check_structural(child, &format!("{path}.{name}"), errors);
        }
    }
    if let Some(items) = obj.get("items") {
        check_structural(items, &format!("{path}[]"), errors);
    }
    if let Some(ap) = obj.get("additionalProperties")
        && ap.is_object()
    {
        check_structural(ap, &format!("{path}{{}}"), errors);
    }
}

#[test]
fn schemas_are_structural() {
    let mut errors = Vec::new();
    for crd in crds() {
        let name = crd.metadata.name.clone().unwrap_or_default();
        for v in &crd.spec.versions {
            let schema = v
                .schema
                .as_ref()
                .and_then(|s| s.open_api_v3_schema.as_ref())
                .expect("schema");
            let json = serde_json::to_value(schema).expect("schema to JSON");
            check_structural(&json, &format!("{name}/{}", v.name), &mut errors);
        }
    }
    assert!(
        errors.is_empty(),
        "non-structural schema nodes:\n{}",
        errors.join("\n")
    );
}

#[test]
fn embedded_pod_objects_are_schemaless() {
    let all = crds();
    let schema = |p: &str, ver: usize| {
        serde_json::to_value(
            by_plural(&all, p).spec.versions[ver]
                .schema
                .as_ref()
                .unwrap()
                .open_api_v3_schema
                .as_ref()
                .unwrap(),
        )
        .unwrap()
    };
    for ver in 0..2 {
        let cs = schema("clonesets", ver);
        let spec = &cs["properties"]["spec"]["properties"];
        assert_eq!(spec["template"]["type"], "object");
        assert_eq!(spec["template"]["x-kubernetes-preserve-unknown-fields"], true);
        assert!(spec["template"].get("properties").is_none());
        assert_eq!(
            spec["volumeClaimTemplates"]["items"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
        assert_eq!(
            cs["properties"]["spec"]["required"],
            serde_json::json!(["selector", "template"])
        );

        let scs = schema("sidecarsets", ver);
        let spec = &scs["properties"]["spec"]["properties"];
        assert_eq!(
            spec["volumes"]["items"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
        let container = &spec["containers"]["items"];
        assert_eq!(container["x-kubernetes-preserve-unknown-fields"], true);
        assert!(container["properties"].get("image").is_none());
        assert!(container["properties"].get("transferEnv").is_some());

        let sts = schema("statefulsets", ver);
        let spec = &sts["properties"]["spec"]["properties"];
        assert_eq!(spec["template"]["x-kubernetes-preserve-unknown-fields"], true);
        assert!(spec["template"].get("properties").is_none());
        assert_eq!(
            spec["volumeClaimTemplates"]["items"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
        assert_eq!(
            sts["properties"]["spec"]["required"],
            serde_json::json!(["selector", "template"])
        );
        assert_eq!(
            sts["properties"]["status"]["required"],
            serde_json::json!([
                "availableReplicas",
                "currentReplicas",
                "readyReplicas",
                "replicas",
                "updatedReplicas"
            ])
        );
        let beta_only = ["reserveOrdinals", "ordinals", "lifecycle", "scaleStrategy"];
        for field in beta_only {
            assert_eq!(spec.get(field).is_some(), ver == 1, "{field} in version {ver}");
        }
        if ver == 1 {
            assert_eq!(
                spec["reserveOrdinals"]["items"]["x-kubernetes-int-or-string"],
                true
            );
        }

        let ds = schema("daemonsets", ver);
        let spec = &ds["properties"]["spec"]["properties"];
        assert_eq!(spec["template"]["x-kubernetes-preserve-unknown-fields"], true);
        assert_eq!(
            ds["properties"]["spec"]["required"],
            serde_json::json!(["selector", "template"])
        );
        assert_eq!(
            ds["properties"]["status"]["required"],
            serde_json::json!([
                "currentNumberScheduled",
                "desiredNumberScheduled",
                "numberMisscheduled",
                "numberReady",
                "updatedNumberScheduled"
            ])
        );
        assert_eq!(spec.get("scaleStrategy").is_some(), ver == 1);
        let status = &ds["properties"]["status"]["properties"];
        assert_eq!(status.get("updateRevision").is_some(), ver == 1);
        assert_eq!(status.get("daemonSetHash").is_some(), ver == 0);

        let rd = schema("resourcedistributions", ver);
        let resource = &rd["properties"]["spec"]["properties"]["resource"];
        assert_eq!(resource["x-kubernetes-embedded-resource"], true);
        assert_eq!(resource["x-kubernetes-preserve-unknown-fields"], true);
        let targets = &rd["properties"]["spec"]["properties"]["targets"]["properties"];
        let selector = if ver == 0 {
            "namespaceLabelSelector"
        } else {
            "namespaceSelector"
        };
        assert!(targets.get(selector).is_some(), "{selector} in version {ver}");

        let ws = schema("workloadspreads", ver);
        let subset = &ws["properties"]["spec"]["properties"]["subsets"]["items"];
        assert_eq!(
            subset["properties"]["patch"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
    }
}

#[test]
fn yaml_stream_has_one_document_per_crd() {
    let yaml = crds_yaml();
    assert_eq!(
        yaml.matches("\n---\n").count() + usize::from(yaml.starts_with("---\n")),
        crds().len() - 1
    );
    assert_eq!(yaml, crds_yaml(), "rendering is deterministic");
    let docs: Vec<Value> = serde_saphyr::from_multiple(&yaml).expect("YAML parses back");
    assert_eq!(docs.len(), crds().len());
    for (doc, crd) in docs.iter().zip(crds()) {
        assert_eq!(doc, &serde_json::to_value(&crd).unwrap());
    }
}

#[test]
fn broadcastjob_and_advancedcronjob_match_openkruise() {
    let all = crds();
    let columns = |crd: &CustomResourceDefinition| -> Vec<String> {
        crd.spec.versions[0]
            .additional_printer_columns
            .clone()
            .unwrap_or_default()
            .into_iter()
            .map(|c| format!("{}={}:{}", c.name, c.json_path, c.type_))
            .collect()
    };
    let bcj = by_plural(&all, "broadcastjobs");
    let acj = by_plural(&all, "advancedcronjobs");
    for crd in [bcj, acj] {
        let versions: Vec<_> = crd
            .spec
            .versions
            .iter()
            .map(|v| (v.name.as_str(), v.served, v.storage))
            .collect();
        assert_eq!(versions, [("v1alpha1", true, true)]);
        assert!(crd.spec.conversion.is_none());
        assert_eq!(crd.spec.scope, "Namespaced");
        let v = &crd.spec.versions[0];
        assert!(v.subresources.as_ref().and_then(|s| s.status.as_ref()).is_some());
    }
    assert_eq!(
        bcj.spec.names.short_names.as_deref(),
        Some(&["bcj".to_string()][..])
    );
    assert_eq!(
        acj.spec.names.short_names.as_deref(),
        Some(&["acj".to_string()][..])
    );
    assert_eq!(
        columns(bcj),
        [
            "Desired=.status.desired:integer",
            "Active=.status.active:integer",
            "Succeeded=.status.succeeded:integer",
            "Failed=.status.failed:integer",
            "AGE=.metadata.creationTimestamp:date",
        ]
    );
    assert_eq!(
        columns(acj),
        [
            "Schedule=.spec.schedule:string",
            "Type=.status.type:string",
            "LastScheduleTime=.status.lastScheduleTime:date",
            "AGE=.metadata.creationTimestamp:date",
        ]
    );
    let schema = |crd: &CustomResourceDefinition| {
        serde_json::to_value(
            crd.spec.versions[0]
                .schema
                .as_ref()
                .unwrap()
                .open_api_v3_schema
                .as_ref()
                .unwrap(),
        )
        .unwrap()
    };
    let bcj = schema(bcj);
    let spec = &bcj["properties"]["spec"];
    assert_eq!(spec["required"], serde_json::json!(["template"]));
    assert_eq!(
        spec["properties"]["template"]["x-kubernetes-preserve-unknown-fields"],
        true
    );
    assert_eq!(
        spec["properties"]["parallelism"]["x-kubernetes-int-or-string"],
        true
    );
    let acj = schema(acj);
    let spec = &acj["properties"]["spec"];
    assert_eq!(spec["required"], serde_json::json!(["schedule", "template"]));
    // `null` is in the enum of every optional validated string (kube's `Option` schema).
    assert_eq!(
        spec["properties"]["concurrencyPolicy"]["enum"],
        serde_json::json!(["Allow", "Forbid", "Replace", null])
    );
    let template = &spec["properties"]["template"]["properties"];
    assert_eq!(
        template["jobTemplate"]["x-kubernetes-preserve-unknown-fields"],
        true
    );
    assert_eq!(
        template["broadcastJobTemplate"]["properties"]["spec"]["properties"]["template"]["x-kubernetes-preserve-unknown-fields"],
        true
    );
}

#[test]
fn image_pull_kinds_have_openkruise_columns_and_status() {
    let all = crds();
    for (plural, want) in [
        (
            "nodeimages",
            vec!["DESIRED", "PULLING", "SUCCEED", "FAILED", "AGE"],
        ),
        (
            "imagepulljobs",
            vec!["TOTAL", "ACTIVE", "SUCCEED", "FAILED", "AGE", "MESSAGE"],
        ),
        (
            "imagelistpulljobs",
            vec!["TOTAL", "SUCCEEDED", "COMPLETED", "AGE"],
        ),
    ] {
        for version in &by_plural(&all, plural).spec.versions {
            let names: Vec<String> = version
                .additional_printer_columns
                .clone()
                .unwrap_or_default()
                .into_iter()
                .map(|c| c.name)
                .collect();
            assert_eq!(names, want, "{plural} {}", version.name);
            let status = version.subresources.as_ref().and_then(|s| s.status.as_ref());
            assert!(
                status.is_some(),
                "{plural} {} has a status subresource",
                version.name
            );
        }
    }
}
