//! The CI workflows of docs/ci (GitHub Actions and GitLab CI), read as YAML and run as far as
//! this machine allows: every step that runs mcppin runs, as written, with the real binaries,
//! in a repository holding the bundled demo (testdata/demo) with a signed lockfile. Steps that
//! install something (`cargo install`, `apt-get`) and actions (`uses:`) are not run; the
//! SARIF an upload step would send is checked instead.
//!
//! One change is made to the commands: `mcppin verify` gets the hidden `--now`, as in every
//! test, so the signature's age is measured against a fixed clock.

mod util;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use util::Dir;
use yaml_rust2::{Yaml, YamlLoader};

/// When the approver signed.
const SIGNED_AT: &str = "2026-08-01T09:00:00Z";
/// The clock of every `mcppin verify` the workflows run: a day later.
const NOW: &str = "2026-08-02T09:00:00Z";

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `mcppin` binary, built beside this package's binary by `cargo test --workspace`.
fn mcppin() -> PathBuf {
    let path = Path::new(env!("CARGO_BIN_EXE_mcppin-export")).with_file_name("mcppin");
    assert!(
        path.is_file(),
        "{} is not built: run `cargo build -p mcppin` (cargo test --workspace builds it)",
        path.display()
    );
    path
}

fn load(name: &str) -> Yaml {
    let path = repo_root().join("docs/ci").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut docs = YamlLoader::load_from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not YAML: {e}", path.display()));
    assert_eq!(docs.len(), 1, "{name} holds one document");
    docs.remove(0)
}

fn text(yaml: &Yaml) -> &str {
    yaml.as_str()
        .unwrap_or_else(|| panic!("expected a string, found {yaml:?}"))
}

/// A repository as the workflows find it: the demo configuration, a lockfile of the demo
/// server's honest surface signed by the approver, and a directory of the real binaries for
/// PATH. The approver's public key stays outside the repository, as docs/signing.md says.
struct Repo {
    dir: Dir,
    bin: PathBuf,
    pubkey: PathBuf,
    mode: &'static str,
}

impl Repo {
    fn new() -> Self {
        let dir = Dir::new();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(mcppin(), bin.join("mcppin")).unwrap();
        std::os::unix::fs::symlink(
            env!("CARGO_BIN_EXE_mcppin-export"),
            bin.join("mcppin-export"),
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("repo")).unwrap();
        std::fs::create_dir_all(dir.path().join("approver")).unwrap();
        std::fs::copy(
            repo_root().join("testdata/demo/mcp.json"),
            dir.path().join("repo/mcp.json"),
        )
        .unwrap();
        let repo = Self {
            pubkey: dir.path().join("approver/key.pem.pub"),
            dir,
            bin,
            mode: "honest",
        };
        // What the approver did: capture, lock, sign (docs/ci.md, "Before the first run").
        repo.tool(
            "mcppin-export",
            &["--config", "mcp.json", "-o", "manifest.json"],
        );
        repo.tool("mcppin", &["lock", "-o", "mcp.lock.json", "manifest.json"]);
        let key = repo.dir.path().join("approver/key.pem");
        repo.tool("mcppin", &["key", "-o", key.to_str().unwrap()]);
        repo.tool(
            "mcppin",
            &[
                "sign",
                "--lock",
                "mcp.lock.json",
                "--key",
                key.to_str().unwrap(),
                "--now",
                SIGNED_AT,
            ],
        );
        std::fs::remove_file(repo.path().join("manifest.json")).unwrap();
        repo
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    /// The environment every command gets: the binaries on PATH, the demo server.
    fn env(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (
                "PATH".to_owned(),
                format!("{}:/usr/bin:/bin", self.bin.display()),
            ),
            (
                "MCPPIN_DEMO_SERVER".to_owned(),
                util::fixture().display().to_string(),
            ),
            ("MCPPIN_DEMO_MODE".to_owned(), self.mode.to_owned()),
        ])
    }

    fn tool(&self, name: &str, args: &[&str]) {
        let out = mcppin_testkit::output(
            Command::new(self.bin.join(name))
                .args(args)
                .current_dir(self.path())
                .env_clear()
                .envs(self.env()),
        )
        .unwrap();
        assert!(
            out.status.success(),
            "{name} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn serial(&self) -> String {
        let lock: Value =
            serde_json::from_slice(&std::fs::read(self.path().join("mcp.lock.json")).unwrap())
                .unwrap();
        lock["approval_serial"].to_string()
    }

    /// Runs `script` as a CI shell does (bash, stop at the first failing command).
    fn shell(&self, script: &str, env: &BTreeMap<String, String>) -> (i32, String) {
        assert!(!script.contains("${{"), "an expression left in {script:?}");
        let script = script.replace("mcppin verify ", &format!("mcppin verify --now {NOW} "));
        let out = mcppin_testkit::output(
            Command::new("bash")
                .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &script])
                .current_dir(self.path())
                .env_clear()
                .envs(self.env())
                .envs(env),
        )
        .unwrap();
        let log = format!(
            "$ {script}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), log)
    }
}

