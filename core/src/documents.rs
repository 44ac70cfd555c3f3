//! Kubernetes objects in text: a YAML stream of documents, a JSON object or array, and `kind: …List`
//! flattened into its items. What the `--objects` loader and `kruise admit -f` read, without the files.
//!
//! Bounded: a YAML text may hold at most [`MAX_YAML_NODES`] nodes; JSON arrays and JSON lists are
//! parsed item by item (10,000 pods never exist as one parsed tree).

use std::collections::BTreeMap;

use serde_json::{Value, value::RawValue};
use serde_saphyr::budget::BudgetBreach;

/// Most YAML nodes (mappings, sequences and scalars) in one text: room for 10,000 realistic pods (a pod
/// as kube-apiserver stores it has about 520 nodes). YAML parses an order of magnitude slower than JSON;
/// bigger sets belong in JSON.
pub const MAX_YAML_NODES: usize = 6_000_000;

/// Nodes of a realistic pod, rounded up: what messages count pods in.
pub const NODES_PER_POD: usize = 600;

/// Why a text's objects could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DocumentError {
    #[error("not valid YAML or JSON: {0}")]
    Parse(String),
    /// `index` is 1-based.
    #[error("document {index} is not an object with a kind")]
    NotAnObject { index: usize },
    #[error("YAML with more than {limit} nodes")]
    YamlTooLarge { limit: usize },
}

/// Where an object was found in a text: its document (1-based; an item of a JSON array counts as a
/// document) and, inside a `List`, its item (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub document: usize,
    pub item: Option<usize>,
}

/// Why [`for_each_document`] stopped: the text, or the visitor.
#[derive(Debug)]
pub enum Stop<E> {
    Document(DocumentError),
    Visit(E),
}

/// Every object of `text`, in order.
pub fn parse(text: &str) -> Result<Vec<Value>, DocumentError> {
    let mut out = Vec::new();
    for_each_document(text, MAX_YAML_NODES, &mut |object, _| {
        out.push(object);
        Ok::<(), std::convert::Infallible>(())
    })
    .map_err(|stop| match stop {
        Stop::Document(e) => e,
        Stop::Visit(never) => match never {},
    })?;
    Ok(out)
}

/// Hands every object of `text` to `visit` as soon as it is parsed; YAML of more than `max_yaml_nodes`
/// nodes is refused.
pub fn for_each_document<E>(
    text: &str,
    max_yaml_nodes: usize,
    visit: &mut impl FnMut(Value, Position) -> Result<(), E>,
) -> Result<(), Stop<E>> {
    let parse_error = |e: serde_json::Error| Stop::Document(DocumentError::Parse(e.to_string()));
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        // A JSON array: items are parsed one at a time from their raw text.
        for (index, item) in json_items(text).map_err(parse_error)?.into_iter().enumerate() {
            let doc = serde_json::from_str(item.get()).map_err(parse_error)?;
            visit_document(doc, index, visit)?;
        }
        return Ok(());
    }
    if trimmed.starts_with('{')
        && let Some(items) = json_list_items(text).map_err(parse_error)?
    {
        // A JSON `kind: …List` (`kubectl get -o json`): its items one at a time.
        for (index, item) in json_items(items.get())
            .map_err(parse_error)?
            .into_iter()
            .enumerate()
        {
            let at = Position {
                document: 1,
                item: Some(index + 1),
            };
            let object = serde_json::from_str(item.get()).map_err(parse_error)?;
            visit(object, at).map_err(Stop::Visit)?;
        }
        return Ok(());
    }
    let documents: Vec<Value> = if trimmed.starts_with('{') {
        vec![serde_json::from_str(text).map_err(parse_error)?]
    } else {
        parse_yaml(text, max_yaml_nodes).map_err(Stop::Document)?
    };
    for (index, doc) in documents.into_iter().enumerate() {
        visit_document(doc, index, visit)?;
    }
    Ok(())
}

fn json_items(raw: &str) -> Result<Vec<&RawValue>, serde_json::Error> {
    serde_json::from_str(raw)
}

