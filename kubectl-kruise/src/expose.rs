//! `expose`: kubectl's, which also takes a CloneSet (a Service from its selector and container
//! ports, named after it). An Advanced StatefulSet or DaemonSet cannot be exposed, as in
//! kruise-tools; every other kind (and `-f`/`-k`) is handed to kubectl's own `expose`.

use clap::Parser;
use kube::api::{Api, ApiResource, DynamicObject, PostParams};
use serde_json::{Map, Value, json};

use crate::{
    Error,
    cli::{DryRun, RawArgs},
    client::{KubeFlags, Session, delegate_to_kubectl},
    kinds::{self, Kind},
};

/// kubectl expose's flags, read for a CloneSet.
#[derive(Debug, Parser)]
#[command(
    name = "expose",
    bin_name = "kubectl kruise expose",
    about = "Expose a CloneSet, Deployment, ReplicaSet, ReplicationController, Service or Pod as a new Service.",
    after_help = "Examples:\n  # a Service for CloneSet web, on its containers' ports\n  kubectl kruise expose cloneset web\n  # port 80 to the containers' port 8080\n  kubectl kruise expose cloneset/web --port=80 --target-port=8080 --name=web-http\n  # kubectl's own kinds are kubectl's expose\n  kubectl kruise expose deployment shop --port=80"
)]
pub struct ExposeFlags {
    #[command(flatten)]
    pub kube: KubeFlags,
    /// `TYPE NAME` or `TYPE/NAME`.
    pub resources: Vec<String>,
    /// The port the Service serves on (default: the containers' ports).
    #[arg(long)]
    pub port: Option<String>,
    /// `TCP`, `UDP` or `SCTP` (default: the containers', else TCP).
    #[arg(long)]
    pub protocol: Option<String>,
    /// Name or number of the containers' port traffic goes to (default: the port).
    #[arg(long, alias = "container-port")]
    pub target_port: Option<String>,
    /// The Service's name (default: the object's).
    #[arg(long)]
    pub name: Option<String>,
    /// `ClusterIP`, `NodePort`, `LoadBalancer` or `ExternalName`.
    #[arg(long = "type")]
    pub service_type: Option<String>,
    /// IP to assign to the LoadBalancer.
    #[arg(long)]
    pub load_balancer_ip: Option<String>,
    /// `k=v,…` (equality only; default: the object's matchLabels).
    #[arg(long)]
    pub selector: Option<String>,
    /// The Service's labels `k=v,…` (default: the object's).
    #[arg(short = 'l', long)]
    pub labels: Option<String>,
    /// An additional external IP of the Service.
    #[arg(long)]
    pub external_ip: Option<String>,
    /// `None` or `ClientIP`.
    #[arg(long)]
    pub session_affinity: Option<String>,
    /// The cluster IP (`None`: a headless Service).
    #[arg(long)]
    pub cluster_ip: Option<String>,
    /// `none`, `client` (print, create nothing) or `server`.
    #[arg(long, value_enum, default_value_t = DryRun::None, num_args = 0..=1, default_missing_value = "client")]
    pub dry_run: DryRun,
    /// `yaml`, `json` or `name`.
    #[arg(short = 'o', long)]
    pub output: Option<String>,
    /// Files (handed to kubectl).
    #[arg(short = 'f', long = "filename")]
    pub filename: Vec<String>,
    /// A kustomization directory (handed to kubectl).
    #[arg(short = 'k', long)]
    pub kustomize: Option<String>,
}

/// Splits `k=v,k2=v2` (equality only).
fn pairs(text: &str, what: &str) -> Result<Map<String, Value>, Error> {
    let mut out = Map::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .filter(|(k, v)| !k.is_empty() && !k.contains('!') && !v.contains('='))
            .ok_or_else(|| Error::Usage(format!("invalid {what} {part:?}: only k=v pairs are supported")))?;
        out.insert(k.to_string(), json!(v));
    }
    Ok(out)
}

fn int_or_name(text: &str) -> Value {
    text.parse::<i64>().map_or_else(|_| json!(text), |n| json!(n))
}

