//! `scaledown cloneset/NAME --pods a,b`: the named pods go into `spec.scaleStrategy.podsToDelete` and
//! `spec.replicas` drops by as many, in one write conditional on the spec read. Unlike
//! kruise-tools, a pod that is not the CloneSet's, or is named twice, is refused before anything is
//! written.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};

use crate::{
    Error,
    cli::{DryRun, ScaledownArgs},
    client::Session,
    kinds::{self, Kind},
    set::print_result,
};

/// The CloneSet (v1alpha1 JSON) with `pods` deleted; `owned(pod)` says whether a pod belongs to it.
pub fn scale_down(cloneset: &Value, pods: &[String], owned: impl Fn(&str) -> bool) -> Result<Value, Error> {
    if pods.is_empty() {
        return Err(Error::Usage("must specify one pod name".to_string()));
    }
    let mut seen = std::collections::BTreeSet::new();
    for pod in pods {
        if !seen.insert(pod) {
            return Err(Error::Usage(format!("pod {pod} is named twice")));
        }
        if !owned(pod) {
            return Err(Error::Failed(format!("pod {pod} is not a pod of this CloneSet")));
        }
    }
    let mut after = cloneset.clone();
    let replicas = after
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let listed: Vec<Value> = after
        .pointer("/spec/scaleStrategy/podsToDelete")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let fresh: Vec<&String> = pods.iter().filter(|p| !listed.contains(&json!(p))).collect();
    let mut list = listed.clone();
    list.extend(fresh.iter().map(|p| json!(p)));
    let spec = after
        .get_mut("spec")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| Error::Failed("the CloneSet has no spec".to_string()))?;
    spec.insert("replicas".into(), json!((replicas - fresh.len() as i64).max(0)));
    let strategy = spec.entry("scaleStrategy").or_insert_with(|| json!({}));
    if let Some(s) = strategy.as_object_mut() {
        s.insert("podsToDelete".into(), Value::Array(list));
    }
    Ok(after)
}

/// `scaledown`.
pub async fn run(session: &Session, args: ScaledownArgs) -> Result<(), Error> {
    let target = kinds::targets(std::slice::from_ref(&args.resource))?
        .pop()
        .ok_or_else(|| Error::Usage("required resource not specified".to_string()))?;
    if target.ty.kind != Kind::CloneSet {
        return Err(Error::Usage(
            "currently only supported CloneSet selective pods deletion".to_string(),
        ));
    }
    let api = session.api(target.ty.resource()?);
    let before = serde_json::to_value(api.get(&target.name).await?)?;
    let uid = before
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let pods: Api<Pod> = Api::namespaced(session.client.clone(), &session.namespace);
    let mut owners = std::collections::BTreeMap::new();
    for name in &args.pods {
        if let Some(pod) = pods.get_opt(name).await? {
            let owned = pod
                .metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.uid == uid);
            owners.insert(name.clone(), owned);
        }
    }
    let after = scale_down(&before, &args.pods, |p| owners.get(p).copied().unwrap_or(false))?;
    let written = if args.output.dry_run == DryRun::Client {
        after
    } else {
        let patch: json_patch::Patch = serde_json::from_value(json!([
            {"op": "test", "path": "/spec", "value": before["spec"]},
            {"op": "replace", "path": "/spec", "value": after["spec"]},
        ]))?;
        let params = PatchParams {
            dry_run: args.output.dry_run == DryRun::Server,
            ..PatchParams::default()
        };
        serde_json::to_value(
            api.patch(&target.name, &params, &Patch::<()>::Json(patch))
                .await?,
        )?
    };
    println!(
        "# {} delete pods [{}] successfully",
        target.name,
        args.pods.join(" ")
    );
    print_result(&target, &written, "scaled down", &args.output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_join_the_deletion_list_and_replicas_drop() {
        let cs = json!({"spec": {"replicas": 5, "scaleStrategy": {"podsToDelete": ["web-a"]}}});
        let after = scale_down(&cs, &["web-b".into(), "web-c".into()], |_| true).unwrap();
        assert_eq!(after["spec"]["replicas"], 3);
        assert_eq!(
            after["spec"]["scaleStrategy"]["podsToDelete"],
            json!(["web-a", "web-b", "web-c"])
        );
    }

    #[test]
    fn foreign_duplicate_and_missing_pods_are_refused() {
        let cs = json!({"spec": {"replicas": 2}});
        assert_eq!(
            scale_down(&cs, &[], |_| true).unwrap_err().to_string(),
            "must specify one pod name"
        );
        assert!(scale_down(&cs, &["a".into(), "a".into()], |_| true).is_err());
        assert_eq!(
            scale_down(&cs, &["x".into()], |_| false).unwrap_err().to_string(),
            "pod x is not a pod of this CloneSet"
        );
    }
}
