#!/usr/bin/env python3
"""Cross-checks the install manifests as a whole (what no schema validator sees):

1. RBAC, by evaluating the Roles/ClusterRoles bound to the kruise-rs ServiceAccount the way the
   Kubernetes RBAC authorizer does:
   - every API request the server makes today (REQUIRED below, kept in step with src/cluster/*.rs) is
     allowed, including get/update of every CRD whose conversion webhook points at our Service and of
     every webhook configuration in webhooks.yaml (so a new generated CRD or configuration fails here
     until rbac.yaml names it);
   - requests that least privilege forbids (FORBIDDEN below) are denied;
   - no rule uses `*`, and no rule grants escalate, bind or impersonate.
2. Wiring: the Service selects the Deployment's pods and targets its webhook port; every webhook and
   conversion clientConfig names that Service, its namespace and port 443; the PDB selects the pods; the
   ServiceAccount exists; SECRET_NAME / SERVICE_NAME / WEBHOOK_PORT agree with the objects; every
   webhook excludes kube-system and our namespace by `kubernetes.io/metadata.name`.

Usage: check_install.py FILE...   (PyPI's PyYAML needed; exit status 1 on any failure)
"""

import sys

import yaml

NAMESPACE = "kruise-system"
SERVICE_ACCOUNT = "kruise-manager"
DEPLOYMENT = "kruise-controller-manager"
LEASE = "kruise-rs-leader"

# (verb, apiGroup, resource[/subresource], namespace or None (cluster-scoped or all namespaces), name or None)
REQUIRED = [
    # src/cluster/caches.rs: reflectors (list + watch) over all namespaces.
    ("list", "", "namespaces", None, None),
    ("watch", "", "namespaces", None, None),
    ("list", "", "pods", None, None),
    ("watch", "", "pods", None, None),
    ("list", "", "persistentvolumeclaims", None, None),
    ("watch", "", "persistentvolumeclaims", None, None),
    # src/cluster/cert_secret.rs: get, create if absent, replace.
    ("get", "", "secrets", NAMESPACE, "$SECRET_NAME"),
    ("create", "", "secrets", NAMESPACE, None),
    ("update", "", "secrets", NAMESPACE, "$SECRET_NAME"),
    # src/cluster/leader.rs: get, create if absent, replace.
    ("get", "coordination.k8s.io", "leases", NAMESPACE, LEASE),
    ("create", "coordination.k8s.io", "leases", NAMESPACE, None),
    ("update", "coordination.k8s.io", "leases", NAMESPACE, LEASE),
    # src/cluster/ca_bundle.rs: get + replace of every configuration and CRD (added from the manifests).
    # src/controllers/cloneset.rs (leader only; with no CloneSet the observed run makes only the list and
    # watch requests, so its writes are listed here): trigger watches, then the planner's actions.
    ("list", "apps.kruise.io", "clonesets", None, None),
    ("watch", "apps.kruise.io", "clonesets", None, None),
    ("list", "apps", "controllerrevisions", None, None),
    ("watch", "apps", "controllerrevisions", None, None),
    ("create", "", "pods", "default", None),
    ("delete", "", "pods", "default", "web-abcde"),
    ("patch", "", "pods", "default", "web-abcde"),
    ("patch", "", "pods/status", "default", "web-abcde"),
    ("create", "", "persistentvolumeclaims", "default", None),
    ("delete", "", "persistentvolumeclaims", "default", "data-web-abcde"),
    ("patch", "", "persistentvolumeclaims", "default", "data-web-abcde"),
    ("create", "apps", "controllerrevisions", "default", None),
    ("update", "apps", "controllerrevisions", "default", "web-5d4f8c7b9"),
    ("delete", "apps", "controllerrevisions", "default", "web-5d4f8c7b9"),
    ("patch", "apps.kruise.io", "clonesets", "default", "web"),
    ("update", "apps.kruise.io", "clonesets/status", "default", "web"),
    ("create", "events.k8s.io", "events", "default", None),
    ("patch", "events.k8s.io", "events", "default", "web.18ea6268b8616c63"),
    # src/controllers/resource_distribution.rs (on by default): copies in any targeted namespace. RBAC
    # cannot narrow by label, so ConfigMaps and Secrets are granted cluster-wide (manifests/rbac.yaml
    # says why, and how to drop the rule with ResourceDistributionGate=false).
    ("list", "", "configmaps", None, None),
    ("watch", "", "configmaps", None, None),
    ("list", "", "secrets", None, None),
    ("watch", "", "secrets", None, None),
    ("create", "", "secrets", "default", None),
    ("update", "", "configmaps", "default", "shared-config"),
    ("delete", "", "secrets", "default", "shared-secret"),
]

