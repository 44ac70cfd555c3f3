//! The directory store: round trip, file modes, stale-key removal, serving checks, fingerprint.

mod common;

use std::fs;
use std::path::Path;

use common::cfg;
use kruise_certs::{CertError, CertMaterial, KNOWN_KEYS, NEXT_CA_KEY, Plan, dir, generate, plan};
use time::Duration;
use time::macros::datetime;

const NOW: time::OffsetDateTime = datetime!(2026-01-01 00:00:00 UTC);

#[test]
fn write_read_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("certs");
    assert_eq!(dir::read(&d).unwrap(), None, "absent directory");
    let m = generate(&cfg(), NOW).unwrap();
    dir::write(&d, &m.to_data()).unwrap();
    let back = dir::read(&d).unwrap().unwrap();
    assert_eq!(back, m.to_data());
    assert_eq!(CertMaterial::from_data(&back).unwrap(), m);
    assert_eq!(plan(Some(&back), &cfg(), NOW).unwrap(), Plan::Keep);
    let leftovers: Vec<_> = fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[cfg(unix)]
#[test]
fn key_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let m = generate(&cfg(), NOW).unwrap();
    dir::write(tmp.path(), &m.to_data()).unwrap();
    let mode = |name: &str| fs::metadata(tmp.path().join(name)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode("tls.key"), 0o600);
    assert_eq!(mode("ca.key"), 0o600);
    assert_eq!(mode("tls.crt"), 0o644);
    assert_eq!(mode("ca.crt"), 0o644);
    let created = tmp.path().join("new");
    dir::write(&created, &m.to_serving_data()).unwrap();
    assert_eq!(
        fs::metadata(&created).unwrap().permissions().mode() & 0o777,
        0o700
    );
}

#[test]
fn stale_known_keys_are_removed_and_other_files_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let m = generate(&cfg(), NOW).unwrap();
    let mut with_next = m.clone();
    with_next.next_ca = Some(generate(&cfg(), NOW).unwrap().ca);
    fs::write(tmp.path().join("README.md"), "not ours").unwrap();
    dir::write(tmp.path(), &with_next.to_data()).unwrap();
    assert!(tmp.path().join(NEXT_CA_KEY).exists());
    dir::write(tmp.path(), &m.to_data()).unwrap();
    assert!(!tmp.path().join(NEXT_CA_KEY).exists());
    assert_eq!(dir::read(tmp.path()).unwrap().unwrap(), m.to_data());
    assert!(tmp.path().join("README.md").exists());
    // Serving-only data leaves no CA key behind.
    dir::write(tmp.path(), &m.to_serving_data()).unwrap();
    assert!(!tmp.path().join("ca.key").exists());
    let names: Vec<_> = KNOWN_KEYS
        .iter()
        .filter(|k| tmp.path().join(k).exists())
        .collect();
    assert_eq!(names, [&"ca.crt", &"tls.crt", &"tls.key"]);
}

#[test]
fn bad_file_names_are_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["../escape", "a/b", ".hidden", ""] {
        let data = [(name.to_string(), b"x".to_vec())].into_iter().collect();
        assert!(dir::write(tmp.path(), &data).is_err(), "{name:?}");
    }
}

#[test]
fn read_serving_accepts_ours_and_rejects_mismatches() {
    let tmp = tempfile::tempdir().unwrap();
    let m = generate(&cfg(), NOW).unwrap();
    dir::write(tmp.path(), &m.to_serving_data()).unwrap();
    let files = dir::read_serving(tmp.path()).unwrap();
    assert_eq!(files.cert_pem, m.leaf.cert_pem);
    assert_eq!(files.ca_pem.as_deref(), Some(m.ca_bundle_pem().as_str()));
    assert!(!format!("{files:?}").contains("PRIVATE KEY"));

    // Key from another pair: mismatch.
    let other = generate(&cfg(), NOW).unwrap();
    fs::write(tmp.path().join("tls.key"), &other.leaf.key_pem).unwrap();
    assert!(matches!(
        dir::read_serving(tmp.path()),
        Err(CertError::KeyMismatch { .. })
    ));
    // Matching pair, but signed by a CA not in ca.crt.
    fs::write(tmp.path().join("tls.crt"), &other.leaf.cert_pem).unwrap();
    let err = dir::read_serving(tmp.path()).unwrap_err().to_string();
    assert!(err.contains("tls.crt") && err.contains("ca.crt"), "{err}");
    // Without ca.crt (external mode without CA), only the pair is checked.
    fs::remove_file(tmp.path().join("ca.crt")).unwrap();
    dir::read_serving(tmp.path()).unwrap();
    // Truncated certificate.
    fs::write(tmp.path().join("tls.crt"), &other.leaf.cert_pem[..100]).unwrap();
    let err = dir::read_serving(tmp.path()).unwrap_err().to_string();
    assert!(err.contains("tls.crt"), "{err}");
    // Missing key file.
    fs::remove_file(tmp.path().join("tls.key")).unwrap();
    assert!(matches!(
        dir::read_serving(tmp.path()),
        Err(CertError::Missing(_))
    ));
}

#[cfg(unix)]
#[test]
fn fingerprint_follows_a_kubelet_style_symlink_swap() {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let a = generate(&cfg(), NOW).unwrap();
    let b = generate(&cfg(), NOW + Duration::days(1)).unwrap();
    let publish = |name: &str, m: &CertMaterial| {
        let ts = root.join(name);
        dir::write(&ts, &m.to_serving_data()).unwrap();
        let tmp_link = root.join("..data_tmp");
        symlink(name, &tmp_link).unwrap();
        fs::rename(&tmp_link, root.join("..data")).unwrap();
    };
    publish("..2026_01_01", &a);
    for key in ["ca.crt", "tls.crt", "tls.key"] {
        symlink(Path::new("..data").join(key), root.join(key)).unwrap();
    }
    let f1 = dir::fingerprint(root).unwrap();
    assert_eq!(f1, dir::fingerprint(root).unwrap(), "stable");
    assert_eq!(f1.len(), 64);
    assert_eq!(dir::read_serving(root).unwrap().cert_pem, a.leaf.cert_pem);
    publish("..2026_01_02", &b);
    let f2 = dir::fingerprint(root).unwrap();
    assert_ne!(f1, f2);
    assert_eq!(dir::read_serving(root).unwrap().cert_pem, b.leaf.cert_pem);
}

#[test]
fn fingerprint_changes_with_content() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = dir::fingerprint(tmp.path()).unwrap();
    let m = generate(&cfg(), NOW).unwrap();
    dir::write(tmp.path(), &m.to_serving_data()).unwrap();
    let f1 = dir::fingerprint(tmp.path()).unwrap();
    assert_ne!(empty, f1);
    fs::write(tmp.path().join("tls.key"), "changed").unwrap();
    assert_ne!(f1, dir::fingerprint(tmp.path()).unwrap());
}
