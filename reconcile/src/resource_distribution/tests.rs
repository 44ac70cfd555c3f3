use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kruise_api::apps_v1beta1::{RESOURCE_FROM_ANNOTATION, RESOURCE_HASH_ANNOTATION, ResourceDistribution};
use serde_json::{Value, json};

use super::*;

fn rd(resource: Value, targets: Value) -> ResourceDistribution {
    serde_json::from_value(
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "ResourceDistribution",
        "metadata": {"name": "settings", "uid": "rd-uid", "generation": 3},
        "spec": {"resource": resource, "targets": targets}}),
    )
    .unwrap()
}

fn config_map() -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "app", "namespace": "ignored", "labels": {"team": "platform"}},
        "data": {"level": "info"}})
}

fn prod() -> Value {
    json!({"namespaceSelector": {"matchLabels": {"env": "prod"}}})
}

fn ns(name: &str, labels: Value) -> Namespace {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}})).unwrap()
}

fn terminating_ns(name: &str) -> Namespace {
    serde_json::from_value(
        json!({"metadata": {"name": name, "deletionTimestamp": "2026-01-01T00:00:00Z"},
        "status": {"phase": "Terminating"}}),
    )
    .unwrap()
}

fn cluster() -> Vec<Namespace> {
    vec![
        ns("default", json!({})),
        ns("dev", json!({"env": "dev"})),
        ns("kube-public", json!({"env": "prod"})),
        ns("kube-system", json!({"env": "prod"})),
        ns("shop", json!({"env": "prod"})),
        ns("web", json!({"env": "prod"})),
    ]
}

/// The copy as the API server would return it after our create.
fn stored(body: &Value) -> Value {
    let mut copy = body.clone();
    copy["metadata"]["uid"] = json!(format!("uid-{}", body["metadata"]["namespace"].as_str().unwrap()));
    copy["metadata"]["resourceVersion"] = json!("7");
    copy
}

fn creates(plan: &Plan) -> Vec<(&str, &Value)> {
    plan.steps
        .iter()
        .filter_map(|s| match s {
            Step::Create { namespace, body } => Some((namespace.as_str(), body)),
            _ => None,
        })
        .collect()
}

/// Applies the plan's creates and updates to `copies`, as the loop would.
fn applied(plan: &Plan, copies: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = copies.to_vec();
    for step in &plan.steps {
        match step {
            Step::Create { body, .. } | Step::Update { body, .. } => {
                out.retain(|c| c["metadata"]["namespace"] != body["metadata"]["namespace"]);
                out.push(stored(body));
            }
            Step::Delete { namespace, .. } => {
                out.retain(|c| c["metadata"]["namespace"] != namespace.as_str())
            }
        }
    }
    out
}

#[test]
fn targets_are_all_or_included_or_selected_minus_excluded_and_system_namespaces() {
    let cases = [
        ("selector", prod(), vec!["shop", "web"]),
        (
            "all namespaces",
            json!({"allNamespaces": true, "excludedNamespaces": {"list": [{"name": "dev"}]},
                "includedNamespaces": {"list": [{"name": "missing"}]}}),
            vec!["default", "shop", "web"],
        ),
        (
            "included, even missing, plus selector, minus excluded",
            json!({"includedNamespaces": {"list": [{"name": "dev"}, {"name": "missing"}, {"name": "kube-system"}]},
                "excludedNamespaces": {"list": [{"name": "web"}]},
                "namespaceSelector": {"matchLabels": {"env": "prod"}}}),
            vec!["dev", "missing", "shop"],
        ),
        (
            "empty selector matches nothing",
            json!({"namespaceSelector": {}}),
            vec![],
        ),
        (
            "expressions",
            json!({"namespaceSelector": {"matchExpressions": [{"key": "env", "operator": "Exists"}]}}),
            vec!["dev", "shop", "web"],
        ),
    ];
    for (name, targets, want) in cases {
        let plan = plan(&rd(config_map(), targets), &cluster(), &[]).unwrap();
        let got: Vec<&str> = plan.desired.iter().map(String::as_str).collect();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn copies_carry_the_template_namespace_owner_and_the_two_annotations() {
    let distribution = rd(config_map(), prod());
    let plan = plan(&distribution, &cluster(), &[]).unwrap();
    let made = creates(&plan);
    assert_eq!(made.iter().map(|(n, _)| *n).collect::<Vec<_>>(), ["shop", "web"]);
    let body = made[0].1;
    assert_eq!(body["metadata"]["namespace"], "shop");
    assert_eq!(body["metadata"]["name"], "app");
    assert_eq!(body["data"], json!({"level": "info"}));
    assert_eq!(body["metadata"]["labels"]["team"], "platform");
    assert_eq!(body["metadata"]["labels"][COPY_LABEL], "rd-uid");
    let annotations = &body["metadata"]["annotations"];
    assert_eq!(annotations[RESOURCE_FROM_ANNOTATION], "settings");
    assert_eq!(
        annotations[RESOURCE_HASH_ANNOTATION],
        resource_hash(&distribution.spec.resource).as_str()
    );
    assert_eq!(
        body["metadata"]["ownerReferences"],
        json!([{"apiVersion": "apps.kruise.io/v1beta1", "kind": "ResourceDistribution", "name": "settings",
            "uid": "rd-uid", "controller": true, "blockOwnerDeletion": true}])
    );
    assert!(plan.failures.is_empty());
}

#[test]
fn the_hash_is_sha256_of_the_resource_as_go_serializes_it() {
    let resource = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "app"},
        "data": {"html": "<b>&"}});
    // sha256 of {"apiVersion":"v1","data":{"html":"\u003cb\u003e\u0026"},"kind":"ConfigMap","metadata":{"name":"app"}}
    assert_eq!(
        resource_hash(&resource),
        "2f3b737aaf05799bd1e4adcb1d53336b4dbd02c3bbf30d926c7870f46a1d6f87"
    );
}

