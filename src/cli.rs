//! Command line: `kruise serve`, `kruise admit`, `kruise crds`, `kruise playground`, `kruise completion`.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use clap::{Args, FromArgMatches as _, Parser, Subcommand, ValueEnum};
use kruise_core::{FeatureGates, Settings, feature_gates::Gate};

/// OpenKruise-compatible admission webhooks and controllers.
#[derive(Debug, Parser)]
#[command(name = "kruise", version, about)]
pub struct Cli {
    /// Log format.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text, env = "KRUISE_LOG_FORMAT")]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

/// `text` for people, `json` for log pipelines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// What to run.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the admission webhooks over HTTPS (standalone with --objects, else in a cluster).
    Serve(Box<ServeCommand>),
    /// Answer AdmissionReviews offline, or print a manifest as it would be admitted (-f).
    Admit(AdmitArgs),
    /// Print the CustomResourceDefinitions of kruise-rs as YAML.
    Crds,
    /// Run a simulated cluster with kruise-rs installed, for kubectl (no cluster needed).
    Playground(PlaygroundArgs),
    /// Run the node agent: one per node, next to the container runtime (docs/node-agent.md).
    Daemon(DaemonArgs),
    /// Print a shell completion script (`kruise completion bash > /etc/bash_completion.d/kruise`).
    Completion {
        /// `bash`, `zsh`, `fish`, `powershell` or `elvish`.
        shell: clap_complete::Shell,
    },
}

/// `kruise playground`.
#[derive(Clone, Debug, Args)]
pub struct PlaygroundArgs {
    /// Address of the simulated API server.
    #[arg(long, default_value = "127.0.0.1:6443")]
    pub listen: SocketAddr,
    /// Where to write the kubeconfig.
    #[arg(long, default_value = "./playground.kubeconfig")]
    pub kubeconfig: PathBuf,
    /// Number of simulated Ready nodes, spread over three zones (`topology.kubernetes.io/zone`).
    #[arg(long, default_value_t = 3)]
    pub nodes: usize,
    /// How long the simulated kubelet takes to start a container, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    pub kubelet_delay_ms: u64,
    /// Do not run kruise-rs in this process: install it, and resolve its webhook Service to this
    /// address, where you run `kruise serve --port <its port>` with the playground's kubeconfig.
    #[arg(long, value_name = "ADDR")]
    pub external_webhook: Option<SocketAddr>,
    /// `manual`: the playground's and kruise-rs's controllers share a clock that
    /// `kubectl create --raw /playground/clock -f -` with `{"advanceSeconds": N}` moves forward, so
    /// schedules can be tested without waiting (docs/advancedcronjob.md#clock).
    #[arg(long, value_enum, default_value_t = ClockKind::System)]
    pub clock: ClockKind,
    /// `simulated` (no container runs), or `containerd[=SOCKET]`: every scheduled pod runs as a real
    /// host-network sandbox and real containers in that containerd (SOCKET a path or a `unix://` URL;
    /// default /run/containerd/containerd.sock), shared by all the playground's nodes
    /// (docs/playground.md, "Real containers").
    #[arg(long, value_name = "RUNTIME", default_value = "simulated", value_parser = runtime)]
    pub runtime: PlaygroundRuntime,
    /// kruise-rs's `--nodeimage-creation-delay` in the playground: 0 by default (its nodes are Ready
    /// from the start); with `--clock manual` the delay runs on that clock.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = go_duration)]
    pub nodeimage_creation_delay: Duration,
}

/// What runs the playground's pods.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlaygroundRuntime {
    /// The simulated kubelet.
    Simulated,
    /// containerd's CRI socket.
    Containerd(PathBuf),
}

/// containerd's usual socket.
pub const CONTAINERD_SOCKET: &str = "/run/containerd/containerd.sock";

