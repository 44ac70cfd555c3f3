//! What a webhook decides, as data: allowed or denied, a patch, warnings and status writes.

use json_patch::PatchOperation;

use crate::review::{AdmissionRequest, AdmissionResponse, ResponseStatus, encode_patch};

/// Why a request is refused: the HTTP-like code, the `metav1.Status` reason and a message that says what
/// to fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denial {
    pub code: u16,
    pub reason: String,
    pub message: String,
    /// Set when the denial is only because the view lacks this object: the IO layer may read it from
    /// the API server and decide again (docs/pod-admission.md#owners-not-yet-in-the-cache).
    pub missing: Option<Box<MissingObject>>,
}

impl Denial {
    /// A denial with an explicit code and `metav1.Status` reason.
    pub fn new(code: u16, reason: impl Into<String>, message: impl Into<String>) -> Self {
        Denial {
            code,
            reason: reason.into(),
            message: message.into(),
            missing: None,
        }
    }

    /// Marks the denial as caused by `object` missing from the view.
    #[must_use]
    pub fn for_missing(mut self, object: MissingObject) -> Self {
        self.missing = Some(Box::new(object));
        self
    }
}

/// An object a decision looked for in its view and did not find, named as its reference named it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MissingObject {
    /// API group ("" for core).
    pub group: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl std::fmt::Display for MissingObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let resource = kruise_core::owner::resource_of(&self.group, &self.kind);
        write!(f, "{resource} {}/{}", self.namespace, self.name)
    }
}

impl From<Denial> for Decision {
    fn from(denial: Denial) -> Self {
        Decision {
            denial: Some(denial),
            ..Decision::default()
        }
    }
}

pub use kruise_core::{StatusWrite, WriteTarget};

/// The object an [`AdmissionEvent`] is about.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Regarding {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: Option<String>,
}

/// A Kubernetes Event a decision asks the server to record (OpenKruise's webhooks record some, e.g.
/// `PubPreventPodDeletion`). Recording never delays or changes the answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmissionEvent {
    pub regarding: Regarding,
    /// `Normal` or `Warning`.
    pub warning: bool,
    pub reason: &'static str,
    pub message: String,
}

/// A request a PodUnavailableBudget refused, for the `pod_unavailable_budget` metric: the pod's
/// controller as `<Kind>_<namespace>_<name>` (`unknown_<namespace>_<pod>` without one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetRefusal {
    pub kind_namespace_name: String,
}

/// A webhook's answer to one request.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decision {
    /// `None` means allowed.
    pub denial: Option<Denial>,
    pub patch: Vec<PatchOperation>,
    pub warnings: Vec<String>,
    pub writes: Vec<StatusWrite>,
    /// Events to record, after answering.
    pub events: Vec<AdmissionEvent>,
    /// Set when a PodUnavailableBudget refused the request.
    pub budget_refusal: Option<BudgetRefusal>,
    /// SidecarSets skipped as invalid while mutating a pod (for the `sidecarset_skipped` metric).
    pub skipped_sidecar_sets: Vec<String>,
}

impl Decision {
    /// Allowed, nothing to change.
    pub fn allow() -> Self {
        Decision::default()
    }

    /// Refused with an explicit code (403 policy, 422 invalid, 429 budget, 400/500 errors).
    pub fn deny(code: u16, reason: impl Into<String>, message: impl Into<String>) -> Self {
        Decision {
            denial: Some(Denial::new(code, reason, message)),
            ..Decision::default()
        }
    }

    /// Refused by policy: 403 Forbidden.
    pub fn forbid(message: impl Into<String>) -> Self {
        Decision::deny(403, "Forbidden", message)
    }