#[test]
fn a_second_pass_over_its_own_copies_writes_nothing() {
    let distribution = rd(config_map(), prod());
    let first = plan(&distribution, &cluster(), &[]).unwrap();
    let copies = applied(&first, &[]);
    let second = plan(&distribution, &cluster(), &copies).unwrap();
    assert_eq!(second.steps, vec![]);
    // A Secret given by stringData is compared as the API server stores it (data, type Opaque).
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "token"},
        "stringData": {"password": "s3cret"}});
    let distribution = rd(secret, prod());
    let first = plan(&distribution, &cluster(), &[]).unwrap();
    let body = creates(&first)[0].1;
    assert_eq!(body["data"], json!({"password": "czNjcmV0"}));
    assert_eq!(body["type"], "Opaque");
    assert!(body.get("stringData").is_none());
    let copies = applied(&first, &[]);
    assert_eq!(plan(&distribution, &cluster(), &copies).unwrap().steps, vec![]);
}

#[test]
fn hand_edits_are_reverted_and_their_extra_metadata_kept() {
    let distribution = rd(config_map(), prod());
    let mut copies = applied(&plan(&distribution, &cluster(), &[]).unwrap(), &[]);
    copies[0]["data"]["level"] = json!("debug");
    copies[0]["data"]["extra"] = json!("x");
    copies[0]["metadata"]["labels"]["team"] = json!("someone-else");
    copies[0]["metadata"]["labels"]["added-by-hand"] = json!("yes");
    let next = plan(&distribution, &cluster(), &copies).unwrap();
    let [Step::Update { namespace, body }] = next.steps.as_slice() else {
        panic!("{:?}", next.steps)
    };
    assert_eq!(namespace, "shop");
    assert_eq!(body["data"], json!({"level": "info"}));
    assert_eq!(body["metadata"]["labels"]["team"], "platform");
    assert_eq!(body["metadata"]["labels"]["added-by-hand"], "yes");
    assert_eq!(
        body["metadata"]["resourceVersion"], "7",
        "the update is conditional"
    );
}

#[test]
fn a_deleted_copy_is_created_again() {
    let distribution = rd(config_map(), prod());
    let mut copies = applied(&plan(&distribution, &cluster(), &[]).unwrap(), &[]);
    copies.retain(|c| c["metadata"]["namespace"] != "web");
    let next = plan(&distribution, &cluster(), &copies).unwrap();
    assert_eq!(
        creates(&next).iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        ["web"]
    );
}

