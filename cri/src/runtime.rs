//! Pod sandboxes and containers through the CRI runtime service: run, stop and remove sandboxes;
//! create, start, stop and remove containers; list both by label; read a container's status; run a
//! command in a container (`ExecSync`).

use std::{collections::HashMap, time::Duration};

use crate::{
    Runtime,
    v1::{
        Container, ContainerConfig, ContainerFilter, ContainerStatus, ContainerStatusRequest,
        CreateContainerRequest, ExecSyncRequest, ListContainersRequest, ListPodSandboxRequest, PodSandbox,
        PodSandboxConfig, PodSandboxFilter, RemoveContainerRequest, RemovePodSandboxRequest,
        RunPodSandboxRequest, StartContainerRequest, StopContainerRequest, StopPodSandboxRequest,
    },
};

/// How long a runtime call may take (a sandbox start or a container creation on a busy node takes
/// seconds; a stop waits its own grace period on top of this).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a runtime call failed.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The runtime refused or failed; its message as it gave it.
    #[error("{call}: {message}")]
    Call {
        /// The CRI call.
        call: &'static str,
        /// The gRPC code (`NotFound` for a container or sandbox that is gone).
        code: tonic::Code,
        /// The runtime's message.
        message: String,
    },
    /// The call did not answer in time.
    #[error("{call}: no answer within {timeout:?}")]
    Timeout {
        /// The CRI call.
        call: &'static str,
        /// The limit.
        timeout: Duration,
    },
    /// The answer lacked a field the call must return.
    #[error("{call}: the runtime's answer has no {field}")]
    Incomplete {
        /// The CRI call.
        call: &'static str,
        /// The missing field.
        field: &'static str,
    },
}

impl RuntimeError {
    /// Whether the runtime said the container or sandbox does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            RuntimeError::Call {
                code: tonic::Code::NotFound,
                ..
            }
        )
    }
}

/// What a command run with [`Runtime::exec_sync`] left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutput {
    /// Its standard output.
    pub stdout: Vec<u8>,
    /// Its standard error.
    pub stderr: Vec<u8>,
    /// Its exit code.
    pub exit_code: i32,
}

