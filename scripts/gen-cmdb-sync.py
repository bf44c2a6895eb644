#!/usr/bin/env python3
"""Generates workflows/cmdb-sync.blueprint.json: the CMDB experiment of the MCP Workflow
Engine paper in the blueprint format.

The blueprint copies the inventory of the `cluster` server (testkit cluster-sim, or any
server with the same five tools) into the knowledge graph of the `memory` server
(@modelcontextprotocol/server-memory). Both servers come from a servers file, e.g.
demo/servers.json; the blueprint brings none of its own.

Usage: python3 scripts/gen-cmdb-sync.py   (from the repository root; rewrites the file)
"""

import json
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "workflows" / "cmdb-sync.blueprint.json"

# The resource types, in the order `list_resource_types` returns them.
CLUSTER_KINDS = [
    # (plural, Kind, entity prefix)
    ("namespaces", "Namespace", "namespace"),
    ("nodes", "Node", "node"),
    ("persistentvolumes", "PersistentVolume", "persistentvolume"),
    ("storageclasses", "StorageClass", "storageclass"),
    ("clusterroles", "ClusterRole", "clusterrole"),
    ("customresourcedefinitions", "CustomResourceDefinition", "customresourcedefinition"),
]
NAMESPACED_KINDS = [
    ("pods", "Pod", "pod"),
    ("services", "Service", "service"),
    ("deployments", "Deployment", "deployment"),
    ("replicasets", "ReplicaSet", "replicaset"),
    ("statefulsets", "StatefulSet", "statefulset"),
    ("daemonsets", "DaemonSet", "daemonset"),
    ("jobs", "Job", "job"),
    ("cronjobs", "CronJob", "cronjob"),
    ("configmaps", "ConfigMap", "configmap"),
    ("secrets", "Secret", "secret"),
    ("serviceaccounts", "ServiceAccount", "serviceaccount"),
    ("ingresses", "Ingress", "ingress"),
    ("persistentvolumeclaims", "PersistentVolumeClaim", "persistentvolumeclaim"),
    ("roles", "Role", "role"),
    ("rolebindings", "RoleBinding", "rolebinding"),
    ("networkpolicies", "NetworkPolicy", "networkpolicy"),
]
SINGULAR = {plural: prefix for plural, _, prefix in CLUSTER_KINDS + NAMESPACED_KINDS}