#[test]
fn template_metadata_changes_reach_the_copies() {
    let distribution = rd(config_map(), prod());
    let copies = applied(&plan(&distribution, &cluster(), &[]).unwrap(), &[]);
    let mut resource = config_map();
    resource["metadata"]["annotations"] = json!({"note": "new"});
    let changed = rd(resource, prod());
    let next = plan(&changed, &cluster(), &copies).unwrap();
    assert_eq!(next.steps.len(), 2, "{:?}", next.steps);
    for step in &next.steps {
        let Step::Update { body, .. } = step else {
            panic!("{step:?}")
        };
        assert_eq!(body["metadata"]["annotations"]["note"], "new");
        assert_eq!(
            body["metadata"]["annotations"][RESOURCE_HASH_ANNOTATION],
            resource_hash(&changed.spec.resource).as_str()
        );
    }
}

#[test]
fn copies_in_namespaces_no_longer_targeted_are_deleted_and_others_left_alone() {
    let distribution = rd(config_map(), prod());
    let mut copies = applied(&plan(&distribution, &cluster(), &[]).unwrap(), &[]);
    // Someone else's object of the same name in an untargeted namespace.
    copies.push(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app", "namespace": "dev"}}),
    );
    let mut namespaces = cluster();
    namespaces[5] = ns("web", json!({"env": "staging"}));
    let next = plan(&distribution, &namespaces, &copies).unwrap();
    assert_eq!(
        next.steps,
        vec![Step::Delete {
            namespace: "web".into(),
            uid: Some("uid-web".into())
        }]
    );
    assert_eq!(next.desired.len(), 1);
    // A copy in a namespace being deleted goes with it; no delete is sent.
    namespaces[5] = terminating_ns("web");
    assert_eq!(plan(&distribution, &namespaces, &copies).unwrap().steps, vec![]);
}

#[test]
fn an_object_not_controlled_by_the_distribution_is_a_conflict_and_never_written() {
    let distribution = rd(config_map(), prod());
    let foreign = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "app", "namespace": "shop", "uid": "theirs",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "x", "uid": "d",
                "controller": true}]},
        "data": {"level": "theirs"}});
    let next = plan(&distribution, &cluster(), std::slice::from_ref(&foreign)).unwrap();
    assert_eq!(
        creates(&next).iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        ["web"]
    );
    assert!(
        next.steps
            .iter()
            .all(|s| !matches!(s, Step::Update { namespace, .. } if namespace == "shop"))
    );
    assert_eq!(
        next.failures,
        vec![Failure {
            namespace: "shop".into(),
            kind: FailureKind::ConflictOccurred,
            reason: CONFLICT_REASON.into()
        }]
    );
    // The object an AlreadyExists turns up is judged by the same rule.
    assert_eq!(decide(&next.template, "shop", Some(&foreign)), Decision::Conflict);
    let unowned =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app", "namespace": "shop"}});
    assert_eq!(decide(&next.template, "shop", Some(&unowned)), Decision::Conflict);
}

/// openkruise/kruise#1612: distributing "an existing Secret by name" would let anyone who may create a
/// distribution read any Secret. A copy is made from the distribution's own resource only: a Secret of
/// the same name elsewhere is neither copied from nor, when targeted, overwritten.
#[test]
fn a_copy_is_built_only_from_the_embedded_resource_never_from_an_existing_object() {
    let by_name_only = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db-password"}});
    let existing = json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": "db-password", "namespace": "vault", "uid": "v"},
        "data": {"password": "dG9wLXNlY3JldA=="}});
    let mut namespaces = cluster();
    namespaces.push(ns("vault", json!({"env": "prod"})));
    let distribution = rd(by_name_only, prod());
    let next = plan(&distribution, &namespaces, std::slice::from_ref(&existing)).unwrap();
    let made = creates(&next);
    assert_eq!(made.iter().map(|(n, _)| *n).collect::<Vec<_>>(), ["shop", "web"]);
    for (_, body) in made {
        assert!(body.get("data").is_none(), "{body}");
        assert_eq!(body["type"], "Opaque");
    }
    assert_eq!(next.failures[0].namespace, "vault");
    assert_eq!(next.failures[0].kind, FailureKind::ConflictOccurred);
    assert!(
        !next
            .steps
            .iter()
            .any(|s| matches!(s, Step::Update { .. } | Step::Delete { .. }))
    );
}

