//! The application: services, their endpoints and the deterministic handlers that run them.
//!
//! MuCache's unit of work is a request through a call graph, so the call graph is a protocol
//! parameter of the scenario (`params.services`). Each endpoint's handler is a list of steps
//! run in order: a read or a write of the service's own store, a call to another service's
//! endpoint, or a fan-out of calls issued together and awaited together. Every request carries
//! one argument (the workload's key), passed unchanged down the tree, so a call's arguments
//! `ca` are `(service, endpoint, arg)` and a store key is `(name, arg)` in its service.
//!
//! Handlers are deterministic functions of their argument, the values they read and the
//! responses they receive (the proof of Theorem 1 relies on it, digest §1.7): the return value
//! folds them into one number ([`mix`]), which is how a cache hit's value can be compared with a
//! cache-free evaluation ([`App::evaluate`], the quiescent-coherence oracle).

use causim_sim::error::FieldError;
use serde::Deserialize;
use std::collections::BTreeMap;

/// Services are numbered in `params.services` order; a set of them is a bitmask, so at most 64.
pub const SERVICES_MAX: usize = 64;

/// Shards of one service, at most.
pub const SHARDS_MAX: u32 = 16;

/// A set of services (bit `i` is service `i`): the visited sets of §2.8.
pub type Services = u64;

/// `{"name":"Plot","endpoints":[{"name":"plot","ro":true,"steps":[{"read":"plot"}]}]}`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServiceSpec {
    pub name: String,
    pub endpoints: Vec<EndpointSpec>,
    /// Shards (§4.1 "Sharding"): each runs the handlers with its own cache and CM in front of
    /// the service's one store. Default 1.
    #[serde(default)]
    pub shards: Option<u32>,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EndpointSpec {
    pub name: String,
    /// Read-only: neither it nor anything it calls writes (Def. 2); only calls to read-only
    /// endpoints are cached. Checked when the model is built.
    #[serde(default)]
    pub ro: bool,
    pub steps: Vec<StepSpec>,
}

/// `{"read":"k"}`, `{"write":"k"}`, `{"call":"Svc.ep"}` or `{"par":["Svc.a","Svc.b"]}`: one of
/// the four. `"arg": n` makes the step use argument `n` instead of the request's own (a fixed
/// key, or a call that does not depend on the request's argument).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    #[serde(default)]
    pub read: Option<String>,
    #[serde(default)]
    pub write: Option<String>,
    #[serde(default)]
    pub call: Option<String>,
    #[serde(default)]
    pub par: Option<Vec<String>>,
    #[serde(default)]
    pub arg: Option<u64>,
}

/// An endpoint of a service, by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EndpointRef {
    pub service: u32,
    pub endpoint: u32,
}

/// A call's arguments `ca`: the callee endpoint and the argument. Exact tuples, not hashes, so
/// there are no collisions (digest §1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CallArgs {
    pub to: EndpointRef,
    pub arg: u64,
}

/// A key of one service's store: the step's key name (interned per service) and the argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StoreKey {
    pub name: u32,
    pub arg: u64,
}

/// A handler step; `arg` is its fixed argument, `None` for the request's own.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    Read {
        name: u32,
        arg: Option<u64>,
    },
    Write {
        name: u32,
        arg: Option<u64>,
    },
    /// One call (sequential) or several issued together (fan-out), in this order.
    Call {
        targets: Vec<EndpointRef>,
        arg: Option<u64>,
    },
}

