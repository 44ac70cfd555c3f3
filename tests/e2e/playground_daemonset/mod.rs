//! Advanced DaemonSet end to end in the playground with the real kubectl (on PATH): the simulated
//! API server (nodes, scheduler, kubelet) calls kruise-rs's webhooks, and kruise-rs's DaemonSet
//! controller drives the pods. A watch on the pods checks every state the API server went through.

mod budget;
mod flows;