fn runtime(value: &str) -> Result<PlaygroundRuntime, String> {
    match value.split_once('=') {
        None if value == "simulated" => Ok(PlaygroundRuntime::Simulated),
        None if value == "containerd" => Ok(PlaygroundRuntime::Containerd(CONTAINERD_SOCKET.into())),
        Some(("containerd", socket)) if !socket.is_empty() => Ok(PlaygroundRuntime::Containerd(
            kruise_playground::kubelet::cri::socket_path(socket),
        )),
        _ => Err(format!(
            "`{value}`: expected `simulated`, `containerd` or `containerd=SOCKET`"
        )),
    }
}

/// Which clock `kruise playground` runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ClockKind {
    /// The system clock.
    System,
    /// The system clock plus an offset tests move forward.
    Manual,
}

/// `kruise daemon`.
#[derive(Clone, Debug, Args)]
#[command(
    after_help = "Example (in the DaemonSet, NODE_NAME from the downward API):\n  \
    kruise daemon --host-run-dir /hostvarrun --addr 0.0.0.0:10221"
)]
pub struct DaemonArgs {
    /// The node this agent runs on.
    #[arg(long, env = "NODE_NAME")]
    pub node_name: String,
    /// Where /healthz and /readyz listen.
    #[arg(long, default_value = "0.0.0.0:10221")]
    pub addr: SocketAddr,
    /// The host's /var/run as mounted into the agent; the runtime's socket is searched under it.
    #[arg(long, default_value = "/hostvarrun")]
    pub host_run_dir: PathBuf,
    /// The runtime's socket; when set, the only one tried.
    #[arg(long, value_name = "PATH")]
    pub socket_file: Option<PathBuf>,
    /// Seconds between searches for the runtime while none answers, and between checks of the one found.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = seconds)]
    pub probe_interval: Duration,
    /// Image pulls running at once on this node (the rest wait their turn as `Waiting`).
    #[arg(long, value_name = "N", default_value = "2")]
    pub max_concurrent_pulls: usize,
    /// OpenKruise feature gates, `Name=true,Other=false` (as `kruise serve`; see docs/node-agent.md):
    /// `KruiseDaemon`, `ImagePullJobGate`, `DaemonWatchingPod`, `InPlaceUpdateEnvFromMetadata` and
    /// `PodProbeMarkerGate` off leave their workers unstarted.
    #[arg(long, value_name = "GATE=BOOL,...", value_parser = FeatureGates::parse)]
    pub feature_gates: Option<FeatureGates>,
}

/// How the serving certificate is obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CertMode {
    /// kruise-rs generates and rotates its own CA and certificate (in --cert-dir standalone, in the
    /// `kruise-webhook-certs` Secret in a cluster).
    SelfSigned,
    /// Something else (cert-manager) writes tls.crt / tls.key / ca.crt to --cert-dir; kruise-rs only serves
    /// them, polling the directory for changes.
    External,
}

/// `kruise serve`: what to serve, and the webhook port's limits.
#[derive(Clone, Debug, Args)]
pub struct ServeCommand {
    #[command(flatten)]
    pub args: ServeArgs,
    #[command(flatten)]
    pub limits: ServingLimits,
}

/// Limits and timeouts of the webhook port. The timeouts fit kube-apiserver's webhook timeout (10 s by
/// default, 30 s at most): a request that cannot be answered within it is dropped early.
#[derive(Clone, Debug, Args)]
pub struct ServingLimits {
    /// Open connections on the webhook port at most; one more is closed at once.
    #[arg(long, default_value_t = 1024)]
    pub max_connections: usize,
    /// Requests handled at once at most (body reads included); one more is answered 503 at once.
    #[arg(long, default_value_t = 256)]
    pub max_concurrent_requests: usize,
    /// Bytes of request bodies held at once, all requests together; a request that would go over is
    /// answered 503.
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024 * 1024)]
    pub max_buffered_body_bytes: usize,
    /// Seconds to complete a TLS handshake.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = seconds)]
    pub handshake_timeout: Duration,
    /// Seconds from the first byte of an HTTP/1.1 request to its complete header.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = seconds)]
    pub header_read_timeout: Duration,
    /// Seconds to receive a request body once its header is in; 408 after that.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = seconds)]
    pub body_read_timeout: Duration,
    /// Seconds a connection may go without a request before it is closed.
    #[arg(long, value_name = "SECONDS", default_value = "90", value_parser = seconds)]
    pub idle_timeout: Duration,
    /// Seconds in-flight and arriving requests get after SIGTERM before the process exits. The
    /// Deployment's terminationGracePeriodSeconds covers its preStop pause plus this.
    #[arg(long, value_name = "SECONDS", default_value = "12", value_parser = seconds)]
    pub shutdown_grace: Duration,
}

