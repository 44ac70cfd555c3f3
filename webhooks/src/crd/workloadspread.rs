//! WorkloadSpread validation (`vworkloadspread.kb.io`), as OpenKruise's `validatingWorkloadSpreadFn` and
//! `validateWorkloadSpreadUpdate`, on the v1beta1 form of the object:
//!
//! * `targetRef` required and complete; its kind one of CloneSet (`apps.kruise.io`), Deployment,
//!   ReplicaSet (`apps`), Job (`batch`), StatefulSet (`apps` or `apps.kruise.io`), or a kind whitelisted in
//!   `kruise-configuration` (`WorkloadSpread_Watch_Custom_Workload_WhiteList`);
//! * subsets: at least one, names set and unique, node selector terms and preferred terms valid,
//!   tolerations valid, `maxReplicas` all of one type, Int for StatefulSet, non-negative, percentages
//!   summing to at most 100% (exactly 100% when the last subset has one);
//! * `scheduleStrategy.type` Fixed or Adaptive, `adaptive` only with Adaptive, the last subset without
//!   `maxReplicas` then, `rescheduleCriticalSeconds` within `0..=295/(subsets-1)`;
//! * `targetFilter.selector` valid;
//! * no other WorkloadSpread of the namespace targets the same workload;
//! * a subset `patch`, when the target is a CloneSet or an apps/v1 StatefulSet that exists: strategic-merged
//!   into its pod template (volumeClaimTemplates added as volumes), the result must pass Kubernetes' pod
//!   spec validation ([`super::podspec`]), errors under `spec.subsets[i].patch`. OpenKruise also looks up
//!   an apps/v1 StatefulSet for an `apps.kruise.io` target, as done here. A patch that does not merge is
//!   reported alone (OpenKruise goes on to validate an empty pod);
//! * on UPDATE, `targetRef` (group, kind, name) may not change.

use serde_json::Value;

use super::field::{
    ErrorList, GoValue, Path, forbidden, go_int_or_string, go_target_reference, invalid, not_supported,
    required, str_at,
};
use super::meta::{
    int_or_percent_value, label_value, qualified_name, selector_conversion_fails, string_list,
    validate_object_meta_update,
};
use super::{Which, check_decodes, check_version, judged, raw_object, refuse};
use crate::{
    Decision,
    pod_mutate::workloadspread::strategic_merge::{self, Schema},
    review::AdmissionRequest,
    view::ClusterView,
};

const GROUP: &str = "apps.kruise.io";
const KIND: &str = "WorkloadSpread";

fn v1beta1(request: &AdmissionRequest, which: Which) -> Result<Value, Box<Decision>> {
    let version = check_version(request)?;
    let object = raw_object(request, which, GROUP, KIND)?;
    match version {
        "v1alpha1" => check_decodes::<kruise_api::apps_v1alpha1::WorkloadSpread>(KIND, &object).map(drop)?,
        _ => check_decodes::<kruise_api::apps_v1beta1::WorkloadSpread>(KIND, &object).map(drop)?,
    }
    kruise_api::convert_object(&object, "apps.kruise.io/v1beta1")
        .map_err(|e| Box::new(Decision::bad_request(e.to_string())))
}

/// `/validate-apps-kruise-io-workloadspread`.
pub fn validate(request: &AdmissionRequest, view: &impl ClusterView) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    let obj = match v1beta1(request, Which::New) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    let namespace = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or(&request.namespace)
        .to_string();
    let others: Vec<Value> = view
        .workload_spreads(&namespace)
        .iter()
        .filter_map(|w| serde_json::to_value(&**w).ok())
        .collect();
    let whitelist = super::configuration_value(view, "WorkloadSpread_Watch_Custom_Workload_WhiteList");
    let template = target_template(&obj, &namespace, view);
    let mut errs = validate_workloadspread(&obj, &others, whitelist.as_deref(), template.as_ref());
    if request.operation == crate::Operation::Update {
        let old = match v1beta1(request, Which::Old) {
            Ok(o) => o,
            Err(d) => return *d,
        };
        errs.extend(validate_update(&obj, &old));
    }
    refuse(&errs).unwrap_or_else(Decision::allow)
}

