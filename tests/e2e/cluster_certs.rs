//! Cluster-mode certificates against the playground: one Secret for all replicas, caBundle published
//! and restored, Lease election with a single winner.

use crate::common;

use std::time::Duration;

use common::cluster::{self, CRDS, Cluster, LEASES, SECRETS, VALIDATING_CONFIGURATIONS};
use kruise_certs::CertConfig;
use kruise_playground::{faults::Target, store::EventType};
use kruise_rs::cluster::{CaBundlePublisher, CertSecret, LeaderElector};
use serde_json::json;
use time::OffsetDateTime;

const NAMESPACE: &str = "kruise-system";
const SECRET: &str = "kruise-webhook-certs";
const VALIDATING: &str = "kruise-validating-webhook-configuration";
const CRD: &str = "clonesets.apps.kruise.io";

fn replica(cluster: &Cluster) -> CertSecret {
    let client = cluster.client.clone();
    let publisher = CaBundlePublisher::new(client.clone(), vec![CRD.into()]);
    CertSecret::new(client, NAMESPACE, SECRET, publisher)
}

/// The namespace and the validating configuration (the CRDs are installed with the cluster).
async fn install_configurations(cluster: &Cluster) {
    cluster.namespace(NAMESPACE).await;
    let validating = kruise_rs::registrations::validating_configuration(NAMESPACE, "kruise-webhook-service");
    cluster
        .create(
            VALIDATING_CONFIGURATIONS,
            serde_json::to_value(&validating).unwrap(),
        )
        .await;
}

fn secret(cluster: &Cluster) -> serde_json::Value {
    cluster.get(SECRETS, NAMESPACE, SECRET).expect("the Secret")
}

fn validating(cluster: &Cluster) -> serde_json::Value {
    cluster
        .get(VALIDATING_CONFIGURATIONS, "", VALIDATING)
        .expect("the configuration")
}

fn base64_of(pem: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(pem)
}

#[tokio::test]
async fn racing_replicas_end_up_with_one_ca_and_publish_it() {
    common::init();
    let cluster = cluster::start().await;
    install_configurations(&cluster).await;
    let config = CertConfig::for_service("kruise-webhook-service", NAMESPACE);
    let now = OffsetDateTime::now_utc();
    let (a, b, c) = (replica(&cluster), replica(&cluster), replica(&cluster));
    let (ra, rb, rc) = tokio::join!(a.sync(&config, now), b.sync(&config, now), c.sync(&config, now));
    let (ra, rb, rc) = (ra.unwrap(), rb.unwrap(), rc.unwrap());
    assert_eq!(ra.ca_bundle_pem(), rb.ca_bundle_pem());
    assert_eq!(ra.ca_bundle_pem(), rc.ca_bundle_pem());
    assert_eq!(ra.leaf, rb.leaf, "every replica serves the same certificate");
    let changes: Vec<EventType> = cluster
        .history(SECRETS)
        .iter()
        .filter(|e| e.object["metadata"]["name"] == SECRET)
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        changes,
        [EventType::Added],
        "the Secret is created once and never replaced"
    );

    let bundle = base64_of(&ra.ca_bundle_pem());
    for webhook in validating(&cluster)["webhooks"].as_array().unwrap() {
        assert_eq!(
            webhook["clientConfig"]["caBundle"],
            json!(bundle),
            "{}",
            webhook["name"]
        );
    }
    let crd = cluster.get(CRDS, "", CRD).unwrap();
    assert_eq!(
        crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"],
        json!(bundle)
    );

    // Someone overwrites a caBundle (a GitOps revert): the next sync puts it back, the Secret stays.
    cluster
        .modify(VALIDATING_CONFIGURATIONS, "", VALIDATING, |c| {
            c["webhooks"][0]["clientConfig"]["caBundle"] = json!("")
        })
        .await;
    let again = a.sync(&config, now + time::Duration::minutes(1)).await.unwrap();
    assert_eq!(again.ca_bundle_pem(), ra.ca_bundle_pem());
    assert_eq!(
        validating(&cluster)["webhooks"][0]["clientConfig"]["caBundle"],
        json!(bundle)
    );
}

