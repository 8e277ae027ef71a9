//! The documented maxima of a scenario, checked when it is loaded, before anything is allocated
//! for it or written: every size a typo could blow up (keys, functions, operations, clients,
//! workflows × history size), every time (so time arithmetic cannot overflow), and the settings
//! that would make a run meaningless (no events, no workflows, every message lost).
//!
//! The engine has its own checks (`SimConfig::validate`, the generator's); these come first and
//! only refuse what no sensible run needs, so their numbers are generous. docs/limits.md lists
//! them.

use causim_sim::config::{FaultsConfig, LimitsConfig, SimConfig};
use causim_sim::dist::DurationDist;
use causim_sim::error::FieldError;
use causim_sim::time::{S, Time};
use causim_sim::workflow::{FUNCTIONS_PER_WORKFLOW_MAX, WorkflowShape};
use causim_sim::workload::{Arrival, FunctionGen, GeneratorConfig, WorkloadConfig};

/// The longest duration or time a scenario may name: 10^18 ns, about 31.7 years. A few of them
/// added up (a time plus a delay plus a service time) stay far below 2^64 ns.
pub const TIME_MAX_NS: Time = 1_000_000_000_000_000_000;
/// Keys of a generator (the engine keeps a counter per key, 8 bytes each).
pub const KEYS_MAX: u64 = 10_000_000;
/// Operations of one generated function (counts, `ops`, `read_written`), and keys of one read
/// transaction.
pub const OPS_PER_FUNCTION_MAX: u32 = 10_000;
/// Clients of a closed loop (each holds a pending event from the start).
pub const CLIENTS_MAX: u32 = 1_000_000;
/// Events a run may be allowed (`limits.events_max`); the event queue accepts about 10^12.
pub const EVENTS_MAX: u64 = 1_000_000_000_000;
/// Operations a run may be expected to record: about 100 GB of history.
pub const HISTORY_OPS_MAX: f64 = 1e9;
/// Above this many expected operations (about 1 GB of history), loading warns.
pub const HISTORY_OPS_WARN: f64 = 1e7;

/// The longest time a protocol parameter may name (a parameter whose name ends in `_ns`):
/// 10^15 ns, about 11.6 days. Models stagger periods by multiplying them by a node's index.
pub const PARAM_TIME_MAX_NS: u64 = 1_000_000_000_000_000;

/// Checks the protocol's parameters that are times (`refresh_period_ns`, at any depth) against
/// [`PARAM_TIME_MAX_NS`]; the model checks everything else about them.
pub fn check_params(params: &serde_json::Value) -> Result<(), FieldError> {
    let serde_json::Value::Object(map) = params else { return Ok(()) };
    for (key, value) in map {
        if key.ends_with("_ns")
            && let Some(n) = value.as_f64()
            && n > PARAM_TIME_MAX_NS as f64
        {
            return Err(FieldError::new(
                key.as_str(),
                format!("{value} ns is more than a protocol parameter may name, {PARAM_TIME_MAX_NS} ns (about 11.6 days)"),
            ));
        }
        check_params(value).map_err(|e| e.within(key))?;
    }
    Ok(())
}

/// Checks `config` against the maxima above and refuses meaningless settings. Returns the
/// warnings (a run that is allowed but large).
pub fn check(config: &SimConfig) -> Result<Vec<String>, FieldError> {
    check_times(config)?;
    check_limits(&config.limits)?;
    check_faults(&config.faults)?;
    match &config.workload {
        WorkloadConfig::Script(sessions) => {
            if sessions.is_empty() {
                return Err(FieldError::new("workload.script", "a script needs at least one session (an empty script runs nothing)"));
            }
            for (s, session) in sessions.iter().enumerate() {
                if session.functions.is_empty() {
                    return Err(FieldError::new(format!("workload.script[{s}].functions"), "a session needs at least one function"));
                }
            }
            Ok(Vec::new())
        }
        WorkloadConfig::Generator(g) => check_generator(g, &config.limits).map_err(|e| e.within("workload.generator")),
    }
}

fn time(path: impl Into<String>, t: Time) -> Result<(), FieldError> {
    if t > TIME_MAX_NS {
        return Err(FieldError::new(
            path,
            format!("{t} ns is more than the most a scenario may name, {TIME_MAX_NS} ns (about 31.7 years)"),
        ));
    }
    Ok(())
}

