//! `set image|env|resources|serviceaccount` on the pod template of a CloneSet or Advanced StatefulSet
//! (and `set image` on a SidecarSet's containers). Each edit is a pure function of the object; the
//! change is sent as a JSON patch conditional on the spec that was edited being unchanged.

use kube::api::{Patch, PatchParams};
use serde_json::{Map, Value, json};

use crate::{
    Error,
    cli::{DryRun, Output, OutputArgs, Set, SetArgs, SetEnvArgs, SetResourcesArgs},
    client::Session,
    kinds::{self, Kind, Target},
};

/// The container lists an edit may touch (init containers first): the pod template's, or a
/// SidecarSet's own.
fn container_lists(kind: Kind) -> Result<[&'static str; 2], Error> {
    match kind {
        Kind::CloneSet | Kind::AdvancedStatefulSet | Kind::AdvancedDaemonSet => Ok([
            "/spec/template/spec/initContainers",
            "/spec/template/spec/containers",
        ]),
        Kind::SidecarSet => Ok(["/spec/initContainers", "/spec/containers"]),
        _ => Err(Error::Usage(
            "only CloneSet, Advanced StatefulSet, Advanced DaemonSet and (for images) SidecarSet are handled here"
                .to_string(),
        )),
    }
}

/// Calls `edit` on every container `selector` picks (`*`, or comma separated names); returns how
/// many were picked.
fn for_each_container(
    object: &mut Value,
    kind: Kind,
    selector: &str,
    mut edit: impl FnMut(&mut Map<String, Value>) -> Result<(), Error>,
) -> Result<usize, Error> {
    let wanted: Vec<&str> = selector.split(',').map(str::trim).collect();
    let mut picked = 0;
    for path in container_lists(kind)? {
        let Some(list) = object.pointer_mut(path).and_then(Value::as_array_mut) else {
            continue;
        };
        for c in list.iter_mut().filter_map(Value::as_object_mut) {
            let name = c.get("name").and_then(Value::as_str).unwrap_or_default();
            if wanted.contains(&"*") || wanted.contains(&name) {
                picked += 1;
                edit(c)?;
            }
        }
    }
    Ok(picked)
}

/// `set image`: `CONTAINER=IMAGE` pairs (`*=IMAGE` for all).
pub fn set_image(object: &mut Value, kind: Kind, assignments: &[(String, String)]) -> Result<(), Error> {
    if kind == Kind::SidecarSet
        || matches!(
            kind,
            Kind::CloneSet | Kind::AdvancedStatefulSet | Kind::AdvancedDaemonSet
        )
    {
        for (container, image) in assignments {
            let picked = for_each_container(object, kind, container, |c| {
                c.insert("image".into(), json!(image));
                Ok(())
            })?;
            if picked == 0 {
                return Err(Error::Failed(format!(
                    "unable to find container named {container:?}"
                )));
            }
        }
        return Ok(());
    }
    container_lists(kind).map(|_| ())
}

/// `set env`: `KEY=VALUE` sets, `KEY-` removes, in the picked containers.
pub fn set_env(
    object: &mut Value,
    kind: Kind,
    selector: &str,
    pairs: &[String],
    overwrite: bool,
) -> Result<(), Error> {
    if kind == Kind::SidecarSet {
        return Err(Error::Usage("set env is not supported on SidecarSet".to_string()));
    }
    let mut sets = Vec::new();
    let mut removes = Vec::new();
    for pair in pairs {
        if let Some((k, v)) = pair.split_once('=') {
            if k.is_empty() {
                return Err(Error::Usage(format!("invalid environment variable {pair:?}")));
            }
            sets.push((k.to_string(), v.to_string()));
        } else if let Some(k) = pair.strip_suffix('-').filter(|k| !k.is_empty()) {
            removes.push(k.to_string());
        } else {
            return Err(Error::Usage(format!("{pair:?} is neither KEY=VALUE nor KEY-")));
        }
    }
    if sets.is_empty() && removes.is_empty() {
        return Err(Error::Usage(
            "at least one environment variable must be provided".to_string(),
        ));
    }
    let picked = for_each_container(object, kind, selector, |c| {
        let env = c.entry("env").or_insert_with(|| json!([]));
        let Some(list) = env.as_array_mut() else {
            return Ok(());
        };
        for (k, v) in &sets {
            match list
                .iter_mut()
                .find(|e| e.get("name").and_then(Value::as_str) == Some(k))
            {
                Some(existing) => {
                    if !overwrite {
                        let old = existing.get("value").and_then(Value::as_str).unwrap_or_default();
                        return Err(Error::Failed(format!(
                            "'{k}' already has a value ({old}), and --overwrite is false"
                        )));
                    }
                    *existing = json!({"name": k, "value": v});
                }
                None => list.push(json!({"name": k, "value": v})),
            }
        }
        list.retain(|e| {
            !removes
                .iter()
                .any(|r| e.get("name").and_then(Value::as_str) == Some(r))
        });
        if list.is_empty() {
            c.remove("env");
        }
        Ok(())
    })?;
    if picked == 0 {
        return Err(Error::Failed(format!(
            "unable to find container named {selector:?}"
        )));
    }
    Ok(())
}

