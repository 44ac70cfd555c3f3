//! The protobuf messages the playground decodes: for each, its field numbers, JSON names and
//! shapes, as `k8s.io/api`'s `generated.proto` files number them. Only the fields `kubectl create`
//! generators and `kubectl run` set, and their neighbours that cost a line, are listed.

/// How a field's bytes become JSON.
#[derive(Clone, Copy)]
pub enum Shape {
    /// A string; empty strings are left out (Go's non-pointer strings are always encoded).
    Str,
    /// A repeated string.
    Strs,
    /// A non-pointer integer: always encoded, left out when zero (`omitempty`).
    Int,
    /// A pointer integer, or one without `omitempty`: kept whenever encoded.
    Num,
    /// A non-pointer bool: left out when false.
    Flag,
    /// A pointer bool: kept whenever encoded.
    OptFlag,
    /// `map<string, string>`.
    StrMap,
    /// `map<string, bytes>`, as base64 strings.
    BytesMap,
    /// `map<string, Quantity>`, as quantity strings.
    QuantityMap,
    /// `intstr.IntOrString`.
    IntOrString,
    /// A nested message; left out when it decodes to nothing.
    Msg(Message),
    /// A repeated message.
    Msgs(Message),
}

/// A message: its fields by number.
pub type Message = &'static [(u64, &'static str, Shape)];

use Shape::*;

/// `metav1.ObjectMeta`, without the fields the server sets.
pub const OBJECT_META: Message = &[
    (1, "name", Str),
    (2, "generateName", Str),
    (3, "namespace", Str),
    (11, "labels", StrMap),
    (12, "annotations", StrMap),
    (13, "ownerReferences", Msgs(OWNER_REFERENCE)),
    (14, "finalizers", Strs),
];

const OWNER_REFERENCE: Message = &[
    (1, "kind", Str),
    (3, "name", Str),
    (4, "uid", Str),
    (5, "apiVersion", Str),
    (6, "controller", OptFlag),
    (7, "blockOwnerDeletion", OptFlag),
];

const LABEL_SELECTOR: Message = &[
    (1, "matchLabels", StrMap),
    (2, "matchExpressions", Msgs(LABEL_SELECTOR_REQUIREMENT)),
];

const LABEL_SELECTOR_REQUIREMENT: Message = &[(1, "key", Str), (2, "operator", Str), (3, "values", Strs)];

const NAMESPACE: Message = &[
    (1, "metadata", Msg(OBJECT_META)),
    (2, "spec", Msg(&[(1, "finalizers", Strs)])),
];

const CONFIG_MAP: Message = &[
    (1, "metadata", Msg(OBJECT_META)),
    (2, "data", StrMap),
    (3, "binaryData", BytesMap),
    (4, "immutable", OptFlag),
];

const SECRET: Message = &[
    (1, "metadata", Msg(OBJECT_META)),
    (2, "data", BytesMap),
    (3, "type", Str),
    (4, "stringData", StrMap),
    (5, "immutable", OptFlag),
];

const SERVICE_ACCOUNT: Message = &[
    (1, "metadata", Msg(OBJECT_META)),
    (3, "imagePullSecrets", Msgs(LOCAL_OBJECT_REFERENCE)),
    (4, "automountServiceAccountToken", OptFlag),
];

const LOCAL_OBJECT_REFERENCE: Message = &[(1, "name", Str)];

const POD: Message = &[(1, "metadata", Msg(OBJECT_META)), (2, "spec", Msg(POD_SPEC))];

const POD_TEMPLATE_SPEC: Message = &[(1, "metadata", Msg(OBJECT_META)), (2, "spec", Msg(POD_SPEC))];

const POD_SPEC: Message = &[
    (2, "containers", Msgs(CONTAINER)),
    (3, "restartPolicy", Str),
    (4, "terminationGracePeriodSeconds", Num),
    (5, "activeDeadlineSeconds", Num),
    (6, "dnsPolicy", Str),
    (7, "nodeSelector", StrMap),
    (8, "serviceAccountName", Str),
    (9, "serviceAccount", Str),
    (10, "nodeName", Str),
    (11, "hostNetwork", Flag),
    (15, "imagePullSecrets", Msgs(LOCAL_OBJECT_REFERENCE)),
    (16, "hostname", Str),
    (17, "subdomain", Str),
    (19, "schedulerName", Str),
    (20, "initContainers", Msgs(CONTAINER)),
    (21, "automountServiceAccountToken", OptFlag),
    (22, "tolerations", Msgs(TOLERATION)),
    (24, "priorityClassName", Str),
    (25, "priority", Num),
];

const CONTAINER: Message = &[
    (1, "name", Str),
    (2, "image", Str),
    (3, "command", Strs),
    (4, "args", Strs),
    (5, "workingDir", Str),
    (6, "ports", Msgs(CONTAINER_PORT)),
    (7, "env", Msgs(ENV_VAR)),
    (
        8,
        "resources",
        Msg(&[(1, "limits", QuantityMap), (2, "requests", QuantityMap)]),
    ),
    (14, "imagePullPolicy", Str),
    (16, "stdin", Flag),
    (17, "stdinOnce", Flag),
    (18, "tty", Flag),
];

const CONTAINER_PORT: Message = &[
    (1, "name", Str),
    (2, "hostPort", Int),
    (3, "containerPort", Int),
    (4, "protocol", Str),
    (5, "hostIP", Str),
];

const ENV_VAR: Message = &[(1, "name", Str), (2, "value", Str)];

const TOLERATION: Message = &[
    (1, "key", Str),
    (2, "operator", Str),
    (3, "value", Str),
    (4, "effect", Str),
    (5, "tolerationSeconds", Num),
];

const SERVICE: Message = &[(1, "metadata", Msg(OBJECT_META)), (2, "spec", Msg(SERVICE_SPEC))];

