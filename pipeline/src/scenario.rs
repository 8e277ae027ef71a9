//! Scenario files: JSON, one per scenario, in `scenarios/<system>/`.
//!
//! A scenario names the protocol (with its parameters and mutants), the topology, the
//! scheduler, the workload, faults, limits, the checks to run and the expected outcome. The
//! engine-facing sections use `causim_sim::config`'s types, field for field. A bad file gets an
//! error naming the file, line, column and field, and what was expected.

use crate::locate::locate;
use causim_models::catalogue;
use causim_sim::config::{FaultsConfig, LimitsConfig, ReplayConfig, SchedulerConfig, SimConfig, TopologyConfig};
use causim_sim::error::FieldError;
use causim_sim::workload::WorkloadConfig;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The format tag a scenario may carry in `format`.
pub const SCENARIO_FORMAT: &str = "causim-scenario/1";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub format: Option<String>,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    pub protocol: ProtocolSection,
    /// Default 1; `causim run --seed` overrides it.
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub topology: TopologyConfig,
    #[serde(default)]
    pub scheduler: SchedulerConfig,
    pub workload: WorkloadConfig,
    #[serde(default)]
    pub faults: FaultsConfig,
    #[serde(default)]
    pub limits: LimitsConfig,
    /// Deliver messages in a recorded order (a model checker's counterexample); see
    /// `causim_sim::config::ReplayConfig`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayConfig>,
    #[serde(default)]
    pub checks: ChecksConfig,
    #[serde(default)]
    pub expect: Option<Expectation>,
}

fn default_seed() -> u64 {
    1
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProtocolSection {
    pub name: String,
    #[serde(default)]
    pub params: serde_json::Value,
    #[serde(default)]
    pub mutants: Vec<String>,
}

/// What to check during and after the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChecksConfig {
    /// Check every node's internal invariants after each of its inputs. Default false.
    #[serde(default)]
    pub invariants: bool,
    /// Check the history at this consistency level after the run (`ccv`, `tcc`, ...; see
    /// `causim check --help`). Default: no history check.
    #[serde(default)]
    pub level: Option<String>,
}

/// The outcome a scenario expects; `causim run` exits non-zero when it differs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// `pass`: no invariant violation (and, with a history check, no anomaly); `fail`: the
    /// opposite.
    pub verdict: Verdict,
    /// Anomaly names the history check must report (each at least once).
    #[serde(default)]
    pub anomalies: Vec<String>,
    /// `pass`: every workflow completes (none gives up or is left running); `fail`: the
    /// opposite. Unset: liveness is reported but not enforced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness: Option<Verdict>,
    /// The model-checker property the scenario is a counterexample to (`causim model-check`
    /// writes it); informational: `verdict` and `anomalies` say what the simulator's own checks
    /// find.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
}