/// The Service kubectl's generator makes for a CloneSet (`cloneset` as stored) with `flags`.
pub fn service_for(cloneset: &Value, flags: &ExposeFlags) -> Result<Value, Error> {
    let object_name = cloneset
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let name: String = flags
        .name
        .clone()
        .unwrap_or_else(|| object_name.chars().take(63).collect());
    let selector = match &flags.selector {
        Some(s) => pairs(s, "selector")?,
        None => {
            let sel = cloneset.pointer("/spec/selector").filter(|s| !s.is_null()).ok_or_else(|| {
                Error::Usage("couldn't retrieve selectors via --selector flag or introspection: invalid CloneSet: no selectors, therefore cannot be exposed".to_string())
            })?;
            if sel
                .get("matchExpressions")
                .and_then(Value::as_array)
                .is_some_and(|e| !e.is_empty())
            {
                return Err(Error::Usage(format!(
                    "couldn't retrieve selectors via --selector flag or introspection: couldn't convert expressions - {} to map-based selector format",
                    sel["matchExpressions"]
                )));
            }
            sel.get("matchLabels")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        }
    };
    let labels = match &flags.labels {
        Some(l) => pairs(l, "labels")?,
        None => cloneset
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
    };
    // The containers' ports, in order, with their protocols.
    let mut container_ports: Vec<(String, String)> = Vec::new();
    let containers = cloneset
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array);
    for port in containers
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("ports")?.as_array())
        .flatten()
    {
        if let Some(n) = port.get("containerPort").and_then(Value::as_i64) {
            let protocol = port.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
            container_ports.push((n.to_string(), protocol.to_string()));
        }
    }
    let ports: Vec<String> = match &flags.port {
        Some(p) => p.split(',').map(str::to_string).collect(),
        None => container_ports.iter().map(|(p, _)| p.clone()).collect(),
    };
    let headless = flags.cluster_ip.as_deref() == Some("None");
    if ports.is_empty() && !headless {
        return Err(Error::Usage(
            "couldn't find port via --port flag or introspection".to_string(),
        ));
    }
    let mut service_ports = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let number: i64 = port
            .parse()
            .map_err(|_| Error::Usage(format!("invalid --port {port:?}: not a number")))?;
        let protocol = flags.protocol.clone().unwrap_or_else(|| {
            container_ports
                .iter()
                .find(|(p, _)| p == port)
                .map_or_else(|| "TCP".to_string(), |(_, proto)| proto.clone())
        });
        let mut entry = json!({"port": number, "protocol": protocol,
            "targetPort": flags.target_port.as_deref().map_or_else(|| json!(number), int_or_name)});
        if ports.len() > 1 {
            entry["name"] = json!(format!("port-{}", i + 1));
        }
        service_ports.push(entry);
    }
    let mut metadata = json!({"name": name});
    if !labels.is_empty() {
        metadata["labels"] = Value::Object(labels);
    }
    let mut spec = json!({"ports": service_ports, "selector": selector});
    for (key, value) in [
        ("type", &flags.service_type),
        ("clusterIP", &flags.cluster_ip),
        ("loadBalancerIP", &flags.load_balancer_ip),
        ("sessionAffinity", &flags.session_affinity),
    ] {
        if let Some(v) = value {
            spec[key] = json!(v);
        }
    }
    if let Some(ip) = &flags.external_ip {
        spec["externalIPs"] = json!([ip]);
    }
    Ok(json!({"apiVersion": "v1", "kind": "Service", "metadata": metadata, "spec": spec}))
}

fn services() -> ApiResource {
    ApiResource {
        group: String::new(),
        version: "v1".into(),
        api_version: "v1".into(),
        kind: "Service".into(),
        plural: "services".into(),
    }
}

/// Fills the flags given inside `expose`'s arguments from those given before it.
fn merged(outer: &KubeFlags, inner: &KubeFlags) -> KubeFlags {
    KubeFlags {
        kubeconfig: inner.kubeconfig.clone().or_else(|| outer.kubeconfig.clone()),
        namespace: inner.namespace.clone().or_else(|| outer.namespace.clone()),
        context: inner.context.clone().or_else(|| outer.context.clone()),
        cluster: inner.cluster.clone().or_else(|| outer.cluster.clone()),
        user: inner.user.clone().or_else(|| outer.user.clone()),
        server: inner.server.clone().or_else(|| outer.server.clone()),
        token: inner.token.clone().or_else(|| outer.token.clone()),
        insecure_skip_tls_verify: inner.insecure_skip_tls_verify || outer.insecure_skip_tls_verify,
    }
}

async fn expose_cloneset(session: &Session, name: &str, flags: &ExposeFlags) -> Result<(), Error> {
    let ty = kinds::Type::parse("cloneset")?;
    let cloneset = session.api(ty.resource()?).get(name).await?;
    let mut service = service_for(&serde_json::to_value(&cloneset)?, flags)?;
    if flags.dry_run != DryRun::Client {
        let api: Api<DynamicObject> =
            Api::namespaced_with(session.client.clone(), &session.namespace, &services());
        let params = PostParams {
            dry_run: flags.dry_run == DryRun::Server,
            ..PostParams::default()
        };
        service = serde_json::to_value(api.create(&params, &serde_json::from_value(service)?).await?)?;
    } else {
        service["metadata"]["namespace"] = json!(session.namespace);
    }
    let service_name = service
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match flags.output.as_deref() {
        Some("yaml") => print!(
            "{}",
            serde_saphyr::to_string(&service).map_err(|e| Error::Failed(e.to_string()))?
        ),
        Some("json") => println!("{}", serde_json::to_string_pretty(&service)?),
        Some("name") => println!("service/{service_name}"),
        Some(other) => {
            return Err(Error::Usage(format!(
                "unable to match a printer suitable for the output format {other:?}, allowed formats are: json,name,yaml"
            )));
        }
        None => {
            let dry = match flags.dry_run {
                DryRun::None => "",
                DryRun::Client => " (dry run)",
                DryRun::Server => " (server dry run)",
            };
            println!("service/{service_name} exposed{dry}");
        }
    }
    Ok(())
}

