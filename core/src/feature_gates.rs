//! OpenKruise's feature gates (`pkg/features/kruise_features.go`): the same names, the same
//! `--feature-gates` syntax as every Kubernetes component (`A=true,B=false`, read by
//! `component-base`'s `MapStringBool`), and OpenKruise's defaults except where kruise-rs deviates
//! ([`Gate::default_enabled`]). `docs/feature-gates.md` says what each gate switches in kruise-rs.

use std::fmt;

macro_rules! gates {
    ($($gate:ident = $name:literal, openkruise $ok:literal, kruise_rs $ours:literal;)*) => {
        /// A feature gate of OpenKruise.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Gate {
            $($gate,)*
        }

        impl Gate {
            /// Every gate, in OpenKruise's order.
            pub const ALL: &[Gate] = &[$(Gate::$gate,)*];

            /// The name on the command line.
            pub fn name(self) -> &'static str {
                match self {
                    $(Gate::$gate => $name,)*
                }
            }

            /// The default in OpenKruise.
            pub fn openkruise_default(self) -> bool {
                match self {
                    $(Gate::$gate => $ok,)*
                }
            }

            /// The default in kruise-rs.
            pub fn default_enabled(self) -> bool {
                match self {
                    $(Gate::$gate => $ours,)*
                }
            }
        }
    };
}

gates! {
    PodWebhook = "PodWebhook", openkruise true, kruise_rs true;
    KruiseDaemon = "KruiseDaemon", openkruise true, kruise_rs true;
    DaemonWatchingPod = "DaemonWatchingPod", openkruise true, kruise_rs true;
    CloneSetShortHash = "CloneSetShortHash", openkruise false, kruise_rs false;
    KruisePodReadinessGate = "KruisePodReadinessGate", openkruise false, kruise_rs false;
    PreDownloadImageForInPlaceUpdate = "PreDownloadImageForInPlaceUpdate", openkruise false, kruise_rs false;
    CloneSetPartitionRollback = "CloneSetPartitionRollback", openkruise false, kruise_rs false;
    // kruise-rs protects labelled objects by default (docs/feature-gates.md).
    ResourcesDeletionProtection = "ResourcesDeletionProtection", openkruise false, kruise_rs true;
    WorkloadSpread = "WorkloadSpread", openkruise true, kruise_rs true;
    PodUnavailableBudgetDeleteGate = "PodUnavailableBudgetDeleteGate", openkruise true, kruise_rs true;
    PodUnavailableBudgetUpdateGate = "PodUnavailableBudgetUpdateGate", openkruise false, kruise_rs false;
    TemplateNoDefaults = "TemplateNoDefaults", openkruise false, kruise_rs false;
    InPlaceUpdateEnvFromMetadata = "InPlaceUpdateEnvFromMetadata", openkruise true, kruise_rs true;
    StatefulSetAutoDeletePVC = "StatefulSetAutoDeletePVC", openkruise true, kruise_rs true;
    SidecarSetPatchPodMetadataDefaultsAllowed = "SidecarSetPatchPodMetadataDefaultsAllowed", openkruise false, kruise_rs false;
    SidecarTerminator = "SidecarTerminator", openkruise false, kruise_rs false;
    PodProbeMarkerGate = "PodProbeMarkerGate", openkruise true, kruise_rs true;
    PreDownloadImageForDaemonSetUpdate = "PreDownloadImageForDaemonSetUpdate", openkruise false, kruise_rs false;
    CloneSetEventHandlerOptimization = "CloneSetEventHandlerOptimization", openkruise false, kruise_rs false;
    PreparingUpdateAsUpdate = "PreparingUpdateAsUpdate", openkruise false, kruise_rs false;
    // kruise-rs ships image pre-pull on wherever its node agent runs (docs/image-pull.md).
    ImagePullJobGate = "ImagePullJobGate", openkruise false, kruise_rs true;
    // kruise-rs ships ResourceDistribution on (docs/resource-distribution.md).
    ResourceDistributionGate = "ResourceDistributionGate", openkruise false, kruise_rs true;
    DeletionProtectionForCRDCascadingGate = "DeletionProtectionForCRDCascadingGate", openkruise false, kruise_rs false;
    EnhancedLivenessProbe = "EnhancedLivenessProbe", openkruise false, kruise_rs false;
    RecreatePodWhenChangeVCTInCloneSetGate = "RecreatePodWhenChangeVCTInCloneSetGate", openkruise false, kruise_rs false;
    StatefulSetStartOrdinal = "StatefulSetStartOrdinal", openkruise false, kruise_rs false;
    PodIndexLabel = "PodIndexLabel", openkruise true, kruise_rs true;
    EnableExternalCerts = "EnableExternalCerts", openkruise false, kruise_rs false;
    StatefulSetAutoResizePVCGate = "StatefulSetAutoResizePVCGate", openkruise false, kruise_rs false;
    ForceDeleteTimeoutExpectationGate = "ForceDeleteTimeoutExpectationGate", openkruise false, kruise_rs false;
    InPlaceWorkloadVerticalScaling = "InPlaceWorkloadVerticalScaling", openkruise false, kruise_rs false;
    EnablePodProbeMarkerOnServerless = "EnablePodProbeMarkerOnServerless", openkruise false, kruise_rs false;
    EnableSortSidecarContainerByName = "EnableSortSidecarContainerByName", openkruise false, kruise_rs false;
    InPlacePodVerticalScaling = "InPlacePodVerticalScaling", openkruise false, kruise_rs false;
    DefaultHostNetworkHostPortsInPodTemplates = "DefaultHostNetworkHostPortsInPodTemplates", openkruise false, kruise_rs false;
    DaemonSetPruneIneligibleNodes = "DaemonSetPruneIneligibleNodes", openkruise false, kruise_rs false;
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Gate {
    type Err = GateError;

    fn from_str(name: &str) -> Result<Gate, GateError> {
        Gate::ALL
            .iter()
            .copied()
            .find(|g| g.name() == name)
            .ok_or_else(|| GateError::Unknown(name.to_string()))
    }
}

/// A `--feature-gates` value that cannot be applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GateError {
    /// Kubernetes' `featuregate` wording.
    #[error("unrecognized feature gate: {0}")]
    Unknown(String),
    /// An entry without `=` (`MapStringBool` wording).
    #[error("malformed pair, expect string=bool: {0:?}")]
    Malformed(String),
    /// A value `strconv.ParseBool` refuses.
    #[error("invalid value of {0}={1}, err: strconv.ParseBool: parsing {q}: invalid syntax", q = crate::go::quote(.1))]
    NotBool(String, String),
}

