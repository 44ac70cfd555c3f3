//! A CA rotation with two `kruise serve` replicas while pods are created without pause through the
//! webhook (kubectl against the playground, which calls the webhook Service over TLS trusting only the
//! published caBundle): every create is admitted. The Secret is seeded with a CA that enters the last
//! third of its life a few seconds after the loop starts; the replicas take the three phases themselves
//! (`--ca-rotation-dwell-seconds 6`, so they re-check every 3 s).

use crate::common;

use std::{
    collections::BTreeSet,
    path::Path,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use base64::Engine as _;
use common::kubectl::{kubectl, ok, serve};
use common::replicas::{Replica, proxy};
use kruise_certs::{ACTIVE_CA_CERT, CertConfig, NEXT_CA_CERT, PREVIOUS_CA_CERT};
use time::OffsetDateTime;

const NS: &str = "shop";
const SYSTEM: &str = "kruise-system";
const SECRET: &str = "kruise-webhook-certs";
/// The seeded CA enters its last third this long after it is written.
const ROTATION_IN: time::Duration = time::Duration::seconds(30);

/// Secret data whose CA starts rotating `ROTATION_IN` from now.
fn seeded_secret() -> (serde_json::Value, String) {
    let mut config = CertConfig::for_service("kruise-webhook-service", SYSTEM);
    config.ca_validity = time::Duration::days(9);
    config.leaf_validity = time::Duration::days(9);
    let now = OffsetDateTime::now_utc();
    let last_third = |pem: &str| -> OffsetDateTime {
        let ca = kruise_certs::inspect(pem).unwrap();
        ca.not_after - ca.lifetime() / 3
    };
    let probe = kruise_certs::generate(&config, now).unwrap();
    let offset = last_third(&probe.ca.cert_pem) - now;
    let material = kruise_certs::generate(&config, now + ROTATION_IN - offset).unwrap();
    let starts = last_third(&material.ca.cert_pem) - now;
    assert!(
        (ROTATION_IN - starts).abs() < time::Duration::seconds(2),
        "{starts}"
    );
    let data: serde_json::Map<String, serde_json::Value> = material
        .to_data()
        .into_iter()
        .map(|(k, v)| (k, base64::engine::general_purpose::STANDARD.encode(v).into()))
        .collect();
    let secret = serde_json::json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": SECRET, "namespace": SYSTEM}, "data": data});
    (secret, material.ca.cert_pem)
}

/// Which CA keys the Secret holds now, and its active CA.
fn secret_state(k: &Path) -> Option<(BTreeSet<String>, String)> {
    let (found, out, _) = kubectl(k, &["get", "secret", SECRET, "-n", SYSTEM, "-o", "json"], None);
    let secret: serde_json::Value = serde_json::from_str(&out).ok().filter(|_| found)?;
    let data = secret["data"].as_object()?;
    let keys = [ACTIVE_CA_CERT, NEXT_CA_CERT, PREVIOUS_CA_CERT]
        .into_iter()
        .filter(|key| data.contains_key(*key))
        .map(String::from)
        .collect();
    let active = base64::engine::general_purpose::STANDARD
        .decode(data.get(ACTIVE_CA_CERT)?.as_str()?)
        .ok()?;
    Some((keys, String::from_utf8(active).ok()?))
}

/// Creates pods one after another until `stop`; returns (created, failures with kubectl's words).
fn create_pods(k: &Path, stop: &AtomicBool) -> (usize, Vec<String>) {
    let (mut created, mut failures) = (0, Vec::new());
    for i in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("pod-{i}"), "namespace": NS, "labels": {"app": "loop"}},
            "spec": {"containers": [{"name": "main", "image": "app:v1"}]}});
        match kubectl(k, &["create", "-f", "-"], Some(&pod.to_string())) {
            (true, _, _) => created += 1,
            (false, _, err) => failures.push(format!("pod-{i}: {}", err.trim())),
        }
    }
    (created, failures)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ca_rotation_under_continuous_pod_creation_fails_no_admission() {
    common::init();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let service = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    let served = serve(&["--external-webhook", &service.to_string()]);
    let k = served.kubeconfig.clone();
    let _ = kubectl(&k, &["create", "namespace", SYSTEM], None);
    let (secret, seeded_ca) = seeded_secret();
    let (stored, _, err) = kubectl(&k, &["create", "-f", "-"], Some(&secret.to_string()));
    assert!(stored, "{err}");

    let dwell = ["--ca-rotation-dwell-seconds", "6"];
    let (first, second) = (
        Replica::start(&k, "replica-a", &dwell),
        Replica::start(&k, "replica-b", &dwell),
    );
    let started = Instant::now();
    while !(first.ready().await && second.ready().await) {
        assert!(started.elapsed() < Duration::from_secs(60), "replicas not ready");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let proxying = tokio::spawn(proxy(
        tokio::net::TcpListener::from_std(listener).unwrap(),
        vec![first.webhook().await, second.webhook().await],
    ));
    let (before, _) = secret_state(&k).expect("the Secret");
    assert!(
        !before.contains(NEXT_CA_CERT),
        "the rotation started before the pods did: {before:?}"
    );
    ok(&k, &["create", "namespace", NS]);
    let reviews_before = first.reviews().await + second.reviews().await;

    let stop = Arc::new(AtomicBool::new(false));
    let creating = {
        let (k, stop) = (k.clone(), stop.clone());
        std::thread::spawn(move || create_pods(&k, &stop))
    };
    // The phases as the Secret shows them: next CA published, leaf switched (previous CA kept), done.
    let mut states = Vec::new();
    let started = Instant::now();
    loop {
        if let Some((keys, active)) = secret_state(&k) {
            let rotated = active != seeded_ca;
            if states.last() != Some(&(keys.clone(), rotated)) {
                states.push((keys.clone(), rotated));
            }
            if rotated && keys.len() == 1 {
                break;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the rotation did not finish; states seen: {states:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Pods keep coming for a resync period after the last phase (both replicas serve the new leaf).
    tokio::time::sleep(Duration::from_secs(5)).await;
    stop.store(true, Ordering::Relaxed);
    let (created, failures) = creating.join().unwrap();
    proxying.abort();

    let phases: Vec<_> = states
        .iter()
        .map(|(keys, rotated)| {
            (
                keys.contains(NEXT_CA_CERT),
                keys.contains(PREVIOUS_CA_CERT),
                *rotated,
            )
        })
        .collect();
    assert!(
        phases.contains(&(true, false, false)) && phases.contains(&(false, true, true)),
        "phases 1 and 2 were seen: {states:?}"
    );
    println!("{created} pods created during the rotation, phases seen: {phases:?}");
    assert!(failures.is_empty(), "failed admissions: {failures:#?}");
    assert!(created >= 20, "only {created} pods created");
    let reviews = first.reviews().await + second.reviews().await - reviews_before;
    assert!(
        reviews >= created as u64,
        "{reviews} reviews for {created} pods: the webhook was not called for each"
    );
}