# Observations per kind, besides uid / created / labels: (label, JMESPath over `obj`).
# Plain paths are strict (a missing key fails the step), so optional fields use `||`.
OBSERVATIONS = {
    "namespaces": [("phase", "obj.status.phase")],
    "nodes": [
        ("zone", 'obj.metadata.labels."topology.kubernetes.io/zone"'),
        ("instance-type", 'obj.metadata.labels."node.kubernetes.io/instance-type"'),
        ("cpu", "obj.status.capacity.cpu"),
        ("memory", "obj.status.capacity.memory"),
        ("internal-ip", "obj.status.addresses[?type == 'InternalIP'].address | [0]"),
        ("ready", "obj.status.conditions[?type == 'Ready'].status | [0]"),
        ("kubelet", "obj.status.nodeInfo.kubeletVersion"),
    ],
    "persistentvolumes": [
        ("capacity", "obj.spec.capacity.storage"),
        ("storage-class", "obj.spec.storageClassName || 'none'"),
        ("reclaim-policy", "obj.spec.persistentVolumeReclaimPolicy"),
        ("phase", "obj.status.phase"),
    ],
    "storageclasses": [
        ("provisioner", "obj.provisioner"),
        ("reclaim-policy", "obj.reclaimPolicy || 'Delete'"),
        ("default", "obj.metadata.annotations.\"storageclass.kubernetes.io/is-default-class\" || 'false'"),
    ],
    "clusterroles": [("rules", "length(obj.rules || `[]`)")],
    "customresourcedefinitions": [
        ("group", "obj.spec.group"),
        ("kind", "obj.spec.names.kind"),
        ("scope", "obj.spec.scope"),
    ],
    "pods": [
        ("phase", "obj.status.phase"),
        ("node", "obj.spec.nodeName || 'unscheduled'"),
        ("pod-ip", "obj.status.podIP || 'none'"),
        ("service-account", "obj.spec.serviceAccountName || 'default'"),
        ("images", "join(', ', obj.spec.containers[*].image)"),
    ],
    "services": [
        ("type", "obj.spec.type || 'ClusterIP'"),
        ("cluster-ip", "obj.spec.clusterIP || 'none'"),
        ("ports", "join(', ', obj.spec.ports[*].to_string(port))"),
    ],
    "deployments": [
        ("replicas", "obj.spec.replicas"),
        ("ready-replicas", "obj.status.readyReplicas || `0`"),
        ("images", "join(', ', obj.spec.template.spec.containers[*].image)"),
    ],
    "replicasets": [
        ("replicas", "obj.spec.replicas"),
        ("ready-replicas", "obj.status.readyReplicas || `0`"),
    ],
    "statefulsets": [
        ("replicas", "obj.spec.replicas"),
        ("service-name", "obj.spec.serviceName"),
        ("images", "join(', ', obj.spec.template.spec.containers[*].image)"),
    ],
    "daemonsets": [
        ("desired", "obj.status.desiredNumberScheduled"),
        ("ready", "obj.status.numberReady || `0`"),
        ("images", "join(', ', obj.spec.template.spec.containers[*].image)"),
    ],
    "jobs": [
        ("succeeded", "obj.status.succeeded || `0`"),
        ("completed", "obj.status.completionTime || 'no'"),
    ],
    "cronjobs": [
        ("schedule", "obj.spec.schedule"),
        ("last-schedule", "obj.status.lastScheduleTime || 'never'"),
    ],
    "configmaps": [("keys", "join(', ', keys(obj.data || `{}`))")],
    "secrets": [("type", "obj.type || 'Opaque'")],
    "serviceaccounts": [],
    "ingresses": [
        ("class", "obj.spec.ingressClassName || 'default'"),
        ("hosts", "join(', ', obj.spec.rules[*].host)"),
        ("address", "obj.status.loadBalancer.ingress[0].ip || 'pending'"),
    ],
    "persistentvolumeclaims": [
        ("storage", "obj.spec.resources.requests.storage"),
        ("storage-class", "obj.spec.storageClassName || 'none'"),
        ("volume", "obj.spec.volumeName || 'unbound'"),
        ("phase", "obj.status.phase"),
    ],
    "roles": [("rules", "length(obj.rules || `[]`)")],
    "rolebindings": [
        ("role-ref", "join('/', [obj.roleRef.kind, obj.roleRef.name])"),
        ("subjects", "length(obj.subjects || `[]`)"),
    ],
    "networkpolicies": [("policy-types", "join(', ', obj.spec.policyTypes || `[]`)")],
}

# The lists read page by page, and the page size: `list_resources` with `limit` returns that many
# objects and `metadata.continue`, the token of the next page (absent on the last page). These are
# the lists longer than a page in cluster-sim's default inventory: the pods of a namespace (up to
# 30, in kube-system; they grow with the cluster's `scale`) and the cluster roles (45). Every other
# list holds at most 20 objects (7 per namespace) and is read in one call.
PAGED = {"pods", "clusterroles"}
PAGE_SIZE = 25
# An until loop's bound: PAGES_MAX pages of PAGE_SIZE is far more than any list here holds.
PAGES_MAX = 1000

RETRY = {"attempts": 3, "delay_ms": 200, "backoff": "exponential"}


def t(expr):
    return "{{ " + expr + " }}"


def tool(id_, server, tool_name, args=None, name=None, after=None, note=None):
    step = {"id": id_}
    if name:
        step["name"] = name
    step["kind"] = "tool"
    if after is not None:
        step["after"] = after
    step["server"] = server
    step["tool"] = tool_name
    if args is not None:
        step["args"] = args
    if note:
        step["note"] = note
    return step