# Secrets and ConfigMaps are no longer listed here: the ResourceDistribution controller needs them in
# every namespace (see REQUIRED); what it must never do to them is below.
FORBIDDEN = [
    ("patch", "", "secrets", "default", "any"),
    ("deletecollection", "", "secrets", "default", None),
    ("deletecollection", "", "configmaps", "default", None),
    ("update", "admissionregistration.k8s.io", "validatingwebhookconfigurations", None, "someone-elses"),
    ("update", "admissionregistration.k8s.io", "mutatingwebhookconfigurations", None, "someone-elses"),
    ("create", "admissionregistration.k8s.io", "validatingwebhookconfigurations", None, None),
    ("delete", "admissionregistration.k8s.io", "validatingwebhookconfigurations", None,
     "kruise-validating-webhook-configuration"),
    ("update", "apiextensions.k8s.io", "customresourcedefinitions", None, "widgets.example.com"),
    ("delete", "apiextensions.k8s.io", "customresourcedefinitions", None, "clonesets.apps.kruise.io"),
    ("update", "coordination.k8s.io", "leases", "kube-system", "kube-controller-manager"),
    ("update", "coordination.k8s.io", "leases", NAMESPACE, "some-other-lease"),
    ("create", "coordination.k8s.io", "leases", "kube-node-lease", None),
    ("create", "", "pods/exec", "default", "any"),
    ("get", "", "pods/log", "default", "any"),
    ("deletecollection", "", "pods", "default", None),
    ("update", "", "nodes", None, "any"),
    ("patch", "", "nodes", None, "any"),
    ("delete", "", "namespaces", None, "default"),
    ("impersonate", "", "users", None, "admin"),
    ("impersonate", "", "serviceaccounts", "kube-system", "default"),
    ("escalate", "rbac.authorization.k8s.io", "clusterroles", None, "cluster-admin"),
    ("bind", "rbac.authorization.k8s.io", "clusterroles", None, "cluster-admin"),
    ("create", "rbac.authorization.k8s.io", "clusterrolebindings", None, None),
    ("create", "authentication.k8s.io", "tokenreviews", None, None),
    ("create", "", "serviceaccounts/token", NAMESPACE, SERVICE_ACCOUNT),
]

NEVER_VERBS = {"escalate", "bind", "impersonate", "*"}


class Checks:
    def __init__(self):
        self.failures = []
        self.passed = 0

    def check(self, ok, message):
        if ok:
            self.passed += 1
        else:
            self.failures.append(message)


def load(paths):
    objects = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            objects.extend(d for d in yaml.safe_load_all(f) if isinstance(d, dict))
    return objects


def find(objects, kind, name=None, namespace=None):
    return [o for o in objects if o.get("kind") == kind
            and (name is None or o["metadata"].get("name") == name)
            and (namespace is None or o["metadata"].get("namespace") == namespace)]


def resource_matches(patterns, resource):
    """RBAC resource matching: exact, `*` (everything, subresources included), `*/sub`."""
    _, _, sub = resource.partition("/")
    for pattern in patterns:
        if pattern in ("*", resource) or (sub and pattern == f"*/{sub}"):
            return True
    return False


def rule_allows(rule, verb, group, resource, name):
    if not {verb, "*"} & set(rule.get("verbs") or []):
        return False
    if not {group, "*"} & set(rule.get("apiGroups") or []):
        return False
    if not resource_matches(rule.get("resources") or [], resource):
        return False
    names = rule.get("resourceNames") or []
    if names and (name is None or name not in names):
        return False
    return True


