//! Prometheus metrics (prometheus-client, an explicit registry owned by the server).

use prometheus_client::{
    encoding::{EncodeLabelSet, EncodeLabelValue},
    metrics::{counter::Counter, family::Family, gauge::Gauge, histogram::Histogram},
    registry::Registry,
};

/// How a review ended.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, EncodeLabelValue)]
pub enum Outcome {
    /// Allowed without changes.
    Allowed,
    /// Allowed with a patch.
    Patched,
    /// Refused by policy or by a handling error.
    Denied,
}

/// Labels of the review counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReviewLabels {
    pub webhook: String,
    pub operation: String,
    pub outcome: Outcome,
}

/// Labels of the duration histogram.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WebhookLabels {
    pub webhook: String,
}

/// Labels of the rejected-request counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RejectLabels {
    pub path: String,
    pub code: u16,
}

/// Labels of the certificate expiry gauge.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CertLabels {
    /// `serving` or `ca`.
    pub certificate: String,
}

/// Labels of `pod_unavailable_budget`, as OpenKruise's: the refused pod's controller and the user.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct BudgetLabels {
    /// `<Kind>_<namespace>_<name>` of the pod's controller (`unknown_<namespace>_<pod>` without one).
    pub kind_namespace_name: String,
    /// The requesting user.
    pub username: String,
}

/// Labels of `sidecarset_skipped`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SidecarSetLabels {
    /// The SidecarSet's name.
    pub sidecarset: String,
}

/// Labels of `objects_skipped`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    /// The kind of the skipped object (`CloneSet`, `Pod`, …).
    pub kind: String,
}

/// Labels of `controller_pass_duration_seconds`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ControllerLabels {
    /// The controller, by its kind in lower case (`cloneset`, `sidecarset`, …).
    pub controller: String,
}

/// Histograms of durations, per controller.
pub type DurationsByController = Family<ControllerLabels, Histogram, fn() -> Histogram>;

/// How long controllers take, per controller.
#[derive(Clone, Debug)]
pub struct PassDurations {
    /// `controller_pass_duration_seconds`: each reconcile pass, its writes included.
    pub passes: DurationsByController,
    /// `controller_decision_duration_seconds`: each pass until its plan is made (the cache reads and
    /// the planner), for the controllers that report it (CloneSet).
    pub decisions: DurationsByController,
}

/// Buckets resolving reviews of 50–500 µs closely enough to tell a 1.5× change (the 50,000-pod
/// benchmark compares p99 idle and under load), with a coarse tail.
pub const REVIEW_BUCKETS: [f64; 17] = [
    0.00005, 0.000075, 0.0001, 0.00015, 0.0002, 0.00025, 0.0003, 0.0004, 0.0005, 0.00075, 0.001, 0.0025,
    0.005, 0.01, 0.05, 0.25, 1.0,
];

/// Buckets resolving 0.1–10 ms, with a coarse tail for passes that wait on the API server.
pub const PASS_BUCKETS: [f64; 16] = [
    0.0001, 0.00025, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.1,
    0.5, 2.5,
];

/// A pass histogram with [`PASS_BUCKETS`].
fn pass_histogram() -> Histogram {
    Histogram::new(PASS_BUCKETS)
}

/// Fresh, unregistered pass histograms (tests and controllers run without a server).
pub fn pass_durations() -> PassDurations {
    PassDurations {
        passes: Family::new_with_constructor(pass_histogram),
        decisions: Family::new_with_constructor(pass_histogram),
    }
}

/// Objects the cluster cache skipped because they do not decode as their kind.
pub type SkippedObjects = Family<KindLabels, Counter>;

/// `sidecarset_uninjected_pods`: per SidecarSet, active pods it selects that lack its sidecars.
pub type UninjectedPods = Family<SidecarSetLabels, Gauge>;

