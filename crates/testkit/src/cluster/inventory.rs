//! The synthetic Kubernetes-like inventory behind cluster-sim: 22 resource types, generated from a fixed seed.
//!
//! Relations hold by construction: every pod runs on an existing node and is owned by a ReplicaSet
//! (owned by a Deployment), a StatefulSet, a DaemonSet or a Job (owned by a CronJob); every Service
//! selects the pods of one workload through the `app` label; every PersistentVolumeClaim is bound to a
//! PersistentVolume that points back at it.

use serde_json::{Map, Value, json};

use super::rng::{Rng, suffix, uid};
use crate::ClusterConfig;

const SEED: u64 = 0x6d63_7066_6c6f_7731;
const CREATED: &str = "2024-05-01T12:00:00Z";
const ZONES: [&str; 3] = ["eu-west-1a", "eu-west-1b", "eu-west-1c"];

/// One kind of object the simulator serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ResourceType {
    pub(crate) kind: &'static str,
    pub(crate) plural: &'static str,
    pub(crate) api_version: &'static str,
    pub(crate) namespaced: bool,
}

const fn rt(kind: &'static str, plural: &'static str, api_version: &'static str, namespaced: bool) -> ResourceType {
    ResourceType { kind, plural, api_version, namespaced }
}

/// Every resource type, cluster-scoped first; `list_resource_types` returns them in this order.
pub(crate) const TYPES: [ResourceType; 22] = [
    rt("Namespace", "namespaces", "v1", false),
    rt("Node", "nodes", "v1", false),
    rt("PersistentVolume", "persistentvolumes", "v1", false),
    rt("StorageClass", "storageclasses", "storage.k8s.io/v1", false),
    rt("ClusterRole", "clusterroles", "rbac.authorization.k8s.io/v1", false),
    rt("CustomResourceDefinition", "customresourcedefinitions", "apiextensions.k8s.io/v1", false),
    rt("Pod", "pods", "v1", true),
    rt("Service", "services", "v1", true),
    rt("Deployment", "deployments", "apps/v1", true),
    rt("ReplicaSet", "replicasets", "apps/v1", true),
    rt("StatefulSet", "statefulsets", "apps/v1", true),
    rt("DaemonSet", "daemonsets", "apps/v1", true),
    rt("Job", "jobs", "batch/v1", true),
    rt("CronJob", "cronjobs", "batch/v1", true),
    rt("ConfigMap", "configmaps", "v1", true),
    rt("Secret", "secrets", "v1", true),
    rt("ServiceAccount", "serviceaccounts", "v1", true),
    rt("Ingress", "ingresses", "networking.k8s.io/v1", true),
    rt("PersistentVolumeClaim", "persistentvolumeclaims", "v1", true),
    rt("Role", "roles", "rbac.authorization.k8s.io/v1", true),
    rt("RoleBinding", "rolebindings", "rbac.authorization.k8s.io/v1", true),
    rt("NetworkPolicy", "networkpolicies", "networking.k8s.io/v1", true),
];

/// Index into [`TYPES`] for a plural (`pods`), a singular (`pod`) or a kind (`Pod`), any case.
pub(crate) fn resolve_kind(name: &str) -> Option<usize> {
    let name = name.trim().to_ascii_lowercase();
    TYPES.iter().position(|t| {
        t.plural == name || t.kind.eq_ignore_ascii_case(&name) || t.plural.strip_suffix('s') == Some(name.as_str())
    })
}

fn type_index(plural: &str) -> usize {
    TYPES.iter().position(|t| t.plural == plural).unwrap_or_else(|| unreachable!("unknown plural {plural}"))
}

/// The generated objects, per type (parallel to [`TYPES`]), each list sorted by namespace then name.
#[derive(Debug)]
pub(crate) struct Inventory {
    objects: Vec<Vec<Value>>,
}

impl Inventory {
    pub(crate) fn generate(config: &ClusterConfig) -> Self {
        let mut b = Builder::new(config);
        b.cluster_scoped();
        for (index, ns) in namespace_names(config.namespaces).iter().enumerate() {
            b.namespace(index, ns);
        }
        let mut objects = b.out;
        for list in &mut objects {
            list.sort_by(|a, b| sort_key(a).cmp(&sort_key(b)));
        }
        Self { objects }
    }

    pub(crate) fn objects(&self, type_index: usize) -> &[Value] {
        self.objects.get(type_index).map(Vec::as_slice).unwrap_or_default()
    }

    pub(crate) fn total(&self) -> usize {
        self.objects.iter().map(Vec::len).sum()
    }
}

fn sort_key(object: &Value) -> (&str, &str) {
    let meta = &object["metadata"];
    (meta["namespace"].as_str().unwrap_or(""), meta["name"].as_str().unwrap_or(""))
}

const SYSTEM_NAMESPACES: [&str; 8] = [
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "monitoring",
    "logging",
    "ingress-nginx",
    "cert-manager",
];