def loop(id_, for_each, as_, steps, name=None, after=None, concurrency=None, collect=None, note=None):
    step = {"id": id_}
    if name:
        step["name"] = name
    step["kind"] = "loop"
    if after is not None:
        step["after"] = after
    step["for_each"] = for_each
    step["as"] = as_
    if concurrency:
        step["concurrency"] = concurrency
    step["steps"] = steps
    if collect is not None:
        step["collect"] = collect
    if note:
        step["note"] = note
    return step


def until_loop(id_, until, steps, max_iterations, name=None, after=None, note=None):
    step = {"id": id_}
    if name:
        step["name"] = name
    step["kind"] = "loop"
    if after is not None:
        step["after"] = after
    step["until"] = until
    step["max_iterations"] = max_iterations
    step["steps"] = steps
    if note:
        step["note"] = note
    return step


def transform(id_, value, name=None, after=None, note=None):
    step = {"id": id_}
    if name:
        step["name"] = name
    step["kind"] = "transform"
    if after is not None:
        step["after"] = after
    step["value"] = value
    if note:
        step["note"] = note
    return step


def entity(plural, kind, namespaced):
    """One create_entities argument for the object in `obj`, as a literal with string templates."""
    prefix = SINGULAR[plural]
    name = f"{prefix}/{{{{ obj.metadata.namespace }}}}/{{{{ obj.metadata.name }}}}" if namespaced \
        else f"{prefix}/{{{{ obj.metadata.name }}}}"
    observations = [
        "uid: {{ obj.metadata.uid }}",
        "created: {{ obj.metadata.creationTimestamp }}",
        "labels: {{ obj.metadata.labels || `{}` }}",
    ] + [f"{label}: {t(expr)}" for label, expr in OBSERVATIONS[plural]]
    return {"entities": [{"name": name, "entityType": kind, "observations": observations}]}


PHASE1 = "Phase 1 (cluster-scoped objects)"
PHASE2 = "Phase 2 (namespace-scoped objects)"
PHASE3 = "Phase 3 (relationships)"

steps = []

# ---------------------------------------------------------------- phase 1
steps.append(tool("namespaces", "cluster", "list_namespaces", {}, name="List namespaces", after=[],
                  note=f"{PHASE1}: every namespace; phase 2 iterates over them."))
steps.append(tool("nodes", "cluster", "list_nodes", {}, name="List nodes", after=[],
                  note=f"{PHASE1}: every node."))
steps.append(tool("resource_types", "cluster", "list_resource_types", {}, name="List resource types", after=[],
                  note=f"{PHASE1}: what the cluster serves, to check this blueprint covers every type."))
synced = [p for p, _, _ in CLUSTER_KINDS + NAMESPACED_KINDS]
steps.append(transform(
    "kinds",
    {
        "cluster_scoped": t("resource_types.items[?!namespaced].plural"),
        "namespaced": t("resource_types.items[?namespaced].plural"),
        "not_synced": t(f"resource_types.items[?!contains(`{json.dumps(synced, separators=(',', ':'))}`, plural)].plural"),
    },
    name="Check the resource types",
    note=f"{PHASE1}: `not_synced` lists the types the server has and this blueprint does not copy (expected: none).",
))


def paged_list(list_id, args):
    """The body of an until loop reading one page per iteration (as workflows/paginate does): the first
    page without a token, each next one with the `metadata.continue` of the previous page (`last`)."""
    return tool(list_id, "cluster", "list_resources",
                {**args, "limit": PAGE_SIZE, "continue": t("last.metadata.continue || `null`")})


# The objects a cluster-scoped list step yields: its `items`, or every page's when paged.
CLUSTER_ITEMS = {p: f"{p}[*].items[]" if p in PAGED else f"{p}.items" for p, _, _ in CLUSTER_KINDS}
for plural, kind, _ in CLUSTER_KINDS[2:]:
    if plural in PAGED:
        list_id = f"list_{plural}"
        steps.append(until_loop(
            plural, t(f"{list_id}.metadata.continue == `null`"), [paged_list(list_id, {"kind": plural})],
            max_iterations=PAGES_MAX, name=f"List {plural}", after=[],
            note=f"{PHASE1}: every {kind}, {PAGE_SIZE} per page: one `list_resources` call per iteration, "
                 "each with the `metadata.continue` token of the page before (`last`), until a page has none. "
                 "The loop's output is the pages.",
        ))
    else:
        steps.append(tool(plural, "cluster", "list_resources", {"kind": plural}, name=f"List {plural}", after=[],
                          note=f"{PHASE1}: every {kind} in one call (a short list: no `limit`, no paging)."))