#[tokio::test]
async fn a_corrupt_secret_is_repaired_by_one_replica_at_a_time() {
    common::init();
    let cluster = cluster::start().await;
    cluster.namespace(NAMESPACE).await;
    cluster
        .create(
            SECRETS,
            json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": SECRET, "namespace": NAMESPACE},
                "data": {"tls.crt": base64_of("garbage"), "tls.key": base64_of("garbage")}}),
        )
        .await;
    let config = CertConfig::for_service("kruise-webhook-service", NAMESPACE);
    let now = OffsetDateTime::now_utc();
    let (a, b) = (replica(&cluster), replica(&cluster));
    let (ra, rb) = tokio::join!(a.sync(&config, now), b.sync(&config, now));
    assert_eq!(ra.unwrap().ca_bundle_pem(), rb.unwrap().ca_bundle_pem());
    assert!(secret(&cluster)["data"]["ca.crt"].is_string());
}

/// A deleted Secret is created again by the next sync, and the caBundle published follows the new CA.
#[tokio::test]
async fn a_deleted_secret_is_created_again_and_its_ca_published() {
    common::init();
    let cluster = cluster::start().await;
    install_configurations(&cluster).await;
    let config = CertConfig::for_service("kruise-webhook-service", NAMESPACE);
    let a = replica(&cluster);
    let first = a.sync(&config, OffsetDateTime::now_utc()).await.unwrap();
    let secrets: kube::Api<k8s_openapi::api::core::v1::Secret> =
        kube::Api::namespaced(cluster.client.clone(), NAMESPACE);
    secrets.delete(SECRET, &Default::default()).await.unwrap();
    assert!(cluster.get(SECRETS, NAMESPACE, SECRET).is_none());

    let second = a.sync(&config, OffsetDateTime::now_utc()).await.unwrap();
    assert!(secret(&cluster)["data"]["tls.crt"].is_string(), "created again");
    assert_ne!(second.ca_bundle_pem(), first.ca_bundle_pem(), "a new CA");
    let published = validating(&cluster)["webhooks"][0]["clientConfig"]["caBundle"]
        .as_str()
        .map(str::to_owned);
    assert_eq!(published, Some(base64_of(&second.ca_bundle_pem())));
}

#[tokio::test]
async fn exactly_one_replica_leads() {
    let cluster = cluster::start().await;
    cluster.namespace(NAMESPACE).await;
    let electors: Vec<_> = (0..3)
        .map(|i| {
            LeaderElector::new(
                cluster.client.clone(),
                NAMESPACE,
                "kruise-rs-leader",
                &format!("replica-{i}"),
            )
            .spawn()
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let leaders = electors.iter().filter(|rx| *rx.borrow()).count();
    assert_eq!(leaders, 1);
    let lease = cluster.get(LEASES, NAMESPACE, "kruise-rs-leader").unwrap();
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
    let cluster = cluster::start().await;
    install_configurations(&cluster).await;
    let mut config = CertConfig::for_service("kruise-webhook-service", NAMESPACE);
    config.ca_validity = time::Duration::days(30);
    config.leaf_validity = time::Duration::days(9);
    let t0 = OffsetDateTime::now_utc();
    let a = replica(&cluster);
    let first = a.sync(&config, t0).await.unwrap();
    // Day 21: phase 1 publishes old + next CA.
    let phase1 = a.sync(&config, t0 + time::Duration::days(21)).await.unwrap();
    assert!(phase1.next_ca.is_some(), "CA rotation started");
    assert_eq!(phase1.ca, first.ca);
    // The configuration is reverted to the old bundle and the API then refuses the caBundle update
    // (say, the configuration is now locked).
    cluster
        .modify(VALIDATING_CONFIGURATIONS, "", VALIDATING, |c| {
            c["webhooks"][0]["clientConfig"]["caBundle"] = json!(base64_of(&first.ca_bundle_pem()))
        })
        .await;
    let locked = Target::writes("admissionregistration.k8s.io", "validatingwebhookconfigurations")
        .object("", VALIDATING);
    cluster.faults.fail(locked.clone());
    let later = t0 + time::Duration::days(21) + time::Duration::hours(1);
    let err = a.sync(&config, later).await.unwrap_err();
    assert!(err.to_string().contains("not switched to the new CA"), "{err}");
    let stored = secret(&cluster);
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
    cluster.faults.clear(&locked);
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
