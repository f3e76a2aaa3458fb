#!/usr/bin/env python3
"""Checks deploy/: every YAML document parses, and the fields the gshmem bootstrap relies on are
there (headless Service, Indexed Job, pod resources and volumes, job secret, rank sources, RDMA
variants, Slurm's --mpi=pmix). Every container of a pod template that runs PEs (Job, JobSet
and TrainingRuntime pods, MPIJob workers, LeaderWorkerSet pods) is held to the pod rules; the
MPIJob launcher only has to run mpirun with the GSHMEM_* variables.

usage: check_manifests.py DEPLOY_DIR [--no-kustomize]

Exits 0 when everything holds, 1 with one line per problem ("FILE: OBJECT: what is wrong").
With kubectl on PATH (and without --no-kustomize) each RDMA overlay is also rendered with
`kubectl kustomize` and the rendered Job is checked like the others.
"""
import os
import posixpath
import re
import shutil
import subprocess
import sys

import yaml

SECRET_ENV = "GSHMEM_BOOTSTRAP_SECRET_FILE"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
JOBSET_INDEX = "jobset.sigs.k8s.io/job-index"
RDMA_VARIANTS = {
    # directory under kubernetes/rdma: (resource the patch must request, CNI types of its
    # NetworkAttachmentDefinition; None: no network needed)
    "shared-device": ("rdma/rdma_shared_device_a", None),
    "host-device": (None, {"host-device"}),
    "sriov": (None, {"sriov", "ib-sriov"}),
}
REQUIRED_KINDS = ["Secret", "Service", "Job", "JobSet", "MPIJob", "LeaderWorkerSet",
                  "TrainingRuntime", "TrainJob"]


