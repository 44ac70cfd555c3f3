//! A directory as a store: the server's `--cert-dir`, or a mounted Secret volume.
//!
//! Each data key is one file of the same name. Writes are atomic per file (temporary file +
//! rename), `*.key` files get mode 0600. Readers must tolerate seeing a new `tls.key` with an
//! old `tls.crt` for a moment (they do: [`read_serving`] rejects mismatched pairs, so the
//! server keeps its current pair and retries).

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::CertError;
use crate::inspect::bundle_trusts;
use crate::keys::check_pair_named;
use crate::material::{CA_BUNDLE, KNOWN_KEYS, TLS_CERT, TLS_KEY};
use crate::pem::split_blocks;

/// Serving material as loaded from a directory (ours, or cert-manager's `tls.crt`, `tls.key`,
/// `ca.crt`). `Debug` hides the key.
#[derive(Clone, PartialEq, Eq)]
pub struct ServingFiles {
    /// `tls.crt`: the serving certificate, optionally followed by intermediates.
    pub cert_pem: String,
    /// `tls.key`.
    pub key_pem: String,
    /// `ca.crt`, when present.
    pub ca_pem: Option<String>,
}

impl fmt::Debug for ServingFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServingFiles")
            .field("cert_pem", &self.cert_pem)
            .field("key_pem", &"[redacted]")
            .field("ca_pem", &self.ca_pem)
            .finish()
    }
}

/// Read every known data key present in `dir` (see [`crate::KNOWN_KEYS`]); other files are
/// ignored. `Ok(None)` when the directory is absent or holds none of them.
pub fn read(dir: &Path) -> Result<Option<BTreeMap<String, Vec<u8>>>, CertError> {
    let mut data = BTreeMap::new();
    for key in KNOWN_KEYS {
        if let Some(bytes) = read_optional(&dir.join(key))? {
            data.insert(key.to_string(), bytes);
        }
    }
    Ok((!data.is_empty()).then_some(data))
}

/// Write `data` into `dir` (created with mode 0700 if missing): one file per key, each
/// replaced atomically; `tls.crt` is written last. Known keys absent from `data` are removed,
/// so a finished rotation leaves no stale `next-ca.*` behind.
pub fn write(dir: &Path, data: &BTreeMap<String, Vec<u8>>) -> Result<(), CertError> {
    for key in data.keys() {
        if key.is_empty() || key.starts_with('.') || key.contains(['/', '\\']) || key.contains('\0') {
            return Err(CertError::invalid(key, "not usable as a file name"));
        }
    }
    create_dir(dir)?;
    let ordered = data
        .iter()
        .filter(|(k, _)| *k != TLS_CERT)
        .chain(data.get_key_value(TLS_CERT));
    for (key, bytes) in ordered {
        let mode = if key.ends_with(".key") { 0o600 } else { 0o644 };
        write_atomic(dir, key, bytes, mode)?;
    }
    for key in KNOWN_KEYS.iter().filter(|k| !data.contains_key(**k)) {
        let path = dir.join(key);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(CertError::Io {
                    op: "remove",
                    path,
                    source: e,
                });
            }
            _ => {}
        }
    }
    Ok(())
}

/// Load `tls.crt`, `tls.key` and (optional) `ca.crt`, and check that the key belongs to the
/// certificate and — when `ca.crt` is present — that the certificate is signed by a CA in
/// `ca.crt` or by an intermediate that follows it in `tls.crt`.
pub fn read_serving(dir: &Path) -> Result<ServingFiles, CertError> {
    let cert_pem = read_text(dir, TLS_CERT)?
        .ok_or_else(|| CertError::Missing(dir.join(TLS_CERT).display().to_string()))?;
    let key_pem = read_text(dir, TLS_KEY)?
        .ok_or_else(|| CertError::Missing(dir.join(TLS_KEY).display().to_string()))?;
    let ca_pem = read_text(dir, CA_BUNDLE)?;
    check_pair_named(TLS_CERT, &cert_pem, TLS_KEY, &key_pem)?;
    if let Some(ca) = &ca_pem {
        crate::pem::cert_ders(CA_BUNDLE, ca)?;
        let chain = split_blocks(&cert_pem).into_iter().skip(1).collect::<String>();
        if !bundle_trusts(ca, &cert_pem) && !bundle_trusts(&chain, &cert_pem) {
            return Err(CertError::invalid(TLS_CERT, "not signed by any CA in ca.crt"));
        }
    }
    Ok(ServingFiles {
        cert_pem,
        key_pem,
        ca_pem,
    })
}

/// A cheap SHA-256 (hex) over `tls.crt`, `tls.key` and `ca.crt` (absent files count as
/// absent). Poll it: kubelet swaps a `..data` symlink, which file watches miss.
pub fn fingerprint(dir: &Path) -> Result<String, CertError> {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for key in [TLS_CERT, TLS_KEY, CA_BUNDLE] {
        ctx.update(key.as_bytes());
        match read_optional(&dir.join(key))? {
            Some(bytes) => {
                ctx.update(&[1]);
                ctx.update(&(bytes.len() as u64).to_be_bytes());
                ctx.update(&bytes);
            }
            None => ctx.update(&[0]),
        }
    }
    Ok(ctx.finish().as_ref().iter().map(|b| format!("{b:02x}")).collect())
}

fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, CertError> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CertError::Io {
            op: "read",
            path: path.to_path_buf(),
            source: e,
        }),
    }
}

fn read_text(dir: &Path, key: &str) -> Result<Option<String>, CertError> {
    read_optional(&dir.join(key))?
        .map(|b| String::from_utf8(b).map_err(|_| CertError::invalid(key, "not UTF-8")))
        .transpose()
}

fn create_dir(dir: &Path) -> Result<(), CertError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|e| CertError::Io {
        op: "create directory",
        path: dir.to_path_buf(),
        source: e,
    })
}

fn write_atomic(dir: &Path, key: &str, bytes: &[u8], mode: u32) -> Result<(), CertError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{key}.tmp-{}-{n}", std::process::id()));
    let target = dir.join(key);
    let result = (|| {
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
        let mut file = options.open(&tmp)?;
        #[cfg(unix)]
        fs::set_permissions(&tmp, std::os::unix::fs::PermissionsExt::from_mode(mode))?;
        #[cfg(not(unix))]
        let _ = mode;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, &target)
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        CertError::Io {
            op: "write",
            path: target,
            source: e,
        }
    })
}
