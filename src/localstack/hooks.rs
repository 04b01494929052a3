//! LocalStack's init hooks: the scripts in `<dir>/boot.d`, `start.d`,
//! `ready.d` and `shutdown.d` (`/etc/localstack/init` unless `--init-dir`
//! names another), run at those stages of the server's life, one after
//! another, with their output in the log and their state served by
//! `GET /_localstack/init` in LocalStack's shape.
//!
//! Why: a project leaving LocalStack keeps its provisioning scripts
//! (`awslocal sqs create-queue …`) and its wait on `/_localstack/init`.
//! As LocalStack does: scripts are found once, each stage's in
//! alphanumerical order (a folder's own files, then its subfolders, depth
//! first); a failing script is `ERROR` and the next one still runs; a
//! stage is `completed` once its scripts ran. BOOT and START run before
//! the socket is bound, READY once the server answers, SHUTDOWN on
//! SIGINT/SIGTERM while it still answers.
//!
//! Unlike LocalStack, a `.sh` file without its execute bit is run by `sh`
//! rather than refused, and a `.py` file runs in its own `python3`, not in
//! the server's interpreter (there is none). Scripts need a shell, so the
//! scratch image, which has none, declares queues and topics in its
//! configuration file instead.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use parking_lot::Mutex;
use serde_json::{json, Map, Value};

/// Where LocalStack's image keeps them.
pub const DEFAULT_DIR: &str = "/etc/localstack/init";

/// The `awslocal` that scripts find first on their `PATH`.
pub const AWSLOCAL: &str = include_str!("awslocal.sh");

/// LocalStack's lifecycle stages, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Boot,
    Start,
    Ready,
    Shutdown,
}

impl Stage {
    pub const ALL: [Stage; 4] = [Stage::Boot, Stage::Start, Stage::Ready, Stage::Shutdown];

    pub fn name(self) -> &'static str {
        match self {
            Stage::Boot => "BOOT",
            Stage::Start => "START",
            Stage::Ready => "READY",
            Stage::Shutdown => "SHUTDOWN",
        }
    }

    /// `boot`, `READY`, …: a stage by name, any case.
    pub fn parse(name: &str) -> Option<Stage> {
        Stage::ALL
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(name))
    }

    fn folder(self) -> &'static str {
        match self {
            Stage::Boot => "boot.d",
            Stage::Start => "start.d",
            Stage::Ready => "ready.d",
            Stage::Shutdown => "shutdown.d",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// A script's state, LocalStack's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Unknown,
    Running,
    Successful,
    Error,
}

impl State {
    fn name(self) -> &'static str {
        match self {
            State::Unknown => "UNKNOWN",
            State::Running => "RUNNING",
            State::Successful => "SUCCESSFUL",
            State::Error => "ERROR",
        }
    }
}

#[derive(Debug)]
struct Script {
    stage: Stage,
    path: PathBuf,
    state: State,
}

impl Script {
    fn name(&self) -> String {
        self.path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    }
}

#[derive(Debug)]
struct Progress {
    /// Every script found, stage by stage, in run order.
    scripts: Vec<Script>,
    completed: [bool; 4],
}

/// The init hooks of one process and how far they got.
#[derive(Debug)]
pub struct InitHooks {
    progress: Mutex<Progress>,
}

/// What scripts are told: where the server answers, for `awslocal`, and
/// the region it defaults to.
#[derive(Debug, Clone)]
pub struct HookEnv {
    pub endpoint: String,
    pub region: String,
}

impl InitHooks {
    /// No hooks: every stage up to READY is complete once the server
    /// answers (what an in-process server and `--no-localstack` report).
    pub fn none() -> InitHooks {
        InitHooks {
            progress: Mutex::new(Progress {
                scripts: Vec::new(),
                completed: [true, true, true, false],
            }),
        }
    }

    /// The scripts under `root`'s stage folders (`.sh` and `.py`; other
    /// files are not scripts, as for LocalStack). A missing stage folder
    /// has none; a `root` that is not a folder is an error.
    pub fn discover(root: &Path) -> std::io::Result<InitHooks> {
        if !root.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{}: no such init-hook directory", root.display()),
            ));
        }
        let mut scripts = Vec::new();
        for stage in Stage::ALL {
            let folder = root.join(stage.folder());
            if folder.is_dir() {
                let mut paths = Vec::new();
                walk(&folder, &mut paths)?;
                scripts.extend(paths.into_iter().map(|path| Script {
                    stage,
                    path,
                    state: State::Unknown,
                }));
            }
        }
        Ok(InitHooks {
            progress: Mutex::new(Progress {
                scripts,
                completed: [false; 4],
            }),
        })
    }

    /// How many scripts were found.
    pub fn len(&self) -> usize {
        self.progress.lock().scripts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs a stage's scripts one after another (blocking: call it off
    /// the async runtime), then marks the stage complete. A stage runs
    /// once; later calls return at once.
    pub fn run(&self, stage: Stage, env: &HookEnv) {
        let paths: Vec<(usize, PathBuf)> = {
            let p = self.progress.lock();
            if p.completed[stage.index()] {
                return;
            }
            p.scripts
                .iter()
                .enumerate()
                .filter(|(_, s)| s.stage == stage)
                .map(|(i, s)| (i, s.path.clone()))
                .collect()
        };
        let shim = if paths.is_empty() {
            None
        } else {
            match write_shim() {
                Ok(dir) => Some(dir),
                Err(e) => {
                    tracing::warn!("init hooks: cannot write the awslocal shim: {e}");
                    None
                }
            }
        };
        for (i, path) in paths {
            self.progress.lock().scripts[i].state = State::Running;
            tracing::info!(stage = stage.name(), script = %path.display(), "running init hook");
            let state = match run_script(&path, env, shim.as_deref()) {
                Ok(()) => State::Successful,
                Err(e) => {
                    tracing::error!(stage = stage.name(), script = %path.display(), "init hook failed: {e}");
                    State::Error
                }
            };
            self.progress.lock().scripts[i].state = state;
        }
        self.progress.lock().completed[stage.index()] = true;
    }

    /// `GET /_localstack/init`: `{"completed": {"BOOT": …}, "scripts":
    /// [{"stage", "name", "state"}]}`.
    pub fn status(&self) -> Value {
        let p = self.progress.lock();
        let completed: Map<String, Value> = Stage::ALL
            .into_iter()
            .map(|s| (s.name().to_string(), json!(p.completed[s.index()])))
            .collect();
        let scripts: Vec<Value> = p.scripts.iter().map(script_json).collect();
        json!({"completed": completed, "scripts": scripts})
    }

    /// `GET /_localstack/init/<stage>`: `{"completed": …, "scripts": […]}`.
    pub fn stage_status(&self, stage: Stage) -> Value {
        let p = self.progress.lock();
        let scripts: Vec<Value> = p
            .scripts
            .iter()
            .filter(|s| s.stage == stage)
            .map(script_json)
            .collect();
        json!({"completed": p.completed[stage.index()], "scripts": scripts})
    }
}

