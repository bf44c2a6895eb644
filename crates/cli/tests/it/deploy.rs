//! The Kubernetes manifests in `deploy/` are valid: each passes `kubernetes-validate`
//! (strict: an unknown field is an error; the schemas ship inside the package, so no
//! network is used) against the oldest and newest Kubernetes we claim, and
//! `deploy/kustomization.yaml` lists every one of them.

use crate::{repo, venv_python};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Kubernetes versions the manifests must be valid for (deploy/README.md says so).
const KUBERNETES: &[&str] = &["1.29.0", "1.37.0"];

#[test]
fn every_manifest_in_deploy_passes_the_kubernetes_schemas() {
    let manifests = manifests();
    assert!(
        manifests.len() >= 4,
        "deploy/ should hold the Secret, the workers and serve with its Service: {manifests:?}"
    );
    for version in KUBERNETES {
        if let Err(report) = validate(&manifests, version) {
            panic!("{report}");
        }
    }
}

#[test]
fn the_kustomization_lists_every_manifest_in_deploy() {
    let kustomization = repo().join("deploy/kustomization.yaml");
    let read = "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))['resources']))";
    let out = Command::new(venv_python()).args(["-c", read]).arg(&kustomization).output().unwrap();
    assert!(out.status.success(), "reading {}: {}", kustomization.display(), String::from_utf8_lossy(&out.stderr));
    let mut listed: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    listed.sort();
    let mut present: Vec<String> = manifests().iter().map(|m| file_name(m)).collect();
    present.sort();
    assert_eq!(
        listed, present,
        "deploy/kustomization.yaml's `resources` must name exactly the manifests in deploy/ (left: listed, right: present)"
    );
}

#[test]
fn a_broken_manifest_is_refused_with_its_file_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let worker = std::fs::read_to_string(repo().join("deploy/worker.yaml")).unwrap();
    let misspelt = dir.path().join("misspelt.yaml");
    assert!(worker.contains("periodSeconds: 5"), "the worker's readiness probe changed: pick another field to break");
    std::fs::write(&misspelt, worker.replacen("periodSeconds: 5", "periodSecond: 5", 1)).unwrap();
    let unknown_kind = dir.path().join("unknown-kind.yaml");
    std::fs::write(&unknown_kind, worker.replacen("kind: Deployment", "kind: Deploymnet", 1)).unwrap();

    let report = validate(&[misspelt, unknown_kind], KUBERNETES[0]).unwrap_err();
    assert!(
        report.contains("misspelt.yaml")
            && report.contains("readinessProbe")
            && report.contains("'periodSecond' was unexpected"),
        "the report names the file, where and what: {report}"
    );
    // The validator only warns (and exits 0) for a kind it has no schema for; we refuse it.
    assert!(report.contains("unknown-kind.yaml") && report.contains("Deploymnet"), "{report}");
}

/// Every `*.yaml` in `deploy/` but the kustomization (not a Kubernetes resource), as
/// `deploy/NAME.yaml` (the validator runs in the repository root).
fn manifests() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(repo().join("deploy"))
        .unwrap()
        .map(|entry| Path::new("deploy").join(entry.unwrap().file_name()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml") && file_name(path) != "kustomization.yaml")
        .collect();
    found.sort();
    found
}

/// Runs the validator over `files`; `Err` with its report when it fails, warns (an
/// unknown kind or apiVersion) or does not say that each file passed.
fn validate(files: &[PathBuf], version: &str) -> Result<(), String> {
    let out = Command::new(venv_python())
        .args(["-m", "kubernetes_validate", "--strict", "--kubernetes-version", version])
        .args(files)
        .current_dir(repo())
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if said.contains("No module named kubernetes_validate") {
        return Err(format!(
            "the manifest validator is missing from .venv-test: run `.venv-test/bin/python -m pip install -r \
             requirements-test.txt` in the repository root (scripts/test.sh does):\n{said}"
        ));
    }
    let passed = said.lines().filter(|line| line.starts_with("INFO ") && line.contains(" passed ")).count();
    if out.status.success() && passed == files.len() && said.lines().all(|line| line.starts_with("INFO ")) {
        return Ok(());
    }
    Err(format!(
        "kubernetes-validate (Kubernetes {version}, strict) refused deploy/'s manifests ({}): fix each field it names \
         (kubectl explain shows the right names), or a kind's apiVersion:\n{said}",
        files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ")
    ))
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}