fn duration(path: &str, d: &DurationDist) -> Result<(), FieldError> {
    let fields: Vec<(&str, Time)> = match *d {
        DurationDist::Constant { ns } => vec![("ns", ns)],
        DurationDist::Uniform { min_ns, max_ns } => vec![("min_ns", min_ns), ("max_ns", max_ns)],
        DurationDist::Exponential { mean_ns, min_ns } => vec![("mean_ns", mean_ns), ("min_ns", min_ns)],
        DurationDist::Lognormal { mean_ns, min_ns, max_ns, .. } => {
            let mut f = vec![("mean_ns", mean_ns), ("min_ns", min_ns)];
            f.extend(max_ns.map(|m| ("max_ns", m)));
            f
        }
    };
    fields.into_iter().try_for_each(|(field, t)| time(format!("{path}.{field}"), t))
}

fn check_times(c: &SimConfig) -> Result<(), FieldError> {
    let t = &c.topology;
    duration("topology.service", &t.service)?;
    duration("topology.delay", &t.delay)?;
    duration("topology.local_delay", &t.local_delay)?;
    for (kind, d) in &t.service_by_kind {
        duration(&format!("topology.service_by_kind.{kind}"), d)?;
    }
    for (name, o) in &t.nodes {
        if let Some(d) = &o.service {
            duration(&format!("topology.nodes.{name}.service"), d)?;
        }
    }
    for (i, l) in t.links.iter().enumerate() {
        duration(&format!("topology.links[{i}].delay"), &l.delay)?;
    }
    duration("scheduler.dispatch", &c.scheduler.dispatch)?;
    duration("scheduler.retry_backoff", &c.scheduler.retry_backoff)?;
    time("limits.time_ns_max", c.limits.time_ns_max)?;
    time("limits.settle_ns", c.limits.settle_ns)?;
    time("limits.stall_ns", c.limits.stall_ns.unwrap_or(0))?;
    for (i, p) in c.faults.partitions.iter().enumerate() {
        time(format!("faults.partitions[{i}].start_ns"), p.start_ns)?;
        time(format!("faults.partitions[{i}].heal_ns"), p.heal_ns.unwrap_or(0))?;
    }
    for (i, k) in c.faults.crashes.iter().enumerate() {
        time(format!("faults.crashes[{i}].at_ns"), k.at_ns)?;
        time(format!("faults.crashes[{i}].restart_ns"), k.restart_ns.unwrap_or(0))?;
    }
    if let Some(r) = &c.replay {
        time("replay.step_ns", r.step_ns)?;
    }
    match &c.workload {
        WorkloadConfig::Script(sessions) => {
            for (s, session) in sessions.iter().enumerate() {
                for (f, function) in session.functions.iter().enumerate() {
                    time(format!("workload.script[{s}].functions[{f}].at_ns"), function.at_ns)?;
                }
            }
        }
        WorkloadConfig::Generator(g) => {
            time("workload.generator.warmup_ns", g.warmup_ns)?;
            time("workload.generator.duration_ns", g.duration_ns.unwrap_or(0))?;
            if let Arrival::Closed { think, .. } = &g.arrival {
                duration("workload.generator.arrival.think", think)?;
            }
        }
    }
    Ok(())
}

fn check_limits(l: &LimitsConfig) -> Result<(), FieldError> {
    if l.events_max == 0 || l.events_max > EVENTS_MAX {
        return Err(FieldError::new("limits.events_max", format!("must be between 1 and {EVENTS_MAX}, got {}", l.events_max)));
    }
    Ok(())
}

fn check_faults(f: &FaultsConfig) -> Result<(), FieldError> {
    if f.loss_probability >= 1.0 {
        return Err(FieldError::new(
            "faults.loss_probability",
            format!(
                "must be below 1, got {}: every message between machines would be lost, so no workflow could finish",
                f.loss_probability
            ),
        ));
    }
    for (i, p) in f.partitions.iter().enumerate() {
        if let Some(g) = p.groups.iter().position(Vec::is_empty) {
            return Err(FieldError::new(format!("faults.partitions[{i}].groups[{g}]"), "a partition group needs at least one machine"));
        }
    }
    Ok(())
}