impl Expectation {
    /// What in `report` differs from this expectation (empty when it is met).
    pub fn mismatches(&self, report: &crate::run::RunReport) -> Vec<String> {
        let mut wrong = Vec::new();
        let passed = report.passed();
        if passed != (self.verdict == Verdict::Pass) {
            wrong.push(format!(
                "expected {:?}, got {} (anomalies {:?}, invariant {:?}, stopped by {:?})",
                self.verdict,
                if passed { "pass" } else { "fail" },
                report.anomalies(),
                report.summary.invariant_violation,
                report.summary.stopped_by
            ));
        }
        let found = report.anomalies();
        for a in self.anomalies.iter().filter(|a| !found.contains(a)) {
            wrong.push(format!("expected anomaly {a} was not found"));
        }
        if let Some(l) = self.liveness
            && report.summary.liveness.live != (l == Verdict::Pass)
        {
            wrong.push(format!("expected liveness {l:?}, got {}", report.summary.liveness.describe()));
        }
        wrong
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Fail,
}

impl Scenario {
    pub fn sim_config(&self) -> SimConfig {
        SimConfig {
            seed: self.seed,
            topology: self.topology.clone(),
            scheduler: self.scheduler.clone(),
            workload: self.workload.clone(),
            faults: self.faults.clone(),
            limits: self.limits.clone(),
            replay: self.replay.clone(),
        }
    }
}

/// A scenario with the text it came from, so later errors can point into the file.
#[derive(Clone, Debug)]
pub struct LoadedScenario {
    pub path: PathBuf,
    pub text: String,
    pub scenario: Scenario,
    /// What loading found allowed but worth saying (a very large run); `causim run` prints it.
    pub warnings: Vec<String>,
}

/// An error in a scenario file: which file, where in it, which field and what is wrong.
#[derive(Clone, Debug)]
pub struct ScenarioError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// The JSON path of the field (`topology.links[0].from`; empty for the whole file) and what
    /// is wrong there.
    pub error: FieldError,
    /// Why the file could not be read, when that is the problem.
    pub io: Option<Arc<std::io::Error>>,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let (Some(line), Some(col)) = (self.line, self.column) {
            write!(f, ":{line}:{col}")?;
        }
        if !self.error.path.is_empty() {
            write!(f, ": field `{}`", self.error.path)?;
        }
        write!(f, ": {}", self.error.message)?;
        if let Some(io) = &self.io {
            write!(f, ": {io}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.io.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl LoadedScenario {
    /// Reads and parses a scenario file.
    pub fn from_file(path: &Path) -> Result<LoadedScenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: path.to_path_buf(),
            line: None,
            column: None,
            error: FieldError::new("", "cannot read the scenario"),
            io: Some(Arc::new(e)),
        })?;
        LoadedScenario::from_text(path, text)
    }

    /// A scenario built in code (by the fuzzer, or from a model checker's counterexample),
    /// checked as if it had been read from a file named `path`.
    pub fn from_scenario(path: &Path, scenario: &Scenario) -> Result<LoadedScenario, ScenarioError> {
        LoadedScenario::from_text(path, serde_json::to_string_pretty(scenario).expect("scenarios serialize"))
    }

    /// Parses scenario text; `path` names it in errors.
    pub fn from_text(path: &Path, text: String) -> Result<LoadedScenario, ScenarioError> {
        // A UTF-8 byte order mark (some editors write one) is not JSON; the history reader
        // skips it too.
        let text = match text.strip_prefix('\u{feff}') {
            Some(rest) => rest.to_string(),
            None => text,
        };
        let scenario: Scenario = parse_located(path, &text)?;
        if let Some((field, (line, column))) = crate::locate::duplicate_key(&text) {
            let key = field.rsplit('.').next().unwrap_or(&field).to_string();
            let error = FieldError::new(field, format!("duplicate key `{key}` in this object (only one may be given)"));
            return Err(ScenarioError { file: path.to_path_buf(), line: Some(line), column: Some(column), error, io: None });
        }
        let mut loaded = LoadedScenario { path: path.to_path_buf(), text, scenario, warnings: Vec::new() };
        check_output_name(&loaded.scenario.name).map_err(|m| loaded.error("name", m))?;
        // Sizes and times first (before the engine allocates anything for them), then the
        // engine's own checks, so a bad file is refused before any output is staged.
        let config = loaded.scenario.sim_config();
        loaded.warnings = crate::limits::check(&config).map_err(|e| loaded.field_error(e))?;
        crate::limits::check_params(&loaded.scenario.protocol.params).map_err(|e| loaded.field_error(e.within("protocol.params")))?;
        config.validate().map_err(|e| loaded.field_error(e))?;
        if let Some(level) = &loaded.scenario.checks.level
            && causim_checkers::Level::parse(level).is_none()
        {
            return Err(loaded.error("checks.level", format!("unknown level {level:?}; levels are {}", level_names())));
        }
        if let Some(format) = &loaded.scenario.format
            && format != SCENARIO_FORMAT
        {
            return Err(loaded.error("format", format!("unknown scenario format {format:?}, expected {SCENARIO_FORMAT:?}")));
        }
        let protocol = &loaded.scenario.protocol;
        let Some(entry) = catalogue::find(&protocol.name) else {
            let known = catalogue::names();
            return Err(loaded.error("protocol.name", format!("unknown protocol {:?}; known protocols: {known}", protocol.name)));
        };
        causim_models::check_mutants(entry, &protocol.mutants).map_err(|e| loaded.field_error(e.within("protocol")))?;
        entry.faults.check(entry.name, &loaded.scenario.faults).map_err(|e| loaded.field_error(e))?;
        check_calls(entry, &loaded.scenario.workload).map_err(|e| loaded.field_error(e))?;
        Ok(loaded)
    }

    /// The catalogue entry of the scenario's protocol (checked when loaded).
    pub fn entry(&self) -> &'static causim_models::Entry {
        catalogue::find(&self.scenario.protocol.name).expect("checked when loaded")
    }

    /// A field error of this scenario, located in its text.
    pub fn field_error(&self, e: FieldError) -> ScenarioError {
        located(&self.path, &self.text, &e.path, e.message)
    }

    /// An error at a JSON path of this scenario, located in its text.
    pub fn error(&self, field: &str, message: impl Into<String>) -> ScenarioError {
        located(&self.path, &self.text, field, message)
    }
}