fn present<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn group_of(api_version: &str) -> Result<&str, String> {
    match api_version.matches('/').count() {
        0 => Ok(""),
        1 => Ok(api_version.split('/').next().unwrap_or("")),
        _ => Err(format!("unexpected GroupVersion string: {api_version}")),
    }
}

fn whitelisted(target: &Value, whitelist: Option<&str>) -> bool {
    let Some(parsed) = whitelist.and_then(|w| serde_json::from_str::<Value>(w).ok()) else {
        return false;
    };
    let Ok(group) = group_of(str_at(target, "apiVersion")) else {
        return false;
    };
    items(&parsed, "workloads").iter().any(|w| {
        let field = |a: &str, b: &str| {
            w.get(a)
                .or_else(|| w.get(b))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        field("Group", "group") == group && field("Kind", "kind") == str_at(target, "kind")
    })
}

/// The groups a built-in target kind may have.
fn target_groups(kind: &str) -> Option<&'static [&'static str]> {
    match kind {
        "CloneSet" => Some(&["apps.kruise.io"]),
        "Deployment" | "ReplicaSet" => Some(&["apps"]),
        "Job" => Some(&["batch"]),
        "StatefulSet" => Some(&["apps", "apps.kruise.io"]),
        _ => None,
    }
}

/// The pod template subset patches are checked against: that of the target CloneSet or apps/v1 StatefulSet
/// (`validateWorkloadSpreadSpec` in pkg/webhook/workloadspread/validating), with its volumeClaimTemplates as
/// `persistentVolumeClaim` volumes (`withVolumeClaimTemplates`).
fn target_template(obj: &Value, namespace: &str, view: &impl ClusterView) -> Option<Value> {
    let target = obj.pointer("/spec/targetRef").filter(|t| !t.is_null())?;
    let (kind, name) = (str_at(target, "kind"), str_at(target, "name"));
    let group = group_of(str_at(target, "apiVersion")).ok()?;
    if name.is_empty() || !target_groups(kind)?.contains(&group) {
        return None;
    }
    let workload = match kind {
        "CloneSet" => serde_json::to_value(&*view.clone_set(namespace, name)?),
        "StatefulSet" => serde_json::to_value(&*view.stateful_set(namespace, name)?),
        _ => return None,
    }
    .ok()?;
    let mut template = workload.pointer("/spec/template").cloned().unwrap_or(Value::Null);
    let claims: Vec<Value> = items(
        workload.get("spec").unwrap_or(&Value::Null),
        "volumeClaimTemplates",
    )
    .iter()
    .map(|c| {
        let name = c.pointer("/metadata/name").cloned().unwrap_or(Value::Null);
        serde_json::json!({"name": name, "persistentVolumeClaim": {"claimName": name}})
    })
    .collect();
    if !claims.is_empty() {
        if !template.is_object() {
            template = serde_json::json!({});
        }
        let spec = &mut template["spec"];
        if !spec.is_object() {
            *spec = serde_json::json!({});
        }
        match spec.get_mut("volumes").and_then(Value::as_array_mut) {
            Some(volumes) => volumes.extend(claims),
            None => spec["volumes"] = Value::Array(claims),
        }
    }
    Some(template)
}

/// A subset `patch` merged into `template`: the pod spec validation of the result.
fn validate_patch(patch: &Value, template: &Value, path: &Path) -> ErrorList {
    let mut pod = template.clone();
    let merged = match patch.as_object() {
        Some(map) => strategic_merge::merge(&mut pod, map, Schema::Pod).map_err(|e| e.to_string()),
        None => Err("invalid JSON document".to_string()),
    };
    if let Err(e) = merged {
        return vec![invalid(
            path,
            patch.to_string(),
            format!("failed to merge patch: {e}"),
        )];
    }
    super::podspec::validate_pod_spec(pod.get("spec").unwrap_or(&Value::Null), path, false)
}

