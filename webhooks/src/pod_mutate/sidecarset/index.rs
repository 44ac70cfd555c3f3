//! [`SidecarSetIndex`]: every SidecarSet prepared once, and indexed so that a pod meets only the SidecarSets
//! that could select it.
//!
//! Two levels: SidecarSets whose `namespaceSelector` names namespaces (`kubernetes.io/metadata.name` in
//! `matchLabels` or an `In` expression — which is also what a v1alpha1 `spec.namespace` becomes) are filed
//! under those namespaces, the others as cluster-scoped (OpenKruise's own field index). Inside each, a
//! SidecarSet is filed under one requirement of its `selector`: an `app=web` label (or each value of an `In`),
//! else the key of an `Exists`, else in a short list that is always evaluated (selectors made only of `NotIn`
//! / `DoesNotExist`). A pod then looks up its namespace's and the cluster-scoped buckets with each of its own
//! labels, so a SidecarSet that cannot match costs nothing.
//!
//! Building is linear in the SidecarSets (selectors parsed, hashes read or computed, container JSON
//! prepared); rebuild it whenever a SidecarSet changes (including its status: `status.latestRevision` is
//! recorded on pods). SidecarSets with `injectionStrategy.paused`, or a `null` / empty selector, never inject
//! and are left out.

use foldhash::HashMap;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString};
use kruise_api::apps_v1beta1::{
    SIDECARSET_BASE_ANNOTATION, SIDECARSET_CANARY_ANNOTATION, SidecarSet, SidecarSetInjectRevisionPolicy,
};
use serde_json::{Map, Value};

use kruise_core::selector::Requirement;

use kruise_core::sidecarset::stamped_or_computed_hashes;

use super::plan::Plan;

/// A selector parsed once, kept with the SidecarSet.
pub(crate) type Selector = kruise_core::selector::Selector<'static>;

fn parse(selector: Option<&LabelSelector>) -> Selector {
    kruise_core::selector::Selector::parse(selector).into_owned()
}

pub use kruise_core::names::{SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION};
/// The namespace label every namespace carries.
pub(crate) const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";
/// Where OpenKruise keeps SidecarSet ControllerRevisions unless told otherwise.
pub const DEFAULT_REVISION_NAMESPACE: &str = "kruise-system";

/// How `updateStrategy.partition` splits pods between the pinned and the latest revision (`Partial`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Partition {
    /// Unset or an integer: the latest revision.
    Latest,
    /// `p%`: the pinned revision with probability `p / 100`.
    Percent(f64),
    Invalid(String),
}

/// `spec.injectionStrategy.revision` with `revisionName` or `customVersion` set.
#[derive(Clone, Debug)]
pub(crate) struct Pin {
    pub(crate) revision_name: Option<String>,
    pub(crate) custom_version: Option<String>,
    pub(crate) partial: bool,
    pub(crate) update_paused: bool,
    pub(crate) update_selector: Option<Selector>,
    pub(crate) partition: Partition,
}

/// One SidecarSet, prepared.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) set: Arc<SidecarSet>,
    pub(crate) name: String,
    pub(crate) selector: Selector,
    /// `None`: every namespace.
    pub(crate) namespace_selector: Option<Selector>,
    /// The namespace selector has requirements on other labels than the namespace name.
    pub(crate) needs_namespace_labels: bool,
    pub(crate) hash: String,
    pub(crate) hash_without_image: String,
    pub(crate) latest_revision: String,
    /// `apps.kruise.io/sidecarset-base` of a canary SidecarSet.
    pub(crate) canary_base: Option<String>,
    pub(crate) plan: Result<Arc<Plan>, String>,
    pub(crate) pin: Option<Pin>,
}

#[derive(Debug, Default)]
struct Bucket {
    by_label: HashMap<String, HashMap<String, Vec<u32>>>,
    by_key: HashMap<String, Vec<u32>>,
    always: Vec<u32>,
}

impl Bucket {
    fn insert(&mut self, id: u32, selector: &Selector) {
        let requirements = selector.requirements();
        let best_in = requirements
            .iter()
            .filter_map(|r| match r {
                Requirement::In(k, values) => Some((k, values)),
                _ => None,
            })
            .min_by_key(|(_, values)| values.len());
        if let Some((key, values)) = best_in {
            let by_value = self.by_label.entry(key.to_string()).or_default();
            let mut values = values.to_vec();
            values.sort();
            values.dedup();
            for v in values {
                by_value.entry(v).or_default().push(id);
            }
        } else if let Some(Requirement::Exists(key)) =
            requirements.iter().find(|r| matches!(r, Requirement::Exists(_)))
        {
            self.by_key.entry(key.to_string()).or_default().push(id);
        } else {
            self.always.push(id);
        }
    }

    fn collect(&self, labels: Option<&Map<String, Value>>, out: &mut Vec<u32>) {
        out.extend_from_slice(&self.always);
        let Some(labels) = labels else { return };
        if self.by_label.is_empty() && self.by_key.is_empty() {
            return;
        }
        for (k, v) in labels {
            if let Some(by_value) = self.by_label.get(k.as_str())
                && let Some(ids) = v.as_str().and_then(|v| by_value.get(v))
            {
                out.extend_from_slice(ids);
            }
            if let Some(ids) = self.by_key.get(k.as_str()) {
                out.extend_from_slice(ids);
            }
        }
    }
}

/// Every SidecarSet that may inject, prepared and indexed for pod admission (see the module docs).
///
/// Cheap to share (`Arc`) and immutable: views keep one as an index derived from the SidecarSets
/// ([`kruise_core::derived`]) and rebuild it on first use after a SidecarSet is added, changed or deleted.
#[derive(Debug, Default)]
pub struct SidecarSetIndex {
    entries: Vec<Entry>,
    by_namespace: HashMap<String, Bucket>,
    cluster: Bucket,
    revision_namespace: String,
}

