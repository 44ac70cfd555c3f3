# Sourced by the playground benchmarks (cloneset_rss.sh, fifty_k.sh, heap_profile.sh): the CloneSets they
# create and how many of their pods are ready.

# cloneset_yaml NAMESPACE FIRST LAST REPLICAS: CloneSets app-FIRST … app-LAST of REPLICAS nginx pods.
cloneset_yaml() {
  for i in $(seq "$2" "$3"); do
    cat <<EOF
---
apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata: {name: app-$i, namespace: $1}
spec:
  replicas: $4
  selector: {matchLabels: {app: app-$i}}
  template:
    metadata: {labels: {app: app-$i}}
    spec: {containers: [{name: main, image: "nginx:1.27"}]}
  updateStrategy: {rollingUpdate: {podUpdatePolicy: InPlaceIfPossible}}
EOF
  done
}

# ready_pods NAMESPACE: the ready pods of the namespace's CloneSets.
ready_pods() {
  kubectl get clonesets -n "$1" -o jsonpath='{range .items[*]}{.status.readyReplicas}{"\n"}{end}' |
    awk '{s += $1} END {print s + 0}'
}