/// Every create-time check on a v1beta1 WorkloadSpread; `others` are the WorkloadSpreads of its namespace,
/// `template` the target's pod template when subset patches are checked against it.
pub fn validate_workloadspread(
    obj: &Value,
    others: &[Value],
    whitelist: Option<&str>,
    template: Option<&Value>,
) -> ErrorList {
    let null = Value::Null;
    let spec = obj.get("spec").unwrap_or(&null);
    let sp = Path::new("spec");
    let mut errs = ErrorList::new();
    let target = present(spec, "targetRef");
    match target {
        None => errs.push(required(
            &sp.child("targetRef"),
            "no targetRef defined in WorkloadSpread",
        )),
        Some(t) => {
            let go = || go_target_reference("v1beta1", Some(t));
            if ["apiVersion", "name", "kind"]
                .iter()
                .any(|k| str_at(t, k).is_empty())
            {
                errs.push(invalid(
                    &sp.child("targetRef"),
                    go(),
                    "empty TargetReference is not valid for WorkloadSpread.",
                ));
            } else {
                let kind = str_at(t, "kind");
                match target_groups(kind) {
                    Some(groups) => {
                        let ok = group_of(str_at(t, "apiVersion")).is_ok_and(|g| groups.contains(&g));
                        if !ok {
                            errs.push(invalid(
                                &sp.child("targetRef"),
                                go(),
                                format!("TargetReference is not valid for {kind}."),
                            ));
                        }
                    }
                    None => {
                        if !whitelisted(t, whitelist) {
                            errs.push(invalid(
                                &sp.child("targetRef"),
                                go(),
                                "TargetReference's GroupKind is not permitted.",
                            ));
                        }
                    }
                }
            }
        }
    }
    let subsets = items(spec, "subsets");
    errs.extend(validate_subsets(subsets, target, template, &sp.child("subsets")));
    let ss = spec.get("scheduleStrategy").unwrap_or(&null);
    let ssp = sp.child("scheduleStrategy");
    let stype = str_at(ss, "type");
    if !matches!(stype, "" | "Fixed" | "Adaptive") {
        errs.push(invalid(
            &ssp.child("type"),
            stype,
            "ScheduleStrategy's type is not valid",
        ));
    }
    if let Some(adaptive) = present(ss, "adaptive") {
        let rcs = present(adaptive, "rescheduleCriticalSeconds").and_then(Value::as_i64);
        let rcs_value = rcs.map_or(GoValue::Null, GoValue::Int);
        if stype != "Adaptive" {
            errs.push(invalid(
                &ssp.child("type"),
                rcs_value.clone(),
                "the scheduleStrategy's type must be adaptive when using adaptive scheduleStrategy",
            ));
        }
        if subsets.len() > 1 && subsets.last().and_then(|s| present(s, "maxReplicas")).is_some() {
            errs.push(invalid(
                &ssp.child("adaptive"),
                rcs_value.clone(),
                "the last subset's maxReplicas must be not specified when using adaptive scheduleStrategy",
            ));
        }
        let allowed = if subsets.len() > 1 {
            295 / (subsets.len() as i64 - 1)
        } else {
            i64::from(i32::MAX)
        };
        if let Some(r) = rcs
            && (r < 0 || r > allowed)
        {
            errs.push(invalid(
                &ssp.child("adaptive").child("rescheduleCriticalSeconds"),
                r,
                format!(
                    "rescheduleCriticalSeconds < 0 or rescheduleCriticalSeconds > {allowed} is not permitted"
                ),
            ));
        }
    }
    if let Some(filter) = present(spec, "targetFilter") {
        let sel = present(filter, "selector");
        if selector_conversion_fails(sel) {
            let bad_op = sel
                .map(|s| items(s, "matchExpressions"))
                .unwrap_or_default()
                .iter()
                .find_map(|e| {
                    let op = str_at(e, "operator");
                    (!matches!(op, "In" | "NotIn" | "Exists" | "DoesNotExist")).then_some(op)
                });
            let detail = match bad_op {
                Some(op) => format!(
                    "{} is not a valid label selector operator",
                    super::field::go_quote(op)
                ),
                None => "invalid label selector".to_string(),
            };
            errs.push(invalid(
                &sp.child("targetFilter"),
                GoValue::Raw(format!(
                    "v1beta1.TargetFilter{{Selector:(*v1.LabelSelector)(0xc000000000), ReplicasPathList:{}}}",
                    super::field::go_string_slice("string", present(filter, "replicasPathList"))
                )),
                detail,
            ));
        }
    }
    errs.extend(conflicts(obj, target, others));
    errs
}