/// `set env --list`: kubectl's listing.
pub fn list_env(object: &Value, target: &Target, kind: Kind, selector: &str) -> Result<String, Error> {
    let mut copy = object.clone();
    let mut out = String::new();
    for_each_container(&mut copy, kind, selector, |c| {
        let name = c.get("name").and_then(Value::as_str).unwrap_or_default();
        out.push_str(&format!(
            "# {}/{}, container {name}\n",
            target.ty.resource_string(),
            target.name
        ));
        for e in c.get("env").and_then(Value::as_array).into_iter().flatten() {
            let key = e.get("name").and_then(Value::as_str).unwrap_or_default();
            match e.get("value").and_then(Value::as_str) {
                Some(v) => out.push_str(&format!("{key}={v}\n")),
                None => out.push_str(&format!("# {key} from a source\n")),
            }
        }
        Ok(())
    })?;
    Ok(out)
}

fn quantities(text: &str) -> Result<Map<String, Value>, Error> {
    let mut map = Map::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item
            .split_once('=')
            .filter(|(k, v)| !k.is_empty() && !v.is_empty())
            .ok_or_else(|| Error::Usage(format!("invalid resource {item:?}: use NAME=QUANTITY")))?;
        kruise_core::quantity::Quantity::parse(v)
            .map_err(|e| Error::Usage(format!("invalid quantity {v:?} for {k}: {e}")))?;
        map.insert(k.to_string(), json!(v));
    }
    Ok(map)
}

/// `set resources`: `--limits` and `--requests` merged into the picked containers.
pub fn set_resources(
    object: &mut Value,
    kind: Kind,
    selector: &str,
    limits: &str,
    requests: &str,
) -> Result<(), Error> {
    if kind == Kind::SidecarSet {
        return Err(Error::Usage(
            "set resources is not supported on SidecarSet".to_string(),
        ));
    }
    let limits = quantities(limits)?;
    let requests = quantities(requests)?;
    if limits.is_empty() && requests.is_empty() {
        return Err(Error::Usage(
            "you must specify an update to requests or limits (in the form of --requests/--limits)"
                .to_string(),
        ));
    }
    let picked = for_each_container(object, kind, selector, |c| {
        let resources = c.entry("resources").or_insert_with(|| json!({}));
        for (key, values) in [("limits", &limits), ("requests", &requests)] {
            if values.is_empty() {
                continue;
            }
            if let Some(r) = resources.as_object_mut() {
                let entry = r.entry(key).or_insert_with(|| json!({}));
                if let Some(map) = entry.as_object_mut() {
                    map.extend(values.clone());
                }
            }
        }
        Ok(())
    })?;
    if picked == 0 {
        return Err(Error::Failed(format!(
            "unable to find container named {selector:?}"
        )));
    }
    Ok(())
}

/// `set serviceaccount`.
pub fn set_service_account(object: &mut Value, kind: Kind, account: &str) -> Result<(), Error> {
    if !matches!(
        kind,
        Kind::CloneSet | Kind::AdvancedStatefulSet | Kind::AdvancedDaemonSet
    ) {
        return Err(Error::Usage(
            "set serviceaccount needs a CloneSet, an Advanced StatefulSet or an Advanced DaemonSet"
                .to_string(),
        ));
    }
    let spec = object
        .pointer_mut("/spec/template/spec")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| Error::Failed("the object has no pod template".to_string()))?;
    spec.insert("serviceAccountName".into(), json!(account));
    Ok(())
}

/// Sends `after` as a JSON patch against `before` (conditional on its spec) unless a
/// client dry run; prints kubectl's line or the object.
pub async fn write(
    session: &Session,
    target: &Target,
    before: &Value,
    after: Value,
    what: &str,
    output: &OutputArgs,
) -> Result<(), Error> {
    let result = if output.dry_run == DryRun::Client {
        after
    } else {
        // Conditional on the spec that was edited (status writes in between do not matter).
        let mut ops = vec![json!({"op": "test", "path": "/spec", "value": before.get("spec")})];
        ops.extend(
            serde_json::to_value(json_patch::diff(before, &after))?
                .as_array()
                .cloned()
                .unwrap_or_default(),
        );
        let patch: json_patch::Patch = serde_json::from_value(Value::Array(ops))?;
        let params = PatchParams {
            dry_run: output.dry_run == DryRun::Server,
            ..PatchParams::default()
        };
        let written = session
            .api(target.ty.resource()?)
            .patch(&target.name, &params, &Patch::<()>::Json(patch))
            .await?;
        serde_json::to_value(written)?
    };
    print_result(target, &result, what, output)
}

