//! Sidecar containers and init containers: inject and share-volume policies, transferEnv, resourcesPolicy,
//! Kubernetes' pod validation of a pod made of them; on UPDATE, no new container, no upgradeType change.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::items;
use super::present;
use super::resources_policy::{go_resources_policy, validate_resources_policy};
use crate::crd::field::{ErrorList, GoValue, Path, go_quote, invalid, required, str_at};
use crate::crd::meta::qualified_name;

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

pub(super) fn validate_containers(init: &[Value], containers: &[Value], volumes: &[Value]) -> ErrorList {
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
    errs.extend(crate::crd::podspec::validate_pod_spec(&fake, &root, true));
    errs
}

pub(super) fn validate_container_updates(spec: &Value, old: &Value) -> ErrorList {
    let path = Path::new("spec.containers");
    let mut errs = ErrorList::new();
    let old_strategies: BTreeMap<&str, &str> = items(old, "containers")
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
