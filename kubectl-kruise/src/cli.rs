//! The command tree (OpenKruise's kruise-tools tree for the kinds kruise-rs serves, plus `explain`,
//! `inject` and `completion`). Every command's `--help` ends with examples.

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};

use crate::client::KubeFlags;

/// kubectl kruise controls OpenKruise workloads (CloneSet, Advanced StatefulSet, SidecarSet) and explains
/// which kruise policies apply to a pod.
#[derive(Debug, Parser)]
#[command(name = "kubectl-kruise", bin_name = "kubectl kruise", version, about)]
#[command(
    after_help = "Examples:\n  kubectl kruise rollout status cloneset/web\n  kubectl kruise explain pod/web-abcde\n  kubectl kruise completion bash > /etc/bash_completion.d/kubectl-kruise"
)]
pub struct Cli {
    #[command(flatten)]
    pub kube: KubeFlags,
    #[command(subcommand)]
    pub command: Command,
}

/// The plugin's commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Manage the rollout of a CloneSet or Advanced StatefulSet (built-in kinds: kubectl's rollout).
    #[command(subcommand)]
    Rollout(Rollout),
    /// Set fields of the pod template of a CloneSet or Advanced StatefulSet (and images of a SidecarSet).
    #[command(subcommand)]
    Set(Set),
    /// Show the details of a Kruise Rollout.
    #[command(subcommand)]
    Describe(Describe),
    /// Delete chosen pods of a CloneSet and lower its replicas by as many.
    #[command(
        after_help = "Examples:\n  # delete pods web-abcde and web-fghij, replicas 5 -> 3\n  kubectl kruise scaledown cloneset/web --pods web-abcde,web-fghij"
    )]
    Scaledown(ScaledownArgs),
    /// Create a Job, BroadcastJob or ContainerRecreateRequest.
    #[command(subcommand)]
    Create(Create),
    /// Create a CloneSet from a Deployment, or move a Deployment's replicas to a CloneSet.
    #[command(
        after_help = "Examples:\n  kubectl kruise migrate CloneSet --from Deployment --src-name shop --dst-name shop --create --copy\n  kubectl kruise migrate CloneSet --from Deployment --src-name shop --dst-name shop --max-surge 2 --timeout-seconds 300"
    )]
    Migrate(MigrateArgs),
    /// List the kruise objects of a namespace (`get all`).
    #[command(after_help = "Examples:\n  kubectl kruise get all\n  kubectl kruise get all -n shop")]
    Get(GetArgs),
    /// Say, for every SidecarSet, PodUnavailableBudget, WorkloadSpread and launch-priority rule, whether
    /// it applies to a pod and why not, decided by kruise-rs's own webhook code (a dry run).
    #[command(
        after_help = "Examples:\n  # a pod of the cluster\n  kubectl kruise explain pod/web-abcde\n  # a pod that is not created yet, against the cluster's policies\n  kubectl kruise explain -f pod.yaml\n  # entirely offline, against objects in files\n  kubectl kruise explain -f pod.yaml --objects ./cluster-state/"
    )]
    Explain(ExplainArgs),
    /// Print a manifest as kruise-rs's webhooks would admit it (sidecars injected, …).
    #[command(
        after_help = "Examples:\n  kubectl kruise inject -f deployment.yaml | kubectl apply -f -\n  kubectl kruise inject -f pod.yaml --objects ./cluster-state/"
    )]
    Inject(InjectArgs),
    /// Print a shell completion script.
    #[command(
        after_help = "Examples:\n  kubectl kruise completion bash > ~/.local/share/bash-completion/completions/kubectl-kruise\n  kubectl kruise completion zsh > \"${fpath[1]}/_kubectl-kruise\"\n  kubectl kruise completion fish > ~/.config/fish/completions/kubectl-kruise.fish"
    )]
    Completion(CompletionArgs),
    /// Run a command in a container of a pod, or of a workload's pod (`-S`: a SidecarSet's working
    /// hot-upgrade container).
    #[command(
        after_help = "Examples:\n  kubectl kruise exec web-abcde -- date\n  # the first active pod of CloneSet web\n  kubectl kruise exec cloneset/web -- date\n  # the working container of the hot-upgraded SidecarSet container log-agent\n  kubectl kruise exec cloneset/web -S log-agent -it -- sh"
    )]
    Exec(ExecArgs),
    /// Expose a CloneSet (or any kind kubectl's expose takes) as a new Service.
    #[command(
        disable_help_flag = true,
        after_help = "Examples:\n  kubectl kruise expose cloneset web --port=80 --target-port=8080\n  kubectl kruise expose deployment shop --port=80"
    )]
    Expose(RawArgs),
    /// kubectl's `diff`.
    #[command(
        disable_help_flag = true,
        after_help = "Examples:\n  kubectl kruise diff -f cloneset.yaml"
    )]
    Diff(RawArgs),
    /// kubectl's `apply`.
    #[command(
        disable_help_flag = true,
        after_help = "Examples:\n  kubectl kruise apply -f cloneset.yaml"
    )]
    Apply(RawArgs),
    /// kubectl's `patch`.
    #[command(
        disable_help_flag = true,
        after_help = "Examples:\n  kubectl kruise patch cloneset web --type=merge -p '{\"spec\":{\"replicas\":3}}'"
    )]
    Patch(RawArgs),
    /// kubectl's `replace`.
    #[command(
        disable_help_flag = true,
        after_help = "Examples:\n  kubectl kruise replace -f cloneset.yaml"
    )]
    Replace(RawArgs),
    /// kubectl's `wait`.
    #[command(
        disable_help_flag = true,
        after_help = "Examples:\n  kubectl kruise wait --for=jsonpath='{.status.readyReplicas}'=3 cloneset/web"
    )]
    Wait(RawArgs),
    /// kubectl's `kustomize`.
    #[command(
        disable_help_flag = true,
        after_help = "Examples:\n  kubectl kruise kustomize manifests/"
    )]
    Kustomize(RawArgs),
    /// kubectl's `config`.
    #[command(
        disable_help_flag = true,
        after_help = "Examples:\n  kubectl kruise config current-context"
    )]
    Config(RawArgs),
    /// kubectl's `plugin`.
    #[command(
        disable_help_flag = true,
        after_help = "Examples:\n  kubectl kruise plugin list"
    )]
    Plugin(RawArgs),
    /// kubectl's `version`.
    #[command(
        disable_help_flag = true,
        after_help = "Examples:\n  kubectl kruise version --client"
    )]
    Version(RawArgs),
    /// kubectl's `api-versions`.
    #[command(
        disable_help_flag = true,
        after_help = "Examples:\n  kubectl kruise api-versions"
    )]
    ApiVersions(RawArgs),
    /// kubectl's `api-resources`.
    #[command(
        disable_help_flag = true,
        after_help = "Examples:\n  kubectl kruise api-resources --api-group=apps.kruise.io"
    )]
    ApiResources(RawArgs),
    /// kubectl's `options`.
    #[command(disable_help_flag = true, after_help = "Examples:\n  kubectl kruise options")]
    Options(RawArgs),
    /// kubectl's `scale` (CloneSets and Advanced StatefulSets have the scale subresource).
    #[command(
        disable_help_flag = true,
        after_help = "Examples:\n  kubectl kruise scale cloneset/web --replicas=5"
    )]
    Scale(RawArgs),
}