/// `expose`: a CloneSet here, the kinds kruise-tools refuses refused, the rest by kubectl.
pub async fn run(outer: &KubeFlags, raw: &RawArgs) -> Result<u8, Error> {
    let argv = std::iter::once("expose".to_string()).chain(raw.args.iter().cloned());
    let flags = match ExposeFlags::try_parse_from(argv) {
        Ok(flags) => flags,
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return Ok(0);
        }
        // A flag of kubectl's this parser does not read: kubectl's expose decides.
        Err(_) => return delegate_to_kubectl(),
    };
    if !flags.filename.is_empty() || flags.kustomize.is_some() {
        return delegate_to_kubectl();
    }
    let Ok(targets) = kinds::targets(&flags.resources) else {
        return delegate_to_kubectl();
    };
    let mut ours = Vec::new();
    for target in &targets {
        match target.ty.kind {
            Kind::CloneSet => ours.push(target.name.clone()),
            Kind::Pod | Kind::Native => {}
            _ => {
                let r = target.ty.resource()?;
                return Err(Error::Failed(format!("cannot expose a {}.{}", r.kind, r.group)));
            }
        }
    }
    if ours.is_empty() {
        return delegate_to_kubectl();
    }
    if ours.len() != targets.len() {
        return Err(Error::Usage(
            "expose built-in kinds and CloneSets in separate commands".to_string(),
        ));
    }
    let session = merged(outer, &flags.kube).connect().await?;
    for name in ours {
        expose_cloneset(&session, &name, &flags).await?;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(args: &[&str]) -> ExposeFlags {
        ExposeFlags::try_parse_from(std::iter::once("expose").chain(args.iter().copied())).unwrap()
    }

    fn cloneset() -> Value {
        json!({"metadata": {"name": "web", "labels": {"team": "a"}},
               "spec": {"selector": {"matchLabels": {"app": "web"}},
                        "template": {"spec": {"containers": [
                            {"name": "main", "ports": [{"containerPort": 8080}, {"containerPort": 53, "protocol": "UDP"}]},
                            {"name": "side"}]}}}})
    }

    #[test]
    fn the_flag_parser_is_consistent() {
        use clap::CommandFactory as _;
        ExposeFlags::command().debug_assert();
    }

    #[test]
    fn a_cloneset_service_takes_its_selector_labels_and_container_ports() {
        let svc = service_for(&cloneset(), &flags(&["cloneset", "web"])).unwrap();
        assert_eq!(
            svc,
            json!({"apiVersion": "v1", "kind": "Service",
                   "metadata": {"name": "web", "labels": {"team": "a"}},
                   "spec": {"selector": {"app": "web"}, "ports": [
                       {"name": "port-1", "port": 8080, "protocol": "TCP", "targetPort": 8080},
                       {"name": "port-2", "port": 53, "protocol": "UDP", "targetPort": 53}]}})
        );
    }

    #[test]
    fn flags_override_the_introspected_values() {
        let f = flags(&[
            "cloneset/web",
            "--port=80",
            "--target-port",
            "http",
            "--name",
            "web-http",
            "--type=NodePort",
            "-l",
            "x=y",
            "--selector",
            "app=web,track=stable",
            "--session-affinity",
            "ClientIP",
        ]);
        let svc = service_for(&cloneset(), &f).unwrap();
        assert_eq!(svc["metadata"], json!({"name": "web-http", "labels": {"x": "y"}}));
        assert_eq!(
            svc["spec"],
            json!({"selector": {"app": "web", "track": "stable"}, "type": "NodePort", "sessionAffinity": "ClientIP",
                   "ports": [{"port": 80, "protocol": "TCP", "targetPort": "http"}]})
        );
    }

    #[test]
    fn what_kubectl_cannot_expose_is_refused() {
        let mut no_ports = cloneset();
        no_ports["spec"]["template"]["spec"]["containers"] = json!([{"name": "main"}]);
        let e = service_for(&no_ports, &flags(&["cloneset", "web"]))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "couldn't find port via --port flag or introspection");
        assert!(service_for(&no_ports, &flags(&["cloneset", "web", "--cluster-ip=None"])).is_ok());
        let mut expressions = cloneset();
        expressions["spec"]["selector"]["matchExpressions"] = json!([{"key": "a", "operator": "Exists"}]);
        let e = service_for(&expressions, &flags(&["cloneset", "web"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("to map-based selector format"), "{e}");
        assert!(service_for(&cloneset(), &flags(&["cloneset", "web", "--selector", "a!=b"])).is_err());
    }
}
