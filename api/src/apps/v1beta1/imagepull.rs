//! NodeImage, ImagePullJob and ImageListPullJob `apps.kruise.io/v1beta1`.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::apps::shared::imagepull::*;

/// Images one node should have (cluster-scoped, named after the node).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "NodeImage",
    plural = "nodeimages",
    status = "NodeImageStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "NodeImage lists the images one node should pull and reports how the pulls went.",
    printcolumn(
        name = "DESIRED",
        type_ = "integer",
        json_path = ".status.desired",
        description = "Number of all images on this node"
    ),
    printcolumn(
        name = "PULLING",
        type_ = "integer",
        json_path = ".status.pulling",
        description = "Number of image pull task active"
    ),
    printcolumn(
        name = "SUCCEED",
        type_ = "integer",
        json_path = ".status.succeeded",
        description = "Number of image pull task succeeded"
    ),
    printcolumn(
        name = "FAILED",
        type_ = "integer",
        json_path = ".status.failed",
        description = "Number of image pull tasks failed"
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct NodeImageSpec {
    /// Images keyed by familiar name without tag.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub images: BTreeMap<String, ImageSpec>,
}

/// Pull one image on a set of nodes.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "ImagePullJob",
    plural = "imagepulljobs",
    namespaced,
    status = "ImagePullJobStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "ImagePullJob pulls one image on the nodes it selects.",
    printcolumn(
        name = "TOTAL",
        type_ = "integer",
        json_path = ".status.desired",
        description = "Number of all nodes matched by this job"
    ),
    printcolumn(
        name = "ACTIVE",
        type_ = "integer",
        json_path = ".status.active",
        description = "Number of image pull task active"
    ),
    printcolumn(
        name = "SUCCEED",
        type_ = "integer",
        json_path = ".status.succeeded",
        description = "Number of image pull task succeeded"
    ),
    printcolumn(
        name = "FAILED",
        type_ = "integer",
        json_path = ".status.failed",
        description = "Number of image pull tasks failed"
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC."
    ),
    printcolumn(
        name = "MESSAGE",
        type_ = "string",
        json_path = ".status.message",
        description = "Summary of status when job is failed"
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["image", "completionPolicy"]))]
pub struct ImagePullJobSpec {
    /// The image reference (`name:tag` or `name@sha256:…`).
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub image: String,
    /// Targets, parallelism and policies.
    #[serde(flatten)]
    pub template: ImagePullJobTemplate,
}

/// Pull a list of images: one ImagePullJob per image.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "ImageListPullJob",
    plural = "imagelistpulljobs",
    namespaced,
    status = "ImageListPullJobStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "ImageListPullJob pulls several images, through one ImagePullJob per image.",
    printcolumn(
        name = "TOTAL",
        type_ = "integer",
        json_path = ".status.desired",
        description = "Number of image pull job"
    ),
    printcolumn(
        name = "SUCCEEDED",
        type_ = "integer",
        json_path = ".status.succeeded",
        description = "Number of image pull job succeeded"
    ),
    printcolumn(
        name = "COMPLETED",
        type_ = "integer",
        json_path = ".status.completed",
        description = "Number of ImagePullJobs which are finished"
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC."
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["images", "completionPolicy"]))]
pub struct ImageListPullJobSpec {
    /// The images, unique, at most 255.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub images: Vec<String>,
    /// What every child ImagePullJob gets.
    #[serde(flatten)]
    pub template: ImagePullJobTemplate,
}