/// The documents of a YAML stream of at most `max_nodes` nodes.
fn parse_yaml(text: &str, max_nodes: usize) -> Result<Vec<Value>, DocumentError> {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = max_nodes;
    // Every node is an event or two (collections open and close).
    budget.max_events = max_nodes.saturating_mul(3);
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    serde_saphyr::from_multiple_with_options(text, options).map_err(|e| match e.without_snippet() {
        serde_saphyr::Error::Budget {
            breach: BudgetBreach::Nodes { .. } | BudgetBreach::Events { .. },
            ..
        } => DocumentError::YamlTooLarge { limit: max_nodes },
        e => DocumentError::Parse(e.to_string()),
    })
}

/// The raw `items` of a JSON object whose `kind` ends in `List` and whose `items` is an array.
fn json_list_items(text: &str) -> Result<Option<&RawValue>, serde_json::Error> {
    let fields: BTreeMap<String, &RawValue> = serde_json::from_str(text)?;
    let kind = fields
        .get("kind")
        .and_then(|k| serde_json::from_str::<String>(k.get()).ok());
    let items = fields.get("items").copied().filter(|i| i.get().starts_with('['));
    Ok(items.filter(|_| kind.is_some_and(|k| k.ends_with("List"))))
}

/// One document: skipped when empty, an error without a kind, its items when it is a `List`.
fn visit_document<E>(
    doc: Value,
    index: usize,
    visit: &mut impl FnMut(Value, Position) -> Result<(), E>,
) -> Result<(), Stop<E>> {
    let not_an_object = || Stop::Document(DocumentError::NotAnObject { index: index + 1 });
    let Value::Object(mut map) = doc else {
        if doc.is_null() {
            return Ok(());
        }
        return Err(not_an_object());
    };
    let Some(kind) = map.get("kind").and_then(Value::as_str) else {
        return Err(not_an_object());
    };
    let document = index + 1;
    if kind.ends_with("List") && map.get("items").is_some_and(Value::is_array) {
        if let Some(Value::Array(items)) = map.remove("items") {
            for (item, object) in items.into_iter().enumerate() {
                let at = Position {
                    document,
                    item: Some(item + 1),
                };
                visit(object, at).map_err(Stop::Visit)?;
            }
        }
        Ok(())
    } else {
        let at = Position { document, item: None };
        visit(Value::Object(map), at).map_err(Stop::Visit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_document_yaml_and_lists() {
        let objs = parse(
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p}}\n- {apiVersion: v1, kind: Pod, metadata: {name: q}}\n",
        )
        .unwrap();
        let names: Vec<_> = objs
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["a", "p", "q"]);
    }

    #[test]
    fn json_object_and_array() {
        assert_eq!(
            parse(r#"{"kind":"Pod","metadata":{"name":"p"}}"#).unwrap().len(),
            1
        );
        assert_eq!(parse(r#"[{"kind":"Pod"},{"kind":"Pod"}]"#).unwrap().len(), 2);
    }

    #[test]
    fn json_lists_are_read_item_by_item() {
        let objs = parse(
            r#"{"apiVersion":"v1","kind":"List","metadata":{},"items":[{"kind":"Pod","metadata":{"name":"p"}},{"kind":"Pod","metadata":{"name":"q"}}]}"#,
        )
        .unwrap();
        let names: Vec<_> = objs
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["p", "q"]);
        // Not a list after all: the object itself.
        assert_eq!(parse(r#"{"kind":"PodList","items":"none"}"#).unwrap().len(), 1);
        assert!(matches!(
            parse(r#"{"kind":"List","items":[{"kind":"Pod"},{"kind":]}"#).unwrap_err(),
            DocumentError::Parse(_)
        ));
    }

    #[test]
    fn documents_without_a_kind_are_named_by_position() {
        assert_eq!(
            parse("kind: Pod\n---\n- a\n- b\n").unwrap_err(),
            DocumentError::NotAnObject { index: 2 }
        );
        assert!(matches!(parse("a: [b\n").unwrap_err(), DocumentError::Parse(_)));
    }
}