/// Whether a step installs something (not run here: the binaries are already built).
fn installs(command: &str) -> bool {
    command.starts_with("cargo install --locked ") || command.starts_with("apt-get ")
}

/// How a GitHub job ended.
#[derive(Debug)]
struct GithubRun {
    /// The exit code of the first failed step, 0 when none failed.
    code: i32,
    outputs: BTreeMap<String, String>,
    /// The SARIF file the upload step would send, as bytes.
    uploaded: Option<Vec<u8>>,
    /// The steps that ran, by name.
    ran: Vec<String>,
    /// What the steps appended to the run's summary page (`$GITHUB_STEP_SUMMARY`).
    summary: String,
    log: String,
}

fn run_github(repo: &Repo, vars: &BTreeMap<&str, String>) -> GithubRun {
    let workflow = load("github-verify.yml");
    let steps = workflow["jobs"]["verify"]["steps"]
        .as_vec()
        .expect("jobs.verify.steps");
    let temp = repo.dir.path().join("runner-temp");
    std::fs::create_dir_all(&temp).unwrap();
    let output_file = repo.dir.path().join("github-output");
    let summary_file = repo.dir.path().join("github-step-summary");
    let mut run = GithubRun {
        code: 0,
        outputs: BTreeMap::new(),
        uploaded: None,
        ran: Vec::new(),
        summary: String::new(),
        log: String::new(),
    };
    let mut uses = Vec::new();
    for step in steps {
        let name = step["name"].as_str().unwrap_or("").to_owned();
        let failed = run.code != 0;
        let wanted = match step["if"].as_str() {
            None => !failed,
            Some("always()") => true,
            Some("steps.verify.outputs.exit != '0'") => {
                !failed && run.outputs.get("exit").map(String::as_str) != Some("0")
            }
            Some(other) => panic!("a condition this test does not know: {other}"),
        };
        if let Some(action) = step["uses"].as_str() {
            uses.push(action.to_owned());
            if wanted && action.starts_with("github/codeql-action/upload-sarif@") {
                let file = repo.path().join(text(&step["with"]["sarif_file"]));
                run.uploaded = Some(std::fs::read(&file).expect("the SARIF file to upload"));
                run.ran.push(name);
            }
            continue;
        }
        let script = text(&step["run"]);
        if installs(script) || !wanted {
            continue;
        }
        let mut env = BTreeMap::from([
            (
                "GITHUB_OUTPUT".to_owned(),
                output_file.display().to_string(),
            ),
            ("RUNNER_TEMP".to_owned(), temp.display().to_string()),
            (
                "GITHUB_STEP_SUMMARY".to_owned(),
                summary_file.display().to_string(),
            ),
        ]);
        if let Some(vars_of_step) = step["env"].as_hash() {
            for (key, value) in vars_of_step {
                let value = text(value);
                let value = match value
                    .strip_prefix("${{ vars.")
                    .and_then(|v| v.strip_suffix(" }}"))
                {
                    Some(var) => vars[var].clone(),
                    None => value.to_owned(),
                };
                env.insert(text(key).to_owned(), value);
            }
        }
        let script = script.replace(
            "${{ steps.verify.outputs.exit }}",
            run.outputs.get("exit").map_or("", String::as_str),
        );
        let (code, log) = repo.shell(&script, &env);
        run.log.push_str(&log);
        run.ran.push(name);
        if code != 0 {
            run.code = code;
        }
        if let Ok(written) = std::fs::read_to_string(&output_file) {
            for line in written.lines() {
                if let Some((key, value)) = line.split_once('=') {
                    run.outputs.insert(key.to_owned(), value.to_owned());
                }
            }
        }
    }
    run.summary = std::fs::read_to_string(&summary_file).unwrap_or_default();
    assert_eq!(
        uses,
        [
            "actions/checkout@v4",
            "actions/cache@v4",
            "github/codeql-action/upload-sarif@v3"
        ]
    );
    run
}

