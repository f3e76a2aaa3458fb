#!/usr/bin/env python3
"""Proves check_manifests.py catches what it claims to: copies DEPLOY_DIR to a temporary
directory, removes or breaks one field at a time there, and expects the checker to fail with
the message for that field. The real files are never written.

usage: mutate_manifests.py CHECKER DEPLOY_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile

import yaml

K = "kubernetes"
JOB = f"{K}/indexed-job/job.yaml"
POD = ("spec", "template", "spec")
JS_POD = ("spec", "replicatedJobs", 0, "template", "spec", "template", "spec")
MPI_POD = ("spec", "mpiReplicaSpecs", "Worker", "template", "spec")
LWS_POD = ("spec", "leaderWorkerTemplate", "workerTemplate", "spec")
TR_POD = ("spec", "template", "spec", "replicatedJobs", 0, "template", "spec", "template", "spec")
RDMA_POD = ("spec", "template", "spec", "containers", 0)


def at(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def delete(*path):
    return lambda doc: at(doc, path[:-1]).pop(path[-1])


def setto(value, *path):
    return lambda doc: at(doc, path[:-1]).__setitem__(path[-1], value)


def drop_env(name, *pod):
    def f(doc):
        c = at(doc, pod)["containers"][0]
        c["env"] = [e for e in c["env"] if e["name"] != name]
    return f


def drop_mount(mount_path, *pod):
    def f(doc):
        c = at(doc, pod)["containers"][0]
        c["volumeMounts"] = [m for m in c["volumeMounts"] if m["mountPath"] != mount_path]
    return f


def edit_launcher(old, new):
    def f(doc):
        c = doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
        c["command"] = [a.replace(old, new) for a in c["command"]]
    return f


def set_env(name, value, *pod):
    def f(doc):
        for e in at(doc, pod)["containers"][0]["env"]:
            if e["name"] == name:
                e["value"] = value
    return f


# (file under deploy/, document index, mutation, text the checker must print)
MUTATIONS = [
    (JOB, 0, delete("spec", "publishNotReadyAddresses"), "Service gshmem: publishNotReadyAddresses is not true"),
    (JOB, 0, delete("spec", "clusterIP"), "Service gshmem: clusterIP is not None (not headless)"),
    (JOB, 0, setto({"app": "other"}, "spec", "selector"), "selector {'app': 'other'} does not match the pod template labels"),
    (JOB, 1, delete("spec", "completionMode"), "Job gshmem: completionMode is None, not Indexed"),
    (JOB, 1, setto(1, "spec", "parallelism"), "parallelism 1 != completions 2"),
    (JOB, 1, setto("other", *POD, "subdomain"), "pod subdomain 'other' does not name a Service in the same file"),
    (JOB, 1, delete(*POD, "containers", 0, "resources", "limits", "hugepages-2Mi"), "container gshmem: no resources.limits['hugepages-2Mi']"),
    (JOB, 1, delete(*POD, "volumes", 0, "emptyDir", "medium"), "/dev/shm is not an emptyDir with medium Memory"),
    (JOB, 1, set_env("GSHMEM_NRANKS", "8", *POD), "GSHMEM_NRANKS=8 is not 2 pods x --ppn 8"),
    (f"{K}/jobset/jobset.yaml", 0, setto(2, "spec", "replicatedJobs", 0, "replicas"), "GSHMEM_NRANKS=16 is not 4 pods x --ppn 8"),
    (f"{K}/mpijob/mpijob.yaml", 0, setto(3, "spec", "mpiReplicaSpecs", "Worker", "replicas"), "mpirun -np 16 is not 3 workers x slotsPerWorker 8"),
    (JOB, 1, drop_env("JOB_COMPLETION_INDEX", *POD), "no env variable takes batch.kubernetes.io/job-completion-index"),
    (JOB, 1, set_env("GSHMEM_BOOTSTRAP_ROOT", "gshmem-1.gshmem:29600", *POD), "GSHMEM_BOOTSTRAP_ROOT=gshmem-1.gshmem:29600 is not pod 0's name gshmem-0.gshmem"),
    (JOB, 1, delete(*POD, "containers", 0, "volumeMounts", 2, "readOnly"), "Secret mount /etc/gshmem/secret is not readOnly: true"),
    (f"{K}/secret.yaml", 0, setto({"token": "x"}, "stringData"), "GSHMEM_BOOTSTRAP_SECRET_FILE=/etc/gshmem/secret/secret: the Secret has no key secret"),
    (f"{K}/jobset/jobset.yaml", 0, delete(*JS_POD, "containers", 0, "securityContext"), "securityContext.capabilities.add lacks IPC_LOCK"),
    (f"{K}/jobset/jobset.yaml", 0, drop_env("JOBSET_JOB_INDEX", *JS_POD), "no env variable takes jobset.sigs.k8s.io/job-index"),
    (f"{K}/jobset/jobset.yaml", 0, delete("spec", "network", "publishNotReadyAddresses"), "JobSet gshmem-js: spec.network.publishNotReadyAddresses is not true"),
    (f"{K}/mpijob/mpijob.yaml", 0, drop_mount("/dev/hugepages", *MPI_POD), "Worker: container gshmem: nothing mounted at /dev/hugepages"),
    (f"{K}/mpijob/mpijob.yaml", 0, edit_launcher("GSHMEM_BOOTSTRAP_SECRET_FILE=", "X="), "mpirun does not pass -x GSHMEM_BOOTSTRAP_SECRET_FILE="),
    (f"{K}/leaderworkerset/leaderworkerset.yaml", 0, set_env("GSHMEM_BOOTSTRAP_SECRET_FILE", "/tmp/secret", *LWS_POD), "GSHMEM_BOOTSTRAP_SECRET_FILE=/tmp/secret is not a file inside the Secret mount"),
    (f"{K}/leaderworkerset/leaderworkerset.yaml", 0, drop_env("GSHMEM_BOOTSTRAP_SECRET_FILE", *LWS_POD), "does not set GSHMEM_BOOTSTRAP_SECRET_FILE"),
    (f"{K}/trainjob/trainjob.yaml", 0, delete(*TR_POD, "containers", 0, "resources", "limits", "nvidia.com/gpu"), "container node: no resources.limits['nvidia.com/gpu']"),
    (f"{K}/trainjob/trainjob.yaml", 0, delete(*TR_POD, "volumes", 2), "mounts no Secret volume (the job secret)"),
    (f"{K}/rdma/shared-device/patch.yaml", 0, delete(*RDMA_POD, "resources", "limits", "rdma/rdma_shared_device_a"), "patch does not request rdma/rdma_shared_device_a"),
    (f"{K}/rdma/host-device/network.yaml", 0, setto('{"type": "macvlan"}', "spec", "config"), "CNI type 'macvlan', expected host-device"),
    (f"{K}/rdma/sriov/patch.yaml", 0, delete("spec", "template", "metadata", "annotations"), "k8s.v1.cni.cncf.io/networks does not name gshmem-sriov"),
    (f"{K}/rdma/sriov/patch.yaml", 0, delete(*RDMA_POD, "resources", "limits", "nvidia.com/sriov_rdma_vf"), "patch does not request the network's resource nvidia.com/sriov_rdma_vf"),
]


def run_checker(checker, deploy):
    r = subprocess.run([sys.executable, checker, deploy], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


def mutate_text(path, old, new):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert old in text, f"{path} lacks {old!r}"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace(old, new))


def main(checker, deploy):
    failures = 0
    with tempfile.TemporaryDirectory(prefix="gshmem-deploy-") as tmp:
        copy = os.path.join(tmp, "deploy")
        shutil.copytree(deploy, copy)
        rc, out = run_checker(checker, copy)
        if rc != 0:
            print(f"FAIL the unmodified copy does not pass:\n{out}")
            return 1
        cases = [(f, lambda p, i=i, m=m: mutate_doc(p, i, m), want) for f, i, m, want in MUTATIONS]
        cases.append(("slurm/gshmem.sbatch", lambda p: mutate_text(p, "--mpi=pmix", ""),
                      "srun without --mpi=pmix"))
        cases.append((f"{K}/indexed-job/job.yaml", lambda p: mutate_text(p, "clusterIP: None", "clusterIP: [None"),
                      "not valid YAML"))
        for rel, mutate, want in cases:
            work = os.path.join(tmp, "work")
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(deploy, work)
            mutate(os.path.join(work, rel))
            rc, out = run_checker(checker, work)
            if rc != 1 or want not in out:
                failures += 1
                print(f"FAIL {rel}: expected exit 1 and {want!r}; got exit {rc}:\n{out}")
            else:
                print(f"ok   {rel}: {want}")
    print(f"mutate_manifests: {len(cases) - failures}/{len(cases)} mutations caught")
    return 1 if failures else 0


def mutate_doc(path, index, mutation):
    with open(path, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    mutation(docs[index])
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump_all(docs, f, sort_keys=False)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(next(ln for ln in __doc__.splitlines() if ln.startswith("usage:")), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
