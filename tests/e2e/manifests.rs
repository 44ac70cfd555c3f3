//! The install manifests stay in step with the code, and the dependency tree has one crypto provider.

use crate::common;

#[test]
fn webhook_configurations_match_the_registrations() {
    let generated = kruise_rs::registrations::webhooks_yaml("kruise-system", "kruise-webhook-service");
    let path = common::repo().join("manifests/webhooks.yaml");
    if std::env::var_os("UPDATE_MANIFESTS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "manifests/webhooks.yaml is out of date: run `UPDATE_MANIFESTS=1 cargo test --test e2e manifests::`"
    );
}

#[test]
fn the_termination_grace_period_covers_the_pre_stop_pause_and_the_drain() {
    let text = std::fs::read_to_string(common::repo().join("manifests/deployment.yaml")).unwrap();
    let deployment: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let pod = &deployment["spec"]["template"]["spec"];
    let grace_period = pod["terminationGracePeriodSeconds"].as_u64().unwrap();
    let pre_stop = pod["containers"][0]["lifecycle"]["preStop"]["sleep"]["seconds"]
        .as_u64()
        .unwrap();
    let args = pod["containers"][0]["args"].as_array().unwrap();
    assert!(
        !args
            .iter()
            .any(|a| a.as_str().unwrap().starts_with("--shutdown-grace")),
        "the default drain is assumed"
    );
    let drain = kruise_rs::cli::ServingLimits::default().shutdown_grace.as_secs();
    // A few seconds to spare for the process to exit; no more, or a stuck pod lingers.
    assert_eq!(
        grace_period,
        pre_stop + drain + 3,
        "terminationGracePeriodSeconds"
    );
}

#[test]
fn webhook_configurations_follow_the_contract() {
    let validating =
        kruise_rs::registrations::validating_configuration("kruise-system", "kruise-webhook-service");
    assert_eq!(
        validating.metadata.name.as_deref(),
        Some("kruise-validating-webhook-configuration")
    );
    for webhook in validating.webhooks.unwrap() {
        assert_eq!(webhook.timeout_seconds, Some(10), "{}", webhook.name);
        assert_eq!(webhook.admission_review_versions, ["v1"]);
        let selector = webhook.namespace_selector.unwrap();
        let expression = &selector.match_expressions.unwrap()[0];
        assert_eq!(expression.key, "kubernetes.io/metadata.name");
        assert_eq!(expression.operator, "NotIn");
        assert_eq!(
            expression.values.as_deref().unwrap(),
            ["kube-system", "kruise-system"]
        );
        let service = webhook.client_config.service.unwrap();
        assert_eq!(
            (service.name.as_str(), service.port),
            ("kruise-webhook-service", Some(443))
        );
        assert!(kruise_webhooks::Webhook::from_path(service.path.as_deref().unwrap()).is_some());
    }
}

#[test]
fn only_the_ring_crypto_provider_is_in_the_tree() {
    let lock = std::fs::read_to_string(common::repo().join("Cargo.lock")).unwrap();
    for banned in ["aws-lc-rs", "aws-lc-sys", "openssl-sys"] {
        assert!(
            !lock.contains(&format!("name = \"{banned}\"")),
            "{banned} is in Cargo.lock"
        );
    }
    assert!(lock.contains("name = \"ring\""));
}

#[test]
fn kruise_crds_prints_the_files_of_manifests_crds() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kruise"))
        .arg("crds")
        .output()
        .unwrap();
    assert!(out.status.success());
    let printed: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(&String::from_utf8(out.stdout).unwrap()).unwrap();
    let printed: Vec<_> = printed.into_iter().filter(|d| !d.is_null()).collect();
    let mut files: Vec<_> = std::fs::read_dir(common::repo().join("manifests/crds"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(printed.len(), files.len());
    assert_eq!(printed.len(), kruise_api::crds().len());
    for (crd, file) in printed.iter().zip(&files) {
        let on_disk: serde_json::Value =
            serde_saphyr::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        assert_eq!(crd, &on_disk, "{}", file.display());
        let versions: Vec<_> = crd["spec"]["versions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| &v["name"])
            .collect();
        // BroadcastJob, AdvancedCronJob, EphemeralJob, PodProbeMarker and NodePodProbe are served in
        // v1alpha1 only.
        if matches!(
            crd["spec"]["names"]["kind"].as_str(),
            Some("BroadcastJob" | "AdvancedCronJob" | "EphemeralJob" | "PodProbeMarker" | "NodePodProbe")
        ) {
            assert_eq!(versions, ["v1alpha1"]);
        } else {
            assert_eq!(versions, ["v1alpha1", "v1beta1"]);
        }
    }
}

#[test]
fn the_kustomize_base_lists_every_manifest_and_the_namespace_sorts_first() {
    let dir = common::repo().join("manifests");
    let text = std::fs::read_to_string(dir.join("Kustomization")).unwrap();
    let base: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let mut listed: Vec<String> = base["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_owned())
        .collect();
    let mut on_disk = vec![];
    for (sub, prefix) in [(dir.clone(), ""), (dir.join("crds"), "crds/")] {
        for entry in std::fs::read_dir(sub).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".yaml") {
                on_disk.push(format!("{prefix}{name}"));
            }
        }
    }
    // `kubectl apply -f manifests/` applies in name order: the namespace before what lives in it.
    on_disk.sort();
    assert_eq!(on_disk[0], "00-namespace.yaml");
    listed.sort();
    assert_eq!(
        listed, on_disk,
        "manifests/Kustomization must list every manifest"
    );
}
