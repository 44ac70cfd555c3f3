//! `kubectl-kruise`: the kubectl plugin for OpenKruise workloads (`kubectl kruise …`), and `explain`,
//! which answers whether each SidecarSet, PodUnavailableBudget, WorkloadSpread and launch-priority rule
//! applies to a pod by running kruise-rs's own webhook code on it (docs/kubectl-kruise.md).

pub mod cli;
pub mod client;
pub mod create;
pub mod describe;
pub mod duration;
pub mod exec;
pub mod explain;
pub mod expose;
pub mod get;
pub mod kinds;
pub mod migrate;
pub mod rollout;
pub mod run;
pub mod scaledown;
pub mod set;

/// Why a command failed. kubectl's exit code for all of them is 1; [`Error::Api`] prints as kubectl
/// prints an API error, the others as `error: <message>`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad arguments.
    #[error("{0}")]
    Usage(String),
    /// The command could not do what was asked.
    #[error("{0}")]
    Failed(String),
    /// The API server refused.
    #[error("Error from server ({reason}): {message}")]
    Api { reason: String, message: String },
    /// Another request error (connection, decoding).
    #[error("{0}")]
    Client(String),
}

impl From<kube::Error> for Error {
    fn from(error: kube::Error) -> Self {
        match error {
            kube::Error::Api(status) => Error::Api {
                reason: if status.reason.is_empty() {
                    "Unknown".to_string()
                } else {
                    status.reason.clone()
                },
                message: status.message.clone(),
            },
            other => Error::Client(other.to_string()),
        }
    }
}

impl From<serde_json::Error> for Error {
    fn from(error: serde_json::Error) -> Self {
        Error::Failed(error.to_string())
    }
}

impl Error {
    /// What kubectl prints for this error.
    pub fn printed(&self) -> String {
        match self {
            Error::Api { .. } => self.to_string(),
            other => format!("error: {other}"),
        }
    }
}