impl Default for ServingLimits {
    /// The flags' defaults.
    fn default() -> Self {
        ServingLimits::augment_args(clap::Command::new("serve"))
            .try_get_matches_from(["serve"])
            .and_then(|matches| ServingLimits::from_arg_matches(&matches))
            .expect("the defaults parse")
    }
}

/// A duration in seconds (`10`, `0.5`).
fn seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|e| format!("{text:?} is not a number of seconds: {e}"))?;
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("{text:?}: {e}"))
}

/// `kruise serve`'s arguments but the limits.
#[derive(Clone, Debug, Args)]
pub struct ServeArgs {
    /// HTTPS port of the webhooks.
    #[arg(long, default_value_t = 9876, env = "WEBHOOK_PORT")]
    pub port: u16,
    /// Address to bind the webhook port on.
    #[arg(long, default_value = "0.0.0.0", env = "WEBHOOK_BIND_ADDRESS")]
    pub bind_address: std::net::IpAddr,
    /// Plain-HTTP address of /metrics, /healthz and /readyz.
    #[arg(long, default_value = "127.0.0.1:8080", env = "METRICS_ADDR")]
    pub metrics_addr: SocketAddr,
    /// Cluster state from YAML/JSON files or directories instead of an API server (repeatable).
    #[arg(long = "objects", value_name = "FILE_OR_DIR")]
    pub objects: Vec<PathBuf>,
    /// Certificate directory (ca.crt, tls.crt, tls.key).
    #[arg(long, default_value = "./certs", env = "WEBHOOK_CERT_DIR")]
    pub cert_dir: PathBuf,
    /// Who provides the serving certificate.
    #[arg(long, value_enum, default_value_t = CertMode::SelfSigned)]
    pub cert_mode: CertMode,
    /// Validity of the generated CA, in days.
    #[arg(long, default_value_t = 3650)]
    pub ca_validity_days: u32,
    /// Validity of the generated serving certificate, in days.
    #[arg(long, default_value_t = 365)]
    pub cert_validity_days: u32,
    /// Least time between two phases of a CA rotation (publish the next CA, switch the serving
    /// certificate to it, drop the old CA), in seconds; certificates are re-checked every half of it,
    /// at most every 60 s, so every replica serves a phase's certificate before the next phase.
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u32).range(2..))]
    pub ca_rotation_dwell_seconds: u32,
    /// Namespace kruise-rs runs in (Secret, Lease, Service).
    #[arg(long, default_value = "kruise-system", env = "POD_NAMESPACE")]
    pub namespace: String,
    /// Service that fronts the webhooks.
    #[arg(long, default_value = "kruise-webhook-service", env = "SERVICE_NAME")]
    pub service_name: String,
    /// Secret holding the webhook certificates (cluster mode).
    #[arg(long, default_value = "kruise-webhook-certs", env = "SECRET_NAME")]
    pub secret_name: String,
    /// Turn off deletion protection (`policy.kruise.io/delete-protection`).
    #[arg(long)]
    pub disable_deletion_protection: bool,
    /// Enable `Cascading` deletion protection of CustomResourceDefinitions.
    #[arg(long)]
    pub enable_crd_cascading_protection: bool,
    /// OpenKruise feature gates, `Name=true,Other=false` (see docs/feature-gates.md).
    #[arg(long, value_name = "GATE=BOOL,...", value_parser = FeatureGates::parse)]
    pub feature_gates: Option<FeatureGates>,
    /// How long a node must have been Ready before its NodeImage is created (`30s`, `1m`, `500ms`;
    /// a bare number is seconds).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = go_duration)]
    pub nodeimage_creation_delay: Duration,
    /// Where ImagePullJobs' pull secrets are copied for the node agents to read.
    #[arg(long, default_value = "kruise-daemon", env = "KRUISE_DAEMON_CONFIG_NS")]
    pub daemon_config_namespace: String,
}