/// A label selector as CRI takes it: every pair must match.
fn selector(labels: &[(&str, &str)]) -> HashMap<String, String> {
    labels
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Awaits one runtime call with a deadline.
async fn call<T>(
    call: &'static str,
    timeout: Duration,
    request: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> Result<T, RuntimeError> {
    match tokio::time::timeout(timeout, request).await {
        Ok(Ok(response)) => Ok(response.into_inner()),
        Ok(Err(status)) => Err(RuntimeError::Call {
            call,
            code: status.code(),
            message: status.message().to_owned(),
        }),
        Err(_) => Err(RuntimeError::Timeout { call, timeout }),
    }
}

impl Runtime {
    /// Starts a pod sandbox; returns its id.
    pub async fn run_pod_sandbox(&self, config: PodSandboxConfig) -> Result<String, RuntimeError> {
        let mut client = self.runtime.clone();
        let request = RunPodSandboxRequest {
            config: Some(config),
            runtime_handler: String::new(),
        };
        let answer = call("RunPodSandbox", CALL_TIMEOUT, client.run_pod_sandbox(request)).await?;
        Ok(answer.pod_sandbox_id)
    }

    /// Stops a sandbox and every container in it (each is killed: stop containers first for a
    /// graceful stop). A sandbox that is gone is not an error.
    pub async fn stop_pod_sandbox(&self, id: &str) -> Result<(), RuntimeError> {
        let mut client = self.runtime.clone();
        let request = StopPodSandboxRequest {
            pod_sandbox_id: id.to_owned(),
        };
        match call("StopPodSandbox", CALL_TIMEOUT, client.stop_pod_sandbox(request)).await {
            Err(e) if e.is_not_found() => Ok(()),
            other => other.map(drop),
        }
    }

    /// Removes a sandbox with its containers. A sandbox that is gone is not an error.
    pub async fn remove_pod_sandbox(&self, id: &str) -> Result<(), RuntimeError> {
        let mut client = self.runtime.clone();
        let request = RemovePodSandboxRequest {
            pod_sandbox_id: id.to_owned(),
        };
        match call(
            "RemovePodSandbox",
            CALL_TIMEOUT,
            client.remove_pod_sandbox(request),
        )
        .await
        {
            Err(e) if e.is_not_found() => Ok(()),
            other => other.map(drop),
        }
    }

    /// The sandboxes carrying every label of `labels` (all sandboxes when empty), in any state.
    pub async fn list_pod_sandboxes(&self, labels: &[(&str, &str)]) -> Result<Vec<PodSandbox>, RuntimeError> {
        let mut client = self.runtime.clone();
        let request = ListPodSandboxRequest {
            filter: Some(PodSandboxFilter {
                label_selector: selector(labels),
                ..PodSandboxFilter::default()
            }),
        };
        let answer = call("ListPodSandbox", CALL_TIMEOUT, client.list_pod_sandbox(request)).await?;
        Ok(answer.items)
    }

    /// Creates a container in a sandbox (`sandbox_config` is the one the sandbox was started with);
    /// returns its id. It is not started.
    pub async fn create_container(
        &self,
        sandbox_id: &str,
        config: ContainerConfig,
        sandbox_config: PodSandboxConfig,
    ) -> Result<String, RuntimeError> {
        let mut client = self.runtime.clone();
        let request = CreateContainerRequest {
            pod_sandbox_id: sandbox_id.to_owned(),
            config: Some(config),
            sandbox_config: Some(sandbox_config),
        };
        let answer = call("CreateContainer", CALL_TIMEOUT, client.create_container(request)).await?;
        Ok(answer.container_id)
    }

    /// Starts a created container (an exited one cannot start again: create a new one).
    pub async fn start_container(&self, id: &str) -> Result<(), RuntimeError> {
        let mut client = self.runtime.clone();
        let request = StartContainerRequest {
            container_id: id.to_owned(),
        };
        call("StartContainer", CALL_TIMEOUT, client.start_container(request))
            .await
            .map(drop)
    }

    /// Stops a container: its stop signal (SIGTERM), then SIGKILL once `grace` has passed (at once for
    /// zero). A container that is gone or already exited is not an error.
    pub async fn stop_container(&self, id: &str, grace: Duration) -> Result<(), RuntimeError> {
        let mut client = self.runtime.clone();
        let request = StopContainerRequest {
            container_id: id.to_owned(),
            timeout: i64::try_from(grace.as_secs()).unwrap_or(i64::MAX),
        };
        let limit = CALL_TIMEOUT.saturating_add(grace);
        match call("StopContainer", limit, client.stop_container(request)).await {
            Err(e) if e.is_not_found() => Ok(()),
            other => other.map(drop),
        }
    }

    /// Removes a container (a running one is killed first). One that is gone is not an error.
    pub async fn remove_container(&self, id: &str) -> Result<(), RuntimeError> {
        let mut client = self.runtime.clone();
        let request = RemoveContainerRequest {
            container_id: id.to_owned(),
        };
        match call("RemoveContainer", CALL_TIMEOUT, client.remove_container(request)).await {
            Err(e) if e.is_not_found() => Ok(()),
            other => other.map(drop),
        }
    }

    /// The containers carrying every label of `labels` (all when empty), in any state, in the
    /// sandbox `sandbox_id` when given.
    pub async fn list_containers(
        &self,
        labels: &[(&str, &str)],
        sandbox_id: Option<&str>,
    ) -> Result<Vec<Container>, RuntimeError> {
        let mut client = self.runtime.clone();
        let request = ListContainersRequest {
            filter: Some(ContainerFilter {
                label_selector: selector(labels),
                pod_sandbox_id: sandbox_id.unwrap_or_default().to_owned(),
                ..ContainerFilter::default()
            }),
        };
        let answer = call("ListContainers", CALL_TIMEOUT, client.list_containers(request)).await?;
        Ok(answer.containers)
    }

    /// A container's status: state, exit code and reason, created/started/finished times (Unix
    /// nanoseconds), image and image reference, labels and annotations.
    pub async fn container_status(&self, id: &str) -> Result<ContainerStatus, RuntimeError> {
        let mut client = self.runtime.clone();
        let request = ContainerStatusRequest {
            container_id: id.to_owned(),
            verbose: false,
        };
        call("ContainerStatus", CALL_TIMEOUT, client.container_status(request))
            .await?
            .status
            .ok_or(RuntimeError::Incomplete {
                call: "ContainerStatus",
                field: "status",
            })
    }

    /// Runs `cmd` in a running container and waits for it, at most `timeout` (whole seconds, at
    /// least one: the runtime kills the command then).
    pub async fn exec_sync(
        &self,
        id: &str,
        cmd: &[&str],
        timeout: Duration,
    ) -> Result<ExecOutput, RuntimeError> {
        let mut client = self.runtime.clone();
        let seconds = timeout.as_secs().max(1);
        let request = ExecSyncRequest {
            container_id: id.to_owned(),
            cmd: cmd.iter().map(|c| (*c).to_owned()).collect(),
            timeout: i64::try_from(seconds).unwrap_or(i64::MAX),
        };
        // The runtime enforces the command's limit; ours only guards against a runtime that hangs.
        let limit = Duration::from_secs(seconds).saturating_add(Duration::from_secs(5));
        let answer = call("ExecSync", limit, client.exec_sync(request)).await?;
        Ok(ExecOutput {
            stdout: answer.stdout,
            stderr: answer.stderr,
            exit_code: answer.exit_code,
        })
    }
}