    /// Refused because the request could not be handled as sent: 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Decision::deny(400, "BadRequest", message)
    }

    /// Allowed with these patch operations.
    pub fn patched(patch: Vec<PatchOperation>) -> Self {
        Decision {
            patch,
            ..Decision::default()
        }
    }

    /// Adds a warning returned to the client.
    #[must_use]
    pub fn with_warning(mut self, warning: impl Into<String>) -> Self {
        self.warnings.push(warning.into());
        self
    }

    /// Adds a status write the decision depends on.
    #[must_use]
    pub fn with_write(mut self, write: StatusWrite) -> Self {
        self.writes.push(write);
        self
    }

    /// True when the request is allowed.
    pub fn allowed(&self) -> bool {
        self.denial.is_none()
    }

    /// The object whose absence from the view alone caused the denial, if that is why it was denied.
    pub fn missing(&self) -> Option<&MissingObject> {
        self.denial.as_ref()?.missing.as_deref()
    }

    /// The AdmissionResponse for `request`. Validating webhooks never send a patch; a denial never
    /// carries one either.
    pub fn to_response(&self, request: &AdmissionRequest, mutating: bool) -> AdmissionResponse {
        let send_patch = mutating && self.denial.is_none() && !self.patch.is_empty();
        AdmissionResponse {
            uid: request.uid.clone(),
            allowed: self.denial.is_none(),
            status: self.denial.as_ref().map(|d| ResponseStatus {
                code: d.code,
                reason: d.reason.clone(),
                message: bounded(&d.message, MAX_MESSAGE_BYTES),
            }),
            patch: send_patch.then(|| encode_patch(&self.patch)),
            patch_type: send_patch.then(|| "JSONPatch".to_string()),
            warnings: self
                .warnings
                .iter()
                .map(|w| bounded(w, MAX_WARNING_BYTES))
                .collect(),
        }
    }
}

/// The longest denial message sent: kubectl prints it whole, and a message naming the object and the
/// rule fits in far less.
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// The longest warning sent: the apiserver cuts each warning to 256 characters once a response's
/// warnings pass 4,096 in all, so a warning this long always reaches the user whole.
pub const MAX_WARNING_BYTES: usize = 256;

/// `text` cut to at most `max` bytes on a character boundary, ending in `…` when cut.
fn bounded(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request() -> AdmissionRequest {
        serde_json::from_value(json!({"uid": "abc", "operation": "CREATE"})).unwrap()
    }

    fn some_patch() -> Vec<PatchOperation> {
        serde_json::from_value(json!([{"op": "add", "path": "/x", "value": 1}])).unwrap()
    }

    #[test]
    fn validating_answers_never_carry_a_patch() {
        let d = Decision::patched(some_patch());
        let r = d.to_response(&request(), false);
        let wire = serde_json::to_value(&r).unwrap();
        assert!(wire.get("patch").is_none() && wire.get("patchType").is_none());
        assert_eq!(wire["uid"], "abc");
    }

    #[test]
    fn mutating_answer_has_patch_type_iff_patch() {
        let r = Decision::patched(some_patch()).to_response(&request(), true);
        assert!(r.patch.is_some() && r.patch_type.as_deref() == Some("JSONPatch"));
        let r = Decision::allow().to_response(&request(), true);
        let wire = serde_json::to_value(&r).unwrap();
        assert!(wire.get("patch").is_none() && wire.get("patchType").is_none());
    }

    #[test]
    fn denial_has_code_reason_message_and_no_patch() {
        let mut d = Decision::forbid("no");
        d.patch = some_patch();
        let r = d.to_response(&request(), true);
        assert!(!r.allowed && r.patch.is_none());
        let s = r.status.unwrap();
        assert_eq!(
            (s.code, s.reason.as_str(), s.message.as_str()),
            (403, "Forbidden", "no")
        );
    }

    #[test]
    fn long_messages_and_warnings_are_cut_on_a_character_boundary() {
        let long = "é".repeat(2000);
        let r = Decision::forbid(long.clone())
            .with_warning(long.clone())
            .with_warning("short")
            .to_response(&request(), true);
        let message = r.status.unwrap().message;
        assert!(
            message.len() <= MAX_MESSAGE_BYTES && message.ends_with('…'),
            "{}",
            message.len()
        );
        assert!(long.starts_with(message.trim_end_matches('…')));
        assert!(r.warnings[0].len() <= MAX_WARNING_BYTES && r.warnings[0].ends_with('…'));
        assert_eq!(r.warnings[1], "short");
        let exact = "x".repeat(MAX_MESSAGE_BYTES);
        let r = Decision::forbid(exact.clone()).to_response(&request(), true);
        assert_eq!(
            r.status.unwrap().message,
            exact,
            "a message at the limit is sent whole"
        );
    }
}
