//! Just enough of the Kubernetes protobuf encoding to accept the request bodies `kubectl create`
//! sends through typed clients (`application/vnd.kubernetes.protobuf`): the `k8s\0` envelope
//! (`runtime.Unknown`) around a Namespace, ConfigMap, Secret or ServiceAccount. Only the fields
//! such generators set are decoded (metadata name, generateName, namespace, labels, annotations,
//! finalizers; ConfigMap/Secret data; Secret type; Namespace finalizers). Any other kind is a 415.
//! Responses are always JSON, which clients accept.

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::error::ApiError;

const MAGIC: &[u8] = b"k8s\0";

/// One decoded protobuf field.
enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
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

fn fields(buf: &[u8]) -> Option<Vec<(u64, Field<'_>)>> {
    let mut pos = 0;
    let mut out = vec![];
    while pos < buf.len() {
        let key = varint(buf, &mut pos)?;
        let (number, wire) = (key >> 3, key & 7);
        let field = match wire {
            0 => Field::Varint(varint(buf, &mut pos)?),
            2 => {
                let len = usize::try_from(varint(buf, &mut pos)?).ok()?;
                let bytes = buf.get(pos..pos.checked_add(len)?)?;
                pos += len;
                Field::Bytes(bytes)
            }
            1 => {
                pos += 8;
                continue;
            }
            5 => {
                pos += 4;
                continue;
            }
            _ => return None,
        };
        out.push((number, field));
    }
    Some(out)
}

fn text(b: &[u8]) -> Value {
    Value::String(String::from_utf8_lossy(b).into_owned())
}

/// A `map<string, V>` entry (key = 1, value = 2).
fn entry(b: &[u8], bytes_value: bool) -> Option<(String, Value)> {
    let mut key = String::new();
    let mut value = Value::String(String::new());
    for (n, f) in fields(b)? {
        match (n, f) {
            (1, Field::Bytes(k)) => key = String::from_utf8_lossy(k).into_owned(),
            (2, Field::Bytes(v)) if bytes_value => {
                value = json!(base64::engine::general_purpose::STANDARD.encode(v));
            }
            (2, Field::Bytes(v)) => value = text(v),
            _ => {}
        }
    }
    Some((key, value))
}

fn insert_entry(map: &mut Map<String, Value>, field: &str, b: &[u8], bytes_value: bool) -> Option<()> {
    let (k, v) = entry(b, bytes_value)?;
    let m = map.entry(field).or_insert_with(|| json!({}));
    m.as_object_mut()?.insert(k, v);
    Some(())
}

fn object_meta(b: &[u8]) -> Option<Value> {
    let mut m = Map::new();
    for (n, f) in fields(b)? {
        match (n, f) {
            (1, Field::Bytes(v)) => _ = m.insert("name".into(), text(v)),
            (2, Field::Bytes(v)) => _ = m.insert("generateName".into(), text(v)),
            (3, Field::Bytes(v)) => _ = m.insert("namespace".into(), text(v)),
            (11, Field::Bytes(v)) => insert_entry(&mut m, "labels", v, false)?,
            (12, Field::Bytes(v)) => insert_entry(&mut m, "annotations", v, false)?,
            (14, Field::Bytes(v)) => {
                let list = m.entry("finalizers").or_insert_with(|| json!([]));
                list.as_array_mut()?.push(text(v));
            }
            _ => {}
        }
    }
    Some(Value::Object(m))
}

fn object(kind: &str, b: &[u8]) -> Option<Value> {
    let mut o = Map::new();
    for (n, f) in fields(b)? {
        match (kind, n, f) {
            (_, 1, Field::Bytes(v)) => _ = o.insert("metadata".into(), object_meta(v)?),
            ("ConfigMap", 2, Field::Bytes(v)) => insert_entry(&mut o, "data", v, false)?,
            ("ConfigMap", 3, Field::Bytes(v)) => insert_entry(&mut o, "binaryData", v, true)?,
            ("ConfigMap", 4, Field::Varint(v)) | ("Secret", 5, Field::Varint(v)) => {
                _ = o.insert("immutable".into(), json!(v != 0))
            }
            ("Secret", 2, Field::Bytes(v)) => insert_entry(&mut o, "data", v, true)?,
            ("Secret", 3, Field::Bytes(v)) => _ = o.insert("type".into(), text(v)),
            ("Secret", 4, Field::Bytes(v)) => insert_entry(&mut o, "stringData", v, false)?,
            ("Namespace", 2, Field::Bytes(v)) => {
                let finalizers: Vec<Value> = fields(v)?
                    .into_iter()
                    .filter_map(|(n, f)| match (n, f) {
                        (1, Field::Bytes(s)) => Some(text(s)),
                        _ => None,
                    })
                    .collect();
                o.insert("spec".into(), json!({"finalizers": finalizers}));
            }
            _ => {}
        }
    }
    Some(Value::Object(o))
}

/// Decodes a protobuf request body of a supported kind into its JSON form.
pub fn decode(body: &[u8], accepted: &[&str]) -> Result<Value, ApiError> {
    let unsupported = || ApiError::unsupported_media_type(accepted);
    let payload = body
        .strip_prefix(MAGIC)
        .ok_or_else(|| ApiError::bad_request("protobuf body without the k8s envelope"))?;
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &[][..]);
    for (n, f) in fields(payload).ok_or_else(|| ApiError::bad_request("malformed protobuf body"))? {
        match (n, f) {
            (1, Field::Bytes(type_meta)) => {
                for (tn, tf) in fields(type_meta).unwrap_or_default() {
                    match (tn, tf) {
                        (1, Field::Bytes(v)) => api_version = String::from_utf8_lossy(v).into_owned(),
                        (2, Field::Bytes(v)) => kind = String::from_utf8_lossy(v).into_owned(),
                        _ => {}
                    }
                }
            }
            (2, Field::Bytes(v)) => raw = v,
            _ => {}
        }
    }
    if !(api_version == "v1"
        && matches!(
            kind.as_str(),
            "Namespace" | "ConfigMap" | "Secret" | "ServiceAccount"
        ))
    {
        return Err(unsupported());
    }
    let mut obj = object(&kind, raw).ok_or_else(|| ApiError::bad_request("malformed protobuf object"))?;
    obj["apiVersion"] = json!(api_version);
    obj["kind"] = json!(kind);
    Ok(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ld(n: u8, b: &[u8]) -> Vec<u8> {
        let mut v = vec![(n << 3) | 2, b.len() as u8];
        v.extend_from_slice(b);
        v
    }

    #[test]
    fn decodes_a_configmap_envelope() {
        let meta = [ld(1, b"c"), ld(11, &[ld(1, b"a"), ld(2, b"b")].concat())].concat();
        let cm = [ld(1, &meta), ld(2, &[ld(1, b"k"), ld(2, b"v")].concat())].concat();
        let type_meta = [ld(1, b"v1"), ld(2, b"ConfigMap")].concat();
        let body = [MAGIC.to_vec(), ld(1, &type_meta), ld(2, &cm)].concat();
        let obj = decode(&body, &[]).unwrap();
        assert_eq!(
            obj,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {"a": "b"}}, "data": {"k": "v"}})
        );
    }
}
