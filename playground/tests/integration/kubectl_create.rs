//! `kubectl create <generator>` and `kubectl run` against a playground: kubectl's typed clients send
//! these bodies as protobuf (`application/vnd.kubernetes.protobuf`), which the playground decodes.
//! Expected outputs are kubectl's own ("<resource>.<group>/<name> created") and the objects its
//! generators build (`staging/src/k8s.io/kubectl/pkg/cmd/create`, `.../cmd/run`).

use crate::common;

use common::Kubectl;

#[tokio::test]
async fn create_generators_send_protobuf() {
    let pg = common::start().await;
    let kubectl = Kubectl::new(&pg);
    assert_eq!(
        kubectl.ok(&["create", "namespace", "t1"]).await,
        "namespace/t1 created\n"
    );
    assert_eq!(
        kubectl
            .ok(&["-n", "t1", "create", "configmap", "c1", "--from-literal=a=b"])
            .await,
        "configmap/c1 created\n"
    );
    assert_eq!(
        kubectl
            .ok(&[
                "-n",
                "t1",
                "create",
                "secret",
                "generic",
                "s1",
                "--from-literal=p=q"
            ])
            .await,
        "secret/s1 created\n"
    );
    assert_eq!(
        kubectl
            .ok(&["-n", "t1", "get", "configmap", "c1", "-o", "jsonpath={.data.a}"])
            .await,
        "b"
    );
    let secret = kubectl
        .ok(&[
            "-n",
            "t1",
            "get",
            "secret",
            "s1",
            "-o",
            "jsonpath={.data.p} {.type}",
        ])
        .await;
    assert_eq!(secret, "cQ== Opaque");
    pg.shutdown().await;
}

#[tokio::test]
async fn workload_generators_and_run() {
    let pg = common::start().await;
    let kubectl = Kubectl::new(&pg);
    let created = |what: &str| format!("{what} created\n");
    assert_eq!(
        kubectl
            .ok(&[
                "create",
                "deployment",
                "x",
                "--image=nginx",
                "--replicas=2",
                "--port=80"
            ])
            .await,
        created("deployment.apps/x")
    );
    let deployment = kubectl
        .ok(&[
            "get",
            "deployment",
            "x",
            "-o",
            "jsonpath={.spec.replicas} {.spec.selector.matchLabels.app} {.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].ports[0].containerPort}",
        ])
        .await;
    assert_eq!(deployment, "2 x nginx 80");
    assert_eq!(
        kubectl.ok(&["create", "job", "j", "--image=busybox"]).await,
        created("job.batch/j")
    );
    let job = kubectl
        .ok(&[
            "get",
            "job",
            "j",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image} {.spec.template.spec.restartPolicy} {.spec.selector.matchLabels}",
        ])
        .await;
    // The API server generated the selector on the Job's uid.
    assert!(
        job.starts_with(r#"busybox Never {"batch.kubernetes.io/controller-uid":"#),
        "{job}"
    );
    assert_eq!(
        kubectl
            .ok(&["run", "p", "--image=nginx", "--labels=tier=web"])
            .await,
        created("pod/p")
    );
    let pod = kubectl
        .ok(&[
            "get",
            "pod",
            "p",
            "-o",
            "jsonpath={.metadata.labels.tier} {.spec.containers[0].name} {.status.phase}",
        ])
        .await;
    assert_eq!(pod, "web p Pending");
    assert_eq!(
        kubectl
            .ok(&[
                "create",
                "cronjob",
                "cj",
                "--image=busybox",
                "--schedule=*/5 * * * *"
            ])
            .await,
        created("cronjob.batch/cj")
    );
    let cron = kubectl
        .ok(&[
            "get",
            "cronjob",
            "cj",
            "-o",
            "jsonpath={.spec.schedule} {.spec.jobTemplate.spec.template.spec.containers[0].image}",
        ])
        .await;
    assert_eq!(cron, "*/5 * * * * busybox");
    pg.shutdown().await;
}

#[tokio::test]
async fn service_rbac_quota_and_pdb_generators() {
    let pg = common::start().await;
    let kubectl = Kubectl::new(&pg);
    let created = |what: &str| format!("{what} created\n");
    let cases: [(&[&str], &str); 7] = [
        (
            &["create", "service", "clusterip", "svc", "--tcp=80:8080"],
            "service/svc",
        ),
        (
            &["create", "role", "r", "--verb=get,list", "--resource=pods"],
            "role.rbac.authorization.k8s.io/r",
        ),
        (
            &["create", "rolebinding", "rb", "--role=r", "--user=u"],
            "rolebinding.rbac.authorization.k8s.io/rb",
        ),
        (
            &["create", "clusterrole", "cr", "--verb=get", "--resource=nodes"],
            "clusterrole.rbac.authorization.k8s.io/cr",
        ),
        (
            &[
                "create",
                "clusterrolebinding",
                "crb",
                "--clusterrole=cr",
                "--serviceaccount=default:sa",
            ],
            "clusterrolebinding.rbac.authorization.k8s.io/crb",
        ),
        (
            &["create", "quota", "q", "--hard=pods=10,cpu=2"],
            "resourcequota/q",
        ),
        (
            &[
                "create",
                "pdb",
                "budget",
                "--selector=app=x",
                "--min-available=50%",
            ],
            "poddisruptionbudget.policy/budget",
        ),
    ];
    for (args, what) in cases {
        assert_eq!(kubectl.ok(args).await, created(what), "{args:?}");
    }
    let get = |args: &'static [&'static str]| kubectl.ok(args);
    assert_eq!(
        get(&[
            "get",
            "service",
            "svc",
            "-o",
            "jsonpath={.spec.ports[0].port} {.spec.ports[0].targetPort} {.spec.selector.app}"
        ])
        .await,
        "80 8080 svc"
    );
    assert_eq!(
        get(&[
            "get",
            "role",
            "r",
            "-o",
            "jsonpath={.rules[0].verbs} {.rules[0].resources}"
        ])
        .await,
        r#"["get","list"] ["pods"]"#
    );
    assert_eq!(
        get(&[
            "get",
            "clusterrolebinding",
            "crb",
            "-o",
            "jsonpath={.roleRef.name} {.subjects[0].kind} {.subjects[0].namespace}"
        ])
        .await,
        "cr ServiceAccount default"
    );
    assert_eq!(
        get(&[
            "get",
            "quota",
            "q",
            "-o",
            "jsonpath={.spec.hard.pods} {.spec.hard.cpu}"
        ])
        .await,
        "10 2"
    );
    assert_eq!(
        get(&[
            "get",
            "pdb",
            "budget",
            "-o",
            "jsonpath={.spec.minAvailable} {.spec.selector.matchLabels.app}"
        ])
        .await,
        "50% x"
    );
    pg.shutdown().await;
}
