//! Advanced StatefulSet end to end in the playground: the simulated API server (scheduler, kubelet,
//! garbage collector, volume binder) calls kruise-rs's webhooks, and kruise-rs's StatefulSet
//! controller drives the pods and claims. One module per topic; `v1alpha1` runs the flows of
//! `ordering` and `update` with the set written as v1alpha1.

mod claims;
mod env;
mod kubectl;
mod ordering;
mod update;
mod v1alpha1;