/// Longest `name` a scenario or sweep may have.
pub const NAME_LEN_MAX: usize = 128;

/// A scenario's or sweep's `name` becomes its output folder (`out/<name>`), so it must be one
/// plain path component: letters, digits, `.`, `_`, `+` and `-`, not starting with `.`
/// (which also rules out `.` and `..`), at most [`NAME_LEN_MAX`] bytes.
pub fn check_output_name(name: &str) -> Result<(), String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-');
    if name.is_empty() || name.len() > NAME_LEN_MAX || name.starts_with('.') || !name.chars().all(allowed) {
        return Err(format!(
            "{name:?} cannot name an output folder: use 1 to {NAME_LEN_MAX} letters, digits, '.', '_', '+' or '-', not starting with '.'"
        ));
    }
    Ok(())
}

/// The level names `checks.level` accepts.
pub fn level_names() -> String {
    causim_checkers::Level::every().chain(causim_checkers::Level::LOG).map(|l| l.name()).collect::<Vec<_>>().join(", ")
}

/// A shared log (a protocol whose level is `shared-log`) runs LogBook calls only, and every
/// other protocol key reads and writes only: the first operation of the wrong kind is an error.
fn check_calls(entry: &causim_models::Entry, workload: &WorkloadConfig) -> Result<(), FieldError> {
    let log = entry.level == causim_checkers::Level::SharedLog;
    let wrong = |what: &str| {
        if log {
            format!("{} is a shared log: it runs log calls (append, read_next, read_prev, check_tail), not {what}", entry.name)
        } else {
            format!("{} is not a shared log: log calls ({what}) need a shared-log protocol", entry.name)
        }
    };
    match workload {
        WorkloadConfig::Script(sessions) => {
            for (s, session) in sessions.iter().enumerate() {
                for (f, function) in session.functions.iter().enumerate() {
                    if let Some(o) = function.ops.iter().position(|op| op.is_log() != log) {
                        let what = if log { "key reads and writes" } else { "append, read_next, …" };
                        return Err(FieldError::new(format!("workload.script[{s}].functions[{f}].ops[{o}]"), wrong(what)));
                    }
                }
            }
        }
        WorkloadConfig::Generator(g) => {
            for (at, f) in g.function_gens() {
                let path = format!("workload.generator.{at}");
                let kv = f.reads + f.writes + f.read_txns + f.read_written + f.updates > 0
                    || f.mix.as_ref().is_some_and(|m| m.read + m.write + m.read_txn > 0.0);
                let calls = f.mix.as_ref().is_some_and(|m| m.append + m.read_next + m.check_tail > 0.0);
                if log && kv {
                    return Err(FieldError::new(path, wrong("key reads and writes")));
                }
                if !log && calls {
                    return Err(FieldError::new(format!("{path}.mix"), wrong("append, read_next, check_tail")));
                }
            }
        }
    }
    Ok(())
}