def bound_rules(objects):
    """[(namespace or None for cluster-wide, rule)] granted to our ServiceAccount."""
    out = []

    def subject_is_us(binding):
        return any(s.get("kind") == "ServiceAccount" and s.get("name") == SERVICE_ACCOUNT
                   and s.get("namespace") == NAMESPACE for s in binding.get("subjects") or [])

    for binding in find(objects, "ClusterRoleBinding"):
        if subject_is_us(binding) and binding["roleRef"]["kind"] == "ClusterRole":
            for role in find(objects, "ClusterRole", binding["roleRef"]["name"]):
                out += [(None, r) for r in role.get("rules") or []]
    for binding in find(objects, "RoleBinding"):
        if not subject_is_us(binding):
            continue
        ns = binding["metadata"].get("namespace")
        ref = binding["roleRef"]
        roles = (find(objects, "Role", ref["name"], ns) if ref["kind"] == "Role"
                 else find(objects, "ClusterRole", ref["name"]))
        for role in roles:
            out += [(ns, r) for r in role.get("rules") or []]
    return out


def allowed(rules, verb, group, resource, namespace, name):
    for scope, rule in rules:
        # A RoleBinding grants only inside its namespace; a request across all namespaces or on a
        # cluster-scoped object (namespace None) needs a ClusterRoleBinding.
        if scope is not None and scope != namespace:
            continue
        if rule_allows(rule, verb, group, resource, name):
            return True
    return False


def env_of(container, name):
    for e in container.get("env") or []:
        if e.get("name") == name:
            return e.get("value")
    return None