/// How a GitLab job ended.
#[derive(Debug)]
struct GitlabRun {
    code: i32,
    /// The SARIF artifact, as bytes.
    sarif: Vec<u8>,
    code_quality: Value,
    log: String,
}

fn run_gitlab(repo: &Repo, pubkey: &Path, min_serial: &str) -> GitlabRun {
    let pipeline = load("gitlab-verify.yml");
    let job = &pipeline["mcppin-verify"];
    let mut env = BTreeMap::from([
        ("MCPPIN_PUBKEY".to_owned(), pubkey.display().to_string()),
        ("MCPPIN_MIN_SERIAL".to_owned(), min_serial.to_owned()),
    ]);
    for (key, value) in job["variables"].as_hash().expect("variables") {
        env.insert(text(key).to_owned(), text(value).to_owned());
    }
    for command in job["before_script"].as_vec().expect("before_script") {
        assert!(
            installs(text(command)),
            "{command:?} is not an install step"
        );
    }
    // GitLab runs the lines of `script` in one shell, in order.
    let script: Vec<&str> = job["script"]
        .as_vec()
        .expect("script")
        .iter()
        .map(text)
        .collect();
    let (code, log) = repo.shell(&script.join("\n"), &env);
    let artifacts = &job["artifacts"];
    assert_eq!(text(&artifacts["when"]), "always");
    let read_json = |name: &str| -> Value {
        let bytes = std::fs::read(repo.path().join(name))
            .unwrap_or_else(|e| panic!("artifact {name}: {e}\n{log}"));
        serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("artifact {name}: {e}\n{log}"))
    };
    let paths = artifacts["paths"].as_vec().expect("artifacts.paths");
    assert_eq!(paths.len(), 1);
    let sarif = std::fs::read(repo.path().join(text(&paths[0])))
        .unwrap_or_else(|e| panic!("the SARIF artifact: {e}\n{log}"));
    let code_quality = read_json(text(&artifacts["reports"]["codequality"]));
    GitlabRun {
        code,
        sarif,
        code_quality,
        log,
    }
}

/// Reads a SARIF file, checking that it is SARIF 2.1.0.
#[track_caller]
fn sarif(bytes: &[u8]) -> Value {
    let sarif: Value = serde_json::from_slice(bytes).expect("SARIF is JSON");
    assert_eq!(sarif["version"], "2.1.0");
    sarif
}

fn rules(sarif: &Value) -> Vec<String> {
    sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn vars(repo: &Repo, pubkey: &Path) -> BTreeMap<&'static str, String> {
    BTreeMap::from([
        ("MCPPIN_PUBKEY", std::fs::read_to_string(pubkey).unwrap()),
        ("MCPPIN_MIN_SERIAL", repo.serial()),
    ])
}

#[test]
fn the_github_workflow_passes_an_unchanged_surface() {
    let repo = Repo::new();
    let run = run_github(&repo, &vars(&repo, &repo.pubkey));
    assert_eq!(run.code, 0, "{}", run.log);
    assert_eq!(run.outputs["exit"], "0");
    assert_eq!(
        run.ran,
        [
            "Capture the served surface",
            "Verify against the signed lockfile",
            "Upload to code scanning"
        ]
    );
    let sarif = sarif(&run.uploaded.expect("an upload"));
    assert_eq!(rules(&sarif), Vec::<String>::new());
    assert!(
        run.summary.starts_with(
            "### mcppin verify: PASS\n\n**PASS: 4 approved items matched, nothing to report**"
        ),
        "{}",
        run.summary
    );
    assert!(
        run.summary.contains("signature verified"),
        "{}",
        run.summary
    );
}

