//! Reading Kubernetes objects from YAML or JSON files: multi-document streams, `kind: List`, and
//! directories read recursively (in name order, hidden files skipped).

use std::path::{Path, PathBuf};

use serde_json::Value;

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
    for path in paths {
        load_path(path, &mut out)?;
    }
    Ok(out)
}

fn load_path(path: &Path, out: &mut Vec<Value>) -> Result<(), ObjectsError> {
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
                load_path(&entry, out)?;
            }
        }
        return Ok(());
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    parse_objects(&text, path, out)
}

/// Parses a YAML (or JSON) stream into objects, flattening `kind: List`.
pub fn parse_objects(text: &str, path: &Path, out: &mut Vec<Value>) -> Result<(), ObjectsError> {
    let documents: Vec<Value> = if text.trim_start().starts_with(['{', '[']) {
        // JSON: one value, possibly an array of objects.
        match serde_json::from_str(text) {
            Ok(Value::Array(items)) => items,
            Ok(v) => vec![v],
            Err(e) => {
                return Err(ObjectsError::Parse {
                    path: path.into(),
                    message: e.to_string(),
                });
            }
        }
    } else {
        serde_saphyr::from_multiple(text).map_err(|e| ObjectsError::Parse {
            path: path.into(),
            message: e.to_string(),
        })?
    };
    for (index, doc) in documents.into_iter().enumerate() {
        let Value::Object(mut map) = doc else {
            if doc.is_null() {
                continue;
            }
            return Err(ObjectsError::NotAnObject {
                path: path.into(),
                index: index + 1,
            });
        };
        let Some(kind) = map.get("kind").and_then(Value::as_str) else {
            return Err(ObjectsError::NotAnObject {
                path: path.into(),
                index: index + 1,
            });
        };
        if kind.ends_with("List") && map.get("items").is_some_and(Value::is_array) {
            if let Some(Value::Array(items)) = map.remove("items") {
                out.extend(items);
            }
        } else {
            out.push(Value::Object(map));
        }
    }
    Ok(())
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