/// `rollout …`.
#[derive(Debug, Subcommand)]
pub enum Rollout {
    /// Watch the rollout until it is done.
    #[command(
        after_help = "Examples:\n  kubectl kruise rollout status cloneset/web\n  kubectl kruise rollout status asts/db --watch=false\n  kubectl kruise rollout status cloneset/web --timeout 5m -d"
    )]
    Status(StatusArgs),
    /// Show the revisions (ControllerRevisions) of a workload.
    #[command(
        after_help = "Examples:\n  kubectl kruise rollout history cloneset/web\n  kubectl kruise rollout history cloneset/web --revision 2"
    )]
    History(HistoryArgs),
    /// Roll the pod template back to a former revision.
    #[command(
        after_help = "Examples:\n  kubectl kruise rollout undo cloneset/web\n  kubectl kruise rollout undo cloneset/web --to-revision 1\n  kubectl kruise rollout undo cloneset/web --dry-run=client\n  # the workload of Rollout rollout-demo\n  kubectl kruise rollout undo rollout/rollout-demo\n  # back to an earlier step of the release that sends no traffic\n  kubectl kruise rollout undo rollout/rollout-demo --fast"
    )]
    Undo(UndoArgs),
    /// Pause the update of a CloneSet (`spec.updateStrategy.paused`) or a Kruise Rollout
    /// (`spec.strategy.paused`).
    #[command(
        after_help = "Examples:\n  kubectl kruise rollout pause cloneset/web\n  kubectl kruise rollout pause rollout/rollout-demo"
    )]
    Pause(TargetArgs),
    /// Resume a paused CloneSet update or Kruise Rollout.
    #[command(
        after_help = "Examples:\n  kubectl kruise rollout resume cloneset/web\n  kubectl kruise rollout resume rollout/rollout-demo"
    )]
    Resume(TargetArgs),
    /// Let a Kruise Rollout waiting at a paused step go on (`StepPaused` → `StepReady`).
    #[command(after_help = "Examples:\n  kubectl kruise rollout approve rollout/rollout-demo -n ns-demo")]
    Approve(TargetArgs),
    /// Restart every pod (sets the template annotation kubectl.kubernetes.io/restartedAt: containers
    /// restart in place where the node agent serves the pods, the others are recreated).
    #[command(
        after_help = "Examples:\n  kubectl kruise rollout restart cloneset/web\n  kubectl kruise rollout restart cloneset/web cloneset/api"
    )]
    Restart(TargetArgs),
}

