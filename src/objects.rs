//! Reading Kubernetes objects from YAML or JSON files: multi-document streams, `kind: List`, and
//! directories read recursively (in name order, hidden files skipped).

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use serde_json::{Value, value::RawValue};

/// Why objects could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ObjectsError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not valid YAML or JSON: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: document {index} is not an object with a kind")]
    NotAnObject { path: PathBuf, index: usize },
}

/// Every object found under `paths`, in order.
pub fn load_paths(paths: &[PathBuf]) -> Result<Vec<Value>, ObjectsError> {
    let mut out = Vec::new();
    for_each_object(paths, &mut |object| {
        out.push(object);
        Ok::<(), ObjectsError>(())
    })?;
    Ok(out)
}

/// Where an object was found: its file, its document (1-based; the item of a JSON array counts as a
/// document) and, inside a `List`, its item (1-based).
#[derive(Clone, Copy, Debug)]
pub struct Location<'a> {
    pub path: &'a Path,
    pub document: usize,
    pub item: Option<usize>,
}

impl std::fmt::Display for Location<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} document {}", self.path.display(), self.document)?;
        match self.item {
            Some(item) => write!(f, " item {item}"),
            None => Ok(()),
        }
    }
}

/// Hands every object found under `paths` to `visit`, in order, one at a time: a JSON array is parsed
/// item by item, so a file of 10,000 pods never exists as one parsed tree.
pub fn for_each_object<E: From<ObjectsError>>(
    paths: &[PathBuf],
    visit: &mut impl FnMut(Value) -> Result<(), E>,
) -> Result<(), E> {
    for_each_located(paths, &mut |object, _| visit(object))
}

/// [`for_each_object`], with where each object was found.
pub fn for_each_located<E: From<ObjectsError>>(
    paths: &[PathBuf],
    visit: &mut impl FnMut(Value, Location<'_>) -> Result<(), E>,
) -> Result<(), E> {
    for path in paths {
        visit_path(path, visit)?;
    }
    Ok(())
}

fn visit_path<E: From<ObjectsError>>(
    path: &Path,
    visit: &mut impl FnMut(Value, Location<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let io = |source| ObjectsError::Io {
        path: path.to_path_buf(),
        source,
    };
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(io)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for entry in entries {
            let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with('.') {
                continue;
            }
            let is_manifest = ["yaml", "yml", "json"]
                .iter()
                .any(|ext| entry.extension().and_then(|e| e.to_str()) == Some(ext));
            if entry.is_dir() || is_manifest {
                visit_path(&entry, visit)?;
            }
        }
        return Ok(());
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    visit_objects(&text, path, visit)
}

/// Parses a YAML (or JSON) stream into objects, flattening `kind: List`.
pub fn parse_objects(text: &str, path: &Path, out: &mut Vec<Value>) -> Result<(), ObjectsError> {
    visit_objects(text, path, &mut |object, _| {
        out.push(object);
        Ok::<(), ObjectsError>(())
    })
}

/// [`parse_objects`], handing each object to `visit` as soon as it is parsed.
fn visit_objects<E: From<ObjectsError>>(
    text: &str,
    path: &Path,
    visit: &mut impl FnMut(Value, Location<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let parse_error = |e: &dyn std::fmt::Display| ObjectsError::Parse {
        path: path.into(),
        message: e.to_string(),
    };
    fn json_items(raw: &str) -> Result<Vec<&RawValue>, serde_json::Error> {
        serde_json::from_str(raw)
    }
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        // A JSON array: items are parsed one at a time from their raw text.
        for (index, item) in json_items(text)
            .map_err(|e| parse_error(&e))?
            .into_iter()
            .enumerate()
        {
            let doc = serde_json::from_str(item.get()).map_err(|e| parse_error(&e))?;
            visit_document(doc, index, path, visit)?;
        }
        return Ok(());
    }
    if trimmed.starts_with('{')
        && let Some(items) = json_list_items(text).map_err(|e| parse_error(&e))?
    {
        // A JSON `kind: …List` (`kubectl get -o json`): its items one at a time.
        for (index, item) in json_items(items.get())
            .map_err(|e| parse_error(&e))?
            .into_iter()
            .enumerate()
        {
            let at = Location {
                path,
                document: 1,
                item: Some(index + 1),
            };
            visit(serde_json::from_str(item.get()).map_err(|e| parse_error(&e))?, at)?;
        }
        return Ok(());
    }
    let documents: Vec<Value> = if trimmed.starts_with('{') {
        vec![serde_json::from_str(text).map_err(|e| parse_error(&e))?]
    } else {
        serde_saphyr::from_multiple(text).map_err(|e| parse_error(&e))?
    };
    for (index, doc) in documents.into_iter().enumerate() {
        visit_document(doc, index, path, visit)?;
    }
    Ok(())
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
fn visit_document<E: From<ObjectsError>>(
    doc: Value,
    index: usize,
    path: &Path,
    visit: &mut impl FnMut(Value, Location<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let not_an_object = || ObjectsError::NotAnObject {
        path: path.into(),
        index: index + 1,
    };
    let Value::Object(mut map) = doc else {
        if doc.is_null() {
            return Ok(());
        }
        return Err(not_an_object().into());
    };
    let Some(kind) = map.get("kind").and_then(Value::as_str) else {
        return Err(not_an_object().into());
    };
    if kind.ends_with("List") && map.get("items").is_some_and(Value::is_array) {
        if let Some(Value::Array(items)) = map.remove("items") {
            for (item, object) in items.into_iter().enumerate() {
                let at = Location {
                    path,
                    document: index + 1,
                    item: Some(item + 1),
                };
                visit(object, at)?;
            }
        }
        Ok(())
    } else {
        let at = Location {
            path,
            document: index + 1,
            item: None,
        };
        visit(Value::Object(map), at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Value>, ObjectsError> {
        let mut out = Vec::new();
        parse_objects(text, Path::new("t.yaml"), &mut out).map(|()| out)
    }

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
            ObjectsError::Parse { .. }
        ));
    }

    #[test]
    fn errors_name_the_file_and_document() {
        let err = parse("kind: Pod\n---\n- a\n- b\n").unwrap_err();
        assert_eq!(err.to_string(), "t.yaml: document 2 is not an object with a kind");
        assert!(matches!(
            parse("a: [b\n").unwrap_err(),
            ObjectsError::Parse { .. }
        ));
    }

    #[test]
    fn directories_are_read_recursively_in_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("b.yaml"), "kind: Pod\nmetadata: {name: b}\n").unwrap();
        std::fs::write(
            dir.path().join("sub/a.json"),
            r#"{"kind":"Pod","metadata":{"name":"a"}}"#,
        )
        .unwrap();
        std::fs::write(dir.path().join("README.md"), "not yaml").unwrap();
        std::fs::write(dir.path().join(".hidden.yaml"), "garbage: [").unwrap();
        let objs = load_paths(&[dir.path().to_path_buf()]).unwrap();
        let names: Vec<_> = objs
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["b", "a"]);
    }
}
