//! Cluster-mode certificates against an in-memory API: one Secret for all replicas, caBundle published
//! and restored, Lease election with a single winner.

mod common;
#[path = "support/fake_api.rs"]
mod fake_api;

use std::time::Duration;

use fake_api::FakeApi;
use kruise_certs::CertConfig;
use kruise_rs::cluster::{CaBundlePublisher, CertSecret, LeaderElector};
use serde_json::json;
use time::OffsetDateTime;

const SECRET: &str = "/api/v1/namespaces/kruise-system/secrets/kruise-webhook-certs";
const VALIDATING: &str = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/kruise-validating-webhook-configuration";
const CRD: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clonesets.apps.kruise.io";

fn replica(api: &FakeApi) -> CertSecret {
    let client = api.client();
    let publisher = CaBundlePublisher::new(client.clone(), vec!["clonesets.apps.kruise.io".into()]);
    CertSecret::new(client, "kruise-system", "kruise-webhook-certs", publisher)
}

fn install_configurations(api: &FakeApi) {
    let validating =
        kruise_rs::registrations::validating_configuration("kruise-system", "kruise-webhook-service");
    api.put(VALIDATING, serde_json::to_value(&validating).unwrap());
    let crd = kruise_api::crds()
        .into_iter()
        .find(|c| c.metadata.name.as_deref() == Some("clonesets.apps.kruise.io"));
    api.put(CRD, serde_json::to_value(crd.unwrap()).unwrap());
}

fn base64_of(pem: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(pem)
}

#[tokio::test]
async fn racing_replicas_end_up_with_one_ca_and_publish_it() {
    common::init();
    let api = FakeApi::default();
    install_configurations(&api);
    let config = CertConfig::for_service("kruise-webhook-service", "kruise-system");
    let now = OffsetDateTime::now_utc();
    let (a, b, c) = (replica(&api), replica(&api), replica(&api));
    let (ra, rb, rc) = tokio::join!(a.sync(&config, now), b.sync(&config, now), c.sync(&config, now));
    let (ra, rb, rc) = (ra.unwrap(), rb.unwrap(), rc.unwrap());
    assert_eq!(ra.ca_bundle_pem(), rb.ca_bundle_pem());
    assert_eq!(ra.ca_bundle_pem(), rc.ca_bundle_pem());
    assert_eq!(ra.leaf, rb.leaf, "every replica serves the same certificate");
    let creates = api
        .writes
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, p)| m == http::Method::POST && p == SECRET)
        .count();
    assert_eq!(creates, 1, "the Secret is created once");

    let bundle = base64_of(&ra.ca_bundle_pem());
    let validating = api.get(VALIDATING).unwrap();
    for webhook in validating["webhooks"].as_array().unwrap() {
        assert_eq!(
            webhook["clientConfig"]["caBundle"],
            json!(bundle),
            "{}",
            webhook["name"]
        );
    }
    let crd = api.get(CRD).unwrap();
    assert_eq!(
        crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"],
        json!(bundle)
    );

    // Someone overwrites a caBundle (a GitOps revert): the next sync puts it back, the Secret stays.
    let mut reverted = validating.clone();
    reverted["webhooks"][0]["clientConfig"]["caBundle"] = json!("");
    api.objects.lock().unwrap().insert(VALIDATING.into(), reverted);
    let again = a.sync(&config, now + time::Duration::minutes(1)).await.unwrap();
    assert_eq!(again.ca_bundle_pem(), ra.ca_bundle_pem());
    assert_eq!(
        api.get(VALIDATING).unwrap()["webhooks"][0]["clientConfig"]["caBundle"],
        json!(bundle)
    );
}

#[tokio::test]
async fn a_corrupt_secret_is_repaired_by_one_replica_at_a_time() {
    common::init();
    let api = FakeApi::default();
    api.put(
        SECRET,
        json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "kruise-webhook-certs", "namespace": "kruise-system"},
        "data": {"tls.crt": base64_of("garbage"), "tls.key": base64_of("garbage")}}),
    );
    let config = CertConfig::for_service("kruise-webhook-service", "kruise-system");
    let now = OffsetDateTime::now_utc();
    let (a, b) = (replica(&api), replica(&api));
    let (ra, rb) = tokio::join!(a.sync(&config, now), b.sync(&config, now));
    assert_eq!(ra.unwrap().ca_bundle_pem(), rb.unwrap().ca_bundle_pem());
    let stored = api.get(SECRET).unwrap();
    assert!(stored["data"]["ca.crt"].is_string());
}

#[tokio::test]
async fn exactly_one_replica_leads() {
    let api = FakeApi::default();
    let electors: Vec<_> = (0..3)
        .map(|i| {
            LeaderElector::new(
                api.client(),
                "kruise-system",
                "kruise-rs-leader",
                &format!("replica-{i}"),
            )
            .spawn()
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let leaders = electors.iter().filter(|rx| *rx.borrow()).count();
    assert_eq!(leaders, 1);
    let lease = api
        .get("/apis/coordination.k8s.io/v1/namespaces/kruise-system/leases/kruise-rs-leader")
        .unwrap();
    assert!(
        lease["spec"]["holderIdentity"]
            .as_str()
            .unwrap()
            .starts_with("replica-")
    );
}

#[tokio::test]
async fn the_leaf_does_not_switch_to_a_new_ca_until_its_bundle_is_published() {
    common::init();
    let api = FakeApi::default();
    install_configurations(&api);
    let mut config = CertConfig::for_service("kruise-webhook-service", "kruise-system");
    config.ca_validity = time::Duration::days(30);
    config.leaf_validity = time::Duration::days(9);
    let t0 = OffsetDateTime::now_utc();
    let a = replica(&api);
    let first = a.sync(&config, t0).await.unwrap();
    // Day 21: phase 1 publishes old + next CA.
    let phase1 = a.sync(&config, t0 + time::Duration::days(21)).await.unwrap();
    assert!(phase1.next_ca.is_some(), "CA rotation started");
    assert_eq!(phase1.ca, first.ca);
    // The API refuses the caBundle update (say, the configuration was reverted and is now locked).
    api.failing.lock().unwrap().insert(VALIDATING.into());
    let mut reverted = api.get(VALIDATING).unwrap();
    reverted["webhooks"][0]["clientConfig"]["caBundle"] = json!(base64_of(&first.ca_bundle_pem()));
    api.objects.lock().unwrap().insert(VALIDATING.into(), reverted);
    let later = t0 + time::Duration::days(21) + time::Duration::hours(1);
    let err = a.sync(&config, later).await.unwrap_err();
    assert!(err.to_string().contains("not switched to the new CA"), "{err}");
    let stored = api.get(SECRET).unwrap();
    use base64::Engine as _;
    let tls = base64::engine::general_purpose::STANDARD
        .decode(stored["data"]["tls.crt"].as_str().unwrap())
        .unwrap();
    assert_eq!(
        String::from_utf8(tls).unwrap(),
        phase1.leaf.cert_pem,
        "leaf not switched"
    );
    // Once the API accepts the bundle again, the rotation proceeds.
    api.failing.lock().unwrap().clear();
    let phase2 = a.sync(&config, later).await.unwrap();
    assert_eq!(
        phase2.ca,
        phase1.next_ca.unwrap(),
        "leaf now signed by the new CA"
    );
    assert!(kruise_certs::bundle_trusts(
        &phase2.ca_bundle_pem(),
        &phase2.leaf.cert_pem
    ));
}
