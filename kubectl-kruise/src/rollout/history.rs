//! `rollout history`: the ControllerRevisions a workload owns, as kubectl prints them, and the pod
//! template of one revision in kubectl's describe format.

use k8s_openapi::api::apps::v1::ControllerRevision;
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::Value;

use crate::{Error, client::Session, kinds::Target};

/// kubectl's change-cause annotation.
pub const CHANGE_CAUSE: &str = "kubernetes.io/change-cause";

/// The workload and its revisions, oldest first.
pub async fn revisions(
    session: &Session,
    target: &Target,
) -> Result<(DynamicObject, Vec<ControllerRevision>), Error> {
    let object = session.api(target.ty.resource()?).get(&target.name).await?;
    let api: Api<ControllerRevision> = Api::namespaced(session.client.clone(), &session.namespace);
    let list = api.list(&ListParams::default()).await?;
    Ok((object.clone(), owned_by(&object, list.items)))
}

/// The revisions controlled by `object`, sorted by revision number.
pub fn owned_by(object: &DynamicObject, all: Vec<ControllerRevision>) -> Vec<ControllerRevision> {
    let uid = object.metadata.uid.as_deref();
    let mut owned: Vec<_> = all
        .into_iter()
        .filter(|r| {
            r.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.controller == Some(true) && Some(o.uid.as_str()) == uid)
        })
        .collect();
    owned.sort_by_key(number);
    owned
}

/// A revision's number (0 when unset).
pub fn number(revision: &ControllerRevision) -> i64 {
    revision.revision.unwrap_or(0)
}

/// The pod template a revision restores (`data.spec.template` without the `$patch` marker).
pub fn template(revision: &ControllerRevision) -> Result<Value, Error> {
    let mut template = revision
        .data
        .0
        .pointer("/spec/template")
        .cloned()
        .ok_or_else(|| {
            Error::Failed(format!(
                "unable to parse history {}",
                revision.metadata.name.as_deref().unwrap_or_default()
            ))
        })?;
    if let Some(object) = template.as_object_mut() {
        object.remove("$patch");
    }
    Ok(template)
}

/// The text kubectl prints after the `<kind>/<name>` head: the overview, or one revision's template.
pub fn render(revisions: &[ControllerRevision], revision: i64) -> Result<String, Error> {
    if revisions.is_empty() {
        return Ok("No rollout history found.".to_string());
    }
    if revision > 0 {
        let found = revisions
            .iter()
            .find(|r| number(r) == revision)
            .ok_or_else(|| Error::Failed("unable to find the specified revision".to_string()))?;
        return Ok(describe_template(&template(found)?));
    }
    let mut rows = vec![("REVISION".to_string(), "CHANGE-CAUSE".to_string())];
    for r in revisions {
        let cause = r
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(CHANGE_CAUSE))
            .filter(|c| !c.is_empty())
            .cloned()
            .unwrap_or_else(|| "<none>".to_string());
        rows.push((number(r).to_string(), cause));
    }
    let width = rows.iter().map(|(r, _)| r.len()).max().unwrap_or(0) + 2;
    Ok(rows.iter().map(|(r, c)| format!("{r:<width$}{c}\n")).collect())
}

fn map_lines(out: &mut String, title: &str, map: Option<&Value>) {
    let entries: Vec<String> = map
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    if entries.is_empty() {
        out.push_str(&format!("  {title}:\t<none>\n"));
    } else {
        for (i, entry) in entries.iter().enumerate() {
            let head = if i == 0 {
                format!("  {title}:")
            } else {
                " ".repeat(title.len() + 3)
            };
            out.push_str(&format!("{head}\t{entry}\n"));
        }
    }
}