for plural, kind, _ in CLUSTER_KINDS:
    body_id = f"create_{SINGULAR[plural]}"
    steps.append(loop(
        f"upsert_{plural}", t(CLUSTER_ITEMS[plural]), "obj",
        [tool(body_id, "memory", "create_entities", entity(plural, kind, False))],
        name=f"Record {plural}", after=[plural], concurrency=4,
        collect=t(f"length({body_id}.entities)"),
        note=f"{PHASE1}: one create_entities call per {kind} (names `{SINGULAR[plural]}/<name>`); "
             "names that already exist are skipped by the memory server, so re-runs are idempotent.",
    ))

# ---------------------------------------------------------------- phase 2
for plural, kind, prefix in NAMESPACED_KINDS:
    list_id = f"list_{plural}"
    inner_id = f"upsert_{plural}"
    body_id = f"create_{prefix}"
    if plural in PAGED:
        pages_id = f"{SINGULAR[plural]}_pages"
        items = f"{pages_id}[*].items[]"
        body = [
            until_loop(pages_id, t(f"{list_id}.metadata.continue == `null`"),
                       [paged_list(list_id, {"kind": plural, "namespace": t("ns")})], max_iterations=PAGES_MAX),
        ]
        collect = {"namespace": t("ns"), "items": t(items), "pages": t(f"{pages_id}[*].length(items)")}
        listing = (f"reads the {kind} objects of each namespace (8 namespaces at a time) in pages of {PAGE_SIZE}, "
                   f"an until loop (`{pages_id}`) following `metadata.continue` from page to page,")
        collected = "`{namespace, items, pages}` (`pages`: the size of each page)"
    else:
        items = f"{list_id}.items"
        body = [tool(list_id, "cluster", "list_resources", {"kind": plural, "namespace": t("ns")})]
        collect = {"namespace": t("ns"), "items": t(items)}
        listing = (f"lists the {kind} objects of each namespace (8 namespaces at a time), one call each (a few "
                   "per namespace: no `limit`, no paging),")
        collected = "`{namespace, items}`"
    body.append(loop(inner_id, t(items), "obj",
                     [tool(body_id, "memory", "create_entities", entity(plural, kind, True))],
                     concurrency=4, collect=t(f"length({body_id}.entities)")))
    steps.append(loop(
        f"{plural}_by_ns", t("namespaces.items[*].metadata.name"), "ns", body,
        name=f"Sync {plural} per namespace", after=["namespaces"], concurrency=8,
        collect=collect,
        note=f"{PHASE2}: {listing} and records each one (`{prefix}/<namespace>/<name>`). Collects "
             f"{collected} per namespace for phase 3.",
    ))

# ---------------------------------------------------------------- phase 3


def ref(prefix, namespaced=True, name="metadata.name"):
    """A JMESPath expression (inside a projection) for the entity name of the current element."""
    if namespaced:
        return f"join('/', ['{prefix}', metadata.namespace, {name}])"
    return f"join('/', ['{prefix}', {name}])"


def rel(from_, to, rtype):
    return f"{{from: {from_}, to: {to}, relationType: '{rtype}'}}"


def per_namespace_relation(id_, source, relations, after, name, note, filter_=None):
    """A loop over the non-empty per-namespace groups of `source` with one create_relations call each.

    `relations` is a JMESPath expression over `group` yielding the relation array; `filter_` (a filter
    over one object) keeps only the namespaces where it matches something, so no call is empty."""
    cond = f"length(items[?{filter_}]) > `0`" if filter_ else "length(items) > `0`"
    body_id = f"link_{id_[4:]}"
    return loop(
        id_, t(f"{source}[?{cond}]"), "group",
        [tool(body_id, "memory", "create_relations", {"relations": t(relations)})],
        name=name, after=after, concurrency=4, collect=t(f"length({body_id}.relations)"),
        note=f"{PHASE3}: {note}",
    )