impl Step {
    /// The step's argument in a request with argument `own`.
    pub fn arg(&self, own: u64) -> u64 {
        match self {
            Step::Read { arg, .. } | Step::Write { arg, .. } | Step::Call { arg, .. } => arg.unwrap_or(own),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Endpoint {
    pub name: String,
    pub ro: bool,
    pub steps: Vec<Step>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Service {
    pub name: String,
    pub endpoints: Vec<Endpoint>,
    /// Key names of its store, indexed by `StoreKey::name`.
    pub keys: Vec<String>,
    pub shards: u32,
    /// The node of its first shard; its shards are the next `shards` nodes.
    pub first_unit: u32,
    /// A sharded service's store node (its shards share one store); `None`: the store lives in
    /// the service's only node.
    pub store_node: Option<u32>,
}

/// The validated call graph, and where its parts run: nodes `0..units` are the shards of the
/// services in order (a *unit* each), then one store node per sharded service.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct App {
    pub services: Vec<Service>,
    /// The service and shard of each unit.
    pub units: Vec<(u32, u32)>,
}

impl App {
    /// Resolves names and checks the graph: names unique, calls name existing endpoints of
    /// other services, no call cycles, read-only endpoints write nothing and call only
    /// read-only endpoints. Errors name `services[i]...` (relative to `params`).
    pub fn build(specs: &[ServiceSpec]) -> Result<App, FieldError> {
        if specs.is_empty() {
            return Err(FieldError::new("services", "an application needs at least one service"));
        }
        if specs.len() > SERVICES_MAX {
            return Err(FieldError::new("services", format!("at most {SERVICES_MAX} services, got {}", specs.len())));
        }
        for (i, s) in specs.iter().enumerate() {
            let path = format!("services[{i}]");
            if !simple_name(&s.name) {
                return Err(FieldError::new(format!("{path}.name"), NAME_RULE));
            }
            if specs[..i].iter().any(|o| o.name == s.name) {
                return Err(FieldError::new(format!("{path}.name"), format!("service {:?} is listed twice", s.name)));
            }
            for (j, e) in s.endpoints.iter().enumerate() {
                if !simple_name(&e.name) || s.endpoints[..j].iter().any(|o| o.name == e.name) {
                    return Err(FieldError::new(
                        format!("{path}.endpoints[{j}].name"),
                        format!("endpoint names must be unique; {NAME_RULE}"),
                    ));
                }
            }
        }
        let mut app = App { services: Vec::new(), units: Vec::new() };
        for (i, s) in specs.iter().enumerate() {
            let shards = s.shards.unwrap_or(1);
            if !(1..=SHARDS_MAX).contains(&shards) {
                return Err(FieldError::new(format!("services[{i}].shards"), format!("between 1 and {SHARDS_MAX}, got {shards}")));
            }
            let mut keys: Vec<String> = Vec::new();
            let mut intern = |k: &str| -> u32 {
                keys.iter().position(|x| x == k).unwrap_or_else(|| {
                    keys.push(k.to_string());
                    keys.len() - 1
                }) as u32
            };
            let mut endpoints = Vec::new();
            for (j, e) in s.endpoints.iter().enumerate() {
                let mut steps = Vec::new();
                for (n, step) in e.steps.iter().enumerate() {
                    let path = format!("services[{i}].endpoints[{j}].steps[{n}]");
                    let resolve = |name: &str| resolve_endpoint(specs, name).map_err(|m| FieldError::new(path.clone(), m));
                    let arg = step.arg;
                    steps.push(match (&step.read, &step.write, &step.call, &step.par) {
                        (Some(k), None, None, None) | (None, Some(k), None, None) if !simple_name(k) => {
                            return Err(FieldError::new(path, NAME_RULE));
                        }
                        (Some(k), None, None, None) => Step::Read { name: intern(k), arg },
                        (None, Some(k), None, None) if e.ro => {
                            return Err(FieldError::new(path, format!("endpoint {}.{} is read-only but writes {k:?}", s.name, e.name)));
                        }
                        (None, Some(k), None, None) => Step::Write { name: intern(k), arg },
                        (None, None, Some(name), None) => Step::Call { targets: vec![resolve(name)?], arg },
                        (None, None, None, Some(names)) if names.is_empty() => {
                            return Err(FieldError::new(path, "a fan-out needs at least one call"));
                        }
                        (None, None, None, Some(names)) => {
                            Step::Call { targets: names.iter().map(|n| resolve(n)).collect::<Result<_, _>>()?, arg }
                        }
                        _ => return Err(FieldError::new(path, "a step is exactly one of read, write, call or par")),
                    });
                    if let Step::Call { targets, .. } = steps.last().expect("just pushed") {
                        for t in targets {
                            if t.service as usize == i {
                                return Err(FieldError::new(path, "a service calls other services, not itself"));
                            }
                            if e.ro && !specs[t.service as usize].endpoints[t.endpoint as usize].ro {
                                let callee = app_name(specs, *t);
                                return Err(FieldError::new(
                                    path,
                                    format!("read-only {}.{} calls {callee}, which is not read-only", s.name, e.name),
                                ));
                            }
                        }
                    }
                }
                endpoints.push(Endpoint { name: e.name.clone(), ro: e.ro, steps });
            }
            let first_unit = app.units.len() as u32;
            app.units.extend((0..shards).map(|shard| (i as u32, shard)));
            app.services.push(Service { name: s.name.clone(), endpoints, keys, shards, first_unit, store_node: None });
        }
        let first_store = app.units.len() as u32;
        for (node, svc) in (first_store..).zip(app.services.iter_mut().filter(|s| s.shards > 1)) {
            svc.store_node = Some(node);
        }
        app.check_acyclic()?;
        Ok(app)
    }

    fn check_acyclic(&self) -> Result<(), FieldError> {
        // Depth-first search over endpoints; 0 unseen, 1 on the stack, 2 done.
        let mut state: BTreeMap<EndpointRef, u8> = BTreeMap::new();
        fn visit(app: &App, e: EndpointRef, state: &mut BTreeMap<EndpointRef, u8>) -> Result<(), String> {
            match state.get(&e) {
                Some(2) => return Ok(()),
                Some(1) => return Err(format!("the call graph has a cycle through {}", app.endpoint_name(e))),
                _ => {}
            }
            state.insert(e, 1);
            for step in &app.endpoint(e).steps {
                if let Step::Call { targets, .. } = step {
                    for t in targets {
                        visit(app, *t, state)?;
                    }
                }
            }
            state.insert(e, 2);
            Ok(())
        }
        for (s, svc) in self.services.iter().enumerate() {
            for e in 0..svc.endpoints.len() {
                visit(self, EndpointRef { service: s as u32, endpoint: e as u32 }, &mut state)
                    .map_err(|m| FieldError::new("services", m))?;
            }
        }
        Ok(())
    }

    /// Fixed nodes: the units, then the store nodes.
    pub fn nodes(&self) -> usize {
        self.units.len() + self.services.iter().filter(|s| s.store_node.is_some()).count()
    }

    /// A unit's node name: `Svc` for an unsharded service, `Svc.1` for its shard 1 (service
    /// names have no dots, so no name is taken twice).
    pub fn unit_name(&self, unit: u32) -> String {
        let (s, shard) = self.units[unit as usize];
        let svc = &self.services[s as usize];
        if svc.shards == 1 { svc.name.clone() } else { format!("{}.{shard}", svc.name) }
    }

    /// The unit that serves a call to `ca`. A read-only call goes to the shard its arguments
    /// hash to (hard affinity, §4.1: one CM is the sole authority for a cached call); any
    /// other call to shard `spread mod shards`, which the caller varies per call (the paper's
    /// writes may go to any shard).
    pub fn route(&self, ca: CallArgs, spread: u64) -> u32 {
        let svc = &self.services[ca.to.service as usize];
        let pick = if self.endpoint(ca.to).ro { seed(ca) } else { spread };
        svc.first_unit + (pick % svc.shards as u64) as u32
    }

    pub fn endpoint(&self, e: EndpointRef) -> &Endpoint {
        &self.services[e.service as usize].endpoints[e.endpoint as usize]
    }

    /// `Plot.plot`.
    pub fn endpoint_name(&self, e: EndpointRef) -> String {
        format!("{}.{}", self.services[e.service as usize].name, self.endpoint(e).name)
    }

    /// `Plot.plot(7)`, as histories name call arguments.
    pub fn call_name(&self, ca: CallArgs) -> String {
        format!("{}({})", self.endpoint_name(ca.to), ca.arg)
    }

    /// `Plot:plot:7`, as histories name store keys (service-qualified).
    pub fn key_name(&self, service: u32, key: StoreKey) -> String {
        let s = &self.services[service as usize];
        format!("{}:{}:{}", s.name, s.keys[key.name as usize], key.arg)
    }

    /// Resolves `Svc.ep` (used for the entry endpoints); errors say what exists.
    pub fn resolve(&self, name: &str) -> Result<EndpointRef, String> {
        let (svc, ep) = name.split_once('.').ok_or_else(|| format!("expected Service.endpoint, got {name:?}"))?;
        let s = self.services.iter().position(|s| s.name == svc).ok_or_else(|| format!("no service named {svc:?}"))?;
        let e =
            self.services[s].endpoints.iter().position(|e| e.name == ep).ok_or_else(|| format!("service {svc} has no endpoint {ep:?}"))?;
        Ok(EndpointRef { service: s as u32, endpoint: e as u32 })
    }

    /// The cache-free value of `ca` on the given stores (no writes: `ca` must be read-only).
    /// The quiescent-coherence oracle compares every cache entry with it (digest §4.4).
    pub fn evaluate(&self, ca: CallArgs, store: &dyn Fn(u32, StoreKey) -> Option<u64>) -> u64 {
        let mut h = seed(ca);
        for step in &self.endpoint(ca.to).steps {
            let arg = step.arg(ca.arg);
            match step {
                Step::Read { name, .. } => h = mix(h, store(ca.to.service, StoreKey { name: *name, arg }).unwrap_or(0)),
                Step::Write { .. } => unreachable!("read-only endpoints do not write (checked when built)"),
                Step::Call { targets, .. } => {
                    for t in targets {
                        h = mix(h, self.evaluate(CallArgs { to: *t, arg }, store));
                    }
                }
            }
        }
        h
    }
}

/// Names appear unquoted inside history strings (`Plot.plot(7)`, `Plot:plot:7`).
const NAME_RULE: &str = "names are non-empty and use only letters, digits, _ and -";

fn simple_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn resolve_endpoint(specs: &[ServiceSpec], name: &str) -> Result<EndpointRef, String> {
    let (svc, ep) = name.split_once('.').ok_or_else(|| format!("expected Service.endpoint, got {name:?}"))?;
    let s = specs.iter().position(|s| s.name == svc).ok_or_else(|| format!("no service named {svc:?}"))?;
    let e = specs[s].endpoints.iter().position(|e| e.name == ep).ok_or_else(|| format!("service {svc} has no endpoint {ep:?}"))?;
    Ok(EndpointRef { service: s as u32, endpoint: e as u32 })
}

fn app_name(specs: &[ServiceSpec], e: EndpointRef) -> String {
    format!("{}.{}", specs[e.service as usize].name, specs[e.service as usize].endpoints[e.endpoint as usize].name)
}

/// The start of a handler's return value: a function of its call arguments.
pub fn seed(ca: CallArgs) -> u64 {
    mix(mix(mix(0xcbf2_9ce4_8422_2325, ca.to.service as u64), ca.to.endpoint as u64), ca.arg)
}

/// Folds one input (a value read or written, a response) into a return value. Return values
/// stay below 2^53 so that JSON readers that use doubles read them exactly.
pub fn mix(h: u64, x: u64) -> u64 {
    let v = (h ^ x.wrapping_mul(0x9e37_79b9_7f4a_7c15)).wrapping_mul(0x0000_0100_0000_01b3);
    (v ^ (v >> 29)) & ((1 << 53) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(json: &str) -> Vec<ServiceSpec> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_graph_is_resolved_and_bad_graphs_are_refused_with_the_field() {
        let app = App::build(&specs(
            r#"[{"name":"F","endpoints":[{"name":"page","ro":true,"steps":[{"par":["A.get","B.get"]},{"read":"x"}]}]},
                {"name":"A","endpoints":[{"name":"get","ro":true,"steps":[{"read":"a"}]}]},
                {"name":"B","endpoints":[{"name":"get","ro":true,"steps":[{"read":"b"}]},{"name":"put","steps":[{"write":"b"}]}]}]"#,
        ))
        .unwrap();
        assert_eq!(app.resolve("B.put"), Ok(EndpointRef { service: 2, endpoint: 1 }));
        assert_eq!(app.key_name(2, StoreKey { name: 0, arg: 7 }), "B:b:7");
        let ro_writes = App::build(&specs(r#"[{"name":"F","endpoints":[{"name":"e","ro":true,"steps":[{"write":"x"}]}]}]"#));
        assert_eq!(ro_writes.unwrap_err().path, "services[0].endpoints[0].steps[0]");
        let ro_calls_rw = App::build(&specs(
            r#"[{"name":"F","endpoints":[{"name":"e","ro":true,"steps":[{"call":"G.w"}]}]},{"name":"G","endpoints":[{"name":"w","steps":[]}]}]"#,
        ));
        assert!(ro_calls_rw.unwrap_err().message.contains("not read-only"));
        let cycle = App::build(&specs(
            r#"[{"name":"F","endpoints":[{"name":"e","steps":[{"call":"G.e"}]}]},{"name":"G","endpoints":[{"name":"e","steps":[{"call":"F.e"}]}]}]"#,
        ));
        assert!(cycle.unwrap_err().message.contains("cycle"));
        let unknown = App::build(&specs(r#"[{"name":"F","endpoints":[{"name":"e","steps":[{"call":"G.e"}]}]}]"#));
        assert_eq!(unknown.unwrap_err().message, "no service named \"G\"");
    }

    #[test]
    fn shards_are_units_with_one_store_and_read_only_calls_keep_to_one_shard() {
        let app = App::build(&specs(
            r#"[{"name":"F","endpoints":[{"name":"e","steps":[{"call":"B.get"}]}]},
                {"name":"B","shards":3,"endpoints":[{"name":"get","ro":true,"steps":[{"read":"v"}]},{"name":"put","steps":[{"write":"v"}]}]}]"#,
        ))
        .unwrap();
        assert_eq!((0..4).map(|u| app.unit_name(u)).collect::<Vec<_>>(), ["F", "B.0", "B.1", "B.2"]);
        assert_eq!((app.nodes(), app.services[1].store_node), (5, Some(4)));
        let get = |arg| CallArgs { to: EndpointRef { service: 1, endpoint: 0 }, arg };
        let put = CallArgs { to: EndpointRef { service: 1, endpoint: 1 }, arg: 0 };
        for arg in 0..20 {
            let unit = app.route(get(arg), 0);
            assert!((1..4).contains(&unit));
            assert!((0..9).all(|spread| app.route(get(arg), spread) == unit), "affinity: one shard per read-only call");
        }
        assert_eq!((0..3).map(|spread| app.route(put, spread)).collect::<Vec<_>>(), [1, 2, 3], "writes spread over the shards");
        let zero = App::build(&specs(r#"[{"name":"F","shards":0,"endpoints":[]}]"#));
        assert_eq!(zero.unwrap_err().path, "services[0].shards");
    }

    #[test]
    fn evaluation_depends_on_every_value_read() {
        let app = App::build(&specs(
            r#"[{"name":"F","endpoints":[{"name":"e","ro":true,"steps":[{"call":"G.e"},{"read":"x"}]}]},
                {"name":"G","endpoints":[{"name":"e","ro":true,"steps":[{"read":"y"}]}]}]"#,
        ))
        .unwrap();
        let ca = CallArgs { to: EndpointRef { service: 0, endpoint: 0 }, arg: 3 };
        let a = app.evaluate(ca, &|_, _| None);
        let b = app.evaluate(ca, &|s, _| (s == 1).then_some(1));
        assert_ne!(a, b);
        assert_eq!(a, app.evaluate(ca, &|_, _| None), "deterministic");
    }
}