/// Every metric kruise-rs exports.
pub struct Metrics {
    registry: Registry,
    /// Reviews answered, by webhook, operation and outcome.
    pub reviews: Family<ReviewLabels, Counter>,
    /// Time to answer a review.
    pub duration: Family<WebhookLabels, Histogram>,
    /// Requests refused before a decision (400, 413, 415).
    pub rejected: Family<RejectLabels, Counter>,
    /// Unix time at which the served certificate / the CA expires.
    pub cert_expiry: Family<CertLabels, Gauge>,
    /// Certificate reloads and rotations.
    pub cert_reloads: Counter,
    /// Failed certificate syncs.
    pub cert_errors: Counter,
    /// Pod deletions, evictions and updates a PodUnavailableBudget refused (OpenKruise's
    /// `pod_unavailable_budget`, here with the `kruise_` prefix).
    pub pod_unavailable_budget: Family<BudgetLabels, Counter>,
    /// Pod admissions that skipped a selecting SidecarSet as invalid (the pod got a warning instead).
    pub sidecarset_skipped: Family<SidecarSetLabels, Counter>,
    /// Objects the cluster cache skipped because they do not decode as their kind.
    pub objects_skipped: SkippedObjects,
    /// Per SidecarSet, active pods it selects that lack its sidecars (the SidecarSet controller's audit).
    pub sidecarset_uninjected_pods: UninjectedPods,
    /// Duration of each controller's reconcile passes.
    pub pass_durations: PassDurations,
    /// Open connections on the webhook port.
    pub open_connections: Gauge,
    /// Connections closed at once because the connection limit was reached.
    pub refused_connections: Counter,
    /// Bytes of request bodies held by the requests being handled (`--max-buffered-body-bytes`).
    pub buffered_body_bytes: Gauge,
    /// Connections closed for a slow request header, an idle period or a failed TLS handshake.
    pub timed_out_connections: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Creates and registers every metric.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("kruise");
        let reviews = Family::<ReviewLabels, Counter>::default();
        registry.register("admission_reviews", "Admission reviews answered", reviews.clone());
        let duration =
            Family::<WebhookLabels, Histogram>::new_with_constructor(|| Histogram::new(REVIEW_BUCKETS));
        registry.register(
            "admission_review_duration_seconds",
            "Time to decide an admission review",
            duration.clone(),
        );
        let rejected = Family::<RejectLabels, Counter>::default();
        registry.register(
            "admission_rejected_requests",
            "Requests refused before a decision",
            rejected.clone(),
        );
        let cert_expiry = Family::<CertLabels, Gauge>::default();
        registry.register(
            "webhook_certificate_expiry_timestamp_seconds",
            "Unix time at which the webhook certificate expires",
            cert_expiry.clone(),
        );
        let cert_reloads = Counter::default();
        registry.register(
            "webhook_certificate_reloads",
            "Serving certificate (re)loads",
            cert_reloads.clone(),
        );
        let cert_errors = Counter::default();
        registry.register(
            "webhook_certificate_errors",
            "Failed certificate syncs",
            cert_errors.clone(),
        );
        let pod_unavailable_budget = Family::<BudgetLabels, Counter>::default();
        registry.register(
            "pod_unavailable_budget",
            "Pod deletions, evictions and updates refused by a PodUnavailableBudget",
            pod_unavailable_budget.clone(),
        );
        let sidecarset_skipped = Family::<SidecarSetLabels, Counter>::default();
        registry.register(
            "sidecarset_skipped",
            "Pod admissions that skipped a selecting SidecarSet because it is invalid",
            sidecarset_skipped.clone(),
        );
        let sidecarset_uninjected_pods = UninjectedPods::default();
        registry.register(
            "sidecarset_uninjected_pods",
            "Active pods a SidecarSet selects that lack its sidecars (not injected)",
            sidecarset_uninjected_pods.clone(),
        );
        let pass_durations = pass_durations();
        registry.register(
            "controller_pass_duration_seconds",
            "Time one reconcile pass took (planner and writes), per controller",
            pass_durations.passes.clone(),
        );
        registry.register(
            "controller_decision_duration_seconds",
            "Time one reconcile pass took until its plan was made (cache reads and planner, no writes)",
            pass_durations.decisions.clone(),
        );
        let objects_skipped = SkippedObjects::default();
        registry.register(
            "objects_skipped",
            "Objects the cluster cache skipped because they do not decode as their kind",
            objects_skipped.clone(),
        );
        let open_connections = Gauge::default();
        registry.register(
            "webhook_open_connections",
            "Open connections on the webhook port",
            open_connections.clone(),
        );
        let buffered_body_bytes = Gauge::default();
        registry.register(
            "webhook_buffered_body_bytes",
            "Bytes of request bodies held by the requests being handled",
            buffered_body_bytes.clone(),
        );
        let refused_connections = Counter::default();
        registry.register(
            "webhook_refused_connections",
            "Connections closed at once because the connection limit was reached",
            refused_connections.clone(),
        );
        let timed_out_connections = Counter::default();
        registry.register(
            "webhook_timed_out_connections",
            "Connections closed for a slow TLS handshake or request header",
            timed_out_connections.clone(),
        );
        Metrics {
            registry,
            open_connections,
            refused_connections,
            buffered_body_bytes,
            timed_out_connections,
            reviews,
            duration,
            rejected,
            cert_expiry,
            cert_reloads,
            cert_errors,
            pod_unavailable_budget,
            sidecarset_skipped,
            objects_skipped,
            sidecarset_uninjected_pods,
            pass_durations,
        }
    }

    /// The Prometheus text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    /// Records a certificate's expiry.
    pub fn set_cert_expiry(&self, certificate: &str, unix_seconds: i64) {
        self.cert_expiry
            .get_or_create(&CertLabels {
                certificate: certificate.into(),
            })
            .set(unix_seconds);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_durations_are_exported_per_controller_in_sub_millisecond_buckets() {
        let metrics = Metrics::new();
        let cloneset = ControllerLabels {
            controller: "cloneset".into(),
        };
        metrics
            .pass_durations
            .passes
            .get_or_create(&cloneset)
            .observe(0.0004);
        metrics
            .pass_durations
            .passes
            .get_or_create(&cloneset)
            .observe(0.004);
        metrics
            .pass_durations
            .decisions
            .get_or_create(&cloneset)
            .observe(0.0002);
        let text = metrics.encode();
        // The cumulative count of the cloneset bucket with upper bound `le`.
        let bucket = |le: &str| {
            text.lines()
                .find(|l| {
                    l.starts_with("kruise_controller_pass_duration_seconds_bucket{")
                        && l.contains(&format!("le=\"{le}\""))
                        && l.contains("controller=\"cloneset\"")
                })
                .and_then(|l| l.rsplit(' ').next())
                .map(str::to_string)
        };
        assert_eq!(bucket("0.00025").as_deref(), Some("0"), "{text}");
        assert_eq!(bucket("0.0005").as_deref(), Some("1"), "{text}");
        assert_eq!(bucket("0.005").as_deref(), Some("2"), "{text}");
        assert!(text.contains("kruise_controller_pass_duration_seconds_count{controller=\"cloneset\"} 2"));
        assert!(
            text.contains("kruise_controller_decision_duration_seconds_count{controller=\"cloneset\"} 1"),
            "{text}"
        );
    }
}