# every namespaced object in_namespace its namespace
for plural, kind, prefix in NAMESPACED_KINDS:
    steps.append(per_namespace_relation(
        f"rel_{plural}_in_namespace", f"{plural}_by_ns",
        f"group.items[*].{rel(ref(prefix), ref('namespace', False, 'metadata.namespace'), 'in_namespace')}",
        [f"{plural}_by_ns", "upsert_namespaces"],
        f"{kind} in_namespace Namespace",
        f"one create_relations call per namespace: every {kind} `in_namespace` its Namespace.",
    ))

owner = "metadata.ownerReferences[0]"
pod_owners = [("ReplicaSet", "replicaset"), ("StatefulSet", "statefulset"), ("DaemonSet", "daemonset"), ("Job", "job")]
steps.append(per_namespace_relation(
    "rel_pod_runs_on_node", "pods_by_ns",
    f"group.items[?spec.nodeName].{rel(ref('pod'), ref('node', False, 'spec.nodeName'), 'runs_on')}",
    ["pods_by_ns", "upsert_nodes"], "Pod runs_on Node",
    "`spec.nodeName` of every scheduled pod.", filter_="spec.nodeName",
))
steps.append(per_namespace_relation(
    "rel_pod_owned_by", "pods_by_ns",
    "[" + ", ".join(
        f"group.items[?{owner}.kind == '{k}'].{rel(ref('pod'), ref(p, True, owner + '.name'), 'owned_by')}"
        for k, p in pod_owners) + "][]",
    ["pods_by_ns", "replicasets_by_ns", "statefulsets_by_ns", "daemonsets_by_ns", "jobs_by_ns"],
    "Pod owned_by its controller",
    "the controller in `metadata.ownerReferences` (a ReplicaSet, StatefulSet, DaemonSet or Job); one filtered "
    "projection per owner kind, because JMESPath has no lower-case function to turn the Kind into an entity prefix.",
    filter_=owner,
))
pod_account = "spec.serviceAccountName || 'default'"
steps.append(per_namespace_relation(
    "rel_pod_uses_serviceaccount", "pods_by_ns",
    f"group.items[*].{rel(ref('pod'), ref('serviceaccount', True, pod_account), 'uses')}",
    ["pods_by_ns", "serviceaccounts_by_ns"], "Pod uses ServiceAccount",
    "`spec.serviceAccountName`, or the namespace's `default` account when the pod names none (as Kubernetes does).",
))
claim = "join('-', ['data', metadata.name])"
steps.append(per_namespace_relation(
    "rel_pod_mounts_pvc", "pods_by_ns",
    f"group.items[?{owner}.kind == 'StatefulSet'].{rel(ref('pod'), ref('persistentvolumeclaim', True, claim), 'mounts')}",
    ["pods_by_ns", "persistentvolumeclaims_by_ns"], "StatefulSet Pod mounts its PVC",
    "a StatefulSet pod's claim from the `data` volumeClaimTemplate is named `data-<pod>` (the StatefulSet controller's convention).",
    filter_=f"{owner}.kind == 'StatefulSet'",
))
steps.append(per_namespace_relation(
    "rel_replicaset_owned_by_deployment", "replicasets_by_ns",
    f"group.items[?{owner}.kind == 'Deployment'].{rel(ref('replicaset'), ref('deployment', True, owner + '.name'), 'owned_by')}",
    ["replicasets_by_ns", "deployments_by_ns"], "ReplicaSet owned_by Deployment",
    "`metadata.ownerReferences` of each ReplicaSet.", filter_=f"{owner}.kind == 'Deployment'",
))
steps.append(per_namespace_relation(
    "rel_job_owned_by_cronjob", "jobs_by_ns",
    f"group.items[?{owner}.kind == 'CronJob'].{rel(ref('job'), ref('cronjob', True, owner + '.name'), 'owned_by')}",
    ["jobs_by_ns", "cronjobs_by_ns"], "Job owned_by CronJob",
    "`metadata.ownerReferences` of each Job.", filter_=f"{owner}.kind == 'CronJob'",
))
for plural, prefix, kind in [("deployments", "deployment", "Deployment"),
                             ("statefulsets", "statefulset", "StatefulSet"),
                             ("daemonsets", "daemonset", "DaemonSet")]:
    steps.append(per_namespace_relation(
        f"rel_{prefix}_runs_as_serviceaccount", f"{plural}_by_ns",
        f"group.items[*].{{from: {ref(prefix)}, to: join('/', ['serviceaccount', metadata.namespace, "
        f"spec.template.spec.serviceAccountName || 'default']), relationType: 'runs_as'}}",
        [f"{plural}_by_ns", "serviceaccounts_by_ns"], f"{kind} runs_as ServiceAccount",
        f"the pod template's `serviceAccountName` of each {kind}.",
    ))
