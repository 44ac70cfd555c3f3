//! One tag's pull on this node: wait for a slot, report `Pulling`, try up to `backoffLimit + 1` times
//! (each attempt bounded by `timeoutSeconds` and the deadline, 1 s, 2 s, 4 s … 30 s between attempts),
//! then `Succeeded` with the runtime's image id or `Failed` with the last error.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps_v1beta1::{ImagePullPhase, ImagePullPolicy, ImageTagPullPolicy, ImageTagStatus};
use kruise_cri::Runtime;
use kruise_cri::v1::{AuthConfig, PodSandboxConfig};
use tokio::sync::{Semaphore, mpsc, watch};

const DEFAULT_TIMEOUT_SECONDS: i32 = 600;
const DEFAULT_BACKOFF_LIMIT: i32 = 3;
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// What a worker pulls.
#[derive(Debug, Clone)]
pub struct Job {
    /// Familiar name.
    pub name: String,
    /// Tag or digest.
    pub tag: String,
    /// The spec version answered.
    pub version: i64,
    /// Timeouts and retries.
    pub policy: ImageTagPullPolicy,
    /// `Always` or `IfNotPresent`.
    pub image_pull_policy: ImagePullPolicy,
    /// Sent with every pull.
    pub sandbox: PodSandboxConfig,
    /// Credentials to try in turn (empty: anonymous).
    pub auths: Vec<AuthConfig>,
}

/// The tag's state, shared with the sync loop.
pub type Shared = Arc<Mutex<ImageTagStatus>>;

/// Where a worker reports.
#[derive(Clone)]
pub struct Env {
    /// The runtime, when one answers.
    pub runtime: watch::Receiver<Option<Runtime>>,
    /// Bounds the pulls running at once on this node.
    pub slots: Arc<Semaphore>,
    /// Woken on every state change.
    pub changed: mpsc::UnboundedSender<()>,
}

/// The initial state of a tag's worker.
pub fn waiting(job: &Job) -> ImageTagStatus {
    ImageTagStatus {
        tag: job.tag.clone(),
        phase: ImagePullPhase::Waiting,
        version: job.version,
        ..ImageTagStatus::default()
    }
}

/// Runs the pull; the state in `shared` ends `Succeeded` or `Failed`. Aborting the task stops it and
/// leaves the state as it was.
pub async fn run(job: Job, env: Env, shared: Shared) {
    let Ok(_slot) = env.slots.clone().acquire_owned().await else {
        return;
    };
    let start = Timestamp::now();
    update(&shared, &env, |s| {
        s.phase = ImagePullPhase::Pulling;
        s.start_time = Some(whole(start));
    });
    let result = attempts(&job, &env, start).await;
    let done = Timestamp::now();
    update(&shared, &env, |s| {
        s.completion_time = Some(whole(done));
        match &result {
            Ok(id) => {
                s.phase = ImagePullPhase::Succeeded;
                s.progress = 100;
                s.image_id = format!("{}@{id}", job.name);
                s.message.clear();
            }
            Err(message) => {
                s.phase = ImagePullPhase::Failed;
                s.message.clone_from(message);
            }
        }
    });
    match &result {
        Ok(_) => {
            tracing::info!(image = %reference(&job), elapsed = ?done.duration_since(start), "PullImageSucceed")
        }
        Err(e) => tracing::warn!(image = %reference(&job), error = %e, "PullImageFailed"),
    }
}

fn reference(job: &Job) -> String {
    kruise_core::image_ref::join(&job.name, &job.tag)
}

async fn attempts(job: &Job, env: &Env, start: Timestamp) -> Result<String, String> {
    let image = reference(job);
    let timeout = Duration::from_secs(
        u64::try_from(job.policy.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS))
            .unwrap_or(600)
            .max(1),
    );
    let backoff_limit = job
        .policy
        .backoff_limit
        .filter(|b| *b >= 0)
        .unwrap_or(DEFAULT_BACKOFF_LIMIT);
    let deadline = job.policy.active_deadline_seconds.map(|d| {
        let left = Duration::from_secs(u64::try_from(d).unwrap_or(0));
        tokio::time::Instant::now()
            + left.saturating_sub(
                Duration::try_from(Timestamp::now().duration_since(start)).unwrap_or_default(),
            )
    });
    let mut last = String::from("no attempt made");
    let mut pause = Duration::from_secs(1);
    for attempt in 0..=backoff_limit {
        if attempt > 0 {
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(MAX_BACKOFF);
        }
        let mut limit = timeout;
        if let Some(at) = deadline {
            let left = at.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                return Err("pulling exceeds the activeDeadlineSeconds".into());
            }
            limit = limit.min(left);
        }
        let runtime = env.runtime.borrow().clone();
        let Some(runtime) = runtime else {
            last = "no container runtime answers on this node".into();
            continue;
        };
        if job.image_pull_policy == ImagePullPolicy::IfNotPresent
            && let Ok(Some(id)) = runtime.image_id(&image).await
        {
            return Ok(id);
        }
        match pull(&runtime, job, &image, limit).await {
            Ok(id) => return Ok(id),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// One attempt: each credential in turn (anonymous when there are none); all failing gives the last error.
async fn pull(runtime: &Runtime, job: &Job, image: &str, limit: Duration) -> Result<String, String> {
    let auths: Vec<Option<AuthConfig>> = if job.auths.is_empty() {
        vec![None]
    } else {
        job.auths.iter().cloned().map(Some).collect()
    };
    let mut errors = Vec::new();
    for auth in auths {
        match runtime
            .pull_image_in(image, auth, Some(job.sandbox.clone()), limit)
            .await
        {
            Ok(id) => return Ok(id),
            Err(e) => errors.push(e.to_string()),
        }
    }
    Err(errors.join("; "))
}

fn update(shared: &Shared, env: &Env, change: impl FnOnce(&mut ImageTagStatus)) {
    if let Ok(mut s) = shared.lock() {
        change(&mut s);
    }
    let _ = env.changed.send(());
}

fn whole(t: Timestamp) -> Time {
    Time(Timestamp::from_second(t.as_second()).unwrap_or(t))
}
