//! The agent's image puller: watches only its own NodeImage (field selector `metadata.name=<node>`),
//! runs one [`worker`](super::worker) per unfinished tag — at most `--max-concurrent-pulls` pulling at
//! once on the node — and writes the NodeImage status (docs/image-pull.md#the-agent).
//!
//! Status writes: a tag is reported when its pull starts and when it ends (a `Waiting` change alone
//! is never written), writes are at least `MIN_WRITE_INTERVAL` apart and carry every change since the
//! last one, so one job costs at most two status writes per node. A tag whose status at the same
//! version has a completion time is never pulled again, also after a restart of the agent. Once a
//! write says a pull finished, its events are recorded ([`pull_events`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use kruise_api::apps_v1beta1::{
    ImagePullPhase, ImagePullPolicy, ImageStatus, ImageTagStatus, NodeImage, NodeImageStatus,
    PULLING_IMAGE_BY_ANNOTATION,
};
use kruise_cri::Runtime;
use kruise_cri::v1::PodSandboxConfig;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::watcher::{self, Event};
use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::worker::{self, Env, Job, Shared};
use super::{pull_events, secrets};

/// The least time between two status writes.
const MIN_WRITE_INTERVAL: Duration = Duration::from_millis(500);
/// How often the loop looks again while pulls run (and after a failed write).
const BUSY_TICK: Duration = Duration::from_secs(1);
/// How often it looks again when idle.
const IDLE_TICK: Duration = Duration::from_secs(60);

/// Settings of the puller.
#[derive(Debug, Clone)]
pub struct Config {
    /// This node.
    pub node: String,
    /// Pulls running at once on this node.
    pub max_concurrent_pulls: usize,
}

struct Running {
    version: i64,
    shared: Shared,
    task: JoinHandle<()>,
}

/// Runs until the task is dropped.
pub async fn run(client: kube::Client, config: Config, runtime: watch::Receiver<Option<Runtime>>) {
    let api: Api<NodeImage> = Api::all(client.clone());
    let watch_config = watcher::Config::default().fields(&format!("metadata.name={}", config.node));
    let mut events = watcher::watcher(api.clone(), watch_config).boxed();
    let (changed, mut changes) = mpsc::unbounded_channel();
    let env = Env {
        runtime,
        slots: Arc::new(Semaphore::new(config.max_concurrent_pulls.max(1))),
        changed,
    };
    let mut puller = Puller {
        api,
        recorder: pull_events::recorder(client.clone(), &config.node),
        client,
        env,
        node: config.node,
        running: HashMap::new(),
        written: None,
        last_write: None,
    };
    let mut current: Option<NodeImage> = None;
    let mut tick = IDLE_TICK;
    loop {
        tokio::select! {
            event = events.next() => match event {
                Some(Ok(Event::Apply(ni) | Event::InitApply(ni))) => {
                    puller.observed(&ni);
                    current = Some(ni);
                }
                Some(Ok(Event::Delete(_))) => {
                    puller.stop_all();
                    current = None;
                }
                Some(Ok(Event::Init | Event::InitDone)) => {}
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "watching this node's NodeImage");
                    tokio::time::sleep(BUSY_TICK).await;
                }
                None => return,
            },
            Some(()) = changes.recv() => {}
            () = tokio::time::sleep(tick) => {}
        }
        tick = match &current {
            Some(ni) => puller.sync(ni).await,
            None => IDLE_TICK,
        };
    }
}

struct Puller {
    api: Api<NodeImage>,
    recorder: kube::runtime::events::Recorder,
    client: kube::Client,
    env: Env,
    node: String,
    running: HashMap<(String, String), Running>,
    /// The status as last written (or first observed).
    written: Option<NodeImageStatus>,
    last_write: Option<Instant>,
}

impl Puller {
    /// The first status seen is the baseline of what is already written.
    fn observed(&mut self, ni: &NodeImage) {
        if self.written.is_none() {
            self.written = Some(ni.status.clone().unwrap_or_default());
        }
    }

    fn stop_all(&mut self) {
        for (_, r) in self.running.drain() {
            r.task.abort();
        }
        self.written = None;
    }