#[test]
fn missing_and_terminating_targets_are_reported_not_written() {
    let targets =
        json!({"includedNamespaces": {"list": [{"name": "gone"}, {"name": "closing"}, {"name": "shop"}]}});
    let mut namespaces = cluster();
    namespaces.push(terminating_ns("closing"));
    let next = plan(&rd(config_map(), targets), &namespaces, &[]).unwrap();
    assert_eq!(
        creates(&next).iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        ["shop"]
    );
    let missing: Vec<&str> = next.failures.iter().map(|f| f.namespace.as_str()).collect();
    assert_eq!(missing, ["closing", "gone"]);
    assert!(
        next.failures
            .iter()
            .all(|f| f.kind == FailureKind::NamespaceNotExists)
    );
}

#[test]
fn an_unusable_spec_is_an_error() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}});
    assert!(matches!(
        plan(&rd(pod, prod()), &cluster(), &[]),
        Err(PlanError::Resource(_))
    ));
    let nameless = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    assert!(matches!(
        plan(&rd(nameless, prod()), &cluster(), &[]),
        Err(PlanError::Resource(InvalidResource::NoName))
    ));
    let bad = json!({"namespaceSelector": {"matchExpressions": [{"key": "env", "operator": "Near"}]}});
    assert!(matches!(
        plan(&rd(config_map(), bad), &cluster(), &[]),
        Err(PlanError::Selector(_))
    ));
}

fn time(s: &str) -> Time {
    serde_json::from_value(json!(s)).unwrap()
}

#[test]
fn the_status_has_six_conditions_in_order_and_counts_failed_targets() {
    let distribution = rd(config_map(), prod());
    let desired: BTreeSet<String> = ["a", "b", "c", "d"].map(String::from).into();
    let failures = vec![
        Failure {
            namespace: "b".into(),
            kind: FailureKind::ConflictOccurred,
            reason: CONFLICT_REASON.into(),
        },
        Failure {
            namespace: "c".into(),
            kind: FailureKind::CreateResourceFailed,
            reason: "boom".into(),
        },
        Failure {
            namespace: "old".into(),
            kind: FailureKind::DeleteResourceFailed,
            reason: "nope".into(),
        },
    ];
    let now = time("2026-01-02T00:00:00Z");
    let s = status(&distribution, &desired, &failures, &now);
    assert_eq!(
        (s.desired, s.succeeded, s.failed, s.observed_generation),
        (4, 2, 2, 3)
    );
    let summary: Vec<(&str, &str, &str, Vec<&str>)> = s
        .conditions
        .iter()
        .map(|c| {
            let namespaces = c.failed_namespaces.iter().map(String::as_str).collect();
            (c.type_.as_str(), c.status.as_str(), c.reason.as_str(), namespaces)
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("GetResourceFailed", "False", "Succeeded", vec![]),
            ("CreateResourceFailed", "True", "boom", vec!["c"]),
            ("UpdateResourceFailed", "False", "Succeeded", vec![]),
            ("DeleteResourceFailed", "True", "nope", vec!["old"]),
            ("ConflictOccurred", "True", CONFLICT_REASON, vec!["b"]),
            ("NamespaceNotExists", "False", "Succeeded", vec![]),
        ]
    );
    assert!(
        s.conditions
            .iter()
            .all(|c| c.last_transition_time == Some(now.clone()))
    );
    // The next pass: the conflict is gone, the create failure remains; only the flipped condition moves.
    let mut with_status = distribution.clone();
    with_status.status = Some(s);
    let later = time("2026-01-03T00:00:00Z");
    let failures = vec![Failure {
        namespace: "c".into(),
        kind: FailureKind::CreateResourceFailed,
        reason: "boom".into(),
    }];
    let next = status(&with_status, &desired, &failures, &later);
    let times: Vec<Option<Time>> = next
        .conditions
        .iter()
        .map(|c| c.last_transition_time.clone())
        .collect();
    let (n, l) = (Some(now), Some(later));
    assert_eq!(times, vec![n.clone(), n.clone(), n.clone(), l.clone(), l, n]);
    assert_eq!((next.succeeded, next.failed), (3, 1));
}

#[test]
fn targets_match_a_single_namespace_as_the_namespace_trigger_asks() {
    let distribution = rd(config_map(), prod());
    let targets = Targets::new(&distribution.spec.targets).unwrap();
    let prod_labels = [("env".to_string(), "prod".to_string())].into();
    assert!(targets.matches("new", Some(&prod_labels)));
    assert!(!targets.matches("new", None));
    assert!(!targets.matches("kube-system", Some(&prod_labels)));
}