/// kubectl's output of a changed object: `-o yaml|json|name`, else `<kind>/<name> <what>`.
pub fn print_result(target: &Target, object: &Value, what: &str, output: &OutputArgs) -> Result<(), Error> {
    let dry = match output.dry_run {
        DryRun::None => "",
        DryRun::Client => " (dry run)",
        DryRun::Server => " (server dry run)",
    };
    match output.output {
        Some(Output::Yaml) => print!(
            "{}",
            serde_saphyr::to_string(object).map_err(|e| Error::Failed(e.to_string()))?
        ),
        Some(Output::Json) => println!("{}", serde_json::to_string_pretty(object)?),
        Some(Output::Name) => println!("{}", target.display()),
        None => println!("{} {what}{dry}", target.display()),
    }
    Ok(())
}

/// Splits `TYPE/NAME… ASSIGNMENT…`: the objects come first, the assignments (with `=`, or `KEY-`)
/// after them.
fn split_args(
    args: &[String],
    is_assignment: impl Fn(&str) -> bool,
) -> Result<(Vec<Target>, Vec<String>), Error> {
    let first = args.iter().position(|a| is_assignment(a)).unwrap_or(args.len());
    let targets = kinds::targets(&args[..first])?;
    Ok((targets, args[first..].to_vec()))
}

/// `set …`.
pub async fn run(session: &Session, command: Set) -> Result<(), Error> {
    match command {
        Set::Image(SetArgs { args, output }) => {
            let (targets, pairs) = split_args(&args, |a| a.contains('='))?;
            let pairs: Vec<(String, String)> = pairs
                .iter()
                .map(|p| {
                    p.split_once('=')
                        .filter(|(c, i)| !c.is_empty() && !i.is_empty())
                        .map(|(c, i)| (c.to_string(), i.to_string()))
                        .ok_or_else(|| {
                            Error::Usage(format!("invalid image update {p:?}: use CONTAINER=IMAGE"))
                        })
                })
                .collect::<Result<_, _>>()?;
            if pairs.is_empty() {
                return Err(Error::Usage("at least one image update is required".to_string()));
            }
            edit_each(session, &targets, "image updated", &output, |o, k| {
                set_image(o, k, &pairs)
            })
            .await
        }
        Set::Env(a) => {
            let SetEnvArgs {
                args,
                containers,
                env,
                list,
                overwrite,
                output,
            } = a;
            let (targets, mut pairs) = split_args(&args, |a| a.contains('=') || a.ends_with('-'))?;
            pairs.extend(env);
            if list {
                for target in &targets {
                    let object =
                        serde_json::to_value(session.api(target.ty.resource()?).get(&target.name).await?)?;
                    print!("{}", list_env(&object, target, target.ty.kind, &containers)?);
                }
                return Ok(());
            }
            edit_each(session, &targets, "env updated", &output, |o, k| {
                set_env(o, k, &containers, &pairs, overwrite)
            })
            .await
        }
        Set::Resources(SetResourcesArgs {
            args,
            containers,
            limits,
            requests,
            output,
        }) => {
            let targets = kinds::targets(&args)?;
            edit_each(
                session,
                &targets,
                "resource requirements updated",
                &output,
                |o, k| set_resources(o, k, &containers, &limits, &requests),
            )
            .await
        }
        Set::ServiceAccount(SetArgs { args, output }) => {
            let Some((account, objects)) = args.split_last() else {
                return Err(Error::Usage("serviceaccount is required".to_string()));
            };
            let targets = kinds::targets(objects)?;
            edit_each(session, &targets, "serviceaccount updated", &output, |o, k| {
                set_service_account(o, k, account)
            })
            .await
        }
    }
}

async fn edit_each(
    session: &Session,
    targets: &[Target],
    what: &str,
    output: &OutputArgs,
    edit: impl Fn(&mut Value, Kind) -> Result<(), Error>,
) -> Result<(), Error> {
    for target in targets {
        if target.ty.kind == Kind::Native {
            return Err(Error::Usage(format!(
                "{} is a built-in kind: use kubectl set",
                target.ty.written
            )));
        }
        let before = serde_json::to_value(session.api(target.ty.resource()?).get(&target.name).await?)?;
        let mut after = before.clone();
        edit(&mut after, target.ty.kind)?;
        write(session, target, &before, after, what, output).await?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "set_tests.rs"]
mod tests;