def main(paths):
    objects = load(paths)
    c = Checks()

    deployments = find(objects, "Deployment", DEPLOYMENT, NAMESPACE)
    if len(deployments) != 1:
        print(f"ERROR expected exactly one Deployment {NAMESPACE}/{DEPLOYMENT}", file=sys.stderr)
        return 1
    pod = deployments[0]["spec"]["template"]
    pod_labels = pod["metadata"].get("labels") or {}
    container = pod["spec"]["containers"][0]
    secret_name = env_of(container, "SECRET_NAME") or "kruise-webhook-certs"
    service_name = env_of(container, "SERVICE_NAME") or "kruise-webhook-service"
    webhook_port = int(env_of(container, "WEBHOOK_PORT") or 9876)

    # ------------------------------------------------------------------------------------------ RBAC
    rules = bound_rules(objects)
    c.check(rules, f"no rules bound to ServiceAccount {NAMESPACE}/{SERVICE_ACCOUNT}")
    required = list(REQUIRED)
    for kind, resource in (("MutatingWebhookConfiguration", "mutatingwebhookconfigurations"),
                           ("ValidatingWebhookConfiguration", "validatingwebhookconfigurations")):
        for config in find(objects, kind):
            for verb in ("get", "update"):
                required.append((verb, "admissionregistration.k8s.io", resource, None, config["metadata"]["name"]))
    for crd in find(objects, "CustomResourceDefinition"):
        webhook = ((crd["spec"].get("conversion") or {}).get("webhook") or {})
        if webhook.get("clientConfig"):
            for verb in ("get", "update"):
                required.append((verb, "apiextensions.k8s.io", "customresourcedefinitions", None,
                                 crd["metadata"]["name"]))

    def show(request):
        verb, group, resource, ns, name = request
        where = f" in {ns}" if ns else " (cluster-wide)"
        return f"{verb} {resource}{'.' + group if group else ''}{'/' + name if name else ''}{where}"

    for request in required:
        request = tuple(secret_name if x == "$SECRET_NAME" else x for x in request)
        c.check(allowed(rules, *request), f"RBAC: the server needs `{show(request)}` but it is not granted")
    for request in FORBIDDEN:
        request = tuple(secret_name if x == "$SECRET_NAME" else x for x in request)
        c.check(not allowed(rules, *request), f"RBAC: `{show(request)}` is granted but must not be")
    for role in find(objects, "ClusterRole") + find(objects, "Role"):
        for rule in role.get("rules") or []:
            where = f"{role['kind']} {role['metadata']['name']}"
            for field in ("apiGroups", "resources", "verbs", "resourceNames"):
                c.check("*" not in (rule.get(field) or []), f"RBAC: {where} uses `*` in {field}")
            bad = NEVER_VERBS & set(rule.get("verbs") or [])
            c.check(not bad, f"RBAC: {where} grants {sorted(bad)}")
            c.check("nonResourceURLs" not in rule, f"RBAC: {where} grants nonResourceURLs")

    # ---------------------------------------------------------------------------------------- wiring
    c.check(pod["spec"].get("serviceAccountName") == SERVICE_ACCOUNT,
            f"Deployment must run as ServiceAccount {SERVICE_ACCOUNT}")
    c.check(find(objects, "ServiceAccount", SERVICE_ACCOUNT, NAMESPACE), f"no ServiceAccount {SERVICE_ACCOUNT}")
    c.check(find(objects, "Namespace", NAMESPACE), f"no Namespace {NAMESPACE}")
    selector = deployments[0]["spec"]["selector"].get("matchLabels") or {}
    c.check(selector and all(pod_labels.get(k) == v for k, v in selector.items()),
            "Deployment selector does not match its pod template labels")
    ports = {p["containerPort"] for p in container.get("ports") or []}
    c.check(webhook_port in ports, f"container does not expose WEBHOOK_PORT {webhook_port}")

    services = find(objects, "Service", service_name, NAMESPACE)
    c.check(len(services) == 1, f"no Service {NAMESPACE}/{service_name} (SERVICE_NAME)")
    for service in services:
        sel = service["spec"].get("selector") or {}
        c.check(sel and all(pod_labels.get(k) == v for k, v in sel.items()),
                f"Service {service_name} does not select the Deployment's pods")
        https = [p for p in service["spec"].get("ports") or [] if p.get("port") == 443]
        c.check(len(https) == 1 and https[0].get("targetPort") in (webhook_port, "webhook"),
                f"Service {service_name} must map 443 to the webhook port {webhook_port}")

    for pdb in find(objects, "PodDisruptionBudget", namespace=NAMESPACE):
        sel = pdb["spec"]["selector"].get("matchLabels") or {}
        c.check(sel and all(pod_labels.get(k) == v for k, v in sel.items()),
                f"PodDisruptionBudget {pdb['metadata']['name']} does not select the Deployment's pods")
        replicas = deployments[0]["spec"].get("replicas", 1)
        c.check(pdb["spec"].get("minAvailable", 0) < replicas,
                "PDB minAvailable must be below replicas, or no node could ever be drained")

    def check_client(where, client_config):
        svc = client_config.get("service")
        c.check(svc is not None, f"{where}: clientConfig must reference the Service, not a URL")
        if svc:
            c.check(svc.get("name") == service_name and svc.get("namespace") == NAMESPACE
                    and svc.get("port", 443) == 443,
                    f"{where}: clientConfig.service must be {NAMESPACE}/{service_name}:443")

    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        for config in find(objects, kind):
            for webhook in config.get("webhooks") or []:
                where = f"{kind} {config['metadata']['name']} webhook {webhook['name']}"
                check_client(where, webhook.get("clientConfig") or {})
                expressions = (webhook.get("namespaceSelector") or {}).get("matchExpressions") or []
                excluded = set()
                for e in expressions:
                    if e.get("key") == "kubernetes.io/metadata.name" and e.get("operator") == "NotIn":
                        excluded |= set(e.get("values") or [])
                c.check({"kube-system", NAMESPACE} <= excluded,
                        f"{where}: namespaceSelector must exclude kube-system and {NAMESPACE} "
                        "by kubernetes.io/metadata.name NotIn")
    for crd in find(objects, "CustomResourceDefinition"):
        webhook = ((crd["spec"].get("conversion") or {}).get("webhook") or {})
        if webhook.get("clientConfig"):
            check_client(f"CRD {crd['metadata']['name']} conversion", webhook["clientConfig"])

    for message in c.failures:
        print(f"ERROR {message}", file=sys.stderr)
    print(f"{c.passed} checks passed, {len(c.failures)} failed ({len(required)} required API requests, "
          f"{len(FORBIDDEN)} forbidden ones)")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