/// A duration as Go's flags take one (`30s`, `1m30s`, `500ms`, `2h`), or a bare number of seconds.
fn go_duration(text: &str) -> Result<Duration, String> {
    if let Ok(bare) = seconds(text) {
        return Ok(bare);
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("{text:?}: missing unit (ms, s, m, h)"))?;
        let (number, tail) = rest.split_at(digits);
        let unit_len = tail.find(|c: char| c.is_ascii_digit()).unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_len);
        let scale = match unit {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            other => return Err(format!("{text:?}: unknown unit {other:?} (ms, s, m, h)")),
        };
        let value: f64 = number
            .parse()
            .map_err(|e| format!("{text:?} is not a duration: {e}"))?;
        total += Duration::try_from_secs_f64(value * scale).map_err(|e| format!("{text:?}: {e}"))?;
        rest = next;
    }
    Ok(total)
}

impl ServeArgs {
    /// The switches: `--feature-gates`, then the older flags that override their gates.
    pub fn settings(&self) -> Settings {
        settings(
            self.feature_gates,
            self.disable_deletion_protection,
            self.enable_crd_cascading_protection,
        )
    }
}

/// `kruise admit`.
#[derive(Clone, Debug, Args)]
pub struct AdmitArgs {
    /// Webhook path to call, e.g. /validate-namespace. Without it, -f is required.
    #[arg(long)]
    pub webhook: Option<String>,
    /// Cluster state from YAML/JSON files or directories (repeatable).
    #[arg(long = "objects", value_name = "FILE_OR_DIR")]
    pub objects: Vec<PathBuf>,
    /// AdmissionReview stream to read (default: stdin).
    #[arg(long)]
    pub review: Option<PathBuf>,
    /// A manifest to pass through the create path and print as YAML ("-" for stdin).
    #[arg(short = 'f', long = "filename", conflicts_with_all = ["webhook", "review"])]
    pub filename: Option<PathBuf>,
    /// Turn off deletion protection.
    #[arg(long)]
    pub disable_deletion_protection: bool,
    /// OpenKruise feature gates, `Name=true,Other=false` (see docs/feature-gates.md).
    #[arg(long, value_name = "GATE=BOOL,...", value_parser = FeatureGates::parse)]
    pub feature_gates: Option<FeatureGates>,
}

impl AdmitArgs {
    /// The switches: `--feature-gates`, then `--disable-deletion-protection`.
    pub fn settings(&self) -> Settings {
        settings(self.feature_gates, self.disable_deletion_protection, false)
    }
}

/// Settings from the gates; `--disable-deletion-protection` turns ResourcesDeletionProtection off
/// and `--enable-crd-cascading-protection` turns DeletionProtectionForCRDCascadingGate on.
fn settings(gates: Option<FeatureGates>, disable_deletion_protection: bool, crd_cascading: bool) -> Settings {
    let mut settings = Settings::new(gates.unwrap_or_default());
    if disable_deletion_protection {
        settings = settings.with(Gate::ResourcesDeletionProtection, false);
    }
    if crd_cascading {
        settings = settings.with(Gate::DeletionProtectionForCRDCascadingGate, true);
    }
    settings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_read_as_go_flags_take_them() {
        let d = |s: &str| go_duration(s);
        assert_eq!(d("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(d("0s"), Ok(Duration::ZERO));
        assert_eq!(d("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(d("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(d("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(d("45"), Ok(Duration::from_secs(45)));
        assert!(d("30").is_ok() && d("10x").is_err() && d("s").is_err() && d("-1s").is_err());
    }
}