#[test]
fn the_github_workflow_uploads_the_drift_then_fails() {
    let mut repo = Repo::new();
    repo.mode = "rug-pull";
    let run = run_github(&repo, &vars(&repo, &repo.pubkey));
    assert_eq!(run.code, 1, "{}", run.log);
    assert_eq!(run.outputs["exit"], "1");
    assert_eq!(
        run.ran,
        [
            "Capture the served surface",
            "Verify against the signed lockfile",
            "Upload to code scanning",
            "Fail unless verify passed"
        ]
    );
    let uploaded = sarif(run.uploaded.as_ref().expect("an upload"));
    assert!(rules(&uploaded).contains(&"tool-changed".to_owned()));
    // The job log shows the text report.
    assert!(run.log.contains("tool-changed"), "{}", run.log);
    assert!(run.log.contains("FAIL"), "{}", run.log);
    // The summary page shows the Markdown report, ending with the approving command.
    assert!(
        run.summary.starts_with("### mcppin verify: FAIL\n"),
        "{}",
        run.summary
    );
    assert!(
        run.summary.contains("\ntool-changed [gated]: "),
        "{}",
        run.summary
    );
    assert!(
        run.summary
            .contains("To approve these changes:\n\n```sh\nmcppin lock --approve "),
        "{}",
        run.summary
    );
}

#[test]
fn the_github_workflow_fails_on_a_signature_by_another_key() {
    let repo = Repo::new();
    let other = repo.dir.path().join("approver/other.pem");
    repo.tool("mcppin", &["key", "-o", other.to_str().unwrap()]);
    let run = run_github(
        &repo,
        &vars(&repo, &repo.dir.path().join("approver/other.pem.pub")),
    );
    assert_eq!(run.outputs["exit"], "4", "{}", run.log);
    assert_eq!(run.code, 4, "{}", run.log);
    assert!(run.log.contains("foreign key"), "{}", run.log);
    // The summary page says why nothing was compared.
    assert!(
        run.summary
            .starts_with("### mcppin verify: could not compare (exit 4)\n"),
        "{}",
        run.summary
    );
    assert!(run.summary.contains("foreign key"), "{}", run.summary);
    // The upload runs whatever verify said (what the file holds on exit 4 is the report's
    // business: docs/formats.md, "SARIF report").
    assert!(run.uploaded.is_some());
    // And on a lockfile older than the serial floor.
    let mut floor = vars(&repo, &repo.pubkey);
    floor.insert("MCPPIN_MIN_SERIAL", "99".to_owned());
    let run = run_github(&repo, &floor);
    assert_eq!(run.outputs["exit"], "4", "{}", run.log);
}

#[test]
fn the_gitlab_job_passes_an_unchanged_surface() {
    let repo = Repo::new();
    let run = run_gitlab(&repo, &repo.pubkey, &repo.serial());
    assert_eq!(run.code, 0, "{}", run.log);
    assert_eq!(rules(&sarif(&run.sarif)), Vec::<String>::new());
    assert_eq!(run.code_quality, serde_json::json!([]));
}

#[test]
fn the_gitlab_job_reports_the_drift_as_code_quality_then_fails() {
    let mut repo = Repo::new();
    repo.mode = "rug-pull";
    let run = run_gitlab(&repo, &repo.pubkey, &repo.serial());
    assert_eq!(run.code, 1, "{}", run.log);
    assert!(rules(&sarif(&run.sarif)).contains(&"tool-changed".to_owned()));
    let issues = run.code_quality.as_array().expect("an array");
    let changed = issues
        .iter()
        .find(|i| i["check_name"] == "tool-changed")
        .unwrap_or_else(|| panic!("{}", run.code_quality));
    for member in ["description", "fingerprint", "severity"] {
        assert!(changed[member].is_string(), "{member}: {changed}");
    }
    assert!(changed["location"]["path"].is_string(), "{changed}");
    assert!(changed["location"]["lines"]["begin"].is_u64(), "{changed}");
    assert!(run.log.contains("FAIL"), "{}", run.log);
}