/// An error at JSON path `field` of a file's text, located in it when the path is found.
pub fn located(path: &Path, text: &str, field: &str, message: impl Into<String>) -> ScenarioError {
    let (line, column) = match locate(text, field) {
        Some((l, c)) => (Some(l), Some(c)),
        None => (None, None),
    };
    ScenarioError { file: path.to_path_buf(), line, column, error: FieldError::new(field, message), io: None }
}

/// Parses JSON into `T` (a scenario, a sweep file), with errors located by file, line, column
/// and field.
pub fn parse_located<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, ScenarioError> {
    // serde would name the first element of a top-level array as a field (`[0]`).
    let start = text.len() - text.trim_start().len();
    if let Some(c) = text[start..].chars().next()
        && c != '{'
    {
        let (line, column) = crate::locate::locate(text, "").unwrap_or((1, 1));
        let message = format!("expected a JSON object (`{{ ... }}`) at the top of the file, found `{c}`");
        return Err(ScenarioError {
            file: path.to_path_buf(),
            line: Some(line),
            column: Some(column),
            error: FieldError::new("", message),
            io: None,
        });
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize::<_, T>(&mut de)
        .map_err(|e| json_error(path, text, clean_path(&e.path().to_string()), e.into_inner()))?;
    de.end().map_err(|e| json_error(path, text, String::new(), e))?;
    Ok(value)
}

/// Turns a serde_json error at JSON path `field` into a located scenario error.
fn json_error(path: &Path, text: &str, field: String, inner: serde_json::Error) -> ScenarioError {
    let message = plain_message(&strip_position(&inner.to_string()));
    let syntax = inner.is_syntax() || inner.is_eof();
    let (line, column) = if syntax || field.is_empty() {
        (inner.line(), inner.column())
    } else {
        locate(text, &field).unwrap_or((inner.line(), inner.column()))
    };
    let message = if syntax { format!("invalid JSON: {message}") } else { message };
    ScenarioError { file: path.to_path_buf(), line: Some(line), column: Some(column), error: FieldError::new(field, message), io: None }
}

/// serde_path_to_error writes `.` for the root and `?` for a segment it could not name (inside
/// a syntax error); we drop both.
fn clean_path(path: &str) -> String {
    let kept: Vec<&str> = path.split('.').filter(|s| !s.is_empty() && *s != "?").collect();
    kept.join(".")
}

/// serde's wording where it misleads: a number with an exponent (`1e32`) is "floating point"
/// to serde, though the user wrote a (too large) number where a whole number belongs.
fn plain_message(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("invalid type: floating point `")
        && let Some((number, expected)) = rest.split_once("`, expected ")
        && let Some(range) = integer_range(expected)
    {
        return format!("expected a whole number from {range}, got {number}");
    }
    message.to_string()
}

fn integer_range(ty: &str) -> Option<&'static str> {
    Some(match ty {
        "u8" => "0 to 255",
        "u16" => "0 to 65535",
        "u32" => "0 to 4294967295",
        "u64" | "usize" => "0 to 18446744073709551615",
        "i64" => "-9223372036854775808 to 9223372036854775807",
        _ => return None,
    })
}

/// serde_json appends " at line L column C"; we print the position ourselves.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LoadedScenario, ScenarioError> {
        LoadedScenario::from_text(Path::new("t.json"), text.to_string())
    }

    #[test]
    fn position_suffixes_are_stripped() {
        assert_eq!(strip_position("missing field `x` at line 3 column 1"), "missing field `x`");
    }

    #[test]
    fn a_name_is_one_plain_path_component() {
        for ok in ["fig6", "register-default", "fuzz-causalmesh_tcc-tcc_ignores_cut", "a.b+c"] {
            assert_eq!(check_output_name(ok), Ok(()), "{ok}");
        }
        for bad in ["", ".", "..", "../x", "/abs", "a/b", "a\\b", ".hidden", "new\nline", "sp ace", &"x".repeat(129)] {
            assert!(check_output_name(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn a_syntax_error_names_line_and_column() {
        let e = parse("{\n  \"name\": \"x\",\n  oops\n}").unwrap_err();
        assert_eq!((e.line, e.column), (Some(3), Some(3)));
        assert!(e.error.message.starts_with("invalid JSON"), "{e}");
    }
}