impl kruise_core::Derived for SidecarSetIndex {
    type From = SidecarSet;
    fn derive(sidecar_sets: Vec<Arc<SidecarSet>>, own_namespace: &str) -> Self {
        SidecarSetIndex::build_in(sidecar_sets, own_namespace)
    }
}

impl SidecarSetIndex {
    /// Prepares and indexes SidecarSets; their ControllerRevisions are looked up in
    /// [`DEFAULT_REVISION_NAMESPACE`].
    pub fn build(sidecar_sets: impl IntoIterator<Item = Arc<SidecarSet>>) -> SidecarSetIndex {
        SidecarSetIndex::build_in(sidecar_sets, DEFAULT_REVISION_NAMESPACE)
    }

    /// Like [`build`](Self::build), with the namespace holding SidecarSet ControllerRevisions (the
    /// namespace kruise-rs runs in).
    pub fn build_in(
        sidecar_sets: impl IntoIterator<Item = Arc<SidecarSet>>,
        revision_namespace: &str,
    ) -> SidecarSetIndex {
        let mut entries: Vec<Entry> = sidecar_sets.into_iter().filter_map(prepare).collect();
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        entries.dedup_by(|a, b| a.name == b.name);
        let mut index = SidecarSetIndex {
            revision_namespace: revision_namespace.to_string(),
            ..SidecarSetIndex::default()
        };
        for (id, entry) in entries.iter().enumerate() {
            let id = u32::try_from(id).unwrap_or(u32::MAX);
            match entry.namespace_selector.as_ref().and_then(namespace_names) {
                Some(names) => {
                    for name in names {
                        index
                            .by_namespace
                            .entry(name)
                            .or_default()
                            .insert(id, &entry.selector);
                    }
                }
                None => index.cluster.insert(id, &entry.selector),
            }
        }
        index.entries = entries;
        index
    }

    /// Number of SidecarSets that may inject.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no SidecarSet may inject.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Where SidecarSet ControllerRevisions are looked up.
    pub fn revision_namespace(&self) -> &str {
        &self.revision_namespace
    }

    /// The SidecarSets a pod in `namespace` with `labels` might match, in name order (a superset: the
    /// caller evaluates the selectors).
    pub(crate) fn candidates(&self, namespace: &str, labels: Option<&Map<String, Value>>) -> Vec<&Entry> {
        let mut ids = Vec::new();
        if let Some(bucket) = self.by_namespace.get(namespace) {
            bucket.collect(labels, &mut ids);
        }
        self.cluster.collect(labels, &mut ids);
        ids.sort_unstable();
        ids.dedup();
        ids.into_iter()
            .filter_map(|id| self.entries.get(id as usize))
            .collect()
    }
}

/// The namespaces a namespace selector is limited to by name, if it is.
fn namespace_names(selector: &Selector) -> Option<Vec<String>> {
    if !selector.is_valid() || selector.is_null() {
        return None;
    }
    selector.requirements().iter().find_map(|r| match r {
        Requirement::In(k, values) if k == NAMESPACE_NAME_LABEL => {
            let mut values = values.to_vec();
            values.sort();
            values.dedup();
            Some(values)
        }
        _ => None,
    })
}

fn prepare(set: Arc<SidecarSet>) -> Option<Entry> {
    let spec = &set.spec;
    if spec.injection_strategy.paused {
        return None;
    }
    let selector = parse(spec.selector.as_ref());
    if selector.is_null_or_empty() {
        return None;
    }
    let name = set.metadata.name.clone().unwrap_or_default();
    let namespace_selector = spec.namespace_selector.as_ref().map(|s| parse(Some(s)));
    let needs_namespace_labels = namespace_selector
        .as_ref()
        .is_some_and(|s| s.requirements().iter().any(|r| r.key() != NAMESPACE_NAME_LABEL));
    let annotations = set.metadata.annotations.as_ref();
    let annotation = |key: &str| {
        annotations
            .and_then(|a| a.get(key))
            .filter(|v| !v.is_empty())
            .cloned()
    };
    let (hash, hash_without_image) = stamped_or_computed_hashes(annotations, spec);
    let canary_base = (annotation(SIDECARSET_CANARY_ANNOTATION).as_deref() == Some("true"))
        .then(|| annotation(SIDECARSET_BASE_ANNOTATION))
        .flatten();
    let pin = spec.injection_strategy.revision.as_ref().and_then(|r| {
        if r.revision_name.is_none() && r.custom_version.is_none() {
            return None;
        }
        let update = &spec.update_strategy;
        let partition = match &update.partition {
            None | Some(IntOrString::Int(_)) => Partition::Latest,
            Some(IntOrString::String(s)) => match s.strip_suffix('%').map(str::parse::<f64>) {
                Some(Ok(p)) => Partition::Percent(p / 100.0),
                _ => Partition::Invalid(format!(
                    "spec.updateStrategy.partition {s:?} is not an integer or a percentage"
                )),
            },
        };
        Some(Pin {
            revision_name: r.revision_name.clone(),
            custom_version: r.custom_version.clone(),
            partial: r.policy == Some(SidecarSetInjectRevisionPolicy::Partial),
            update_paused: update.paused,
            update_selector: update.selector.as_ref().map(|s| parse(Some(s))),
            partition,
        })
    });
    Some(Entry {
        plan: Plan::new(spec).map(Arc::new),
        name,
        selector,
        namespace_selector,
        needs_namespace_labels,
        hash,
        hash_without_image,
        latest_revision: set
            .status
            .as_ref()
            .and_then(|s| s.latest_revision.clone())
            .unwrap_or_default(),
        canary_base,
        pin,
        set,
    })
}
