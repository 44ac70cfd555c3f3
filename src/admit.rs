//! `kruise admit`: the webhooks offline, against one in-memory cluster state.
//!
//! - `--webhook PATH`: reads a stream of AdmissionReview JSON documents (ConversionReviews for `/convert`)
//!   and prints one answer per line;
//!   a status write made by one review is applied before the next. Exit 0 when every review was
//!   handled (allowed or denied); 2 on malformed input, naming the document.
//! - `-f MANIFEST`: passes each object of the manifest through the CREATE path (the mutating, then the
//!   validating webhooks our registrations select) and prints the admitted objects as YAML, like
//!   `istioctl kube-inject -f`. Exit 1 when an object is denied.

use std::{
    io::{Read, Write},
    path::Path,
    process::ExitCode,
};

use kruise_webhooks::{Webhook, patch, registration::Scope};
use serde_json::{Value, json};

use crate::{
    admission::Admission,
    cli::AdmitArgs,
    objects,
    registrations::{self, EXCLUDED_NAMESPACES},
    server::load_view,
};

/// Runs `kruise admit` and returns the exit code.
pub async fn run(args: &AdmitArgs) -> ExitCode {
    let view = match load_view(&args.objects) {
        Ok(view) => view,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(2);
        }
    };
    let admission = Admission::in_memory(view, args.settings());
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let code = match (&args.webhook, &args.filename) {
        (Some(path), _) => match read_input(args.review.as_deref()) {
            Ok(input) => review_stream(&admission, path, &input, &mut out).await,
            Err(e) => Err(e),
        },
        (None, Some(file)) => manifest(&admission, file, &mut out).await,
        (None, None) => {
            Err("either --webhook PATH (reviews on stdin or --review) or -f MANIFEST is required".into())
        }
    };
    let _ = out.flush();
    match code {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn read_input(path: Option<&Path>) -> Result<Vec<u8>, String> {
    match path {
        Some(path) if path != Path::new("-") => {
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
        }
        _ => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .map_err(|e| format!("cannot read stdin: {e}"))?;
            Ok(buf)
        }
    }
}

/// Answers every review of `input` in order, one JSON line each.
pub async fn review_stream(
    admission: &Admission,
    path: &str,
    input: &[u8],
    out: &mut impl Write,
) -> Result<ExitCode, String> {
    if path == "/convert" {
        return conversion_stream(input, out);
    }
    let webhook = Webhook::from_path(path).ok_or_else(|| {
        let known: Vec<_> = Webhook::ALL
            .iter()
            .map(|w| w.path())
            .chain(["/convert"])
            .collect();
        format!(
            "no webhook is served at {path}; known paths: {}",
            known.join(", ")
        )
    })?;
    let documents = serde_json::Deserializer::from_slice(input).into_iter::<Value>();
    for (index, document) in documents.enumerate() {
        let number = index + 1;
        let document = document.map_err(|e| format!("document {number}: not valid JSON: {e}"))?;
        let body = serde_json::to_vec(&document).map_err(|e| format!("document {number}: {e}"))?;
        let answer = admission
            .answer(webhook, &body)
            .await
            .map_err(|e| format!("document {number}: {e}"))?;
        let line = serde_json::to_string(&answer.review).map_err(|e| format!("document {number}: {e}"))?;
        writeln!(out, "{line}").map_err(|e| format!("cannot write output: {e}"))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Answers every ConversionReview of `input` in order, one JSON line each.
fn conversion_stream(input: &[u8], out: &mut impl Write) -> Result<ExitCode, String> {
    let documents = serde_json::Deserializer::from_slice(input).into_iter::<Value>();
    for (index, document) in documents.enumerate() {
        let number = index + 1;
        let document = document.map_err(|e| format!("document {number}: not valid JSON: {e}"))?;
        let body = serde_json::to_vec(&document).map_err(|e| format!("document {number}: {e}"))?;
        let answer =
            kruise_webhooks::convert::convert_review(&body).map_err(|e| format!("document {number}: {e}"))?;
        let line = serde_json::to_string(&answer).map_err(|e| format!("document {number}: {e}"))?;
        writeln!(out, "{line}").map_err(|e| format!("cannot write output: {e}"))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Passes every object of `file` through the CREATE path and prints the results as YAML.
pub async fn manifest(admission: &Admission, file: &Path, out: &mut impl Write) -> Result<ExitCode, String> {
    let text = if file == Path::new("-") {
        String::from_utf8(read_input(None)?).map_err(|e| format!("stdin is not UTF-8: {e}"))?
    } else {
        std::fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?
    };
    let mut objects = Vec::new();
    objects::parse_objects(&text, file, &mut objects).map_err(|e| e.to_string())?;
    let mut denied = false;
    for (index, object) in objects.into_iter().enumerate() {
        match admit_create(admission, object, index + 1).await {
            Ok(object) => {
                let yaml = serde_saphyr::to_string(&object).map_err(|e| e.to_string())?;
                write!(out, "---\n{yaml}").map_err(|e| format!("cannot write output: {e}"))?;
            }
            Err(message) => {
                denied = true;
                eprintln!("{message}");
            }
        }
    }
    Ok(if denied {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// One object through the mutating then validating webhooks selected for CREATE.
async fn admit_create(admission: &Admission, mut object: Value, number: usize) -> Result<Value, String> {
    let api_version = object["apiVersion"].as_str().unwrap_or("").to_string();
    let kind = object["kind"].as_str().unwrap_or("").to_string();
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("default");
    let namespace = if kind == "Namespace" {
        name.clone()
    } else {
        namespace.to_string()
    };
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version.as_str()));
    let (group, version) = (group.to_string(), version.to_string());
    let mut registrations: Vec<_> = registrations::matching(&group, &version, &kind, "CREATE")
        .filter(|_| !EXCLUDED_NAMESPACES.contains(&namespace.as_str()))
        .filter(|(_, r)| {
            r.scope != Scope::DeleteProtected
                || object
                    .pointer("/metadata/labels")
                    .and_then(|l| l.get(kruise_core::names::DELETE_PROTECTION_LABEL))
                    .is_some()
        })
        .collect();
    registrations.sort_by_key(|(webhook, _)| !webhook.is_mutating());
    for (round, (webhook, registration)) in registrations.into_iter().enumerate() {
        let review = json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": format!("kruise-admit-{number}-{round}"),
                "kind": {"group": group, "version": version, "kind": kind},
                "resource": {"group": group, "version": version, "resource": registrations::plural(&kind)},
                "name": name,
                "namespace": namespace,
                "operation": "CREATE",
                "userInfo": {"username": "kruise-admit"},
                "object": object,
                "dryRun": false,
                "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
            }
        });
        let body = serde_json::to_vec(&review).map_err(|e| e.to_string())?;
        let answer = admission
            .answer(*webhook, &body)
            .await
            .map_err(|e| e.to_string())?;
        let response = answer.review.response;
        if !response.allowed {
            let message = response.status.map(|s| s.message).unwrap_or_default();
            return Err(format!(
                "{kind} {name}: admission webhook \"{}\" denied the request: {message}",
                registration.name
            ));
        }
        let ops = response.patch_operations()?;
        if !ops.is_empty() {
            object = patch::apply(&object, &ops).map_err(|e| format!("{kind} {name}: patch failed: {e}"))?;
        }
    }
    Ok(object)
}