const TEAM_NAMESPACES: [&str; 30] = [
    "payments",
    "checkout",
    "catalog",
    "search",
    "inventory",
    "shipping",
    "billing",
    "accounts",
    "auth",
    "notifications",
    "recommendations",
    "reviews",
    "media",
    "analytics",
    "reporting",
    "data-pipeline",
    "ml-serving",
    "feature-store",
    "gateway",
    "web",
    "mobile-api",
    "partners",
    "support",
    "crm",
    "erp-sync",
    "batch",
    "staging",
    "qa",
    "sandbox",
    "tools",
];

fn namespace_names(count: usize) -> Vec<String> {
    SYSTEM_NAMESPACES
        .iter()
        .chain(TEAM_NAMESPACES.iter())
        .map(|s| (*s).to_owned())
        .chain((SYSTEM_NAMESPACES.len() + TEAM_NAMESPACES.len() + 1..).map(|i| format!("team-{i:02}")))
        .take(count)
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WorkloadKind {
    Deployment,
    StatefulSet,
    DaemonSet,
}

#[derive(Debug, Clone)]
struct Workload {
    kind: WorkloadKind,
    name: String,
    replicas: usize,
    image: String,
    port: u16,
}

impl Workload {
    fn new(kind: WorkloadKind, name: &str, replicas: usize, image: &str, port: u16) -> Self {
        Self { kind, name: name.to_owned(), replicas, image: image.to_owned(), port }
    }
}

fn system_workloads(ns: &str) -> Vec<Workload> {
    use WorkloadKind::{DaemonSet, Deployment, StatefulSet};
    let w = Workload::new;
    match ns {
        "kube-system" => vec![
            w(Deployment, "coredns", 2, "registry.k8s.io/coredns/coredns:v1.11.1", 53),
            w(Deployment, "metrics-server", 1, "registry.k8s.io/metrics-server/metrics-server:v0.7.1", 10250),
            w(Deployment, "calico-kube-controllers", 1, "docker.io/calico/kube-controllers:v3.27.3", 9094),
            w(DaemonSet, "kube-proxy", 0, "registry.k8s.io/kube-proxy:v1.29.4", 10256),
            w(DaemonSet, "calico-node", 0, "docker.io/calico/node:v3.27.3", 9091),
        ],
        "monitoring" => vec![
            w(StatefulSet, "prometheus", 2, "quay.io/prometheus/prometheus:v2.51.2", 9090),
            w(StatefulSet, "alertmanager", 1, "quay.io/prometheus/alertmanager:v0.27.0", 9093),
            w(Deployment, "grafana", 1, "docker.io/grafana/grafana:10.4.2", 3000),
            w(
                Deployment,
                "kube-state-metrics",
                1,
                "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.12.0",
                8080,
            ),
            w(DaemonSet, "node-exporter", 0, "quay.io/prometheus/node-exporter:v1.8.0", 9100),
        ],
        "logging" => vec![
            w(DaemonSet, "fluent-bit", 0, "cr.fluentbit.io/fluent/fluent-bit:3.0.3", 2020),
            w(StatefulSet, "loki", 1, "docker.io/grafana/loki:3.0.0", 3100),
        ],
        "ingress-nginx" => {
            vec![w(Deployment, "ingress-nginx-controller", 2, "registry.k8s.io/ingress-nginx/controller:v1.10.1", 80)]
        }
        "cert-manager" => vec![
            w(Deployment, "cert-manager", 1, "quay.io/jetstack/cert-manager-controller:v1.14.5", 9402),
            w(Deployment, "cert-manager-webhook", 1, "quay.io/jetstack/cert-manager-webhook:v1.14.5", 10250),
            w(Deployment, "cert-manager-cainjector", 1, "quay.io/jetstack/cert-manager-cainjector:v1.14.5", 9402),
        ],
        _ => Vec::new(),
    }
}

const COMPONENTS: [&str; 18] = [
    "api",
    "web",
    "worker",
    "frontend",
    "backend",
    "scheduler",
    "indexer",
    "notifier",
    "exporter",
    "sync",
    "gateway",
    "renderer",
    "ingest",
    "cache",
    "admin",
    "events",
    "reports",
    "webhooks",
];
const DATASTORES: [(&str, &str, u16); 6] = [
    ("postgres", "docker.io/library/postgres:16.2", 5432),
    ("redis", "docker.io/library/redis:7.2.4", 6379),
    ("kafka", "docker.io/bitnami/kafka:3.7.0", 9092),
    ("rabbitmq", "docker.io/library/rabbitmq:3.13", 5672),
    ("elasticsearch", "docker.elastic.co/elasticsearch/elasticsearch:8.13.2", 9200),
    ("mongodb", "docker.io/library/mongo:7.0.8", 27017),
];
const CRON_JOBS: [(&str, &str); 4] =
    [("cleanup", "0 3 * * *"), ("report", "0 6 * * 1"), ("backup", "30 1 * * *"), ("sync", "*/30 * * * *")];

const CLUSTER_ROLES: [&str; 45] = [
    "admin",
    "cluster-admin",
    "edit",
    "view",
    "system:aggregate-to-admin",
    "system:aggregate-to-edit",
    "system:aggregate-to-view",
    "system:auth-delegator",
    "system:basic-user",
    "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
    "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
    "system:controller:attachdetach-controller",
    "system:controller:certificate-controller",
    "system:controller:clusterrole-aggregation-controller",
    "system:controller:cronjob-controller",
    "system:controller:daemon-set-controller",
    "system:controller:deployment-controller",
    "system:controller:disruption-controller",
    "system:controller:endpoint-controller",
    "system:controller:endpointslice-controller",
    "system:controller:job-controller",
    "system:controller:namespace-controller",
    "system:controller:node-controller",
    "system:controller:persistent-volume-binder",
    "system:controller:pod-garbage-collector",
    "system:controller:replicaset-controller",
    "system:controller:replication-controller",
    "system:controller:service-account-controller",
    "system:controller:statefulset-controller",
    "system:controller:ttl-controller",
    "system:coredns",
    "system:discovery",
    "system:kube-controller-manager",
    "system:kube-dns",
    "system:kube-scheduler",
    "system:node",
    "system:node-bootstrapper",
    "system:node-proxier",
    "system:public-info-viewer",
    "system:volume-scheduler",
    "calico-node",
    "cert-manager-controller-certificates",
    "ingress-nginx",
    "prometheus",
    "fluent-bit",
];

const CRDS: [(&str, &str, &str); 20] = [
    ("cert-manager.io", "Certificate", "certificates"),
    ("cert-manager.io", "CertificateRequest", "certificaterequests"),
    ("cert-manager.io", "Issuer", "issuers"),
    ("cert-manager.io", "ClusterIssuer", "clusterissuers"),
    ("acme.cert-manager.io", "Order", "orders"),
    ("acme.cert-manager.io", "Challenge", "challenges"),
    ("monitoring.coreos.com", "Prometheus", "prometheuses"),
    ("monitoring.coreos.com", "Alertmanager", "alertmanagers"),
    ("monitoring.coreos.com", "ServiceMonitor", "servicemonitors"),
    ("monitoring.coreos.com", "PodMonitor", "podmonitors"),
    ("monitoring.coreos.com", "PrometheusRule", "prometheusrules"),
    ("monitoring.coreos.com", "Probe", "probes"),
    ("crd.projectcalico.org", "IPPool", "ippools"),
    ("crd.projectcalico.org", "FelixConfiguration", "felixconfigurations"),
    ("crd.projectcalico.org", "BGPConfiguration", "bgpconfigurations"),
    ("crd.projectcalico.org", "GlobalNetworkPolicy", "globalnetworkpolicies"),
    ("crd.projectcalico.org", "IPAMBlock", "ipamblocks"),
    ("snapshot.storage.k8s.io", "VolumeSnapshot", "volumesnapshots"),
    ("snapshot.storage.k8s.io", "VolumeSnapshotClass", "volumesnapshotclasses"),
    ("snapshot.storage.k8s.io", "VolumeSnapshotContent", "volumesnapshotcontents"),
];

const STORAGE_CLASSES: [(&str, &str); 3] =
    [("standard", "ebs.csi.aws.com"), ("fast-ssd", "ebs.csi.aws.com"), ("local-path", "rancher.io/local-path")];

struct Builder<'a> {
    config: &'a ClusterConfig,
    nodes: Vec<String>,
    out: Vec<Vec<Value>>,
    /// Allocates service cluster IPs and pod IPs in generation order.
    next_ip: u32,
}