    /// Starts and stops workers for `ni`'s spec, writes the status when due; returns when to look again.
    async fn sync(&mut self, ni: &NodeImage) -> Duration {
        let stored = ni.status.clone().unwrap_or_default();
        // What is known to be written: ours (the watch may not show our last write yet), else the stored.
        let known = self.written.clone().unwrap_or_else(|| stored.clone());
        let spec = &ni.spec;
        self.running.retain(|(name, tag), r| {
            let keep = spec
                .images
                .get(name)
                .is_some_and(|i| i.tags.iter().any(|t| &t.tag == tag && t.version == r.version));
            if !keep {
                r.task.abort();
            }
            keep
        });
        let mut status = NodeImageStatus::default();
        let mut busy = false;
        for (name, image) in &spec.images {
            let mut tags = Vec::new();
            for tag in &image.tags {
                let key = (name.clone(), tag.tag.clone());
                let finished = find(&known, name, &tag.tag)
                    .filter(|s| s.version == tag.version && s.completion_time.is_some());
                if let Some(done) = finished
                    && !self.running.contains_key(&key)
                {
                    tags.push(done.clone());
                    continue;
                }
                if !self.running.contains_key(&key) {
                    let job = Job {
                        name: name.clone(),
                        tag: tag.tag.clone(),
                        version: tag.version,
                        policy: tag.pull_policy.clone().unwrap_or_default(),
                        image_pull_policy: tag
                            .image_pull_policy
                            .clone()
                            .unwrap_or(ImagePullPolicy::IfNotPresent),
                        sandbox: sandbox(image.sandbox_config.as_ref()),
                        auths: secrets::credentials(&self.client, &image.pull_secrets, name).await,
                    };
                    let shared: Shared = Arc::new(Mutex::new(worker::waiting(&job)));
                    let task = tokio::spawn(worker::run(job, self.env.clone(), shared.clone()));
                    self.running.insert(
                        key.clone(),
                        Running {
                            version: tag.version,
                            shared,
                            task,
                        },
                    );
                }
                if let Some(r) = self.running.get(&key)
                    && let Ok(s) = r.shared.lock()
                {
                    busy |= s.completion_time.is_none();
                    tags.push(s.clone());
                }
            }
            tags.sort_by(|a, b| a.tag.cmp(&b.tag));
            status.image_statuses.insert(name.clone(), ImageStatus { tags });
        }
        kruise_reconcile::node_image::count(spec, &mut status);
        let baseline = known;
        if worth_writing(&baseline, &status) {
            let due = self
                .last_write
                .map_or(Duration::ZERO, |t| MIN_WRITE_INTERVAL.saturating_sub(t.elapsed()));
            if !due.is_zero() {
                return due;
            }
            match self.write(&baseline, &status).await {
                Ok(()) => {
                    let events = pull_events::finished(ni, &baseline, &status);
                    pull_events::publish(&self.recorder, &events).await;
                    self.written = Some(status);
                    self.last_write = Some(Instant::now());
                    self.running.retain(|_, r| {
                        r.shared
                            .lock()
                            .map(|s| s.completion_time.is_none())
                            .unwrap_or(true)
                    });
                }
                Err(e) => {
                    tracing::warn!(node = %self.node, error = %e, "writing the NodeImage status");
                    return BUSY_TICK;
                }
            }
        }
        if busy { BUSY_TICK } else { IDLE_TICK }
    }

    /// A merge patch of the whole status (images no longer listed are removed).
    async fn write(&self, old: &NodeImageStatus, new: &NodeImageStatus) -> Result<(), kube::Error> {
        let mut body = serde_json::to_value(new).unwrap_or(Value::Null);
        if let Some(images) = body
            .as_object_mut()
            .map(|b| b.entry("imageStatuses").or_insert_with(|| json!({})))
        {
            for gone in old
                .image_statuses
                .keys()
                .filter(|k| !new.image_statuses.contains_key(*k))
            {
                images[gone.as_str()] = Value::Null;
            }
        }
        let patch = json!({ "status": body });
        self.api
            .patch_status(&self.node, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        Ok(())
    }
}

/// A write is due when a tag started pulling or finished (or left the spec) since `old`; a change
/// to `Waiting` alone is not written.
fn worth_writing(old: &NodeImageStatus, new: &NodeImageStatus) -> bool {
    let gone = old
        .image_statuses
        .iter()
        .any(|(name, image)| image.tags.iter().any(|t| find(new, name, &t.tag).is_none()));
    gone || new.image_statuses.iter().any(|(name, image)| {
        image.tags.iter().any(|t| {
            let before = find(old, name, &t.tag).filter(|o| o.version == t.version);
            match &t.phase {
                ImagePullPhase::Waiting => false,
                ImagePullPhase::Pulling => before.is_none_or(|b| b.phase == ImagePullPhase::Waiting),
                _ => before.is_none_or(|b| b.phase != t.phase || b.completion_time != t.completion_time),
            }
        })
    })
}

fn find<'a>(status: &'a NodeImageStatus, name: &str, tag: &str) -> Option<&'a ImageTagStatus> {
    status
        .image_statuses
        .get(name)?
        .tags
        .iter()
        .find(|t| t.tag == tag)
}

/// The job's sandbox config plus the annotation that marks the agent's pulls.
fn sandbox(config: Option<&kruise_api::apps_v1beta1::SandboxConfig>) -> PodSandboxConfig {
    let mut annotations: BTreeMap<String, String> = config.map(|c| c.annotations.clone()).unwrap_or_default();
    annotations.insert(PULLING_IMAGE_BY_ANNOTATION.to_owned(), "kruise-daemon".to_owned());
    PodSandboxConfig {
        labels: config
            .map(|c| c.labels.clone().into_iter().collect())
            .unwrap_or_default(),
        annotations: annotations.into_iter().collect(),
        ..PodSandboxConfig::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(tags: Value) -> NodeImageStatus {
        serde_json::from_value(json!({"imageStatuses": {"demo": {"tags": tags}}})).unwrap()
    }

    #[test]
    fn only_a_start_or_an_end_is_worth_a_write() {
        let empty = NodeImageStatus::default();
        let waiting = status(json!([{"tag": "v2", "phase": "Waiting"}]));
        let pulling = status(json!([{"tag": "v2", "phase": "Pulling", "startTime": "2026-01-01T00:00:00Z"}]));
        let done =
            status(json!([{"tag": "v2", "phase": "Succeeded", "completionTime": "2026-01-01T00:00:01Z"}]));
        assert!(!worth_writing(&empty, &waiting));
        assert!(worth_writing(&empty, &pulling));
        assert!(worth_writing(&waiting, &pulling));
        assert!(!worth_writing(&pulling, &pulling));
        assert!(worth_writing(&pulling, &done));
        assert!(!worth_writing(&done, &done));
        // A new version starts over.
        let next = status(json!([{"tag": "v2", "phase": "Pulling", "version": 1}]));
        assert!(worth_writing(&done, &next));
        // A tag leaving the spec is written.
        assert!(worth_writing(&done, &empty));
    }

    #[test]
    fn every_pull_is_marked_as_the_agent_s() {
        let s = sandbox(None);
        assert_eq!(
            s.annotations.get(PULLING_IMAGE_BY_ANNOTATION).map(String::as_str),
            Some("kruise-daemon")
        );
    }
}
