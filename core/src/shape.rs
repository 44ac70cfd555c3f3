//! A fast check that a JSON value decodes as a Kubernetes type, without building the type.
//!
//! Decoding a reviewed pod into k8s-openapi's `Pod` only to learn whether it decodes costs as much as
//! the rest of a `/mutate-pod` review: every string and map is allocated and dropped. A [`Shape`] is
//! compiled once from the type's JSON schema (k8s-openapi publishes one per type) and walks the value
//! without allocating. It is conservative: when it admits a value, the typed decoder accepts it too
//! (k8s-openapi ignores unknown fields, reads `null` fields as absent, and needs integers in range);
//! when it does not, [`Shape::check`] runs the typed decoder, which gives the verdict and the field
//! path of the error. So the fast walk changes speed only, never an answer.
//!
//! Compiling a shape generates the type's schema, which for a Pod builds every field's description:
//! megabytes of heap the allocator keeps, and of schema code paged in (benches/README.md, "Memory").
//! The Pod's shape is therefore compiled ahead, stored as text (`shape/pod.shape`, format in
//! `shape/text.rs`) and read by [`Shape::pod`]; a test keeps it equal to the compiled one.

use std::collections::HashMap;

use k8s_openapi::{
    ByteString, Resource,
    apimachinery::pkg::apis::meta::v1::{MicroTime, Time},
};
use schemars::JsonSchema;
use serde::{Deserialize, de::DeserializeOwned};
use serde_json::{Map, Value};

use crate::decode::{self, DecodeError};

type NodeId = usize;

/// What one schema node admits.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    /// A struct: its fields by name. Other keys are ignored; a `null` field reads as absent.
    Struct(foldhash::HashMap<Box<str>, NodeId>),
    /// A map from strings to the node's values.
    Map(NodeId),
    List(NodeId),
    String,
    Bool,
    Int32,
    Int64,
    Number,
    /// `x-kubernetes-int-or-string` (IntOrString, Quantity): a string, or an integer within `i32`.
    IntOrString,
    /// `date-time` (Time, MicroTime): checked with both decoders.
    DateTime,
    /// `byte` (base64).
    Bytes,
    /// A schema this module does not model: nothing is admitted, the typed decoder decides.
    Unknown,
}

/// The compiled schema of a Kubernetes resource type.
#[derive(Debug, PartialEq)]
pub struct Shape {
    nodes: Vec<Node>,
    root: NodeId,
    api_version: Box<str>,
    kind: Box<str>,
}

/// k8s-openapi's `Pod` as a shape's text (`UPDATE_SHAPES=1 cargo test -p kruise-core stored_pod_shape`
/// after upgrading k8s-openapi).
const POD_SHAPE_TEXT: &str = include_str!("shape/pod.shape");

impl Shape {
    /// Compiles `T`'s JSON schema.
    pub fn of<T: JsonSchema + Resource>() -> Self {
        let schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
        let root_schema = schema.as_value();
        let empty = Map::new();
        let defs = root_schema
            .get("$defs")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let mut compiler = Compiler {
            defs,
            nodes: Vec::new(),
            by_ref: HashMap::new(),
        };
        let root = compiler.compile(root_schema);
        Shape {
            nodes: compiler.nodes,
            root,
            api_version: T::API_VERSION.into(),
            kind: T::KIND.into(),
        }
    }

    /// The shape of k8s-openapi's `Pod`, read from its stored text: equal to `Shape::of::<Pod>()`
    /// without generating the schema. Should the text not read, a shape that admits nothing (every pod
    /// goes to the typed decoder: slower, same answers).
    pub fn pod() -> Self {
        Shape::from_text(POD_SHAPE_TEXT).unwrap_or_else(|_| Shape {
            nodes: vec![Node::Unknown],
            root: 0,
            api_version: "v1".into(),
            kind: "Pod".into(),
        })
    }

    /// Whether `value` certainly decodes as the type. `false` means "ask the typed decoder".
    pub fn admits(&self, value: &Value) -> bool {
        let Value::Object(object) = value else {
            return false;
        };
        // The resource's own apiVersion and kind must be strings naming it, when present.
        let names_it =
            |field: &str, expected: &str| object.get(field).is_none_or(|v| v.as_str() == Some(expected));
        names_it("apiVersion", &self.api_version)
            && names_it("kind", &self.kind)
            && self.admits_node(self.root, value)
    }

    /// Checks that `value` decodes as `T` (the type this shape was compiled from), naming the failing
    /// field; the typed decoder runs only when the fast walk does not admit the value.
    pub fn check<T: DeserializeOwned>(&self, value: &Value) -> Result<(), DecodeError> {
        if self.admits(value) {
            Ok(())
        } else {
            decode::check::<T>(value)
        }
    }