impl<'a> Builder<'a> {
    fn new(config: &'a ClusterConfig) -> Self {
        // Pods need somewhere to run, so there is always at least one node.
        let nodes = (1..=config.nodes.max(1)).map(|i| format!("node-{i:02}")).collect();
        Self { config, nodes, out: vec![Vec::new(); TYPES.len()], next_ip: 10 }
    }

    fn push(&mut self, plural: &str, object: Value) {
        self.out[type_index(plural)].push(object);
    }

    fn scaled(&self, base: usize) -> usize {
        // `scale` is a plain multiplier; negative or NaN scales produce nothing.
        let scaled = (base as f64 * self.config.scale).round();
        if scaled.is_finite() && scaled > 0.0 { scaled as usize } else { 0 }
    }

    /// The next `(third, fourth)` octets of an address.
    fn next_octets(&mut self) -> (u32, u32) {
        self.next_ip += 1;
        ((self.next_ip / 250) % 256, self.next_ip % 250 + 2)
    }

    fn ip(&mut self, prefix: &str) -> String {
        let (third, fourth) = self.next_octets();
        format!("{prefix}.{third}.{fourth}")
    }

    fn cluster_scoped(&mut self) {
        let mut rng = Rng::derive(SEED, "nodes");
        for (i, name) in self.nodes.clone().iter().enumerate() {
            let zone = ZONES[i % ZONES.len()];
            let instance = *rng.pick(&["m5.xlarge", "m5.2xlarge", "c5.2xlarge"]);
            let (cpu, memory) = match instance {
                "m5.xlarge" => ("4", "16Gi"),
                "m5.2xlarge" => ("8", "32Gi"),
                _ => ("8", "16Gi"),
            };
            let internal_ip = format!("10.0.{}.{}", i / 200, i % 200 + 10);
            let labels = json!({
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "topology.kubernetes.io/zone": zone,
                "node.kubernetes.io/instance-type": instance,
            });
            self.push(
                "nodes",
                json!({
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": metadata("nodes", None, name, labels, None),
                    "spec": {
                        "podCIDR": format!("10.244.{i}.0/24"),
                        "providerID": format!("aws:///{zone}/i-{}", suffix(name, 17)),
                    },
                    "status": {
                        "capacity": { "cpu": cpu, "memory": memory, "pods": "110" },
                        "allocatable": { "cpu": cpu, "memory": memory, "pods": "110" },
                        "conditions": [{ "type": "Ready", "status": "True", "reason": "KubeletReady" }],
                        "addresses": [
                            { "type": "InternalIP", "address": internal_ip },
                            { "type": "Hostname", "address": name },
                        ],
                        "nodeInfo": {
                            "kubeletVersion": "v1.29.4",
                            "containerRuntimeVersion": "containerd://1.7.15",
                            "osImage": "Ubuntu 22.04.4 LTS",
                            "operatingSystem": "linux",
                            "architecture": "amd64",
                        },
                    },
                }),
            );
        }
        for (i, (name, provisioner)) in STORAGE_CLASSES.iter().enumerate() {
            let mut meta = metadata("storageclasses", None, name, json!({}), None);
            if i == 0 {
                meta["annotations"] = json!({ "storageclass.kubernetes.io/is-default-class": "true" });
            }
            self.push(
                "storageclasses",
                json!({
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "StorageClass",
                    "metadata": meta,
                    "provisioner": provisioner,
                    "reclaimPolicy": "Delete",
                    "volumeBindingMode": "WaitForFirstConsumer",
                    "allowVolumeExpansion": true,
                }),
            );
        }
        for name in CLUSTER_ROLES {
            let rules = if name == "cluster-admin" {
                json!([{ "apiGroups": ["*"], "resources": ["*"], "verbs": ["*"] }])
            } else {
                json!([{ "apiGroups": [""], "resources": ["pods", "services", "configmaps"], "verbs": ["get", "list", "watch"] }])
            };
            let labels = if name.starts_with("system:") {
                json!({ "kubernetes.io/bootstrapping": "rbac-defaults" })
            } else {
                json!({})
            };
            self.push(
                "clusterroles",
                json!({
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "ClusterRole",
                    "metadata": metadata("clusterroles", None, name, labels, None),
                    "rules": rules,
                }),
            );
        }
        for (group, kind, plural) in CRDS {
            let name = format!("{plural}.{group}");
            self.push(
                "customresourcedefinitions",
                json!({
                    "apiVersion": "apiextensions.k8s.io/v1",
                    "kind": "CustomResourceDefinition",
                    "metadata": metadata("customresourcedefinitions", None, &name, json!({}), None),
                    "spec": {
                        "group": group,
                        "names": {
                            "kind": kind,
                            "listKind": format!("{kind}List"),
                            "plural": plural,
                            "singular": kind.to_ascii_lowercase(),
                        },
                        "scope": if kind.starts_with("Cluster") || kind.starts_with("Global") { "Cluster" } else { "Namespaced" },
                        "versions": [{ "name": "v1", "served": true, "storage": true }],
                    },
                    "status": {
                        "conditions": [{ "type": "Established", "status": "True" }],
                        "acceptedNames": { "kind": kind, "plural": plural },
                    },
                }),
            );
        }
    }

