//! Just enough of the Kubernetes protobuf encoding to accept the request bodies kubectl's typed
//! clients send (`application/vnd.kubernetes.protobuf`: `kubectl create namespace|configmap|secret|
//! serviceaccount|deployment|job|cronjob|service|quota|pdb|role|rolebinding|
//! clusterrole|clusterrolebinding`, `kubectl run`): the `k8s\0` envelope (`runtime.Unknown`) around
//! one of the messages of [`schema`], decoded field by field into the object's JSON form.
//!
//! Go encodes non-pointer fields even when empty, so a field the schema does not list is skipped when
//! its value is empty (zero, `""`, a message of such fields) and refused with a 415 otherwise: a body is never
//! stored with a field silently dropped. Responses are always JSON, which clients accept.

mod schema;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use self::schema::{Message, Shape};
use crate::error::ApiError;

const MAGIC: &[u8] = b"k8s\0";

/// One encoded field's value.
#[derive(Clone, Copy)]
enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed(&'a [u8]),
}

impl Wire<'_> {
    /// Zero, `""`, or a message whose fields are all empty (Go's zero value of a struct).
    fn is_empty(&self) -> bool {
        match self {
            Wire::Varint(v) => *v == 0,
            Wire::Fixed(b) => b.iter().all(|&x| x == 0),
            Wire::Bytes(b) => b.is_empty() || fields(b).is_ok_and(|fs| fs.iter().all(|(_, w)| w.is_empty())),
        }
    }
}

/// Why a body could not be decoded.
enum Failure {
    /// Not valid protobuf, or a field of the wrong wire type.
    Malformed,
    /// A field the playground does not decode (message path, field number).
    Unknown(String),
}

fn varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut out = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*pos)?;
        *pos += 1;
        out |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(out);
        }
    }
    None
}

fn fields(buf: &[u8]) -> Result<Vec<(u64, Wire<'_>)>, Failure> {
    let mut pos = 0;
    let mut out = vec![];
    let take = |pos: &mut usize, len: usize| -> Option<&[u8]> {
        let bytes = buf.get(*pos..pos.checked_add(len)?)?;
        *pos += len;
        Some(bytes)
    };
    while pos < buf.len() {
        let key = varint(buf, &mut pos).ok_or(Failure::Malformed)?;
        let value = match key & 7 {
            0 => varint(buf, &mut pos).map(Wire::Varint),
            2 => varint(buf, &mut pos)
                .and_then(|len| usize::try_from(len).ok())
                .and_then(|len| take(&mut pos, len))
                .map(Wire::Bytes),
            1 => take(&mut pos, 8).map(Wire::Fixed),
            5 => take(&mut pos, 4).map(Wire::Fixed),
            _ => None,
        };
        out.push((key >> 3, value.ok_or(Failure::Malformed)?));
    }
    Ok(out)
}

fn text(b: &[u8]) -> Value {
    Value::String(String::from_utf8_lossy(b).into_owned())
}

fn bytes(w: Wire<'_>) -> Result<&[u8], Failure> {
    match w {
        Wire::Bytes(b) => Ok(b),
        _ => Err(Failure::Malformed),
    }
}

fn number(w: Wire<'_>) -> Result<i64, Failure> {
    match w {
        // int32 and int64 are sign-extended to 64 bits on the wire.
        Wire::Varint(v) => Ok(v as i64),
        _ => Err(Failure::Malformed),
    }
}

/// A `map<string, V>` entry (key = 1, value = 2), the value as its raw bytes.
fn entry(b: &[u8]) -> Result<(String, &[u8]), Failure> {
    let (mut key, mut value) = (String::new(), &[][..]);
    for (n, w) in fields(b)? {
        match n {
            1 => key = String::from_utf8_lossy(bytes(w)?).into_owned(),
            2 => value = bytes(w)?,
            _ => {}
        }
    }
    Ok((key, value))
}

/// `resource.Quantity`: its string (field 1).
fn quantity(b: &[u8]) -> Result<Value, Failure> {
    let mut out = Value::String(String::new());
    for (n, w) in fields(b)? {
        if n == 1 {
            out = text(bytes(w)?);
        }
    }
    Ok(out)
}

/// `intstr.IntOrString`: type (0 int, 1 string), intVal, strVal.
fn int_or_string(b: &[u8]) -> Result<Value, Failure> {
    let (mut is_string, mut int, mut string) = (false, 0, Value::String(String::new()));
    for (n, w) in fields(b)? {
        match n {
            1 => is_string = number(w)? == 1,
            2 => int = number(w)?,
            3 => string = text(bytes(w)?),
            _ => {}
        }
    }
    Ok(if is_string { string } else { json!(int) })
}

