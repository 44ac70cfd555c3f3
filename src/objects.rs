//! Reading Kubernetes objects from YAML or JSON files: multi-document streams, `kind: List`, and
//! directories read recursively (in name order, hidden files skipped).
//!
//! Bounded: a directory reached twice (through symlinks) is read once, only regular files are read
//! (a FIFO would block, a device would never end), a file may hold at most [`MAX_FILE_BYTES`], and a
//! YAML file at most [`MAX_YAML_NODES`] nodes.

use std::{
    collections::HashSet,
    io::Read as _,
    path::{Path, PathBuf},
};

use kruise_core::documents::{self, DocumentError, NODES_PER_POD, Position, Stop};
use serde_json::Value;

pub use kruise_core::documents::MAX_YAML_NODES;

/// Largest file read (10,000 realistic pods as JSON take about 60 MiB).
pub const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// Why objects could not be read. The messages name the file (and document); the cause, when there is
/// one, is the error's source, so a chain prints it once.
#[derive(Debug, thiserror::Error)]
pub enum ObjectsError {
    #[error("cannot read {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not valid YAML or JSON: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: document {index} is not an object with a kind")]
    NotAnObject { path: PathBuf, index: usize },
    #[error("{path}: not a regular file ({what}); only files and directories are read")]
    NotAFile { path: PathBuf, what: &'static str },
    #[error("{path}: {size} bytes is over the limit of {MAX_FILE_BYTES} bytes per file; split it")]
    TooLarge { path: PathBuf, size: u64 },
    #[error(
        "{path}: YAML with more than {limit} nodes (about {pods} pods) is not read; split the file or \
         convert it to JSON (`kubectl get -o json`), which is read item by item without this limit",
        pods = limit / NODES_PER_POD
    )]
    YamlTooLarge { path: PathBuf, limit: usize },
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
    let mut visited = HashSet::new();
    for path in paths {
        visit_path(path, &mut visited, visit)?;
    }
    Ok(())
}

fn visit_path<E: From<ObjectsError>>(
    path: &Path,
    visited: &mut HashSet<PathBuf>,
    visit: &mut impl FnMut(Value, Location<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let io = |source| ObjectsError::Io {
        path: path.to_path_buf(),
        source,
    };
    // `metadata` follows symlinks: what matters is what would be opened.
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.is_dir() {
        // A directory reached again through a symlink (a loop, or two links to one place) is skipped.
        if !visited.insert(std::fs::canonicalize(path).map_err(io)?) {
            tracing::debug!(path = %path.display(), "directory already read; skipped");
            return Ok(());
        }
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
                visit_path(&entry, visited, visit)?;
            }
        }
        return Ok(());
    }
    let text = read_file(path, &meta)?;
    visit_objects(&text, path, visit)
}

/// A regular file's text, at most [`MAX_FILE_BYTES`] (checked again while reading: the file may grow).
fn read_file(path: &Path, meta: &std::fs::Metadata) -> Result<String, ObjectsError> {
    if !meta.is_file() {
        return Err(ObjectsError::NotAFile {
            path: path.into(),
            what: file_kind(meta),
        });
    }
    let too_large = |size| ObjectsError::TooLarge {
        path: path.into(),
        size,
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_large(meta.len()));
    }
    let io = |source| ObjectsError::Io {
        path: path.to_path_buf(),
        source,
    };
    // Sized from the metadata: grown by doubling instead, a 5 MB file passed through buffers of 8 MB,
    // 4 MB, 2 MB… which the allocator keeps after loading.
    let mut text = String::with_capacity(meta.len() as usize + 1);
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(io)?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(text.len() as u64));
    }
    Ok(text)
}

/// What a file that is neither a regular file nor a directory is.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        let kind = meta.file_type();
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    let _ = meta;
    "not a regular file"
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
    documents::for_each_document(text, MAX_YAML_NODES, &mut |object, at: Position| {
        let at = Location {
            path,
            document: at.document,
            item: at.item,
        };
        visit(object, at)
    })
    .map_err(|stop| match stop {
        Stop::Document(e) => ObjectsError::in_file(path, e).into(),
        Stop::Visit(e) => e,
    })
}

