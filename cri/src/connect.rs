//! One connection to a container runtime: the image and runtime services share a gRPC channel over the
//! runtime's unix socket.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use hyper_util::rt::TokioIo;
use tonic::transport::{Channel, Endpoint, Uri};

use crate::v1::{
    ImageFsInfoRequest, VersionRequest, VersionResponse, image_service_client::ImageServiceClient,
    runtime_service_client::RuntimeServiceClient,
};

/// Messages from the runtime can be large (`ListImages` on a busy node): 16 MiB, as kubelet allows.
const MAX_MESSAGE: usize = 16 << 20;

/// The CRI version the agent speaks, sent with `Version`.
const CRI_VERSION: &str = "v1";

/// Why a runtime could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The socket did not accept a connection in time.
    #[error("cannot connect to {path}: {source}")]
    Dial {
        /// The socket.
        path: PathBuf,
        /// Why.
        source: tonic::transport::Error,
    },
    /// A call failed (the runtime does not speak CRI v1, or refused).
    #[error("{call} on {path}: {status}", status = .source.message())]
    Call {
        /// The CRI call.
        call: &'static str,
        /// The socket.
        path: PathBuf,
        /// The gRPC status.
        source: Box<tonic::Status>,
    },
    /// A call did not answer in time.
    #[error("{call} on {path}: no answer within {timeout:?}")]
    Timeout {
        /// The CRI call.
        call: &'static str,
        /// The socket.
        path: PathBuf,
        /// The limit.
        timeout: Duration,
    },
}

/// A connected runtime.
#[derive(Debug, Clone)]
pub struct Runtime {
    path: PathBuf,
    reported: VersionResponse,
    /// `RuntimeService` (containers, sandboxes, exec).
    pub runtime: RuntimeServiceClient<Channel>,
    /// `ImageService` (pull, list, remove).
    pub images: ImageServiceClient<Channel>,
}

impl Runtime {
    /// Connects to the socket at `path` and checks that it speaks CRI v1: `Version`, then `ImageFsInfo`
    /// (the image API), each within `timeout`.
    pub async fn connect(path: &Path, timeout: Duration) -> Result<Runtime, ConnectError> {
        let socket = path.to_path_buf();
        // The URI is required by tonic but unused: the connector always dials the socket.
        let channel = Endpoint::from_static("http://cri.invalid")
            .connect_timeout(timeout)
            .connect_with_connector(tower::service_fn(move |_: Uri| {
                let socket = socket.clone();
                async move {
                    Ok::<_, std::io::Error>(TokioIo::new(tokio::net::UnixStream::connect(socket).await?))
                }
            }))
            .await
            .map_err(|source| ConnectError::Dial {
                path: path.to_path_buf(),
                source,
            })?;
        let mut runtime = RuntimeServiceClient::new(channel.clone()).max_decoding_message_size(MAX_MESSAGE);
        let mut images = ImageServiceClient::new(channel).max_decoding_message_size(MAX_MESSAGE);
        let reported = within(
            path,
            "Version",
            timeout,
            runtime.version(VersionRequest {
                version: CRI_VERSION.into(),
            }),
        )
        .await?;
        within(
            path,
            "ImageFsInfo",
            timeout,
            images.image_fs_info(ImageFsInfoRequest {}),
        )
        .await?;
        Ok(Runtime {
            path: path.to_path_buf(),
            reported,
            runtime,
            images,
        })
    }

    /// The socket this runtime answers on.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `runtime_name` from `Version` (`containerd`, `cri-o`, …).
    pub fn name(&self) -> &str {
        &self.reported.runtime_name
    }

    /// `runtime_version` from `Version`.
    pub fn runtime_version(&self) -> &str {
        &self.reported.runtime_version
    }
}

/// Awaits one CRI call with a deadline, naming the call and socket in the error.
async fn within<T>(
    path: &Path,
    call: &'static str,
    timeout: Duration,
    request: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> Result<T, ConnectError> {
    match tokio::time::timeout(timeout, request).await {
        Ok(Ok(response)) => Ok(response.into_inner()),
        Ok(Err(status)) => Err(ConnectError::Call {
            call,
            path: path.to_path_buf(),
            source: Box::new(status),
        }),
        Err(_) => Err(ConnectError::Timeout {
            call,
            path: path.to_path_buf(),
            timeout,
        }),
    }
}