    fn namespace(&mut self, index: usize, ns: &str) {
        let team = index >= SYSTEM_NAMESPACES.len();
        let mut labels = json!({ "kubernetes.io/metadata.name": ns });
        if team {
            labels["team"] = json!(ns);
        }
        self.push(
            "namespaces",
            json!({
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": metadata("namespaces", None, ns, labels, None),
                "spec": { "finalizers": ["kubernetes"] },
                "status": { "phase": "Active" },
            }),
        );
        self.service_account(ns, "default");
        self.push(
            "configmaps",
            json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": metadata("configmaps", Some(ns), "kube-root-ca.crt", json!({}), None),
                "data": { "ca.crt": "-----BEGIN CERTIFICATE-----\n(synthetic)\n-----END CERTIFICATE-----\n" },
            }),
        );
        if team {
            self.team_namespace(ns);
        } else {
            let mut rng = Rng::derive(SEED, ns);
            for workload in system_workloads(ns) {
                self.service_account(ns, &workload.name);
                self.workload(&mut rng, ns, &workload, &workload.name);
            }
        }
    }

    fn team_namespace(&mut self, ns: &str) {
        let mut rng = Rng::derive(SEED, ns);
        let deployments = self.scaled(rng.range(2, 4));
        let start = rng.range(0, COMPONENTS.len() - 1);
        let mut names = Vec::new();
        for i in 0..deployments {
            let component = COMPONENTS[(start + i) % COMPONENTS.len()];
            let name = match i / COMPONENTS.len() {
                0 => component.to_owned(),
                round => format!("{component}-{}", round + 1),
            };
            let image = format!("registry.example.com/{ns}/{component}:1.{}.{}", rng.range(0, 9), rng.range(0, 20));
            let workload = Workload::new(WorkloadKind::Deployment, &name, rng.range(1, 3), &image, 8080);
            self.workload(&mut rng, ns, &workload, "deployer");
            if rng.chance(60) {
                self.push(
                    "configmaps",
                    json!({
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": metadata("configmaps", Some(ns), &format!("{name}-config"), json!({ "app": name }), None),
                        "data": { "LOG_LEVEL": "info", "PORT": "8080" },
                    }),
                );
            }
            if rng.chance(40) {
                self.push(
                    "secrets",
                    json!({
                        "apiVersion": "v1",
                        "kind": "Secret",
                        "metadata": metadata("secrets", Some(ns), &format!("{name}-credentials"), json!({ "app": name }), None),
                        "type": "Opaque",
                    }),
                );
            }
            names.push(name);
        }
        for _ in 0..self.scaled(usize::from(rng.chance(30))) {
            let (store, image, port) = *rng.pick(&DATASTORES);
            let workload = Workload::new(WorkloadKind::StatefulSet, store, rng.range(1, 3), image, port);
            self.workload(&mut rng, ns, &workload, "deployer");
        }
        for _ in 0..self.scaled(usize::from(rng.chance(35))) {
            let (name, schedule) = *rng.pick(&CRON_JOBS);
            self.cron_job(&mut rng, ns, name, schedule);
        }
        self.service_account(ns, "deployer");
        self.push(
            "roles",
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": metadata("roles", Some(ns), "developer", json!({}), None),
                "rules": [{ "apiGroups": ["", "apps"], "resources": ["pods", "deployments", "services"], "verbs": ["get", "list", "watch", "update"] }],
            }),
        );
        self.push(
            "rolebindings",
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": metadata("rolebindings", Some(ns), "developer", json!({}), None),
                "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "developer" },
                "subjects": [{ "kind": "ServiceAccount", "name": "deployer", "namespace": ns }],
            }),
        );
        if let Some(first) = names.first().filter(|_| rng.chance(50)) {
            let lb_ip = self.ip("203.0.113");
            self.push(
                "ingresses",
                json!({
                    "apiVersion": "networking.k8s.io/v1",
                    "kind": "Ingress",
                    "metadata": metadata("ingresses", Some(ns), first, json!({ "app": first }), None),
                    "spec": {
                        "ingressClassName": "nginx",
                        "rules": [{
                            "host": format!("{first}.{ns}.example.com"),
                            "http": { "paths": [{
                                "path": "/",
                                "pathType": "Prefix",
                                "backend": { "service": { "name": first, "port": { "number": 80 } } },
                            }] },
                        }],
                    },
                    "status": { "loadBalancer": { "ingress": [{ "ip": lb_ip }] } },
                }),
            );
        }
        if rng.chance(60) {
            self.push(
                "networkpolicies",
                json!({
                    "apiVersion": "networking.k8s.io/v1",
                    "kind": "NetworkPolicy",
                    "metadata": metadata("networkpolicies", Some(ns), "default-deny-ingress", json!({}), None),
                    "spec": { "podSelector": {}, "policyTypes": ["Ingress"] },
                }),
            );
        }
    }

    fn service_account(&mut self, ns: &str, name: &str) {
        self.push(
            "serviceaccounts",
            json!({
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": metadata("serviceaccounts", Some(ns), name, json!({}), None),
            }),
        );
    }

    /// The workload object, its pods (and ReplicaSets, claims, volumes) and, except for DaemonSets, its Service.
    fn workload(&mut self, rng: &mut Rng, ns: &str, w: &Workload, service_account: &str) {
        let labels = json!({ "app": w.name });
        let pod_spec = json!({
            "serviceAccountName": service_account,
            "containers": [container(&w.name, &w.image, w.port)],
        });
        let template = json!({ "metadata": { "labels": labels }, "spec": pod_spec });
        match w.kind {
            WorkloadKind::Deployment => {
                let hash = suffix(&format!("{ns}/{}/{}", w.name, w.image), 10);
                self.push(
                    "deployments",
                    json!({
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "metadata": metadata("deployments", Some(ns), &w.name, labels.clone(), None),
                        "spec": {
                            "replicas": w.replicas,
                            "selector": { "matchLabels": labels },
                            "strategy": { "type": "RollingUpdate" },
                            "template": template,
                        },
                        "status": {
                            "observedGeneration": 2,
                            "replicas": w.replicas,
                            "readyReplicas": w.replicas,
                            "availableReplicas": w.replicas,
                            "updatedReplicas": w.replicas,
                        },
                    }),
                );
                let deployment = owner("apps/v1", "Deployment", "deployments", ns, &w.name);
                let mut hashes = vec![(hash, w.replicas)];
                if rng.chance(50) {
                    hashes.push((suffix(&format!("{ns}/{}/previous", w.name), 10), 0));
                }
                for (hash, replicas) in hashes {
                    let rs_name = format!("{}-{hash}", w.name);
                    let rs_labels = json!({ "app": w.name, "pod-template-hash": hash });
                    self.push(
                        "replicasets",
                        json!({
                            "apiVersion": "apps/v1",
                            "kind": "ReplicaSet",
                            "metadata": metadata("replicasets", Some(ns), &rs_name, rs_labels.clone(), Some(deployment.clone())),
                            "spec": {
                                "replicas": replicas,
                                "selector": { "matchLabels": rs_labels },
                                "template": { "metadata": { "labels": rs_labels }, "spec": template["spec"] },
                            },
                            "status": { "replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas },
                        }),
                    );
                    let rs = owner("apps/v1", "ReplicaSet", "replicasets", ns, &rs_name);
                    for i in 0..replicas {
                        let pod_name = format!("{rs_name}-{}", suffix(&format!("{ns}/{rs_name}/{i}"), 5));
                        let node = rng.pick(&self.nodes).clone();
                        self.pod(ns, &pod_name, rs_labels.clone(), rs.clone(), &node, &template["spec"], "Running");
                    }
                }
                self.service(ns, &w.name, w.port, false);
            }
            WorkloadKind::StatefulSet => {
                let storage = *rng.pick(&["10Gi", "20Gi", "50Gi"]);
                let class = *rng.pick(&["standard", "fast-ssd"]);
                self.push(
                    "statefulsets",
                    json!({
                        "apiVersion": "apps/v1",
                        "kind": "StatefulSet",
                        "metadata": metadata("statefulsets", Some(ns), &w.name, labels.clone(), None),
                        "spec": {
                            "replicas": w.replicas,
                            "serviceName": w.name,
                            "selector": { "matchLabels": labels },
                            "template": template,
                            "volumeClaimTemplates": [{
                                "metadata": { "name": "data" },
                                "spec": {
                                    "accessModes": ["ReadWriteOnce"],
                                    "storageClassName": class,
                                    "resources": { "requests": { "storage": storage } },
                                },
                            }],
                        },
                        "status": { "replicas": w.replicas, "readyReplicas": w.replicas, "currentReplicas": w.replicas },
                    }),
                );
                let sts = owner("apps/v1", "StatefulSet", "statefulsets", ns, &w.name);
                for i in 0..w.replicas {
                    let pod_name = format!("{}-{i}", w.name);
                    let node = rng.pick(&self.nodes).clone();
                    self.pod(ns, &pod_name, labels.clone(), sts.clone(), &node, &template["spec"], "Running");
                    self.volume(ns, &format!("data-{pod_name}"), &labels, storage, class);
                }
                self.service(ns, &w.name, w.port, true);
            }
            WorkloadKind::DaemonSet => {
                let count = self.nodes.len();
                self.push(
                    "daemonsets",
                    json!({
                        "apiVersion": "apps/v1",
                        "kind": "DaemonSet",
                        "metadata": metadata("daemonsets", Some(ns), &w.name, labels.clone(), None),
                        "spec": { "selector": { "matchLabels": labels }, "template": template },
                        "status": {
                            "desiredNumberScheduled": count,
                            "currentNumberScheduled": count,
                            "numberReady": count,
                            "numberAvailable": count,
                        },
                    }),
                );
                let ds = owner("apps/v1", "DaemonSet", "daemonsets", ns, &w.name);
                for node in self.nodes.clone() {
                    let pod_name = format!("{}-{}", w.name, suffix(&format!("{ns}/{}/{node}", w.name), 5));
                    self.pod(ns, &pod_name, labels.clone(), ds.clone(), &node, &template["spec"], "Running");
                }
            }
        }
    }

    fn cron_job(&mut self, rng: &mut Rng, ns: &str, name: &str, schedule: &str) {
        let image = format!("registry.example.com/{ns}/{name}:1.0.{}", rng.range(0, 9));
        let labels = json!({ "app": name });
        let pod_spec = json!({ "restartPolicy": "OnFailure", "containers": [container(name, &image, 8080)] });
        self.push(
            "cronjobs",
            json!({
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "metadata": metadata("cronjobs", Some(ns), name, labels.clone(), None),
                "spec": {
                    "schedule": schedule,
                    "concurrencyPolicy": "Forbid",
                    "successfulJobsHistoryLimit": 2,
                    "jobTemplate": { "spec": { "template": { "metadata": { "labels": labels }, "spec": pod_spec } } },
                },
                "status": { "lastScheduleTime": "2024-05-01T11:30:00Z" },
            }),
        );
        let cron = owner("batch/v1", "CronJob", "cronjobs", ns, name);
        for run in 0..2 {
            let job_name = format!("{name}-{}", 28_577_000 + run * 30);
            self.push(
                "jobs",
                json!({
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "metadata": metadata("jobs", Some(ns), &job_name, labels.clone(), Some(cron.clone())),
                    "spec": { "completions": 1, "parallelism": 1, "backoffLimit": 6, "template": { "metadata": { "labels": labels }, "spec": pod_spec } },
                    "status": {
                        "succeeded": 1,
                        "startTime": CREATED,
                        "completionTime": CREATED,
                        "conditions": [{ "type": "Complete", "status": "True" }],
                    },
                }),
            );
            let job = owner("batch/v1", "Job", "jobs", ns, &job_name);
            let pod_name = format!("{job_name}-{}", suffix(&format!("{ns}/{job_name}"), 5));
            let node = rng.pick(&self.nodes).clone();
            self.pod(ns, &pod_name, labels.clone(), job, &node, &pod_spec, "Succeeded");
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn pod(&mut self, ns: &str, name: &str, labels: Value, owner: Value, node: &str, spec: &Value, phase: &str) {
        let mut spec = spec.clone();
        spec["nodeName"] = json!(node);
        let node_index = self.nodes.iter().position(|n| n == node).unwrap_or(0);
        let (_, host) = self.next_octets();
        let running = phase == "Running";
        let containers: Vec<Value> = spec["containers"]
            .as_array()
            .map(|cs| {
                cs.iter()
                    .map(|c| {
                        json!({
                            "name": c["name"],
                            "image": c["image"],
                            "ready": running,
                            "restartCount": 0,
                            "started": running,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        self.push(
            "pods",
            json!({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": metadata("pods", Some(ns), name, labels, Some(owner)),
                "spec": spec,
                "status": {
                    "phase": phase,
                    "hostIP": format!("10.0.{}.{}", node_index / 200, node_index % 200 + 10),
                    "podIP": format!("10.244.{node_index}.{host}"),
                    "startTime": CREATED,
                    "conditions": [{ "type": "Ready", "status": if running { "True" } else { "False" } }],
                    "containerStatuses": containers,
                },
            }),
        );
    }

    fn service(&mut self, ns: &str, name: &str, port: u16, headless: bool) {
        let cluster_ip = if headless { "None".to_owned() } else { self.ip("10.96") };
        self.push(
            "services",
            json!({
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": metadata("services", Some(ns), name, json!({ "app": name }), None),
                "spec": {
                    "type": "ClusterIP",
                    "clusterIP": cluster_ip,
                    "selector": { "app": name },
                    "ports": [{ "name": "http", "port": if headless { port } else { 80 }, "targetPort": port, "protocol": "TCP" }],
                },
                "status": { "loadBalancer": {} },
            }),
        );
    }

    /// A claim and the volume bound to it.
    fn volume(&mut self, ns: &str, claim: &str, labels: &Value, storage: &str, class: &str) {
        let claim_uid = uid(&format!("persistentvolumeclaims/{ns}/{claim}"));
        let pv_name = format!("pvc-{claim_uid}");
        self.push(
            "persistentvolumeclaims",
            json!({
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": metadata("persistentvolumeclaims", Some(ns), claim, labels.clone(), None),
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": { "requests": { "storage": storage } },
                    "storageClassName": class,
                    "volumeName": pv_name,
                },
                "status": { "phase": "Bound", "capacity": { "storage": storage } },
            }),
        );
        self.push(
            "persistentvolumes",
            json!({
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": metadata("persistentvolumes", None, &pv_name, json!({}), None),
                "spec": {
                    "capacity": { "storage": storage },
                    "accessModes": ["ReadWriteOnce"],
                    "persistentVolumeReclaimPolicy": "Delete",
                    "storageClassName": class,
                    "claimRef": { "kind": "PersistentVolumeClaim", "namespace": ns, "name": claim, "uid": claim_uid },
                    "csi": { "driver": "ebs.csi.aws.com", "volumeHandle": format!("vol-{}", suffix(&pv_name, 17)) },
                },
                "status": { "phase": "Bound" },
            }),
        );
    }
}

fn container(name: &str, image: &str, port: u16) -> Value {
    json!({
        "name": name,
        "image": image,
        "ports": [{ "containerPort": port, "protocol": "TCP" }],
        "resources": { "requests": { "cpu": "100m", "memory": "128Mi" }, "limits": { "memory": "256Mi" } },
    })
}

/// `metadata` of an object; the uid depends only on (plural, namespace, name), so owners can be referenced
/// before or after they are generated.
fn metadata(plural: &str, namespace: Option<&str>, name: &str, labels: Value, owner: Option<Value>) -> Value {
    let mut meta = Map::new();
    meta.insert("name".into(), json!(name));
    if let Some(ns) = namespace {
        meta.insert("namespace".into(), json!(ns));
    }
    meta.insert("uid".into(), json!(uid(&format!("{plural}/{}/{name}", namespace.unwrap_or_default()))));
    meta.insert("labels".into(), labels);
    if let Some(owner) = owner {
        meta.insert("ownerReferences".into(), json!([owner]));
    }
    meta.insert("creationTimestamp".into(), json!(CREATED));
    Value::Object(meta)
}

fn owner(api_version: &str, kind: &str, plural: &str, ns: &str, name: &str) -> Value {
    json!({
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": uid(&format!("{plural}/{ns}/{name}")),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn names(inventory: &Inventory, plural: &str) -> BTreeSet<String> {
        inventory
            .objects(type_index(plural))
            .iter()
            .map(|o| {
                format!(
                    "{}/{}",
                    o["metadata"]["namespace"].as_str().unwrap_or(""),
                    o["metadata"]["name"].as_str().unwrap()
                )
            })
            .collect()
    }

    #[test]
    fn kinds_resolve_from_plural_singular_and_kind() {
        assert_eq!(resolve_kind("pods"), resolve_kind("Pod"));
        assert_eq!(resolve_kind("pod"), resolve_kind("PODS"));
        assert_eq!(resolve_kind("PersistentVolume"), Some(2));
        assert_eq!(resolve_kind("networkpolicies"), Some(21));
        assert_eq!(resolve_kind("widgets"), None);
    }

    #[test]
    fn default_cluster_has_the_documented_shape() {
        let inventory = Inventory::generate(&ClusterConfig::default());
        assert_eq!(inventory.objects(0).len(), 38);
        assert_eq!(inventory.objects(1).len(), 13);
        assert!((1_100..=1_300).contains(&inventory.total()), "total {}", inventory.total());
        for (i, t) in TYPES.iter().enumerate() {
            assert!(!inventory.objects(i).is_empty(), "no {}", t.plural);
        }
    }

    #[test]
    fn names_are_unique_per_kind() {
        let inventory = Inventory::generate(&ClusterConfig::default());
        for (i, t) in TYPES.iter().enumerate() {
            assert_eq!(names(&inventory, t.plural).len(), inventory.objects(i).len(), "duplicate {}", t.plural);
        }
    }

    #[test]
    fn owners_exist_with_matching_uids() {
        let inventory = Inventory::generate(&ClusterConfig::default());
        let mut uids = BTreeSet::new();
        for i in 0..TYPES.len() {
            uids.extend(inventory.objects(i).iter().map(|o| o["metadata"]["uid"].as_str().unwrap().to_owned()));
        }
        for i in 0..TYPES.len() {
            for object in inventory.objects(i) {
                if let Some(owners) = object["metadata"]["ownerReferences"].as_array() {
                    for o in owners {
                        assert!(
                            uids.contains(o["uid"].as_str().unwrap()),
                            "dangling owner {o} of {}",
                            object["metadata"]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn claims_and_volumes_point_at_each_other() {
        let inventory = Inventory::generate(&ClusterConfig::default());
        let volumes = names(&inventory, "persistentvolumes");
        let claims = inventory.objects(type_index("persistentvolumeclaims"));
        assert_eq!(volumes.len(), claims.len());
        for claim in claims {
            assert!(volumes.contains(&format!("/{}", claim["spec"]["volumeName"].as_str().unwrap())));
        }
    }

    #[test]
    fn scale_multiplies_team_workloads() {
        let small = Inventory::generate(&ClusterConfig { scale: 0.5, ..ClusterConfig::default() });
        let large = Inventory::generate(&ClusterConfig { scale: 3.0, ..ClusterConfig::default() });
        let pods = type_index("pods");
        assert!(small.objects(pods).len() < large.objects(pods).len() / 3);
        assert!(large.total() > 2 * small.total());
    }

    #[test]
    fn more_namespaces_than_names_get_numbered() {
        let inventory = Inventory::generate(&ClusterConfig { namespaces: 45, nodes: 3, ..ClusterConfig::default() });
        let namespaces = names(&inventory, "namespaces");
        assert_eq!(namespaces.len(), 45);
        assert!(namespaces.contains("/team-45"));
    }
}