/// Every gate's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureGates([bool; Gate::ALL.len()]);

impl Default for FeatureGates {
    /// kruise-rs' defaults.
    fn default() -> Self {
        let mut states = [false; Gate::ALL.len()];
        for (state, gate) in states.iter_mut().zip(Gate::ALL) {
            *state = gate.default_enabled();
        }
        FeatureGates(states)
    }
}

/// `strconv.ParseBool`.
fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

impl FeatureGates {
    /// Whether `gate` is on.
    pub fn enabled(&self, gate: Gate) -> bool {
        self.0[gate as usize]
    }

    /// Turns `gate` on or off (without applying OpenKruise's dependencies; see [`Self::resolved`]).
    pub fn set(&mut self, gate: Gate, on: bool) {
        self.0[gate as usize] = on;
    }

    /// The gates with `spec` applied: `Name=bool` pairs separated by commas, whitespace around
    /// names and values ignored, empty entries skipped; an unknown name or a value that is not a
    /// Go boolean is an error and nothing is applied.
    pub fn parse(spec: &str) -> Result<FeatureGates, GateError> {
        let mut gates = FeatureGates::default();
        gates.apply(spec)?;
        Ok(gates)
    }

    /// Applies `spec` (see [`Self::parse`]) on top of the current states, then OpenKruise's
    /// dependencies between gates.
    pub fn apply(&mut self, spec: &str) -> Result<(), GateError> {
        let mut next = *self;
        for entry in spec.split(',').filter(|e| !e.is_empty()) {
            let (name, value) = entry
                .split_once('=')
                .ok_or_else(|| GateError::Malformed(entry.to_string()))?;
            let (name, value) = (name.trim(), value.trim());
            let on =
                parse_bool(value).ok_or_else(|| GateError::NotBool(name.to_string(), value.to_string()))?;
            next.set(name.parse()?, on);
        }
        *self = next.resolved();
        Ok(())
    }

    /// OpenKruise's `SetDefaultFeatureGates`: gates that need a switched-off gate are switched off.
    pub fn resolved(mut self) -> FeatureGates {
        use Gate::*;
        if !self.enabled(PodWebhook) {
            for g in [
                KruisePodReadinessGate,
                PodUnavailableBudgetDeleteGate,
                PodUnavailableBudgetUpdateGate,
                WorkloadSpread,
                SidecarSetPatchPodMetadataDefaultsAllowed,
                EnhancedLivenessProbe,
                EnablePodProbeMarkerOnServerless,
            ] {
                self.set(g, false);
            }
        }
        if !self.enabled(KruiseDaemon) {
            for g in [
                PreDownloadImageForInPlaceUpdate,
                DaemonWatchingPod,
                InPlaceUpdateEnvFromMetadata,
                PreDownloadImageForDaemonSetUpdate,
                PodProbeMarkerGate,
                SidecarTerminator,
                ImagePullJobGate,
                EnhancedLivenessProbe,
            ] {
                self.set(g, false);
            }
        }
        if self.enabled(PreDownloadImageForInPlaceUpdate) || self.enabled(PreDownloadImageForDaemonSetUpdate)
        {
            self.set(ImagePullJobGate, true);
        }
        if !self.enabled(ResourcesDeletionProtection) {
            self.set(DeletionProtectionForCRDCascadingGate, false);
        }
        self
    }
}

#[cfg(test)]
#[path = "feature_gates_tests.rs"]
mod tests;