/// A pod template in kubectl's describe layout (labels, annotations, containers with image, ports,
/// command, environment, resources and mounts; volumes).
pub fn describe_template(template: &Value) -> String {
    let mut out = String::from("Pod Template:\n");
    map_lines(&mut out, "Labels", template.pointer("/metadata/labels"));
    map_lines(&mut out, "Annotations", template.pointer("/metadata/annotations"));
    let spec = template.get("spec");
    for (title, key) in [
        ("Init Containers", "initContainers"),
        ("Containers", "containers"),
    ] {
        let list = spec.and_then(|s| s.get(key)).and_then(Value::as_array);
        let Some(list) = list.filter(|l| !l.is_empty()) else {
            if key == "containers" {
                out.push_str("  Containers: <none>\n");
            }
            continue;
        };
        out.push_str(&format!("  {title}:\n"));
        for c in list {
            let text = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("<none>").to_string();
            out.push_str(&format!("   {}:\n    Image:\t{}\n", text("name"), text("image")));
            let ports: Vec<String> = c
                .get("ports")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|p| {
                    format!(
                        "{}/{}",
                        p.get("containerPort").and_then(Value::as_i64).unwrap_or(0),
                        p.get("protocol").and_then(Value::as_str).unwrap_or("TCP")
                    )
                })
                .collect();
            let ports = if ports.is_empty() {
                "<none>".to_string()
            } else {
                ports.join(", ")
            };
            out.push_str(&format!("    Port:\t{ports}\n"));
            for (label, key) in [("Command", "command"), ("Args", "args")] {
                if let Some(items) = c.get(key).and_then(Value::as_array) {
                    out.push_str(&format!("    {label}:\n"));
                    for item in items {
                        out.push_str(&format!("      {}\n", item.as_str().unwrap_or_default()));
                    }
                }
            }
            for (label, key) in [("Limits", "limits"), ("Requests", "requests")] {
                if let Some(m) = c.pointer(&format!("/resources/{key}")).and_then(Value::as_object) {
                    out.push_str(&format!("    {label}:\n"));
                    for (k, v) in m {
                        out.push_str(&format!("      {k}:\t{}\n", v.as_str().unwrap_or_default()));
                    }
                }
            }
            let env: Vec<String> = c
                .get("env")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|e| {
                    let name = e.get("name").and_then(Value::as_str).unwrap_or_default();
                    match e.get("value").and_then(Value::as_str) {
                        Some(v) => format!("      {name}:\t{v}"),
                        None => format!("      {name}:\t(from a source)"),
                    }
                })
                .collect();
            if env.is_empty() {
                out.push_str("    Environment:\t<none>\n");
            } else {
                out.push_str(&format!("    Environment:\n{}\n", env.join("\n")));
            }
            let mounts: Vec<String> = c
                .get("volumeMounts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|m| {
                    format!(
                        "      {} from {}",
                        m.get("mountPath").and_then(Value::as_str).unwrap_or_default(),
                        m.get("name").and_then(Value::as_str).unwrap_or_default()
                    )
                })
                .collect();
            if mounts.is_empty() {
                out.push_str("    Mounts:\t<none>\n");
            } else {
                out.push_str(&format!("    Mounts:\n{}\n", mounts.join("\n")));
            }
        }
    }
    let volumes: Vec<&str> = spec
        .and_then(|s| s.get("volumes"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .collect();
    if volumes.is_empty() {
        out.push_str("  Volumes:\t<none>\n");
    } else {
        out.push_str("  Volumes:\n");
        for v in volumes {
            out.push_str(&format!("   {v}\n"));
        }
    }
    align(&out)
}

/// Aligns `label:\tvalue` lines as kubectl's describe output does (Go's tabwriter, padding 2): runs of
/// consecutive lines with a tab share one column width.
fn align(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].contains('\t') {
            out.push_str(lines[i]);
            out.push('\n');
            i += 1;
            continue;
        }
        let end = (i..lines.len())
            .find(|&j| !lines[j].contains('\t'))
            .unwrap_or(lines.len());
        let width = lines[i..end]
            .iter()
            .filter_map(|l| l.split_once('\t'))
            .map(|(cell, _)| cell.chars().count())
            .max()
            .unwrap_or(0)
            + 2;
        for line in &lines[i..end] {
            let (cell, rest) = line.split_once('\t').unwrap_or((line, ""));
            out.push_str(&format!("{cell:<width$}{rest}\n"));
        }
        i = end;
    }
    out
}

/// `rollout history`: the head line and the rendering.
pub async fn run(session: &Session, target: &Target, revision: i64) -> Result<(), Error> {
    let (_, revisions) = revisions(session, target).await?;
    let text = render(&revisions, revision)?;
    if revision > 0 {
        println!("{} with revision #{revision}\n{text}", target.display());
    } else {
        println!("{} \n{text}", target.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn revision(name: &str, number: i64, cause: Option<&str>, image: &str) -> ControllerRevision {
        let mut annotations = serde_json::Map::new();
        if let Some(c) = cause {
            annotations.insert(CHANGE_CAUSE.into(), json!(c));
        }
        serde_json::from_value(json!({
            "metadata": {"name": name, "annotations": annotations,
                         "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                                              "name": "web", "uid": "u1", "controller": true}]},
            "revision": number,
            "data": {"spec": {"template": {"$patch": "replace", "metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "web", "image": image}]}}}},
        }))
        .unwrap()
    }

    #[test]
    fn the_overview_is_kubectls_table_sorted_by_revision() {
        let object: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "metadata": {"name": "web", "uid": "u1"}}))
        .unwrap();
        let mut other = revision("other-1", 1, None, "x");
        other.metadata.owner_references.as_mut().unwrap()[0].uid = "u2".into();
        let all = vec![
            revision("web-b", 12, Some("kubectl set image"), "nginx:1.28"),
            revision("web-a", 3, None, "nginx:1.27"),
            other,
        ];
        let owned = owned_by(&object, all);
        assert_eq!(
            render(&owned, 0).unwrap(),
            "REVISION  CHANGE-CAUSE\n3         <none>\n12        kubectl set image\n"
        );
        let one = render(&owned, 12).unwrap();
        assert!(
            one.starts_with("Pod Template:\n  Labels:       app=web\n  Annotations:  <none>\n"),
            "{one}"
        );
        assert!(
            one.contains("   web:\n    Image:        nginx:1.28\n    Port:         <none>\n"),
            "{one}"
        );
        assert!(
            matches!(render(&owned, 7), Err(Error::Failed(m)) if m == "unable to find the specified revision")
        );
        assert_eq!(render(&[], 0).unwrap(), "No rollout history found.");
    }
}