/// Objects given as `TYPE/NAME…` or `TYPE NAME…`.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// `TYPE/NAME…` or `TYPE NAME…`.
    #[arg(required = true)]
    pub resources: Vec<String>,
}

/// `rollout status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// `TYPE/NAME` or `TYPE NAME`.
    #[arg(required = true)]
    pub resources: Vec<String>,
    /// Watch until the rollout is done (`--watch=false`: print once).
    #[arg(short = 'w', long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub watch: bool,
    /// Give up after this long (`0`: never), e.g. `90s`, `5m`.
    #[arg(long, default_value = "0")]
    pub timeout: String,
    /// Deployments only (handed to kubectl).
    #[arg(long, default_value_t = 0)]
    pub revision: i64,
    /// Also list the updated pods, ready and not ready.
    #[arg(short = 'd', long)]
    pub detail: bool,
}

/// `rollout history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// `TYPE/NAME` or `TYPE NAME`.
    #[arg(required = true)]
    pub resources: Vec<String>,
    /// Show this revision's pod template.
    #[arg(long, default_value_t = 0)]
    pub revision: i64,
}

/// `rollout undo`.
#[derive(Debug, Args)]
pub struct UndoArgs {
    /// `TYPE/NAME` or `TYPE NAME`.
    #[arg(required = true)]
    pub resources: Vec<String>,
    /// The revision to go back to (`0`: the previous one).
    #[arg(long, default_value_t = 0)]
    pub to_revision: i64,
    /// `none`, `client` (print the template it would restore) or `server`.
    #[arg(long, value_enum, default_value_t = DryRun::None, num_args = 0..=1, default_missing_value = "client")]
    pub dry_run: DryRun,
    /// Kruise Rollouts: go back to the earlier step that sends no traffic and has the most replicas.
    #[arg(long)]
    pub fast: bool,
}

/// `describe …`.
#[derive(Debug, Subcommand)]
pub enum Describe {
    /// Phase, steps, traffic routing, workload replicas and pods of a Kruise Rollout.
    #[command(
        visible_aliases = ["rollouts", "ro"],
        after_help = "Examples:\n  kubectl kruise describe rollout rollout-demo -n default\n  # print it again at every change, for five minutes\n  kubectl kruise describe rollout rollout-demo -w --timeout 300\n  # every pod of the workload, not only the current batch's\n  kubectl kruise describe rollout rollout-demo --all --no-color"
    )]
    Rollout(DescribeRolloutArgs),
}

/// `describe rollout`.
#[derive(Debug, Args)]
pub struct DescribeRolloutArgs {
    /// The Rollout's name (`NAME`, or `rollout/NAME`).
    #[arg(required = true)]
    pub names: Vec<String>,
    /// Print the Rollout again at each change.
    #[arg(short = 'w', long)]
    pub watch: bool,
    /// Print without colours or screen clearing.
    #[arg(long)]
    pub no_color: bool,
    /// With -w, stop after this long (seconds, or e.g. `5m`; `0`: never).
    #[arg(long, default_value = "0")]
    pub timeout: String,
    /// List every pod of the workload, not only those of the current batch.
    #[arg(long)]
    pub all: bool,
}

/// kubectl's `--dry-run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DryRun {
    None,
    Client,
    Server,
}

