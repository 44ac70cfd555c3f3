use super::*;

/// A length-delimited field.
fn ld(n: u64, b: &[u8]) -> Vec<u8> {
    let mut v = key(n, 2);
    v.extend(uvarint(b.len() as u64));
    v.extend_from_slice(b);
    v
}

/// A varint field.
fn vi(n: u64, x: i64) -> Vec<u8> {
    let mut v = key(n, 0);
    v.extend(uvarint(x as u64));
    v
}

fn key(n: u64, wire: u64) -> Vec<u8> {
    uvarint((n << 3) | wire)
}

fn uvarint(mut x: u64) -> Vec<u8> {
    let mut out = vec![];
    loop {
        let b = (x & 0x7f) as u8;
        x >>= 7;
        if x == 0 {
            out.push(b);
            return out;
        }
        out.push(b | 0x80);
    }
}

fn envelope(api_version: &str, kind: &str, object: &[u8]) -> Vec<u8> {
    let type_meta = [ld(1, api_version.as_bytes()), ld(2, kind.as_bytes())].concat();
    [MAGIC.to_vec(), ld(1, &type_meta), ld(2, object)].concat()
}

fn entry(k: &[u8], v: &[u8]) -> Vec<u8> {
    [ld(1, k), ld(2, v)].concat()
}

#[test]
fn decodes_a_configmap_envelope() {
    let meta = [ld(1, b"c"), ld(11, &entry(b"a", b"b"))].concat();
    let cm = [ld(1, &meta), ld(2, &entry(b"k", b"v"))].concat();
    let obj = decode(&envelope("v1", "ConfigMap", &cm), &[]).unwrap();
    assert_eq!(
        obj,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {"a": "b"}}, "data": {"k": "v"}})
    );
}

#[test]
fn decodes_a_deployment_as_kubectl_create_sends_it() {
    // Go writes non-pointer fields even when empty: creationTimestamp (ObjectMeta 8), the strategy,
    // the container's resources and the status all arrive as empty messages, minReadySeconds as 0.
    let container = [
        ld(1, b"nginx"),
        ld(2, b"nginx:1.27"),
        ld(5, b""),
        ld(8, b""),
        vi(16, 0),
    ]
    .concat();
    let template = [
        ld(1, &[ld(11, &entry(b"app", b"x")), ld(8, b"")].concat()),
        ld(2, &[ld(2, &container), ld(3, b"Always")].concat()),
    ]
    .concat();
    let selector = ld(1, &entry(b"app", b"x"));
    let surge = [vi(1, 1), ld(3, b"25%")].concat();
    let strategy = ld(2, &ld(2, &surge));
    let spec = [
        vi(1, 0),
        ld(2, &selector),
        ld(3, &template),
        ld(4, &strategy),
        vi(5, 0),
    ]
    .concat();
    let deployment = [
        ld(1, &[ld(1, b"x"), ld(8, b"")].concat()),
        ld(2, &spec),
        ld(3, b""),
    ]
    .concat();
    let obj = decode(&envelope("apps/v1", "Deployment", &deployment), &[]).unwrap();
    assert_eq!(
        obj,
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "x"}},
                "strategy": {"rollingUpdate": {"maxSurge": "25%"}},
                "template": {"metadata": {"labels": {"app": "x"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}],
                             "restartPolicy": "Always"}}}})
    );
}

#[test]
fn quantities_bytes_and_int_or_string() {
    let port = [vi(3, 80), ld(4, &vi(2, 8080))].concat();
    let service = [ld(1, &ld(1, b"s")), ld(2, &ld(1, &port))].concat();
    let obj = decode(&envelope("v1", "Service", &service), &[]).unwrap();
    assert_eq!(obj["spec"]["ports"], json!([{"port": 80, "targetPort": 8080}]));
    let hard = ld(1, &entry(b"pods", &ld(1, b"10")));
    let quota = [ld(1, &ld(1, b"q")), ld(2, &hard)].concat();
    let obj = decode(&envelope("v1", "ResourceQuota", &quota), &[]).unwrap();
    assert_eq!(obj["spec"]["hard"], json!({"pods": "10"}));
    let secret = [ld(1, &ld(1, b"s")), ld(2, &entry(b"p", b"q"))].concat();
    let obj = decode(&envelope("v1", "Secret", &secret), &[]).unwrap();
    assert_eq!(obj["data"], json!({"p": "cQ=="}));
    let pod = [ld(1, &ld(1, b"p")), ld(2, &vi(25, -5))].concat();
    let obj = decode(&envelope("v1", "Pod", &pod), &[]).unwrap();
    assert_eq!(obj["spec"]["priority"], -5);
}

#[test]
fn a_field_not_decoded_is_refused_not_dropped() {
    // PodSpec field 14 (securityContext) with content.
    let pod = [ld(1, &ld(1, b"p")), ld(2, &ld(14, &vi(1, 1000)))].concat();
    let e = decode(&envelope("v1", "Pod", &pod), &["application/json"]).unwrap_err();
    assert_eq!((e.code, e.reason), (415, "UnsupportedMediaType"));
    assert!(
        e.message
            .ends_with("does not decode the protobuf Pod.spec field 14"),
        "{}",
        e.message
    );
    let e = decode(&envelope("v1", "Endpoints", b""), &["application/json"]).unwrap_err();
    assert_eq!(e.code, 415);
    let e = decode(&envelope("v1", "Pod", &[0x0a, 0x05]), &[]).unwrap_err();
    assert_eq!(e.code, 400);
}