fn check_generator(g: &GeneratorConfig, limits: &LimitsConfig) -> Result<Vec<String>, FieldError> {
    let classes = g.key_classes.iter().map(|(name, k)| (format!("key_classes.{name}.count"), k.count));
    let mut total_keys = 0u64;
    for (field, count) in std::iter::once(("keys.count".to_string(), g.keys.count)).chain(classes) {
        total_keys = total_keys.saturating_add(count);
        if count > KEYS_MAX || total_keys > KEYS_MAX {
            return Err(FieldError::new(field, format!("must be at most {KEYS_MAX} (with the key classes before it), got {total_keys}")));
        }
    }
    let kinds = g.kinds();
    let total_weight: f64 = kinds.iter().map(|k| k.1).sum();
    // Operations per workflow, averaged over the kinds by weight.
    let mut ops_per_workflow = 0.0;
    for (at, weight, shape, functions) in &kinds {
        let n: u64 = match shape {
            WorkflowShape::Chain { functions } | WorkflowShape::Dag { functions, .. } => *functions as u64,
            WorkflowShape::FanOut { width, join } => 1 + *width as u64 + u64::from(*join),
        };
        if n > FUNCTIONS_PER_WORKFLOW_MAX as u64 {
            return Err(FieldError::new(
                format!("{at}workflow"),
                format!("a workflow may have at most {FUNCTIONS_PER_WORKFLOW_MAX} functions, this shape has {n}"),
            ));
        }
        for (i, f) in functions.iter().enumerate() {
            check_function(f).map_err(|e| e.within(&format!("{at}functions[{i}]")))?;
        }
        let ops: f64 = if functions.len() == 1 { n as f64 * ops_of(&functions[0]) } else { functions.iter().map(ops_of).sum() };
        if total_weight > 0.0 && total_weight.is_finite() {
            ops_per_workflow += ops * weight / total_weight;
        }
    }
    if let Arrival::Closed { clients, .. } = g.arrival
        && clients > CLIENTS_MAX
    {
        return Err(FieldError::new("arrival.clients", format!("must be at most {CLIENTS_MAX}, got {clients}")));
    }
    if g.workflows_max == Some(0) {
        return Err(FieldError::new("workflows_max", "must be at least 1 (0 runs no workflow)"));
    }
    if g.duration_ns == Some(0) {
        return Err(FieldError::new("duration_ns", "must be positive (0 starts no workflow)"));
    }
    let Some(workflows) = expected_workflows(g, limits) else { return Ok(Vec::new()) };
    let ops = workflows * ops_per_workflow.max(1.0);
    let field = if g.workflows_max.is_some() { "workflows_max" } else { "duration_ns" };
    if ops > HISTORY_OPS_MAX {
        return Err(FieldError::new(
            field,
            format!(
                "about {workflows:.3e} workflows of {ops_per_workflow} operations would record {ops:.3e} operations, \
                 more than the {HISTORY_OPS_MAX:.0e} a run may record"
            ),
        ));
    }
    let mut warnings = Vec::new();
    if ops > HISTORY_OPS_WARN {
        warnings.push(format!(
            "workload.generator.{field}: about {workflows:.3e} workflows of {ops_per_workflow} operations will record {ops:.3e} \
             operations (roughly {:.0} MB of history)",
            ops * 100.0 / 1e6
        ));
    }
    Ok(warnings)
}

fn check_function(f: &FunctionGen) -> Result<(), FieldError> {
    let counts = [
        ("reads", f.reads),
        ("writes", f.writes),
        ("read_txns", f.read_txns),
        ("updates", f.updates),
        ("read_written", f.read_written),
        ("read_txn_keys", f.read_txn_keys),
        ("ops", f.ops.unwrap_or(0)),
    ];
    for (field, n) in counts {
        if n > OPS_PER_FUNCTION_MAX {
            return Err(FieldError::new(field, format!("must be at most {OPS_PER_FUNCTION_MAX}, got {n}")));
        }
    }
    if f.op_count() > OPS_PER_FUNCTION_MAX as u64 {
        return Err(FieldError::new("reads", format!("reads, writes, read_txns and updates add up to more than {OPS_PER_FUNCTION_MAX}")));
    }
    Ok(())
}

/// Operations one generated function records (a read transaction counts once).
fn ops_of(f: &FunctionGen) -> f64 {
    f.op_count() as f64 + f.read_written as f64
}

/// How many workflows a generator will start at most: `workflows_max`, or its arrival rate over
/// its duration (bounded by the run's time limit). A closed loop without `workflows_max` is
/// bounded by its clients' cycle time, which is unknown before the run: `None`.
fn expected_workflows(g: &GeneratorConfig, limits: &LimitsConfig) -> Option<f64> {
    let window_s = g.duration_ns.unwrap_or(Time::MAX).min(limits.time_ns_max) as f64 / S as f64;
    let by_time = match g.arrival {
        Arrival::Poisson { rate_per_s } | Arrival::Constant { rate_per_s } => Some(rate_per_s * window_s),
        Arrival::Closed { .. } => None,
    };
    match (g.workflows_max, by_time) {
        (Some(n), Some(t)) => Some((n as f64).min(t.max(1.0))),
        (Some(n), None) => Some(n as f64),
        (None, t) => t,
    }
}
