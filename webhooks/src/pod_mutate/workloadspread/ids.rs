//! Identifiers OpenKruise draws at random during a pod CREATE — the generated pod name of launch
//! priority and the WorkloadSpread `uid` of a pod that has only `generateName` — derived here from the
//! admission request's uid instead. The apiserver gives every admission request its own uid, so they are
//! as unique as random draws, and a decision taken twice for one request (the binary re-decides after a
//! 409 on a status write) names the pod the same way both times.

use crate::AdmissionRequest;

/// A deterministic stream of pseudo-random words seeded by the request and a purpose.
pub(crate) struct Entropy(u64);

impl Entropy {
    /// Seeds from the request uid, namespace and name, and `purpose` (so different uses differ).
    pub(crate) fn new(request: &AdmissionRequest, purpose: &str) -> Self {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for part in [request.uid.as_str(), &request.namespace, &request.name, purpose] {
            for b in part.bytes().chain([0xff]) {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        Entropy(h)
    }

    /// The next word (splitmix64).
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The alphabet of Kubernetes' name generator (no vowels, no look-alikes).
const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// `generateName` completed as Kubernetes' SimpleNameGenerator does: the prefix cut to 58 bytes, then 5
/// characters of [`NAME_ALPHABET`].
pub(crate) fn generate_name(request: &AdmissionRequest, generate_name: &str) -> String {
    let mut cut = generate_name.len().min(58);
    while !generate_name.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut name = String::with_capacity(cut + 5);
    name.push_str(&generate_name[..cut]);
    let mut entropy = Entropy::new(request, generate_name);
    for _ in 0..5 {
        let i = (entropy.next_u64() % NAME_ALPHABET.len() as u64) as usize;
        name.push(char::from(NAME_ALPHABET[i]));
    }
    name
}

/// An RFC 4122 version-4 shaped UUID (lower-case hex).
pub(crate) fn uuid(request: &AdmissionRequest, purpose: &str) -> String {
    let mut entropy = Entropy::new(request, purpose);
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&entropy.next_u64().to_be_bytes());
    bytes[8..].copy_from_slice(&entropy.next_u64().to_be_bytes());
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut uuid = String::with_capacity(36);
    for (i, b) in bytes.into_iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            uuid.push('-');
        }
        uuid.push(char::from(HEX[usize::from(b >> 4)]));
        uuid.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    uuid
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(uid: &str) -> AdmissionRequest {
        serde_json::from_value(json!({"uid": uid, "operation": "CREATE", "namespace": "ns"})).unwrap()
    }

    #[test]
    fn names_follow_the_simple_name_generator() {
        let a = generate_name(&request("u1"), "web-");
        assert_eq!(a.len(), 9);
        assert!(a.starts_with("web-"));
        assert!(a[4..].bytes().all(|b| NAME_ALPHABET.contains(&b)));
        assert_eq!(
            a,
            generate_name(&request("u1"), "web-"),
            "deterministic per request"
        );
        assert_ne!(a, generate_name(&request("u2"), "web-"));
        let long = "x".repeat(80);
        assert_eq!(generate_name(&request("u1"), &long).len(), 63);
        let multibyte = "é".repeat(40);
        assert!(generate_name(&request("u1"), &multibyte).len() <= 63);
    }

    #[test]
    fn uuids_are_version_4_shaped() {
        let u = uuid(&request("u1"), "ws");
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"));
        assert_ne!(u, uuid(&request("u1"), "other"));
    }
}
