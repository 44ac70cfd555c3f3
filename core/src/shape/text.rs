//! The text form of a [`Shape`]: one node per line, so that a shape can be kept in the repository and
//! read at run time without generating the type's JSON schema. (Generating the Pod's schema builds
//! every field's description as `serde_json` values, megabytes the allocator keeps, for a shape whose
//! text is 16 KB.)
//!
//! ```text
//! shape v1 Pod 0
//! 0 struct apiVersion=1 kind=1 spec=2
//! 1 string
//! 2 map 1
//! ```
//!
//! The first line names the resource and the root node; then node `n` is on the `n`-th node line:
//! `struct` with its fields as `name=node`, `map` or `list` with the node of their values, or a leaf.
//! Blank lines and lines starting with `#` are skipped.

use std::fmt::Write as _;

use super::{Node, NodeId, Shape};

/// Why a text is not a [`Shape`]: the line (1-based) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("shape text, line {line}: {message}")]
pub struct ShapeTextError {
    pub line: usize,
    pub message: String,
}

/// The leaves and their names in the text.
const LEAVES: [(&str, Node); 9] = [
    ("string", Node::String),
    ("bool", Node::Bool),
    ("int32", Node::Int32),
    ("int64", Node::Int64),
    ("number", Node::Number),
    ("int-or-string", Node::IntOrString),
    ("date-time", Node::DateTime),
    ("bytes", Node::Bytes),
    ("unknown", Node::Unknown),
];

impl Shape {
    /// The shape as text (fields in name order, so equal shapes give equal texts).
    pub fn to_text(&self) -> String {
        let mut out = String::from(
            "# A kruise_core::Shape, one node per line (core/src/shape/text.rs). Generated: do not edit.\n",
        );
        let _ = writeln!(out, "shape {} {} {}", self.api_version, self.kind, self.root);
        for (id, node) in self.nodes.iter().enumerate() {
            let _ = write!(out, "{id} ");
            match node {
                Node::Struct(fields) => {
                    let mut fields: Vec<_> = fields.iter().collect();
                    fields.sort();
                    out.push_str("struct");
                    for (name, field) in fields {
                        let _ = write!(out, " {name}={field}");
                    }
                }
                Node::Map(item) => {
                    let _ = write!(out, "map {item}");
                }
                Node::List(item) => {
                    let _ = write!(out, "list {item}");
                }
                leaf => out.push_str(leaf_name(leaf)),
            }
            out.push('\n');
        }
        out
    }

    /// Reads a shape written by [`Shape::to_text`].
    pub fn from_text(text: &str) -> Result<Shape, ShapeTextError> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(index, line)| (index + 1, line.trim()))
            .filter(|(_, line)| !line.is_empty() && !line.starts_with('#'));
        let (header_line, header) = lines.next().ok_or_else(|| error(1, "no `shape` line"))?;
        let words: Vec<&str> = header.split_ascii_whitespace().collect();
        let ["shape", api_version, kind, root] = words[..] else {
            return Err(error(
                header_line,
                "expected `shape <apiVersion> <kind> <root node>`",
            ));
        };
        let root = node_id(header_line, root)?;
        let mut nodes = Vec::new();
        let mut last_line = header_line;
        for (line, text) in lines {
            let mut words = text.split_ascii_whitespace();
            let number = words.next().map(|w| node_id(line, w)).transpose()?;
            if number != Some(nodes.len()) {
                return Err(error(line, &format!("expected node {}", nodes.len())));
            }
            nodes.push(node(line, words)?);
            last_line = line;
        }
        let shape = Shape {
            nodes,
            root,
            api_version: api_version.into(),
            kind: kind.into(),
        };
        let undefined = shape.children().chain([root]).find(|&id| id >= shape.nodes.len());
        match undefined {
            Some(id) => Err(error(
                last_line,
                &format!("node {id} is referred to but not defined"),
            )),
            None => Ok(shape),
        }
    }

    /// Every node a node refers to.
    fn children(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes
            .iter()
            .flat_map(|node| -> Box<dyn Iterator<Item = NodeId> + '_> {
                match node {
                    Node::Struct(fields) => Box::new(fields.values().copied()),
                    Node::Map(item) | Node::List(item) => Box::new(std::iter::once(*item)),
                    _ => Box::new(std::iter::empty()),
                }
            })
    }
}

/// One node line, after its number.
fn node<'a>(line: usize, mut words: impl Iterator<Item = &'a str>) -> Result<Node, ShapeTextError> {
    let tag = words.next().ok_or_else(|| error(line, "a node without a kind"))?;
    let node = match tag {
        "struct" => {
            let mut fields = foldhash::HashMap::default();
            for word in words.by_ref() {
                let (name, field) = word
                    .rsplit_once('=')
                    .ok_or_else(|| error(line, &format!("expected `name=node`, found `{word}`")))?;
                if fields.insert(name.into(), node_id(line, field)?).is_some() {
                    return Err(error(line, &format!("field `{name}` twice")));
                }
            }
            Node::Struct(fields)
        }
        "map" | "list" => {
            let item = words
                .next()
                .ok_or_else(|| error(line, &format!("`{tag}` without the node of its values")))?;
            let item = node_id(line, item)?;
            if tag == "map" {
                Node::Map(item)
            } else {
                Node::List(item)
            }
        }
        leaf => LEAVES
            .iter()
            .find(|(name, _)| *name == leaf)
            .map(|(_, node)| node.clone())
            .ok_or_else(|| error(line, &format!("unknown node kind `{leaf}`")))?,
    };
    match words.next() {
        Some(extra) => Err(error(line, &format!("unexpected `{extra}`"))),
        None => Ok(node),
    }
}

fn leaf_name(leaf: &Node) -> &'static str {
    LEAVES
        .iter()
        .find(|(_, node)| node == leaf)
        .map_or("unknown", |(name, _)| name)
}

fn node_id(line: usize, word: &str) -> Result<NodeId, ShapeTextError> {
    word.parse()
        .map_err(|_| error(line, &format!("`{word}` is not a node number")))
}

fn error(line: usize, message: &str) -> ShapeTextError {
    ShapeTextError {
        line,
        message: message.to_string(),
    }
}