steps.append(per_namespace_relation(
    "rel_statefulset_governed_by_service", "statefulsets_by_ns",
    f"group.items[?spec.serviceName].{rel(ref('statefulset'), ref('service', True, 'spec.serviceName'), 'governed_by')}",
    ["statefulsets_by_ns", "services_by_ns"], "StatefulSet governed_by Service",
    "`spec.serviceName`, the headless Service that gives the pods their identity.", filter_="spec.serviceName",
))

# service selects pod: a cross join (each service x the pods its selector matches). JMESPath cannot read an
# outer value inside a projection, so the pairs are built by loops whose body is a transform.
steps.append(loop(
    "rel_service_selects_pod", t("services_by_ns[?length(items[?spec.selector.app]) > `0`]"), "group",
    [
        loop("each_service", t("group.items[?spec.selector.app]"), "svc", [
            tool("selected_pods", "cluster", "list_resources", {
                "kind": "pods",
                "namespace": t("svc.metadata.namespace"),
                "label_selector": "app={{ svc.spec.selector.app }}",
            }),
            loop("each_selected_pod", t("selected_pods.items[*].metadata.name"), "pod_name", [
                transform("selects_pair", {
                    "from": "service/{{ svc.metadata.namespace }}/{{ svc.metadata.name }}",
                    "to": "pod/{{ svc.metadata.namespace }}/{{ pod_name }}",
                    "relationType": "selects",
                }),
            ]),
        ], concurrency=2, collect=t("each_selected_pod")),
        tool("link_service_selects_pod", "memory", "create_relations", {"relations": t("each_service[]")}),
    ],
    name="Service selects Pod", after=["services_by_ns", "pods_by_ns"], concurrency=4,
    collect=t("length(link_service_selects_pod.relations)"),
    note=f"{PHASE3}: asks the cluster for the pods matching each Service's selector (`label_selector`, as the "
         "endpoints controller would), pairs them up in nested loops (JMESPath cannot read `svc` inside a "
         "projection), then one create_relations call per namespace.",
))
steps.append(loop(
    "rel_ingress_routes_to_service", t("ingresses_by_ns[?length(items) > `0`]"), "group",
    [
        loop("each_ingress", t("group.items"), "ing", [
            loop("each_backend", t("ing.spec.rules[].http.paths[].backend.service.name"), "backend", [
                transform("routes_pair", {
                    "from": "ingress/{{ ing.metadata.namespace }}/{{ ing.metadata.name }}",
                    "to": "service/{{ ing.metadata.namespace }}/{{ backend }}",
                    "relationType": "routes_to",
                }),
            ]),
        ]),
        tool("link_ingress_routes_to_service", "memory", "create_relations", {"relations": t("each_ingress[]")}),
    ],
    name="Ingress routes_to Service", after=["ingresses_by_ns", "services_by_ns"], concurrency=4,
    collect=t("length(link_ingress_routes_to_service.relations)"),
    note=f"{PHASE3}: every backend service of every rule and path (`spec.rules[].http.paths[].backend.service.name`); "
         "an ingress may have several, so the pairs come from nested loops.",
))
steps.append(per_namespace_relation(
    "rel_pvc_bound_to_pv", "persistentvolumeclaims_by_ns",
    f"group.items[?spec.volumeName].{rel(ref('persistentvolumeclaim'), ref('persistentvolume', False, 'spec.volumeName'), 'bound_to')}",
    ["persistentvolumeclaims_by_ns", "upsert_persistentvolumes"], "PVC bound_to PersistentVolume",
    "`spec.volumeName` of each bound claim.", filter_="spec.volumeName",
))
steps.append(per_namespace_relation(
    "rel_pvc_uses_storageclass", "persistentvolumeclaims_by_ns",
    f"group.items[?spec.storageClassName].{rel(ref('persistentvolumeclaim'), ref('storageclass', False, 'spec.storageClassName'), 'uses')}",
    ["persistentvolumeclaims_by_ns", "upsert_storageclasses"], "PVC uses StorageClass",
    "`spec.storageClassName` of each claim.", filter_="spec.storageClassName",
))
steps.append(tool(
    "rel_pv_uses_storageclass", "memory", "create_relations",
    {"relations": t(f"persistentvolumes.items[?spec.storageClassName].{rel(ref('persistentvolume', False), ref('storageclass', False, 'spec.storageClassName'), 'uses')}")},
    name="PersistentVolume uses StorageClass", after=["upsert_persistentvolumes", "upsert_storageclasses"],
    note=f"{PHASE3}: cluster-scoped, so one call for all volumes.",
))
steps.append(per_namespace_relation(
    "rel_rolebinding_binds_role", "rolebindings_by_ns",
    "[group.items[?roleRef.kind == 'Role']." + rel(ref('rolebinding'), ref('role', True, 'roleRef.name'), 'binds')
    + ", group.items[?roleRef.kind == 'ClusterRole']." + rel(ref('rolebinding'), ref('clusterrole', False, 'roleRef.name'), 'binds')
    + "][]",
    ["rolebindings_by_ns", "roles_by_ns", "upsert_clusterroles"], "RoleBinding binds Role / ClusterRole",
    "`roleRef`: a Role of the same namespace or a ClusterRole.", filter_="roleRef",
))
steps.append(loop(
    "rel_rolebinding_grants_serviceaccount",
    t("rolebindings_by_ns[?length(items[?subjects[?kind == 'ServiceAccount']]) > `0`]"), "group",
    [
        loop("each_binding", t("group.items[?subjects[?kind == 'ServiceAccount']]"), "binding", [
            loop("each_subject", t("binding.subjects[?kind == 'ServiceAccount']"), "subject", [
                transform("grants_pair", {
                    "from": "rolebinding/{{ binding.metadata.namespace }}/{{ binding.metadata.name }}",
                    "to": "serviceaccount/{{ subject.namespace || binding.metadata.namespace }}/{{ subject.name }}",
                    "relationType": "grants",
                }),
            ]),
        ]),
        tool("link_rolebinding_grants_serviceaccount", "memory", "create_relations",
             {"relations": t("each_binding[]")}),
    ],
    name="RoleBinding grants ServiceAccount", after=["rolebindings_by_ns", "serviceaccounts_by_ns"], concurrency=4,
    collect=t("length(link_rolebinding_grants_serviceaccount.relations)"),
    note=f"{PHASE3}: every ServiceAccount among a binding's `subjects` (nested loops, a binding may have several).",
))
for plural, prefix, kind, rtype in [("configmaps", "configmap", "ConfigMap", "configures"),
                                    ("secrets", "secret", "Secret", "credentials_for")]:
    steps.append(per_namespace_relation(
        f"rel_{prefix}_{rtype}_deployment", f"{plural}_by_ns",
        f"group.items[?metadata.labels.app].{rel(ref(prefix), ref('deployment', True, 'metadata.labels.app'), rtype)}",
        [f"{plural}_by_ns", "deployments_by_ns"], f"{kind} {rtype} Deployment",
        f"a {kind} labelled `app=<name>` belongs to the Deployment of that name (the system ones carry no `app` label).",
        filter_="metadata.labels.app",
    ))