fn script_json(s: &Script) -> Value {
    json!({"stage": s.stage.name(), "name": s.name(), "state": s.state.name()})
}

/// A folder's scripts in LocalStack's order: its own files sorted, then
/// each subfolder, sorted, depth first.
fn walk(folder: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut files = Vec::new();
    let mut folders = Vec::new();
    for entry in std::fs::read_dir(folder)? {
        let path = entry?.path();
        if path.is_dir() {
            folders.push(path);
        } else if path.is_file()
            && matches!(path.extension().and_then(|e| e.to_str()), Some("sh" | "py"))
        {
            files.push(path);
        }
    }
    files.sort();
    folders.sort();
    out.extend(files);
    for f in folders {
        walk(&f, out)?;
    }
    Ok(())
}

/// Writes the `awslocal` shim into a folder of its own (one per process)
/// and returns the folder, for the front of the scripts' `PATH`.
fn write_shim() -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("retsu-init-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let file = dir.join("awslocal");
    std::fs::write(&file, AWSLOCAL)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(dir)
}

/// Runs one script to its end, its output logged line by line.
fn run_script(path: &Path, env: &HookEnv, shim: Option<&Path>) -> Result<(), String> {
    let mut command = if path.extension().is_some_and(|e| e == "py") {
        let mut c = Command::new("python3");
        c.arg(path);
        c
    } else if executable(path) {
        Command::new(path)
    } else {
        let mut c = Command::new("sh");
        c.arg(path);
        c
    };
    if let Some(shim) = shim {
        let mut paths = vec![shim.to_path_buf()];
        if let Some(current) = std::env::var_os("PATH") {
            paths.extend(std::env::split_paths(&current));
        }
        if let Ok(joined) = std::env::join_paths(paths) {
            command.env("PATH", joined);
        }
    }
    command
        .env("RETSU_ENDPOINT", &env.endpoint)
        .env("RETSU_REGION", &env.region)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start it: {e}"))?;
    let name = path.display().to_string();
    let out = child.stdout.take().map(|o| log_lines(o, name.clone()));
    let err = child.stderr.take().map(|e| log_lines(e, name.clone()));
    let status = child
        .wait()
        .map_err(|e| format!("cannot wait for it: {e}"))?;
    for reader in [out, err].into_iter().flatten() {
        let _ = reader.join();
    }
    if status.success() {
        Ok(())
    } else {
        Err(format!("it exited with {status}"))
    }
}

/// A thread that logs what a script writes, a line at a time.
fn log_lines(stream: impl Read + Send + 'static, script: String) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            match line {
                Ok(line) => tracing::info!(target: "retsu::init", script = %script, "{line}"),
                Err(_) => break,
            }
        }
    })
}

#[cfg(unix)]
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn executable(_: &Path) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_by_name() {
        assert_eq!(Stage::parse("ready"), Some(Stage::Ready));
        assert_eq!(Stage::parse("SHUTDOWN"), Some(Stage::Shutdown));
        assert_eq!(Stage::parse("later"), None);
    }

    #[test]
    fn no_hooks_reports_every_stage_but_shutdown_complete() {
        let s = InitHooks::none().status();
        assert_eq!(
            s,
            json!({"completed": {"BOOT": true, "START": true, "READY": true, "SHUTDOWN": false}, "scripts": []})
        );
    }

    #[test]
    fn discovers_in_localstacks_order() {
        let root = std::env::temp_dir().join(format!("retsu-hooks-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let ready = root.join("ready.d");
        std::fs::create_dir_all(ready.join("a-sub")).unwrap();
        for f in ["b.sh", "a.py", "notes.txt", "a-sub/z.sh"] {
            std::fs::write(ready.join(f), "exit 0\n").unwrap();
        }
        std::fs::create_dir_all(root.join("boot.d")).unwrap();
        std::fs::write(root.join("boot.d/1.sh"), "exit 0\n").unwrap();
        let hooks = InitHooks::discover(&root).unwrap();
        let names: Vec<(String, String)> = hooks.status()["scripts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["stage"].as_str().unwrap().into(),
                    s["name"].as_str().unwrap().into(),
                )
            })
            .collect();
        let want = [
            ("BOOT", "1.sh"),
            ("READY", "a.py"),
            ("READY", "b.sh"),
            ("READY", "z.sh"),
        ];
        assert_eq!(
            names,
            want.map(|(a, b)| (a.to_string(), b.to_string())).to_vec()
        );
        assert!(InitHooks::discover(&root.join("missing")).is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
