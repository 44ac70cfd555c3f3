//! Images on the node: pull and look up through the CRI image service.

use std::time::Duration;

use crate::{
    Runtime,
    v1::{AuthConfig, ImageSpec, ImageStatusRequest, PodSandboxConfig, PullImageRequest},
};

/// Why an image could not be pulled or looked up.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// The runtime refused or failed (its message: `not found`, `connection refused`, …).
    #[error("Failed to pull image reference \"{image}\": {message}")]
    Pull {
        /// The reference asked for.
        image: String,
        /// The runtime's message.
        message: String,
    },
    /// The runtime did not finish in time.
    #[error("Failed to pull image reference \"{image}\": not done within {timeout:?}")]
    Timeout {
        /// The reference asked for.
        image: String,
        /// The limit.
        timeout: Duration,
    },
    /// `ImageStatus` failed.
    #[error("image status of \"{image}\": {message}")]
    Status {
        /// The reference asked for.
        image: String,
        /// The runtime's message.
        message: String,
    },
}

fn spec(image: &str) -> ImageSpec {
    ImageSpec {
        image: image.to_owned(),
        ..ImageSpec::default()
    }
}

impl Runtime {
    /// Pulls `image` (with `auth` when the registry needs it) within `timeout`; returns the runtime's
    /// reference of the pulled image (its id).
    pub async fn pull_image(
        &self,
        image: &str,
        auth: Option<AuthConfig>,
        timeout: Duration,
    ) -> Result<String, ImageError> {
        self.pull_image_in(image, auth, None, timeout).await
    }

    /// [`Runtime::pull_image`] with a sandbox config (its labels and annotations reach the runtime,
    /// which may use them to pick a snapshotter or a mirror).
    pub async fn pull_image_in(
        &self,
        image: &str,
        auth: Option<AuthConfig>,
        sandbox_config: Option<PodSandboxConfig>,
        timeout: Duration,
    ) -> Result<String, ImageError> {
        let mut images = self.images.clone();
        let request = PullImageRequest {
            image: Some(spec(image)),
            auth,
            sandbox_config,
        };
        match tokio::time::timeout(timeout, images.pull_image(request)).await {
            Ok(Ok(response)) => Ok(response.into_inner().image_ref),
            Ok(Err(status)) => Err(ImageError::Pull {
                image: image.to_owned(),
                message: status.message().to_owned(),
            }),
            Err(_) => Err(ImageError::Timeout {
                image: image.to_owned(),
                timeout,
            }),
        }
    }

    /// The id of `image` if the node has it.
    pub async fn image_id(&self, image: &str) -> Result<Option<String>, ImageError> {
        let mut images = self.images.clone();
        let request = ImageStatusRequest {
            image: Some(spec(image)),
            verbose: false,
        };
        let status = images
            .image_status(request)
            .await
            .map_err(|status| ImageError::Status {
                image: image.to_owned(),
                message: status.message().to_owned(),
            })?;
        Ok(status.into_inner().image.map(|i| i.id))
    }
}