# ---------------------------------------------------------------- read back
referenced = set()
for s in steps:
    referenced.update(s.get("after", []))
sinks = [s["id"] for s in steps if s["id"] not in referenced]
steps.append(tool("graph", "memory", "read_graph", {}, name="Read the graph", after=sinks,
                  note="After every entity and relation step: the whole knowledge graph as stored."))

entity_types = {kind: t(f"length(graph.entities[?entityType == '{kind}'])")
                for _, kind, _ in CLUSTER_KINDS + NAMESPACED_KINDS}
relation_types = ["in_namespace", "runs_on", "owned_by", "uses", "mounts", "runs_as", "governed_by", "selects",
                  "routes_to", "bound_to", "binds", "grants", "configures", "credentials_for"]
listed = ", ".join([CLUSTER_ITEMS[p] for p, _, _ in CLUSTER_KINDS]
                   + [f"{p}_by_ns[*].items[]" for p, _, _ in NAMESPACED_KINDS])
steps.append(transform(
    "summary",
    {
        "entities": t("length(graph.entities)"),
        "relations": t("length(graph.relations)"),
        "objects_listed": t(f"length([{listed}][])"),
        "namespaces": t("length(namespaces.items)"),
        "nodes": t("length(nodes.items)"),
        "entity_types": entity_types,
        "relation_types": {r: t(f"length(graph.relations[?relationType == '{r}'])") for r in relation_types},
        "kinds_not_synced": t("kinds.not_synced"),
        "pages": {
            **{p: t(f"length({p})") for p, _, _ in CLUSTER_KINDS if p in PAGED},
            **{p: t(f"length({p}_by_ns[*].pages[])") for p, _, _ in NAMESPACED_KINDS if p in PAGED},
        },
    },
    name="Count what was synced",
    note="Entities and relations in the graph, by type; `objects_listed` should equal `entities`, and "
         "`kinds_not_synced` should be empty; `pages`: the pages listed per paged kind.",
))