class Checker:
    def __init__(self, root):
        self.root = root
        self.errors = []
        self.secrets = {}  # name -> set of keys

    def error(self, where, text):
        self.errors.append(f"{where}: {text}")

    def rel(self, path):
        return os.path.relpath(path, os.path.dirname(os.path.abspath(self.root)))

    # ---- loading ----

    def load_tree(self):
        """Returns {path: [documents]} for every YAML file, and the set of kustomize patch files."""
        files, patches = {}, set()
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith((".yaml", ".yml")):
                    continue
                path = os.path.join(dirpath, name)
                try:
                    with open(path, encoding="utf-8") as f:
                        docs = [d for d in yaml.safe_load_all(f) if d is not None]
                except yaml.YAMLError as e:
                    self.error(self.rel(path), f"not valid YAML: {e}")
                    continue
                files[path] = docs
                for doc in docs:
                    if isinstance(doc, dict) and doc.get("kind") == "Kustomization":
                        for p in doc.get("patches") or []:
                            if isinstance(p, dict) and "path" in p:
                                patches.add(os.path.normpath(os.path.join(dirpath, p["path"])))
        return files, patches

    # ---- pod templates ----

    def check_pod(self, where, template, bootstrap, expect_root=None):
        """Checks every container of a pod template that runs gshmem PEs."""
        spec = get(template, "spec") or {}
        containers = spec.get("containers") or []
        if not containers:
            self.error(where, "pod template has no containers")
        volumes = {v.get("name"): v for v in spec.get("volumes") or [] if isinstance(v, dict)}
        for c in containers:
            cw = f"{where}: container {c.get('name')}"
            self.check_container(cw, c, volumes, bootstrap, expect_root)

    def check_container(self, cw, c, volumes, bootstrap, expect_root):
        limits = get(c, "resources", "limits") or {}
        for res in ("nvidia.com/gpu", "hugepages-2Mi", "memory"):
            if res not in limits:
                self.error(cw, f"no resources.limits['{res}']")
        requests = get(c, "resources", "requests") or {}
        if "hugepages-2Mi" in requests and requests["hugepages-2Mi"] != limits.get("hugepages-2Mi"):
            self.error(cw, "hugepages-2Mi requests differ from limits (Kubernetes requires them equal)")
        mounts = {m.get("mountPath"): m for m in c.get("volumeMounts") or [] if isinstance(m, dict)}
        self.check_emptydir(cw, mounts, volumes, "/dev/shm", ("Memory",))
        self.check_emptydir(cw, mounts, volumes, "/dev/hugepages", ("HugePages-2Mi", "HugePages"))
        caps = get(c, "securityContext", "capabilities", "add") or []
        if "IPC_LOCK" not in caps:
            self.error(cw, "securityContext.capabilities.add lacks IPC_LOCK")
        env = {e.get("name"): e for e in c.get("env") or [] if isinstance(e, dict)}
        self.check_secret(cw, env, mounts, volumes)
        mode = (env.get("GSHMEM_BOOTSTRAP") or {}).get("value")
        if mode is not None and mode not in bootstrap:
            self.error(cw, f"GSHMEM_BOOTSTRAP={mode}, expected one of {', '.join(sorted(bootstrap))}")
        root = (env.get("GSHMEM_BOOTSTRAP_ROOT") or {}).get("value")
        if root is not None and expect_root is not None:
            host = root.rsplit(":", 1)[0]
            if host != expect_root and not host.startswith(expect_root + "."):
                self.error(cw, f"GSHMEM_BOOTSTRAP_ROOT={root} is not pod 0's name {expect_root}")
            if not re.fullmatch(r"[^:]+:\d+", root):
                self.error(cw, f"GSHMEM_BOOTSTRAP_ROOT={root} is not host:port")

    def check_emptydir(self, cw, mounts, volumes, path, media):
        m = mounts.get(path)
        if m is None:
            self.error(cw, f"nothing mounted at {path}")
            return
        medium = get(volumes.get(m.get("name")), "emptyDir", "medium")
        if medium not in media:
            self.error(cw, f"{path} is not an emptyDir with medium {media[0]} (volume "
                           f"{m.get('name')}: medium {medium})")

    def check_secret(self, cw, env, mounts, volumes):
        secret_mounts = [m for m in mounts.values()
                         if get(volumes.get(m.get("name")), "secret") is not None]
        if not secret_mounts:
            self.error(cw, "mounts no Secret volume (the job secret)")
            return
        for m in secret_mounts:
            if m.get("readOnly") is not True:
                self.error(cw, f"Secret mount {m.get('mountPath')} is not readOnly: true")
            name = get(volumes[m.get("name")], "secret", "secretName")
            if name not in self.secrets:
                self.error(cw, f"Secret {name} is not defined under deploy/")
        value = (env.get(SECRET_ENV) or {}).get("value")
        if value is None:
            self.error(cw, f"does not set {SECRET_ENV}")
            return
        for m in secret_mounts:
            base = m.get("mountPath").rstrip("/")
            if posixpath.dirname(posixpath.normpath(value)) == base:
                key = posixpath.basename(value)
                vol = get(volumes[m.get("name")], "secret")
                keys = ({i.get("path") for i in vol["items"]} if vol.get("items")
                        else self.secrets.get(vol.get("secretName"), set()))
                if key not in keys:
                    self.error(cw, f"{SECRET_ENV}={value}: the Secret has no key {key}")
                return
        self.error(cw, f"{SECRET_ENV}={value} is not a file inside the Secret mount "
                       f"({', '.join(m.get('mountPath') for m in secret_mounts)})")

    # ---- workloads ----

    def check_job(self, where, job, services):
        spec = job.get("spec") or {}
        name = get(job, "metadata", "name")
        self.check_indexed(where, spec)
        template = spec.get("template") or {}
        sub = get(template, "spec", "subdomain")
        svc = services.get(sub)
        if svc is None:
            self.error(where, f"pod subdomain {sub!r} does not name a Service in the same file")
        else:
            labels = get(template, "metadata", "labels") or {}
            selector = get(svc, "spec", "selector") or {}
            if not selector or any(labels.get(k) != v for k, v in selector.items()):
                self.error(where, f"Service {sub} selector {selector} does not match the pod "
                                  f"template labels {labels}")
        self.check_env_from(where, template, COMPLETION_INDEX)
        self.check_pod(where, template, {"k8s", "auto"}, f"{name}-0.{sub}")
        self.check_nranks(where, template, spec.get("parallelism"))

    def check_indexed(self, where, spec):
        if spec.get("completionMode") != "Indexed":
            self.error(where, f"completionMode is {spec.get('completionMode')!r}, not Indexed")
        if spec.get("parallelism") != spec.get("completions"):
            self.error(where, f"parallelism {spec.get('parallelism')} != completions "
                              f"{spec.get('completions')}: every PE must run at once")

    def check_env_from(self, where, template, key):
        """Some container of the template reads `key` through the downward API."""
        for c in get(template, "spec", "containers") or []:
            for e in c.get("env") or []:
                path = get(e, "valueFrom", "fieldRef", "fieldPath") or ""
                if key in path:
                    return
        self.error(where, f"no env variable takes {key} through the downward API")

    def check_jobset(self, where, js):
        name = get(js, "metadata", "name")
        net = get(js, "spec", "network") or {}
        if net.get("publishNotReadyAddresses") is not True:
            self.error(where, "spec.network.publishNotReadyAddresses is not true")
        if net.get("enableDNSHostnames") is False:
            self.error(where, "spec.network.enableDNSHostnames is false: pods get no DNS names")
        sub = net.get("subdomain") or name
        rjobs = get(js, "spec", "replicatedJobs") or []
        if not rjobs:
            self.error(where, "no replicatedJobs")
        for rj in rjobs:
            rw = f"{where}: replicatedJob {rj.get('name')}"
            spec = get(rj, "template", "spec") or {}
            self.check_indexed(rw, spec)
            template = spec.get("template") or {}
            self.check_env_from(rw, template, JOBSET_INDEX)
            self.check_pod(rw, template, {"k8s", "auto"},
                           f"{name}-{rjobs[0].get('name')}-0-0.{sub}")
        nodes = sum((rj.get("replicas") or 1) * (get(rj, "template", "spec", "parallelism") or 1)
                    for rj in rjobs)
        for rj in rjobs:
            self.check_nranks(f"{where}: replicatedJob {rj.get('name')}",
                              get(rj, "template", "spec", "template") or {}, nodes)

    def check_nranks(self, where, template, nodes):
        """GSHMEM_NRANKS, where a manifest sets it, is nodes x gshmemrun's --ppn."""
        for c in get(template, "spec", "containers") or []:
            env = {e.get("name"): e.get("value") for e in c.get("env") or []}
            cmd = [str(a) for a in (c.get("command") or []) + (c.get("args") or [])]
            if "GSHMEM_NRANKS" not in env or "--ppn" not in cmd[:-1]:
                continue
            ppn = cmd[cmd.index("--ppn") + 1]
            if not (ppn.isdigit() and isinstance(nodes, int)
                    and str(env["GSHMEM_NRANKS"]) == str(nodes * int(ppn))):
                self.error(f"{where}: container {c.get('name')}",
                           f"GSHMEM_NRANKS={env['GSHMEM_NRANKS']} is not {nodes} pods x "
                           f"--ppn {ppn}")

    def check_mpijob(self, where, mj):
        specs = get(mj, "spec", "mpiReplicaSpecs") or {}
        worker, launcher = specs.get("Worker"), specs.get("Launcher")
        if worker is None or launcher is None:
            self.error(where, "needs both a Launcher and a Worker in mpiReplicaSpecs")
            return
        self.check_pod(f"{where}: Worker", worker.get("template") or {}, {"pmix"})
        cmd = " ".join(str(a) for c in get(launcher, "template", "spec", "containers") or []
                       for a in (c.get("command") or []) + (c.get("args") or []))
        if "mpirun" not in cmd:
            self.error(f"{where}: Launcher", "command does not run mpirun")
        np = re.search(r"(?:^|\s)-(?:np|n)\s+(\d+)", cmd)
        slots = get(mj, "spec", "slotsPerWorker") or 1
        if np and int(np.group(1)) != (worker.get("replicas") or 1) * slots:
            self.error(f"{where}: Launcher", f"mpirun -np {np.group(1)} is not "
                       f"{worker.get('replicas')} workers x slotsPerWorker {slots}")
        for var in ("GSHMEM_BOOTSTRAP=pmix", SECRET_ENV + "="):
            if f"-x {var}" not in cmd:
                self.error(f"{where}: Launcher", f"mpirun does not pass -x {var}... "
                                                 "(ssh-started PEs do not see the worker's env)")

    def check_lws(self, where, lws):
        tpl = get(lws, "spec", "leaderWorkerTemplate") or {}
        if not tpl.get("size"):
            self.error(where, "leaderWorkerTemplate.size is not set")
        if "workerTemplate" not in tpl:
            self.error(where, "leaderWorkerTemplate has no workerTemplate")
        for key in ("leaderTemplate", "workerTemplate"):
            if key in tpl:
                self.check_pod(f"{where}: {key}", tpl[key], {"k8s", "auto"})

    def check_runtime(self, where, rt):
        spec = get(rt, "spec", "template", "spec") or {}
        if get(spec, "network", "publishNotReadyAddresses") is not True:
            self.error(where, "template.spec.network.publishNotReadyAddresses is not true")
        rjobs = spec.get("replicatedJobs") or []
        if not rjobs:
            self.error(where, "no replicatedJobs")
        for rj in rjobs:
            rw = f"{where}: replicatedJob {rj.get('name')}"
            template = get(rj, "template", "spec", "template") or {}
            names = [c.get("name") for c in get(template, "spec", "containers") or []]
            if "node" not in names:
                self.error(rw, "no container named node (Trainer sets PET_* only there)")
            self.check_pod(rw, template, {"k8s", "auto"})

    # ---- RDMA and Slurm ----

    def check_rdma(self, files, patches):
        base = os.path.join(self.root, "kubernetes", "rdma")
        for variant, (resource, cni_types) in RDMA_VARIANTS.items():
            d = os.path.join(base, variant)
            where = self.rel(d)
            docs = [(p, doc) for p, ds in files.items() if os.path.dirname(p) == d for doc in ds]
            patch_docs = [doc for p, doc in docs if p in patches]
            if not patch_docs:
                self.error(where, "RDMA variant missing (no kustomize patch found)")
                continue
            nads = [doc for p, doc in docs if p not in patches
                    and isinstance(doc, dict) and doc.get("kind") == "NetworkAttachmentDefinition"]
            resources, networks = set(), set()
            for doc in patch_docs:
                for c in get(doc, "spec", "template", "spec", "containers") or []:
                    resources.update((get(c, "resources", "limits") or {}).keys())
                ann = get(doc, "spec", "template", "metadata", "annotations") or {}
                nets = ann.get("k8s.v1.cni.cncf.io/networks")
                if nets:
                    networks.update(n.strip().split("@")[0] for n in str(nets).split(","))
            if resource and resource not in resources:
                self.error(where, f"patch does not request {resource}")
            if cni_types is None:
                continue
            if not nads:
                self.error(where, "no NetworkAttachmentDefinition")
            for nad in nads:
                nw = f"{where}: NetworkAttachmentDefinition {get(nad, 'metadata', 'name')}"
                config = yaml.safe_load(get(nad, "spec", "config") or "{}") or {}
                if config.get("type") not in cni_types:
                    self.error(nw, f"CNI type {config.get('type')!r}, expected "
                                   f"{' or '.join(sorted(cni_types))}")
                if get(nad, "metadata", "name") not in networks:
                    self.error(where, f"patch annotation k8s.v1.cni.cncf.io/networks does not "
                                      f"name {get(nad, 'metadata', 'name')}")
                pool = (get(nad, "metadata", "annotations") or {}).get(
                    "k8s.v1.cni.cncf.io/resourceName")
                if not pool:
                    self.error(nw, "no k8s.v1.cni.cncf.io/resourceName annotation")
                elif pool not in resources:
                    self.error(where, f"patch does not request the network's resource {pool}")

    def render_overlays(self, services_from):
        kubectl = shutil.which("kubectl")
        if kubectl is None:
            print("note: kubectl not found; RDMA overlays checked as patches only")
            return
        for variant in RDMA_VARIANTS:
            d = os.path.join(self.root, "kubernetes", "rdma", variant)
            if not os.path.isdir(d):
                continue
            r = subprocess.run([kubectl, "kustomize", d], capture_output=True, text=True,
                               timeout=60)
            where = f"{self.rel(d)} (rendered)"
            if r.returncode != 0:
                self.error(where, f"kubectl kustomize failed: {r.stderr.strip()}")
                continue
            docs = [doc for doc in yaml.safe_load_all(r.stdout) if doc]
            services_from(where, docs)

    def check_slurm(self):
        d = os.path.join(self.root, "slurm")
        scripts = sorted(os.listdir(d)) if os.path.isdir(d) else []
        scripts = [s for s in scripts if s.endswith((".sbatch", ".sh"))]
        if not scripts:
            self.error(self.rel(d), "no Slurm batch script (*.sbatch)")
        for s in scripts:
            path = os.path.join(d, s)
            with open(path, encoding="utf-8") as f:
                lines = [ln.split("#", 1)[0] for ln in f]
            sruns = [ln for ln in lines if re.search(r"(^|\s)srun\s", ln)]
            if not sruns:
                self.error(self.rel(path), "never runs srun")
            for ln in sruns:
                if not re.search(r"--mpi[= ]pmix(\s|$)", ln):
                    self.error(self.rel(path), f"srun without --mpi=pmix: {ln.strip()}")

    # ---- driver ----

    def check_documents(self, where, docs):
        """Checks one file's (or one rendering's) documents."""
        services = {}
        for doc in docs:
            if not isinstance(doc, dict) or doc.get("kind") != "Service":
                continue
            spec = doc.get("spec") or {}
            name = get(doc, "metadata", "name")
            if spec.get("clusterIP") != "None":
                self.error(f"{where}: Service {name}", "clusterIP is not None (not headless)")
            if spec.get("publishNotReadyAddresses") is not True:
                self.error(f"{where}: Service {name}", "publishNotReadyAddresses is not true")
            services[name] = doc
        for doc in docs:
            if not isinstance(doc, dict):
                continue
            kind, name = doc.get("kind"), get(doc, "metadata", "name")
            ow = f"{where}: {kind} {name}"
            if kind == "Job":
                self.check_job(ow, doc, services)
            elif kind == "JobSet":
                self.check_jobset(ow, doc)
            elif kind == "MPIJob":
                self.check_mpijob(ow, doc)
            elif kind == "LeaderWorkerSet":
                self.check_lws(ow, doc)
            elif kind in ("TrainingRuntime", "ClusterTrainingRuntime"):
                self.check_runtime(ow, doc)

    def run(self, kustomize):
        files, patches = self.load_tree()
        manifests = {p: ds for p, ds in files.items() if p not in patches}
        all_docs = [d for ds in manifests.values() for d in ds if isinstance(d, dict)]
        for doc in all_docs:
            if doc.get("kind") == "Secret":
                keys = set((doc.get("data") or {}).keys()) | set((doc.get("stringData") or {}).keys())
                self.secrets[get(doc, "metadata", "name")] = keys
        kinds = {d.get("kind") for d in all_docs}
        for kind in REQUIRED_KINDS:
            if kind not in kinds:
                self.error(self.rel(self.root), f"no {kind} manifest")
        runtimes = {get(d, "metadata", "name") for d in all_docs
                    if d.get("kind") in ("TrainingRuntime", "ClusterTrainingRuntime")}
        for d in all_docs:
            if d.get("kind") == "TrainJob" and get(d, "spec", "runtimeRef", "name") not in runtimes:
                self.error(f"TrainJob {get(d, 'metadata', 'name')}",
                           f"runtimeRef {get(d, 'spec', 'runtimeRef', 'name')} is not defined here")
        for path, docs in manifests.items():
            self.check_documents(self.rel(path), docs)
        self.check_rdma(files, patches)
        if kustomize:
            self.render_overlays(self.check_documents)
        self.check_slurm()
        return len(files), sum(len(ds) for ds in files.values())


def get(obj, *keys):
    for k in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(k)
    return obj


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    if len(args) != 1 or not os.path.isdir(args[0]):
        print(next(ln for ln in __doc__.splitlines() if ln.startswith("usage:")), file=sys.stderr)
        return 2
    checker = Checker(os.path.normpath(args[0]))
    nfiles, ndocs = checker.run(kustomize="--no-kustomize" not in argv)
    for e in checker.errors:
        print(f"FAIL {e}")
    if checker.errors:
        print(f"check_manifests: {len(checker.errors)} problem(s) under {args[0]}")
        return 1
    print(f"check_manifests: ok ({ndocs} documents in {nfiles} YAML files)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