fn list<'m>(out: &'m mut Map<String, Value>, name: &str) -> Result<&'m mut Vec<Value>, Failure> {
    let v = out.entry(name).or_insert_with(|| json!([]));
    v.as_array_mut().ok_or(Failure::Malformed)
}

fn map<'m>(out: &'m mut Map<String, Value>, name: &str) -> Result<&'m mut Map<String, Value>, Failure> {
    let v = out.entry(name).or_insert_with(|| json!({}));
    v.as_object_mut().ok_or(Failure::Malformed)
}

/// Decodes one field's value into `out[name]`, merging repeated and map fields.
fn field(
    out: &mut Map<String, Value>,
    name: &str,
    shape: Shape,
    w: Wire<'_>,
    path: &str,
) -> Result<(), Failure> {
    let value = match shape {
        Shape::Str if w.is_empty() => return Ok(()),
        Shape::Str => text(bytes(w)?),
        Shape::Int | Shape::Flag if w.is_empty() => return Ok(()),
        Shape::Int | Shape::Num => json!(number(w)?),
        Shape::Flag | Shape::OptFlag => json!(number(w)? != 0),
        Shape::IntOrString => int_or_string(bytes(w)?)?,
        Shape::Msg(m) => {
            let inner = message(m, bytes(w)?, &format!("{path}.{name}"))?;
            if inner.is_empty() {
                return Ok(());
            }
            Value::Object(inner)
        }
        Shape::Strs => {
            let item = text(bytes(w)?);
            list(out, name)?.push(item);
            return Ok(());
        }
        Shape::Msgs(m) => {
            let item = Value::Object(message(m, bytes(w)?, &format!("{path}.{name}"))?);
            list(out, name)?.push(item);
            return Ok(());
        }
        Shape::StrMap | Shape::BytesMap | Shape::QuantityMap => {
            let (k, v) = entry(bytes(w)?)?;
            let v = match shape {
                Shape::StrMap => text(v),
                Shape::BytesMap => json!(base64::engine::general_purpose::STANDARD.encode(v)),
                _ => quantity(v)?,
            };
            map(out, name)?.insert(k, v);
            return Ok(());
        }
    };
    out.insert(name.to_string(), value);
    Ok(())
}

/// Decodes a message of the given schema; `path` names it in errors.
fn message(schema: Message, b: &[u8], path: &str) -> Result<Map<String, Value>, Failure> {
    let mut out = Map::new();
    for (n, w) in fields(b)? {
        match schema.iter().find(|(number, ..)| *number == n) {
            Some(&(_, name, shape)) => field(&mut out, name, shape, w, path)?,
            None if w.is_empty() => {}
            None => return Err(Failure::Unknown(format!("{path} field {n}"))),
        }
    }
    Ok(out)
}

/// Decodes a protobuf request body of a supported kind into its JSON form.
pub fn decode(body: &[u8], accepted: &[&str]) -> Result<Value, ApiError> {
    let malformed = || ApiError::bad_request("malformed protobuf body");
    let payload = body
        .strip_prefix(MAGIC)
        .ok_or_else(|| ApiError::bad_request("protobuf body without the k8s envelope"))?;
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &[][..]);
    for (n, w) in fields(payload).map_err(|_| malformed())? {
        match (n, w) {
            (1, Wire::Bytes(type_meta)) => {
                for (tn, tw) in fields(type_meta).map_err(|_| malformed())? {
                    match (tn, tw) {
                        (1, Wire::Bytes(v)) => api_version = String::from_utf8_lossy(v).into_owned(),
                        (2, Wire::Bytes(v)) => kind = String::from_utf8_lossy(v).into_owned(),
                        _ => {}
                    }
                }
            }
            (2, Wire::Bytes(v)) => raw = v,
            _ => {}
        }
    }
    let schema =
        schema::kind(&api_version, &kind).ok_or_else(|| ApiError::unsupported_media_type(accepted))?;
    let mut obj = match message(schema, raw, &kind) {
        Ok(obj) => obj,
        Err(Failure::Malformed) => return Err(malformed()),
        Err(Failure::Unknown(field)) => {
            let mut e = ApiError::unsupported_media_type(accepted);
            e.message = format!(
                "{}; kruise-playground does not decode the protobuf {field}",
                e.message
            );
            return Err(e);
        }
    };
    obj.insert("apiVersion".into(), json!(api_version));
    obj.insert("kind".into(), json!(kind));
    Ok(Value::Object(obj))
}

#[cfg(test)]
mod tests;