#[test]
fn the_gitlab_job_fails_on_a_signature_by_another_key() {
    let repo = Repo::new();
    let other = repo.dir.path().join("approver/other.pem");
    repo.tool("mcppin", &["key", "-o", other.to_str().unwrap()]);
    let run = run_gitlab(
        &repo,
        &repo.dir.path().join("approver/other.pem.pub"),
        &repo.serial(),
    );
    assert_eq!(run.code, 4, "{}", run.log);
    assert!(run.log.contains("foreign key"), "{}", run.log);
}

/// The install commands of a workflow: each step or command that installs mcppin.
fn mcppin_installs(commands: &[&str]) -> Vec<String> {
    commands
        .iter()
        .flat_map(|c| c.split("&&"))
        .map(str::trim)
        .filter(|c| c.starts_with("cargo install"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn both_workflows_build_mcppin_from_the_checkout_and_cache_the_build() {
    // The install command named a placeholder URL, and every run built from cold.
    let expected = [
        "cargo install --locked --path tools/mcppin/bins/mcppin",
        "cargo install --locked --path tools/mcppin/bins/mcppin-export",
    ];
    let workflow = load("github-verify.yml");
    let steps = workflow["jobs"]["verify"]["steps"].as_vec().unwrap();
    let runs: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    assert_eq!(mcppin_installs(&runs), expected);
    assert_eq!(steps[0]["with"]["submodules"].as_bool(), Some(true));
    let cache = steps
        .iter()
        .find(|s| s["uses"].as_str() == Some("actions/cache@v4"))
        .expect("a cache step");
    let paths = text(&cache["with"]["path"]);
    assert!(
        paths.lines().any(|p| p.trim() == "tools/mcppin/target"),
        "{paths}"
    );
    let key = text(&cache["with"]["key"]);
    assert!(key.contains("hashFiles('tools/mcppin/Cargo.lock'"), "{key}");
    // The cache comes before the install it feeds.
    let at = |pred: &dyn Fn(&Yaml) -> bool| steps.iter().position(pred).unwrap();
    assert!(
        at(&|s| s["uses"].as_str() == Some("actions/cache@v4"))
            < at(&|s| s["run"]
                .as_str()
                .is_some_and(|r| r.starts_with("cargo install")))
    );

    let pipeline = load("gitlab-verify.yml");
    let job = &pipeline["mcppin-verify"];
    let commands: Vec<&str> = job["before_script"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(Yaml::as_str)
        .collect();
    assert_eq!(mcppin_installs(&commands), expected);
    assert_eq!(
        job["variables"]["GIT_SUBMODULE_STRATEGY"].as_str(),
        Some("recursive")
    );
    let cached: Vec<&str> = job["cache"]["paths"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(Yaml::as_str)
        .collect();
    assert_eq!(cached, ["tools/mcppin/target/"]);
    // No placeholder for where mcppin comes from is left.
    for name in ["github-verify.yml", "gitlab-verify.yml"] {
        let file = std::fs::read_to_string(repo_root().join("docs/ci").join(name)).unwrap();
        assert!(!file.contains("example.invalid"), "{name}");
        assert!(!file.contains("--git"), "{name}");
    }
}

#[test]
fn docs_ci_md_shows_the_files_the_test_runs() {
    let doc = std::fs::read_to_string(repo_root().join("docs/ci.md")).unwrap();
    for name in ["github-verify.yml", "gitlab-verify.yml"] {
        let file = std::fs::read_to_string(repo_root().join("docs/ci").join(name)).unwrap();
        assert!(
            doc.contains(&format!("```yaml\n{file}```\n")),
            "docs/ci.md does not show docs/ci/{name} as it is"
        );
        assert!(
            doc.contains(&format!("(ci/{name})")),
            "docs/ci.md does not link {name}"
        );
    }
}