/// `set …`.
#[derive(Debug, Subcommand)]
pub enum Set {
    /// Set container images (`CONTAINER=IMAGE`; `*=IMAGE` for all).
    #[command(
        after_help = "Examples:\n  kubectl kruise set image cloneset/web web=nginx:1.28\n  kubectl kruise set image sidecarset/log-agent log-agent=fluent-bit:3.1\n  kubectl kruise set image asts/db '*=postgres:17' --dry-run=client -o yaml"
    )]
    Image(SetArgs),
    /// Set (`KEY=VALUE`) or remove (`KEY-`) environment variables of containers.
    #[command(
        after_help = "Examples:\n  kubectl kruise set env cloneset/web LOG_LEVEL=debug\n  kubectl kruise set env cloneset/web -c web LOG_LEVEL-\n  kubectl kruise set env cloneset/web --list"
    )]
    Env(SetEnvArgs),
    /// Set resource requests and limits of containers.
    #[command(
        after_help = "Examples:\n  kubectl kruise set resources cloneset/web -c web --limits cpu=200m,memory=512Mi --requests cpu=100m"
    )]
    Resources(SetResourcesArgs),
    /// Set the pod template's service account.
    #[command(
        name = "serviceaccount",
        visible_alias = "sa",
        after_help = "Examples:\n  kubectl kruise set serviceaccount cloneset/web web-reader"
    )]
    ServiceAccount(SetArgs),
}

/// Objects and assignments, plus the output flags.
#[derive(Debug, Args)]
pub struct SetArgs {
    /// `TYPE/NAME…` (or `TYPE NAME…`) followed by the assignments.
    #[arg(required = true)]
    pub args: Vec<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `--dry-run` and `-o` of the commands that change objects.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// `none`, `client` (change nothing, print the result) or `server`.
    #[arg(long, value_enum, default_value_t = DryRun::None, num_args = 0..=1, default_missing_value = "client")]
    pub dry_run: DryRun,
    /// Print the changed object (`yaml`, `json` or `name`).
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<Output>,
}

/// `-o`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Output {
    Yaml,
    Json,
    Name,
}

/// `set env`.
#[derive(Debug, Args)]
pub struct SetEnvArgs {
    /// `TYPE/NAME…` followed by `KEY=VALUE` and `KEY-`.
    #[arg(required = true)]
    pub args: Vec<String>,
    /// Containers to change (`*` for all; default all).
    #[arg(short = 'c', long, default_value = "*")]
    pub containers: String,
    /// More `KEY=VALUE` pairs.
    #[arg(short = 'e', long = "env")]
    pub env: Vec<String>,
    /// List the environment instead of changing it.
    #[arg(long)]
    pub list: bool,
    /// Replace an existing value (`--overwrite=false`: fail instead).
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub overwrite: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `set resources`.
#[derive(Debug, Args)]
pub struct SetResourcesArgs {
    /// `TYPE/NAME…`.
    #[arg(required = true)]
    pub args: Vec<String>,
    /// Containers to change (`*` for all; default all).
    #[arg(short = 'c', long, default_value = "*")]
    pub containers: String,
    /// `cpu=200m,memory=512Mi`.
    #[arg(long, default_value = "")]
    pub limits: String,
    /// `cpu=100m,memory=256Mi`.
    #[arg(long, default_value = "")]
    pub requests: String,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `scaledown`.
#[derive(Debug, Args)]
pub struct ScaledownArgs {
    /// `cloneset/NAME`.
    pub resource: String,
    /// The pods to delete, comma separated.
    #[arg(long, value_delimiter = ',')]
    pub pods: Vec<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `create …`.
#[derive(Debug, Subcommand)]
pub enum Create {
    /// Create a Job running an image, or from a CronJob's template.
    #[command(
        after_help = "Examples:\n  kubectl kruise create job pi --image=perl -- perl -Mbignum=bpi -wle 'print bpi(20)'\n  kubectl kruise create job nightly-now --from=cronjob/nightly"
    )]
    Job(CreateJobArgs),
    /// Create a BroadcastJob (one pod per node) running an image.
    #[command(
        name = "broadcastjob",
        visible_alias = "broadcastJob",
        after_help = "Examples:\n  kubectl kruise create broadcastjob warm-cache --image=busybox -- sh -c 'echo warm'"
    )]
    BroadcastJob(CreateJobArgs),
    /// Recreate containers of a pod in place (a ContainerRecreateRequest).
    #[command(name = "containerrecreaterequest", visible_aliases = ["crr", "ContainerRecreateRequest"], after_help = "Examples:\n  # recreate only the sidecar of pod web-abcde\n  kubectl kruise create crr restart-sidecar --pod=web-abcde --containers=log-agent\n  kubectl kruise create crr restart-all --pod=web-abcde -u 5 -m 10")]
    ContainerRecreateRequest(CreateCrrArgs),
}

