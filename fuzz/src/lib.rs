//! What the fuzz targets check, beyond "no panic": each target is one function here, so a crash
//! found by the fuzzer can be replayed as a plain test (`cargo test` in `fuzz/`, or the regression
//! tests in the crates themselves).

use std::sync::OnceLock;

use json_patch::PatchOperation;
use kruise_core::documents;
use kruise_webhooks::{
    MemoryView, Review, ReviewResponse, Settings, Webhook,
    convert::convert_review,
    patch::{apply_in_place, apply_with_undo, undo_all},
    width,
};
use serde_json::Value;

/// The cluster the reviews are decided against: `examples/cluster` (a SidecarSet, a budget, a
/// WorkloadSpread, namespaces and pods).
pub fn view() -> &'static MemoryView {
    static VIEW: OnceLock<MemoryView> = OnceLock::new();
    VIEW.get_or_init(|| {
        let mut view = MemoryView::default();
        for text in [
            include_str!("../../examples/cluster/namespaces.yaml"),
            include_str!("../../examples/cluster/pods.yaml"),
            include_str!("../../examples/cluster/podunavailablebudget.yaml"),
            include_str!("../../examples/cluster/sidecarset.yaml"),
            include_str!("../../examples/cluster/workloadspread.yaml"),
        ] {
            for object in documents::parse(text).expect("examples/cluster parses") {
                view.add(object).expect("examples/cluster objects are valid");
            }
        }
        view
    })
}

/// An AdmissionReview body through `webhook` as the server takes it (decode, width check, decide,
/// status writes, encode). Checks: the request is left as it came; only mutating webhooks patch, and
/// their patch applies to the object; the answer encodes.
pub fn review(webhook: Webhook, body: &[u8]) {
    let Ok(Review {
        api_version,
        mut request,
    }) = Review::parse(body)
    else {
        return;
    };
    for object in [&request.object, &request.old_object].into_iter().flatten() {
        if width::check(object).is_err() {
            return;
        }
    }
    let (object, old_object) = (request.object.clone(), request.old_object.clone());
    let settings = Settings::default();
    let decision = webhook.handle_mut(&mut request, view(), &settings);
    assert_eq!(request.object, object, "the request's object was not restored");
    assert_eq!(request.old_object, old_object, "the request's oldObject changed");
    let response = decision.to_response(&request, webhook.is_mutating());
    if response.patch.is_some() {
        assert!(
            webhook.is_mutating(),
            "a validating webhook answered with a patch"
        );
        let ops = response.patch_operations().expect("the patch decodes");
        let object = request.object.as_ref().expect("a patch without an object");
        if let Err(e) = kruise_webhooks::patch::apply(object, &ops) {
            panic!("the patch does not apply to the object: {e}");
        }
    }
    if decision.allowed() && !request.is_dry_run() && !decision.writes.is_empty() {
        let mut view = view().clone();
        for write in &decision.writes {
            // A conflict is an answer (409), not a fault.
            let _ = view.apply_status(write);
        }
    }
    serde_json::to_vec(&ReviewResponse::new(&api_version, response)).expect("the answer encodes");
}

/// A ConversionReview body through `/convert`. Checks: every converted object is in the desired
/// version, and the answer encodes.
pub fn convert(body: &[u8]) {
    let Ok(answer) = convert_review(body) else {
        return;
    };
    let response = &answer.response;
    if response["result"]["status"] == "Success" {
        // Read as the webhook reads it: fields it skips (`kind`, unknown ones) may hold what only a
        // skipping parser accepts, such as a lone surrogate escape (found by this target).
        #[derive(serde::Deserialize)]
        struct Review {
            request: Request,
        }
        #[derive(serde::Deserialize)]
        struct Request {
            #[serde(rename = "desiredAPIVersion", default)]
            desired: String,
        }
        let review: Review = serde_json::from_slice(body).expect("decoded once already");
        for object in response["convertedObjects"].as_array().into_iter().flatten() {
            assert_eq!(
                object["apiVersion"], review.request.desired,
                "converted to another version"
            );
        }
    }
    serde_json::to_vec(&answer).expect("the answer encodes");
}

/// Text through the `--objects` parser. Checks: every object it hands out is a JSON object.
pub fn objects(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(objects) = documents::parse(text) {
        for object in objects {
            let _ = object.is_object();
        }
    }
}

/// `{"doc": …, "ops": [RFC 6902 operations]}` through our patch appliers. Checks: the in-place
/// applier agrees with `json_patch` (success or failure, and the result); applying with undo and
/// taking it back leaves the document and the operations as they were.
pub fn patch(data: &[u8]) {
    #[derive(serde::Deserialize)]
    struct Input {
        doc: Value,
        ops: Vec<PatchOperation>,
    }
    let Ok(Input { doc, ops }) = serde_json::from_slice::<Input>(data) else {
        return;
    };
    let mut reference = doc.clone();
    let expected = json_patch::patch(&mut reference, &ops);

    let mut in_place = doc.clone();
    let got = apply_in_place(&mut in_place, &ops);
    assert_eq!(
        got.is_ok(),
        expected.is_ok(),
        "in place: {got:?}, json_patch: {expected:?}"
    );
    if got.is_ok() {
        assert_eq!(in_place, reference, "in place and json_patch disagree");
    }

    let undoable = ops.iter().all(|op| {
        matches!(
            op,
            PatchOperation::Add(_) | PatchOperation::Remove(_) | PatchOperation::Replace(_)
        )
    });
    if !undoable {
        return;
    }
    let mut working = doc.clone();
    let mut lent = ops.clone();
    let mut undo = Vec::new();
    let applied = apply_with_undo(&mut working, &mut lent, 0, &mut undo);
    assert_eq!(
        applied.is_ok(),
        expected.is_ok(),
        "with undo: {applied:?}, json_patch: {expected:?}"
    );
    if applied.is_ok() {
        assert_eq!(working, reference, "with undo and json_patch disagree");
    }
    undo_all(&mut working, &mut lent, undo);
    assert_eq!(working, doc, "undo did not restore the document");
    if applied.is_ok() {
        assert_eq!(lent, ops, "undo did not give the operations their values back");
    }
}