impl ObjectsError {
    fn in_file(path: &Path, error: DocumentError) -> Self {
        let path = path.to_path_buf();
        match error {
            DocumentError::Parse(message) => ObjectsError::Parse { path, message },
            DocumentError::NotAnObject { index } => ObjectsError::NotAnObject { path, index },
            DocumentError::YamlTooLarge { limit } => ObjectsError::YamlTooLarge { path, limit },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Value>, ObjectsError> {
        let mut out = Vec::new();
        parse_objects(text, Path::new("t.yaml"), &mut out).map(|()| out)
    }

    /// The documents of `text`, read with a YAML budget of `max_nodes`.
    fn parse_yaml(text: &str, path: &Path, max_nodes: usize) -> Result<Vec<Value>, ObjectsError> {
        let mut out = Vec::new();
        documents::for_each_document(text, max_nodes, &mut |object, _| {
            out.push(object);
            Ok::<(), ObjectsError>(())
        })
        .map_err(|stop| match stop {
            Stop::Document(e) => ObjectsError::in_file(path, e),
            Stop::Visit(e) => e,
        })?;
        Ok(out)
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

    /// Runs `load_paths` on another thread, failing the test if it has not returned within 10 s.
    fn load_within_deadline(path: &Path) -> Result<Vec<Value>, ObjectsError> {
        let (tx, rx) = std::sync::mpsc::channel();
        let path = path.to_path_buf();
        std::thread::spawn(move || tx.send(load_paths(&[path])));
        rx.recv_timeout(std::time::Duration::from_secs(10))
            .expect("loading did not finish within 10 s")
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_directories_are_read_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.yaml"), "kind: Pod\nmetadata: {name: a}\n").unwrap();
        // Two links back to the directory itself: without a visited set the walk is exponential.
        std::os::unix::fs::symlink(".", dir.path().join("loop1")).unwrap();
        std::os::unix::fs::symlink(".", dir.path().join("loop2")).unwrap();
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join("b.yaml"), "kind: Pod\nmetadata: {name: b}\n").unwrap();
        std::os::unix::fs::symlink(other.path(), dir.path().join("linked")).unwrap();
        let objs = load_within_deadline(dir.path()).unwrap();
        let names: Vec<_> = objs
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[cfg(unix)]
    #[test]
    fn fifos_and_devices_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.yaml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let err = load_within_deadline(dir.path()).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: not a regular file (a FIFO); only files and directories are read",
                fifo.display()
            )
        );
        std::fs::remove_file(&fifo).unwrap();
        let zero = dir.path().join("zero.yaml");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let err = load_within_deadline(&zero).unwrap_err();
        assert!(
            matches!(
                err,
                ObjectsError::NotAFile {
                    what: "a character device",
                    ..
                }
            ),
            "{err}"
        );
    }

    /// Grown by doubling, a 5 MB file passed through buffers of 1, 2, 4 and 8 MB, which the allocator
    /// kept after loading (the serve_rss figures of benches/README.md).
    #[test]
    fn a_file_is_read_into_one_buffer_of_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pods.json");
        std::fs::write(&path, "[]".repeat(300_000)).unwrap();
        let text = read_file(&path, &std::fs::metadata(&path).unwrap()).unwrap();
        assert_eq!(text.len(), 600_000);
        assert!(text.capacity() <= 600_001, "{}", text.capacity());
    }

    #[test]
    fn files_over_the_size_limit_are_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.json");
        // Sparse: no disk is used, and reading it would take seconds.
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_FILE_BYTES + 1)
            .unwrap();
        let err = load_within_deadline(&big).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: {} bytes is over the limit of {MAX_FILE_BYTES} bytes per file; split it",
                big.display(),
                MAX_FILE_BYTES + 1
            )
        );
    }

    #[test]
    fn the_yaml_budget_names_its_limit_and_suggests_json() {
        let pods: String = (0..20)
            .map(|i| format!("---\nkind: Pod\nmetadata: {{name: p{i}, labels: {{a: b}}}}\n"))
            .collect();
        let err = parse_yaml(&pods, Path::new("pods.yaml"), 100).unwrap_err();
        let message = err.to_string();
        assert!(
            message.starts_with("pods.yaml: YAML with more than 100 nodes"),
            "{message}"
        );
        assert!(message.contains("JSON"), "{message}");
        assert_eq!(parse_yaml(&pods, Path::new("pods.yaml"), 1000).unwrap().len(), 20);
    }

    #[test]
    fn the_budget_fits_ten_thousand_realistic_pods() {
        // A pod as kube-apiserver stores it (managedFields, status); JSON is YAML too.
        let review: Value =
            serde_json::from_str(include_str!("../benches/data/pod-create-review.json")).unwrap();
        // The leading `---` makes the loader read it as YAML (a text starting with `{` is read as JSON).
        let pod = format!(
            "---\n{}",
            serde_json::to_string_pretty(&review["request"]["object"]).unwrap()
        );
        let nodes = yaml_nodes(&pod);
        assert!(nodes > 100 && nodes <= NODES_PER_POD, "{nodes}");
        assert!(
            nodes * 10_000 <= MAX_YAML_NODES,
            "a pod of {nodes} nodes: 10,000 do not fit {MAX_YAML_NODES}"
        );
    }

    /// How many nodes a YAML document has (the smallest budget that reads it).
    fn yaml_nodes(doc: &str) -> usize {
        let (mut low, mut high) = (1, 100_000);
        while low < high {
            let mid = (low + high) / 2;
            if parse_yaml(doc, Path::new("p.yaml"), mid).is_ok() {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        low
    }

    #[test]
    fn io_errors_name_the_file_once_and_keep_the_cause_as_source() {
        let err = load_paths(&["/nonexistent/x.yaml".into()]).unwrap_err();
        assert_eq!(err.to_string(), "cannot read /nonexistent/x.yaml");
        let source = std::error::Error::source(&err).unwrap().to_string();
        assert!(source.contains("No such file"), "{source}");
    }
}