const SERVICE_SPEC: Message = &[
    (1, "ports", Msgs(SERVICE_PORT)),
    (2, "selector", StrMap),
    (3, "clusterIP", Str),
    (4, "type", Str),
    (5, "externalIPs", Strs),
    (7, "sessionAffinity", Str),
    (10, "externalName", Str),
    (18, "clusterIPs", Strs),
];

const SERVICE_PORT: Message = &[
    (1, "name", Str),
    (2, "protocol", Str),
    (3, "port", Int),
    (4, "targetPort", IntOrString),
    (5, "nodePort", Int),
];

const RESOURCE_QUOTA: Message = &[
    (1, "metadata", Msg(OBJECT_META)),
    (2, "spec", Msg(&[(1, "hard", QuantityMap), (2, "scopes", Strs)])),
];

const DEPLOYMENT: Message = &[
    (1, "metadata", Msg(OBJECT_META)),
    (2, "spec", Msg(DEPLOYMENT_SPEC)),
];

const DEPLOYMENT_SPEC: Message = &[
    (1, "replicas", Num),
    (2, "selector", Msg(LABEL_SELECTOR)),
    (3, "template", Msg(POD_TEMPLATE_SPEC)),
    (4, "strategy", Msg(DEPLOYMENT_STRATEGY)),
    (5, "minReadySeconds", Int),
    (6, "revisionHistoryLimit", Num),
    (7, "paused", Flag),
    (9, "progressDeadlineSeconds", Num),
];

const DEPLOYMENT_STRATEGY: Message = &[
    (1, "type", Str),
    (
        2,
        "rollingUpdate",
        Msg(&[(1, "maxUnavailable", IntOrString), (2, "maxSurge", IntOrString)]),
    ),
];

const JOB: Message = &[(1, "metadata", Msg(OBJECT_META)), (2, "spec", Msg(JOB_SPEC))];

const JOB_SPEC: Message = &[
    (1, "parallelism", Num),
    (2, "completions", Num),
    (3, "activeDeadlineSeconds", Num),
    (4, "selector", Msg(LABEL_SELECTOR)),
    (5, "manualSelector", OptFlag),
    (6, "template", Msg(POD_TEMPLATE_SPEC)),
    (7, "backoffLimit", Num),
    (8, "ttlSecondsAfterFinished", Num),
    (9, "completionMode", Str),
    (10, "suspend", OptFlag),
];

const CRON_JOB: Message = &[(1, "metadata", Msg(OBJECT_META)), (2, "spec", Msg(CRON_JOB_SPEC))];

const CRON_JOB_SPEC: Message = &[
    (1, "schedule", Str),
    (2, "startingDeadlineSeconds", Num),
    (3, "concurrencyPolicy", Str),
    (4, "suspend", OptFlag),
    (5, "jobTemplate", Msg(JOB)),
    (6, "successfulJobsHistoryLimit", Num),
    (7, "failedJobsHistoryLimit", Num),
    (8, "timeZone", Str),
];

const POD_DISRUPTION_BUDGET: Message = &[
    (1, "metadata", Msg(OBJECT_META)),
    (
        2,
        "spec",
        Msg(&[
            (1, "minAvailable", IntOrString),
            (2, "selector", Msg(LABEL_SELECTOR)),
            (3, "maxUnavailable", IntOrString),
            (4, "unhealthyPodEvictionPolicy", Str),
        ]),
    ),
];

const POLICY_RULE: Message = &[
    (1, "verbs", Strs),
    (2, "apiGroups", Strs),
    (3, "resources", Strs),
    (4, "resourceNames", Strs),
    (5, "nonResourceURLs", Strs),
];

const ROLE: Message = &[(1, "metadata", Msg(OBJECT_META)), (2, "rules", Msgs(POLICY_RULE))];

const CLUSTER_ROLE: Message = &[
    (1, "metadata", Msg(OBJECT_META)),
    (2, "rules", Msgs(POLICY_RULE)),
    (
        3,
        "aggregationRule",
        Msg(&[(1, "clusterRoleSelectors", Msgs(LABEL_SELECTOR))]),
    ),
];

const ROLE_BINDING: Message = &[
    (1, "metadata", Msg(OBJECT_META)),
    (
        2,
        "subjects",
        Msgs(&[
            (1, "kind", Str),
            (2, "apiGroup", Str),
            (3, "name", Str),
            (4, "namespace", Str),
        ]),
    ),
    (
        3,
        "roleRef",
        Msg(&[(1, "apiGroup", Str), (2, "kind", Str), (3, "name", Str)]),
    ),
];

/// The message of a kind in an API version, if the playground decodes it.
pub fn kind(api_version: &str, kind: &str) -> Option<Message> {
    Some(match (api_version, kind) {
        ("v1", "Namespace") => NAMESPACE,
        ("v1", "ConfigMap") => CONFIG_MAP,
        ("v1", "Secret") => SECRET,
        ("v1", "ServiceAccount") => SERVICE_ACCOUNT,
        ("v1", "Pod") => POD,
        ("v1", "Service") => SERVICE,
        ("v1", "ResourceQuota") => RESOURCE_QUOTA,
        ("apps/v1", "Deployment") => DEPLOYMENT,
        ("batch/v1", "Job") => JOB,
        ("batch/v1", "CronJob") => CRON_JOB,
        ("policy/v1", "PodDisruptionBudget") => POD_DISRUPTION_BUDGET,
        ("rbac.authorization.k8s.io/v1", "Role") => ROLE,
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => CLUSTER_ROLE,
        ("rbac.authorization.k8s.io/v1", "RoleBinding" | "ClusterRoleBinding") => ROLE_BINDING,
        _ => return None,
    })
}