blueprint = {
    "$schema": "../schema/blueprint.schema.json",
    "blueprint": 1,
    "id": "cmdb-sync",
    "name": "Cluster CMDB sync",
    "description": (
        "The CMDB experiment of the MCP Workflow Engine paper: copy a Kubernetes cluster's whole inventory into a "
        "knowledge graph. Phase 1 lists the namespaces, nodes, resource types and the other cluster-scoped kinds "
        "and records each object as an entity (`node/<name>`, `namespace/<name>`, ...; entityType = the Kind; "
        "observations `key: value`). Phase 2 loops over the namespaces once per namespaced kind (16 loops, 8 "
        "namespaces at a time each), lists that kind and records each object (`pod/<namespace>/<name>`, ...). "
        "The lists longer than a page, a namespace's pods and the cluster roles, are read in pages of 25 "
        "(`limit`, then each page's `metadata.continue`; see workflows/paginate). "
        "Phase 3 links them: in_namespace, runs_on, owned_by, uses, mounts, runs_as, governed_by, selects, "
        "routes_to, bound_to, binds, grants, configures, credentials_for, one create_relations call per "
        "namespace and relation kind, each after the entities at both ends exist. The last steps read the graph "
        "back and count it. Needs the servers `cluster` (testkit cluster-sim) and `memory` "
        "(@modelcontextprotocol/server-memory, with max_concurrency 1: it rewrites its whole file on every call) "
        "from a servers file, e.g. demo/servers.json. Generated by scripts/gen-cmdb-sync.py."
    ),
    "on_error": "abort",
    "retry": RETRY,
    "limits": {"timeout_ms": 900000, "concurrency": 16},
    "steps": steps,
    "output": t("summary"),
}

assert len(steps) == 67, len(steps)
OUT.write_text(json.dumps(blueprint, indent=2, ensure_ascii=False) + "\n")
print(f"wrote {OUT} ({len(steps)} top-level steps)")