/// `create job` / `create broadcastjob`.
#[derive(Debug, Args)]
pub struct CreateJobArgs {
    /// The new object's name.
    pub name: String,
    /// The image to run.
    #[arg(long)]
    pub image: Option<String>,
    /// `cronjob/NAME`: copy the CronJob's job template (Job only).
    #[arg(long)]
    pub from: Option<String>,
    /// The command (after `--`).
    #[arg(last = true)]
    pub command: Vec<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `create containerrecreaterequest`.
#[derive(Debug, Args)]
pub struct CreateCrrArgs {
    /// The CRR's name.
    pub name: String,
    /// The pod whose containers are recreated.
    #[arg(long)]
    pub pod: String,
    /// The containers to recreate, comma separated (default: all of the pod's).
    #[arg(long, value_delimiter = ',')]
    pub containers: Vec<String>,
    /// `strategy.unreadyGracePeriodSeconds`: seconds the pod is marked not ready before the stop.
    #[arg(short = 'u', long = "unready-grace-period-seconds", default_value_t = 3)]
    pub unready_grace_period_seconds: i64,
    /// `strategy.minStartedSeconds`: seconds a recreated container must run to count as started.
    #[arg(short = 'm', long = "min-started-seconds", default_value_t = 3)]
    pub min_started_seconds: i64,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `migrate`.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The destination kind (`CloneSet`).
    pub kind: String,
    /// The source kind (`Deployment`).
    #[arg(long, default_value = "")]
    pub from: String,
    /// The Deployment.
    #[arg(long, default_value = "")]
    pub src_name: String,
    /// The CloneSet.
    #[arg(long, default_value = "")]
    pub dst_name: String,
    /// Create the CloneSet from the Deployment instead of moving replicas.
    #[arg(long)]
    pub create: bool,
    /// With --create: copy the Deployment's replicas (else the CloneSet starts at 0).
    #[arg(long)]
    pub copy: bool,
    /// Replicas to move (-1: all of the Deployment's).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub replicas: i32,
    /// Extra pods allowed while moving.
    #[arg(long, default_value_t = 1)]
    pub max_surge: i32,
    /// Give up after this many seconds (-1: never).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub timeout_seconds: i64,
}

/// `get all`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// `all`.
    pub what: String,
}

/// `explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// `pod/NAME` (or `pod NAME`) of the cluster.
    pub resources: Vec<String>,
    /// A pod manifest instead (not created).
    #[arg(short = 'f', long = "filename")]
    pub filename: Option<PathBuf>,
    /// Read the cluster's state from these files or directories instead of the API server.
    #[arg(long)]
    pub objects: Vec<PathBuf>,
}

/// `inject`.
#[derive(Debug, Args)]
pub struct InjectArgs {
    /// The manifest (`-` for stdin).
    #[arg(short = 'f', long = "filename", required = true)]
    pub filename: PathBuf,
    /// Read the cluster's state from these files or directories instead of the API server.
    #[arg(long)]
    pub objects: Vec<PathBuf>,
}

/// `completion`.
#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// `bash`, `zsh`, `fish`, `powershell` or `elvish`.
    pub shell: clap_complete::Shell,
}

pub use crate::duration::parse_duration;

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    #[test]
    fn the_command_tree_is_consistent_and_every_command_has_an_example() {
        let command = Cli::command();
        command.clone().debug_assert();
        fn walk(c: &clap::Command, path: &str) {
            let path = format!("{path} {}", c.get_name());
            if c.get_subcommands().next().is_none() {
                let help = c.get_after_help().map(|h| h.to_string()).unwrap_or_default();
                assert!(
                    help.starts_with("Examples:") && help.contains("\n  kubectl kruise "),
                    "{path} has no example"
                );
            }
            for sub in c.get_subcommands() {
                walk(sub, &path);
            }
        }
        walk(&command, "");
    }
}

/// `exec`.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// `POD` or `TYPE/NAME` (cloneset, asts, ads, deployment, statefulset, daemonset, replicaset, job,
    /// service, pod).
    pub resource: String,
    /// The container (default: kubectl's choice, the pod's first or its default-container annotation).
    #[arg(short = 'c', long)]
    pub container: Option<String>,
    /// A SidecarSet container name: with a hot upgrade, the working one of its two containers is chosen.
    #[arg(short = 'S', long = "sidecar")]
    pub sidecar: Option<String>,
    /// Pass stdin to the container.
    #[arg(short = 'i', long)]
    pub stdin: bool,
    /// Stdin is a TTY.
    #[arg(short = 't', long)]
    pub tty: bool,
    /// How long to wait for a workload's first pod, e.g. `1m`, `90s`.
    #[arg(long, default_value = "1m")]
    pub pod_running_timeout: String,
    /// The command (after `--`).
    #[arg(last = true)]
    pub command: Vec<String>,
}

/// What `kubectl kruise expose` receives: kubectl's arguments as given.
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct RawArgs {
    /// kubectl's arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<String>,
}
