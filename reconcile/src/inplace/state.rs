//! The JSON the in-place update writes on pods: `apps.kruise.io/inplace-update-state` and
//! `apps.kruise.io/inplace-update-grace`, field for field as OpenKruise (`apis/apps/pub`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use kruise_core::in_place::LastContainerStatus;

/// What an in-place update changes (`UpdateSpec`; also the JSON of the grace annotation).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateSpec {
    /// Target revision name.
    pub revision: String,
    /// New image per container name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub container_images: BTreeMap<String, String>,
    /// Per container, the changed labels/annotations its env reads (applied with its batch).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub container_ref_metadata: BTreeMap<String, RefMetadata>,
    /// Strategic-merge patch of the pod metadata (`{"metadata":{…}}`), base64 in JSON like Go `[]byte`.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "base64_json")]
    pub meta_data_patch: Option<Value>,
    /// Containers must restart for env fed from changed metadata (only the node agent can do that).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub update_env_from_metadata: bool,
    /// Seconds to wait between marking the pod not ready and changing containers.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub grace_seconds: i32,
}

/// The labels and annotations a container's env reads that an update changes (OpenKruise keeps an
/// `ObjectMeta` per container; only these two fields are ever set).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RefMetadata {
    /// Labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

fn is_zero(v: &i32) -> bool {
    *v == 0
}

mod base64_json {
    //! Go marshals `[]byte` as standard base64; the bytes here are JSON.
    use serde::{Deserialize, Deserializer, Serializer};
    use serde_json::Value;

    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    pub fn serialize<S: Serializer>(v: &Option<Value>, s: S) -> Result<S::Ok, S::Error> {
        let bytes = v.as_ref().map(|v| v.to_string()).unwrap_or_default().into_bytes();
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
            for i in 0..4 {
                if i <= chunk.len() {
                    out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        s.serialize_str(&out)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
        let text = String::deserialize(d)?;
        let mut bytes = Vec::new();
        let (mut acc, mut bits) = (0u32, 0);
        for c in text.bytes().filter(|c| *c != b'=') {
            let v = ALPHABET
                .iter()
                .position(|a| *a == c)
                .ok_or_else(|| serde::de::Error::custom("bad base64"))?;
            acc = (acc << 6) | v as u32;
            bits += 6;
            if bits >= 8 {
                bits -= 8;
                bytes.push((acc >> bits) as u8);
            }
        }
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(serde::de::Error::custom)
    }
}

/// The `apps.kruise.io/inplace-update-state` annotation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateState {
    /// Target revision name.
    pub revision: String,
    /// When the update started.
    #[serde(with = "seconds")]
    pub update_timestamp: Time,
    /// Image IDs before the update, per container of an applied batch.
    pub last_container_statuses: BTreeMap<String, LastContainerStatus>,
    /// The update changes env fed from metadata.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub update_env_from_metadata: bool,
    /// The update changes resources.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub update_resources: bool,
    /// The update changes images.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub update_images: bool,
    /// Images of later batches.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub next_container_images: BTreeMap<String, String>,
    /// Labels/annotations of later batches.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub next_container_ref_metadata: BTreeMap<String, RefMetadata>,
    /// Containers that must be ready before the next batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_check_before_next: Option<PreCheckBeforeNext>,
    /// Batches applied so far.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub container_batches_record: Vec<ContainerBatch>,
}

impl InPlaceUpdateState {
    /// A fresh state for an update to `revision` starting `now`.
    pub fn new(revision: &str, now: Timestamp) -> Self {
        InPlaceUpdateState {
            revision: revision.to_owned(),
            update_timestamp: Time(now),
            last_container_statuses: BTreeMap::new(),
            update_env_from_metadata: false,
            update_resources: false,
            update_images: false,
            next_container_images: BTreeMap::new(),
            next_container_ref_metadata: BTreeMap::new(),
            pre_check_before_next: None,
            container_batches_record: Vec::new(),
        }
    }
}

/// The JSON text of [`InPlaceUpdateState`]s, remembering the last one: the pods one pass moves to a
/// revision mostly get equal states, and serialising each again was a large part of a plan.
#[derive(Debug, Default)]
pub struct StateText {
    last: Option<(InPlaceUpdateState, String)>,
}

impl StateText {
    /// The JSON of `state`.
    pub fn json(&mut self, state: InPlaceUpdateState) -> String {
        if let Some((last, text)) = &self.last
            && *last == state
        {
            return text.clone();
        }
        let text = serde_json::to_string(&state).unwrap_or_default();
        self.last = Some((state, text.clone()));
        text
    }
}

/// `preCheckBeforeNext`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreCheckBeforeNext {
    /// Container names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub containers_required_ready: Vec<String>,
}

/// One applied batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContainerBatch {
    /// When it was applied.
    #[serde(with = "seconds")]
    pub timestamp: Time,
    /// Its containers.
    pub containers: Vec<String>,
}

mod seconds {
    //! `metav1.Time` in JSON (RFC 3339, whole seconds), written with jiff's fast printer.
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &Time, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::rfc3339::rfc3339(t.0))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
        Time::deserialize(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_text_is_the_json_of_each_state_even_when_remembered() {
        let now: Timestamp = "2026-01-01T12:00:00Z".parse().unwrap();
        let a = InPlaceUpdateState::new("demo-1", now);
        let mut b = a.clone();
        b.last_container_statuses.insert(
            "app".into(),
            LastContainerStatus {
                image_id: "id-1".into(),
            },
        );
        let mut texts = StateText::default();
        for state in [&a, &a, &b, &a] {
            assert_eq!(texts.json(state.clone()), serde_json::to_string(state).unwrap());
        }
    }
}