fn validate_node_selector_term(term: &Value, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let exprs = items(term, "matchExpressions");
    if exprs.is_empty() && items(term, "matchFields").is_empty() {
        errs.push(required(
            &path.child("matchExpressions"),
            "must have at least one node selector requirement",
        ));
        return errs;
    }
    for (j, r) in exprs.iter().enumerate() {
        let p = path.child("matchExpressions").index(j);
        let values = string_list(r.get("values"));
        match str_at(r, "operator") {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errs.push(required(
                        &p.child("values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errs.push(forbidden(
                        &p.child("values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            "Gt" | "Lt" => {
                if values.len() != 1 {
                    errs.push(required(
                        &p.child("values"),
                        "must be specified single value when `operator` is 'Lt' or 'Gt'",
                    ));
                }
            }
            op => errs.push(invalid(&p.child("operator"), op, "not a valid selector operator")),
        }
        let key = str_at(r, "key");
        errs.extend(
            qualified_name(key)
                .into_iter()
                .map(|m| invalid(&p.child("key"), key, m)),
        );
    }
    errs
}

fn validate_tolerations(tolerations: &[Value], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for (i, t) in tolerations.iter().enumerate() {
        let p = path.index(i);
        let key = str_at(t, "key");
        let op = str_at(t, "operator");
        if !key.is_empty() {
            errs.extend(
                qualified_name(key)
                    .into_iter()
                    .map(|m| invalid(&p.child("key"), key, m)),
            );
        }
        if key.is_empty() && op != "Exists" {
            errs.push(invalid(
                &p.child("operator"),
                op,
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        let effect = str_at(t, "effect");
        if present(t, "tolerationSeconds").is_some() && effect != "NoExecute" {
            errs.push(invalid(
                &p.child("effect"),
                effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        let value = str_at(t, "value");
        match op {
            "Equal" | "" => {
                let msgs = label_value(value);
                if !msgs.is_empty() {
                    errs.push(invalid(&p.child("operator"), value, msgs.join(";")));
                }
            }
            "Exists" => {
                if !value.is_empty() {
                    errs.push(invalid(
                        &p.child("operator"),
                        GoValue::Raw(format!(
                            "core.Toleration{{Key:{}, Operator:\"Exists\", Value:{}, Effect:{}, TolerationSeconds:(*int64)(nil)}}",
                            super::field::go_quote(key),
                            super::field::go_quote(value),
                            super::field::go_quote(effect)
                        )),
                        "value must be empty when `operator` is 'Exists'",
                    ));
                }
            }
            other => errs.push(not_supported(&p.child("operator"), other, &["Equal", "Exists"])),
        }
        if !effect.is_empty() && !matches!(effect, "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
            errs.push(not_supported(
                &p.child("effect"),
                effect,
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            ));
        }
    }
    errs
}

fn validate_subsets(
    subsets: &[Value],
    target: Option<&Value>,
    template: Option<&Value>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if subsets.is_empty() {
        errs.push(required(path, "subsets number must >= 1 in WorkloadSpread"));
        return errs;
    }
    let mut names = std::collections::BTreeSet::new();
    let mut percent_sum = 0;
    let mut first_is_percent: Option<bool> = None;
    for (i, s) in subsets.iter().enumerate() {
        let p = path.index(i);
        let name = str_at(s, "name");
        if name.is_empty() {
            errs.push(invalid(&p.child("name"), name, ""));
        } else if !names.insert(name) {
            errs.push(invalid(
                &p.child("name"),
                name,
                format!("duplicated subset name {name}"),
            ));
        }
        if let Some(term) = present(s, "requiredNodeSelector") {
            errs.extend(validate_node_selector_term(
                term,
                &p.child("requiredNodeSelector"),
            ));
        }
        for (j, term) in items(s, "preferredNodeSelector").iter().enumerate() {
            let tp = p.child("preferredNodeSelector").index(j);
            let weight = term.get("weight").and_then(Value::as_i64).unwrap_or(0);
            if !(1..=100).contains(&weight) {
                errs.push(invalid(&tp.child("weight"), weight, "must be in the range 1-100"));
            }
            errs.extend(validate_node_selector_term(
                term.get("preference").unwrap_or(&Value::Null),
                &tp.child("preference"),
            ));
        }
        errs.extend(validate_tolerations(
            items(s, "tolerations"),
            &p.child("tolerations"),
        ));
        if let (Some(patch), Some(template)) = (present(s, "patch"), template) {
            errs.extend(validate_patch(patch, template, &p.child("patch")));
        }
        let Some(max) = present(s, "maxReplicas") else {
            continue;
        };
        let mp = p.child("maxReplicas");
        let is_percent = max.is_string();
        match first_is_percent {
            None => first_is_percent = Some(is_percent),
            Some(first) if first != is_percent => {
                errs.push(invalid(
                    &mp,
                    go_int_or_string(Some(max)),
                    "the maxReplicas type of all subsets must be the same",
                ));
                return errs;
            }
            Some(_) => {}
        }
        if target.is_some_and(|t| str_at(t, "kind") == "StatefulSet") && is_percent {
            errs.push(invalid(
                &mp,
                go_int_or_string(Some(max)),
                "the maxReplicas type must be Int for StatefulSet",
            ));
            return errs;
        }
        match int_or_percent_value(max, 100, true) {
            Ok(v) if v >= 0 => {
                if is_percent {
                    percent_sum += v;
                    if percent_sum > 100 {
                        errs.push(invalid(
                            &mp,
                            go_int_or_string(Some(max)),
                            "the sum of all subset's maxReplicas exceeds 100% is no permitted",
                        ));
                        return errs;
                    }
                }
            }
            _ => {
                errs.push(invalid(
                    &mp,
                    go_int_or_string(Some(max)),
                    "maxReplicas is not valid for subset",
                ));
                return errs;
            }
        }
    }
    if first_is_percent == Some(true)
        && percent_sum < 100
        && subsets.last().and_then(|s| present(s, "maxReplicas")).is_some()
    {
        errs.push(invalid(
            &path.index(0).child("maxReplicas"),
            go_int_or_string(present(&subsets[0], "maxReplicas")),
            "maxReplicas sum of all subsets must equal 100% when type is specified as percent",
        ));
    }
    errs
}

fn same_target(a: &Value, b: &Value) -> bool {
    let g = |t: &Value| group_of(str_at(t, "apiVersion")).unwrap_or("").to_string();
    g(a) == g(b) && str_at(a, "kind") == str_at(b, "kind") && str_at(a, "name") == str_at(b, "name")
}

fn conflicts(obj: &Value, target: Option<&Value>, others: &[Value]) -> ErrorList {
    let Some(target) = target else {
        return Vec::new();
    };
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    for other in others {
        let other_name = other
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        if other_name == name {
            continue;
        }
        if let Some(ot) = other.pointer("/spec/targetRef").filter(|v| !v.is_null())
            && same_target(target, ot)
        {
            return vec![invalid(
                &Path::new("spec").child("targetRef"),
                go_target_reference("v1beta1", Some(target)),
                format!("ws.spec.targetRef is in conflict with other WorkloadSpread {other_name}"),
            )];
        }
    }
    Vec::new()
}

/// `validateWorkloadSpreadUpdate`: metadata rules and an unchanged target.
pub fn validate_update(obj: &Value, old: &Value) -> ErrorList {
    let mut errs = validate_object_meta_update(obj.get("metadata"), old.get("metadata"));
    if let (Some(new), Some(prev)) = (
        obj.pointer("/spec/targetRef").filter(|v| !v.is_null()),
        old.pointer("/spec/targetRef").filter(|v| !v.is_null()),
    ) && !same_target(new, prev)
    {
        errs.push(invalid(
            &Path::new("spec").child("targetRef"),
            go_target_reference("v1beta1", Some(new)),
            "change TargetReference is not permitted for WorkloadSpread",
        ));
    }
    errs
}