    /// Whether the shape models every node it can reach (a shape with [`Node::Unknown`] nodes still
    /// answers correctly, only slower for values that reach them).
    pub fn is_complete(&self) -> bool {
        !self.nodes.contains(&Node::Unknown)
    }

    fn admits_node(&self, id: NodeId, value: &Value) -> bool {
        let node = &self.nodes[id];
        match (node, value) {
            (Node::Struct(fields), Value::Object(object)) => {
                object.iter().all(|(key, value)| match fields.get(key.as_str()) {
                    Some(&field) => value.is_null() || self.admits_child(field, value),
                    None => true,
                })
            }
            (Node::Map(item), Value::Object(object)) => {
                object.values().all(|value| self.admits_child(*item, value))
            }
            (Node::List(item), Value::Array(items)) => {
                items.iter().all(|value| self.admits_child(*item, value))
            }
            _ => admits_leaf(node, value),
        }
    }

    /// [`Shape::admits_node`] without a call for the leaves, which most values are.
    #[inline(always)]
    fn admits_child(&self, id: NodeId, value: &Value) -> bool {
        match &self.nodes[id] {
            Node::Struct(_) | Node::Map(_) | Node::List(_) => self.admits_node(id, value),
            leaf => admits_leaf(leaf, value),
        }
    }
}

/// What a leaf node admits (composite nodes admit nothing here).
#[inline(always)]
fn admits_leaf(node: &Node, value: &Value) -> bool {
    match (node, value) {
        (Node::String, Value::String(_)) | (Node::Bool, Value::Bool(_)) => true,
        (Node::Number, Value::Number(_)) => true,
        (Node::Int32 | Node::IntOrString, Value::Number(n)) => {
            n.as_i64().is_some_and(|i| i32::try_from(i).is_ok())
        }
        (Node::Int64, Value::Number(n)) => n.as_i64().is_some(),
        (Node::IntOrString, Value::String(_)) => true,
        (Node::DateTime, Value::String(_)) => {
            Time::deserialize(value).is_ok() && MicroTime::deserialize(value).is_ok()
        }
        (Node::Bytes, Value::String(_)) => ByteString::deserialize(value).is_ok(),
        _ => false,
    }
}

struct Compiler<'a> {
    defs: &'a Map<String, Value>,
    nodes: Vec<Node>,
    by_ref: HashMap<&'a str, NodeId>,
}

impl<'a> Compiler<'a> {
    fn compile(&mut self, schema: &'a Value) -> NodeId {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference.rsplit('/').next().unwrap_or(reference);
            if let Some(&id) = self.by_ref.get(name) {
                return id;
            }
            // Reserve the id first: schemas may refer to themselves.
            let id = self.push(Node::Unknown);
            self.by_ref.insert(name, id);
            if let Some(definition) = self.defs.get(name) {
                self.nodes[id] = self.node(definition);
            }
            return id;
        }
        let node = self.node(schema);
        self.push(node)
    }

    fn push(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn node(&mut self, schema: &'a Value) -> Node {
        if schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
            return Node::IntOrString;
        }
        let kind = schema.get("type").and_then(Value::as_str);
        let format = schema.get("format").and_then(Value::as_str);
        match (kind, format) {
            (Some("object"), _) => self.object(schema),
            (Some("array"), _) => match schema.get("items") {
                Some(items) => Node::List(self.compile(items)),
                None => Node::Unknown,
            },
            (Some("string"), None) => Node::String,
            (Some("string"), Some("date-time")) => Node::DateTime,
            (Some("string"), Some("byte")) => Node::Bytes,
            (Some("boolean"), None) => Node::Bool,
            (Some("integer"), Some("int64")) => Node::Int64,
            // Without a format, the narrower reading: admitting less is always safe.
            (Some("integer"), _) => Node::Int32,
            (Some("number"), _) => Node::Number,
            _ => Node::Unknown,
        }
    }

    fn object(&mut self, schema: &'a Value) -> Node {
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            let fields = properties
                .iter()
                .map(|(name, schema)| (name.as_str().into(), self.compile(schema)))
                .collect();
            return Node::Struct(fields);
        }
        match schema.get("additionalProperties") {
            Some(values @ Value::Object(_)) => Node::Map(self.compile(values)),
            // An object without fields: any object decodes (every key is ignored).
            None => Node::Struct(Default::default()),
            Some(_) => Node::Unknown,
        }
    }
}

mod text;

pub use text::ShapeTextError;

#[cfg(test)]
mod tests;
