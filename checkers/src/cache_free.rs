//! `cache-free`: is a history of requests through cached services equivalent to an execution
//! without caches? (MuCache's Theorem 1; the construction of its digest, §4.3.)
//!
//! Each transaction line may carry a request's **call tree** (`call`, see
//! `docs/history-format.md`): the reads and writes it made at each service, its calls, its
//! fan-outs and its cache hits, each hit naming its **origin**, the request whose result filled
//! the cache entry. A hit stands for a call that did not run; a cache-free execution would have
//! run it. So each hit is replaced by a **virtual copy** of its origin's subtree (recursively,
//! hits inside it too), in the hitting request's program order, each virtual read reading what
//! the original read. Then a precedence graph over the reads and writes, real and virtual:
//!
//! - **program order** inside each client request (a fan-out's branches are unordered);
//! - **version order** of each key's writes (their values, ordered as the store committed);
//! - **reads-from**: a write precedes each read of its value;
//! - **anti-dependency**: a read precedes the write that overwrote the value it read (a read of
//!   the initial state precedes the key's first write).
//!
//! Client requests are independent (no session or real-time order: MuCache promises neither,
//! and Fig. 3 of the paper would fail real time). If the graph is acyclic, any topological
//! order is a cache-free execution with the same reads, writes and return values: the history
//! passes. A cycle is the violation `NotCacheFree`, reported with the hit whose virtual copy
//! lies on it, the write it missed and the path by which the observer saw that write. A hit
//! whose origin did not run, returned another value, or wrote is a violation by itself.
//!
//! The check is linear in the expanded events; nested hits are expanded at most
//! [`EXPANSION_DEPTH_MAX`] deep.

use crate::anomaly::Anomaly;
use crate::finding::{Detail, Finding, Sink};
use crate::history::History;
use std::collections::{BTreeMap, VecDeque};

/// How deep hits inside origins inside hits are expanded before the check gives up on a hit.
pub const EXPANSION_DEPTH_MAX: usize = 64;

/// A request in a call tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CallNode {
    pub req: Box<str>,
    pub ca: Box<str>,
    pub ret: i64,
    pub steps: Vec<CallStep>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CallStep {
    Read { key: Box<str>, value: Option<i64> },
    Write { key: Box<str>, value: i64 },
    Call(Box<CallNode>),
    Hit { ca: Box<str>, ret: i64, origin: Box<str> },
    Par(Vec<CallStep>),
}

/// Parses a line's `call` field; errors name the path inside it (`call.steps[2].hit.origin`).
pub(crate) fn parse_call(v: &serde_json::Value) -> Result<CallNode, String> {
    call_node(v, "call")
}

fn call_node(v: &serde_json::Value, path: &str) -> Result<CallNode, String> {
    let o = v.as_object().ok_or_else(|| format!("{path}: expected an object with req, ca, ret and steps"))?;
    let steps = o.get("steps").and_then(|s| s.as_array()).ok_or_else(|| format!("{path}.steps: expected an array"))?;
    Ok(CallNode {
        req: string(o.get("req"), &format!("{path}.req"))?,
        ca: string(o.get("ca"), &format!("{path}.ca"))?,
        ret: int(o.get("ret"), &format!("{path}.ret"))?,
        steps: steps.iter().enumerate().map(|(i, s)| call_step(s, &format!("{path}.steps[{i}]"))).collect::<Result<_, _>>()?,
    })
}

fn call_step(v: &serde_json::Value, path: &str) -> Result<CallStep, String> {
    let o = v.as_object().ok_or_else(|| format!("{path}: expected a step object (r, w, call, hit or par)"))?;
    if let Some(k) = o.get("r") {
        let value = match o.get("value") {
            Some(serde_json::Value::Null) => None,
            v => Some(int(v, &format!("{path}.value"))?),
        };
        return Ok(CallStep::Read { key: string(Some(k), &format!("{path}.r"))?, value });
    }
    if let Some(k) = o.get("w") {
        return Ok(CallStep::Write { key: string(Some(k), &format!("{path}.w"))?, value: int(o.get("value"), &format!("{path}.value"))? });
    }
    if let Some(c) = o.get("call") {
        return Ok(CallStep::Call(Box::new(call_node(c, &format!("{path}.call"))?)));
    }
    if let Some(h) = o.get("hit") {
        let p = format!("{path}.hit");
        let h = h.as_object().ok_or_else(|| format!("{p}: expected an object with ca, ret and origin"))?;
        return Ok(CallStep::Hit {
            ca: string(h.get("ca"), &format!("{p}.ca"))?,
            ret: int(h.get("ret"), &format!("{p}.ret"))?,
            origin: string(h.get("origin"), &format!("{p}.origin"))?,
        });
    }
    if let Some(b) = o.get("par") {
        let b = b.as_array().ok_or_else(|| format!("{path}.par: expected an array of call and hit steps"))?;
        let branches = b.iter().enumerate().map(|(i, s)| call_step(s, &format!("{path}.par[{i}]"))).collect::<Result<Vec<_>, _>>()?;
        if branches.iter().any(|s| !matches!(s, CallStep::Call(_) | CallStep::Hit { .. })) {
            return Err(format!("{path}.par: a fan-out holds call and hit steps only"));
        }
        return Ok(CallStep::Par(branches));
    }
    Err(format!("{path}: expected one of r, w, call, hit or par"))
}

fn string(v: Option<&serde_json::Value>, path: &str) -> Result<Box<str>, String> {
    v.and_then(|v| v.as_str()).map(Into::into).ok_or_else(|| format!("{path}: expected a string"))
}

fn int(v: Option<&serde_json::Value>, path: &str) -> Result<i64, String> {
    v.and_then(|v| v.as_i64()).ok_or_else(|| format!("{path}: expected an integer"))
}

// ---------------------------------------------------------------------------------------------
// The check

/// Where an event ran: the (real) request, and the hit it stands in for if it is virtual.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Place {
    txn: u32,
    /// Index into `Graph::reqs`: the request that made the read or write.
    req: u32,
    /// Index into `Graph::hits` (the outermost hit), or `NONE` for a real event.
    hit: u32,
}

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Event {
    write: bool,
    key: u32,
    value: Option<i64>,
    place: Place,
}

/// A cache hit expanded into a virtual copy.
#[derive(Clone, Debug)]
struct HitRef {
    ca: Box<str>,
    origin: Box<str>,
    /// The request that hit.
    req: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Edge {
    Program,
    ReadsFrom,
    Version,
    Anti,
}

/// One edge of a cycle, between two events.
#[derive(Clone, Debug)]
pub(crate) struct CycleEdge {
    kind: u8,
    from: EventText,
    to: EventText,
}

/// An event as the explanation shows it.
#[derive(Clone, Debug)]
pub(crate) struct EventText {
    pub txn: u32,
    /// `write of U:k:0=1 at U#2`.
    pub what: String,
    pub hit: Option<String>,
}

/// What a `NotCacheFree` finding explains.
#[derive(Clone, Debug)]
pub(crate) enum Story {
    /// The precedence graph's cycle, in order (the last edge returns to the first event).
    Cycle(Vec<CycleEdge>),
    /// A hit that no cache-free call could have produced, and why.
    BadHit { txn: u32, hit: String, why: String },
    /// A read of a value no write produced, or a value written twice.
    BadValue { txn: u32, why: String },
}

struct Graph<'h> {
    events: Vec<Event>,
    succ: Vec<Vec<(u32, Edge)>>,
    keys: BTreeMap<&'h str, u32>,
    key_names: Vec<&'h str>,
    reqs: Vec<&'h str>,
    hits: Vec<HitRef>,
    index: BTreeMap<&'h str, &'h CallNode>,
}

/// Checks every call tree of `h`; findings go to `sink`.
pub(crate) fn check(h: &History, sink: &mut Sink) {
    if h.calls.is_empty() {
        sink.notes.push("cache-free: the history has no call trees (`call` fields), so there is nothing to judge".into());
        return;
    }
    let mut g = Graph {
        events: Vec::new(),
        succ: Vec::new(),
        keys: BTreeMap::new(),
        key_names: Vec::new(),
        reqs: Vec::new(),
        hits: Vec::new(),
        index: BTreeMap::new(),
    };
    for (t, root) in &h.calls {
        index(root, &mut g.index, *t, sink);
    }
    for (t, root) in &h.calls {
        let place = Place { txn: *t, req: NONE, hit: NONE };
        g.emit_call(root, place, Vec::new(), 0, sink);
    }
    g.data_edges(sink);
    if let Some(cycle) = g.find_cycle() {
        sink.push(Finding {
            anomaly: Anomaly::NotCacheFree,
            key: None,
            read: None,
            detail: Detail::CacheFree(Box::new(Story::Cycle(cycle))),
        });
    }
    let hits = g.hits.len();
    sink.notes.push(format!(
        "cache-free: {} requests, {hits} cache hits expanded into virtual copies of their origins, {} reads and writes in the precedence graph",
        h.calls.len(),
        g.events.len()
    ));
}

fn index<'h>(c: &'h CallNode, requests: &mut BTreeMap<&'h str, &'h CallNode>, txn: u32, sink: &mut Sink) {
    if requests.insert(&c.req, c).is_some() {
        let why = format!("request id {} is used twice; request ids name one execution each", c.req);
        sink.push(Finding {
            anomaly: Anomaly::NotCacheFree,
            key: None,
            read: None,
            detail: Detail::CacheFree(Box::new(Story::BadValue { txn, why })),
        });
    }
    for s in &c.steps {
        for s in branches(s) {
            if let CallStep::Call(sub) = s {
                index(sub, requests, txn, sink);
            }
        }
    }
}

/// A step's branches: the step itself, or a fan-out's steps.
fn branches(s: &CallStep) -> &[CallStep] {
    match s {
        CallStep::Par(b) => b,
        _ => std::slice::from_ref(s),
    }
}

fn writes_anything(c: &CallNode) -> bool {
    c.steps.iter().flat_map(branches).any(|s| match s {
        CallStep::Write { .. } => true,
        CallStep::Call(sub) => writes_anything(sub),
        _ => false,
    })
}

impl<'h> Graph<'h> {
    fn key(&mut self, k: &'h str) -> u32 {
        let n = self.key_names.len() as u32;
        *self.keys.entry(k).or_insert_with(|| {
            self.key_names.push(k);
            n
        })
    }

    fn node(&mut self, e: Event, preds: &[u32]) -> u32 {
        let n = self.events.len() as u32;
        self.events.push(e);
        self.succ.push(Vec::new());
        for &p in preds {
            self.succ[p as usize].push((n, Edge::Program));
        }
        n
    }

    /// Emits the events of call `c` after `frontier` (the events that precede it in program
    /// order); returns the new frontier.
    fn emit_call(&mut self, c: &'h CallNode, mut place: Place, mut frontier: Vec<u32>, depth: usize, sink: &mut Sink) -> Vec<u32> {
        place.req = self.reqs.len() as u32;
        self.reqs.push(&c.req);
        for s in &c.steps {
            frontier = match s {
                CallStep::Par(b) => {
                    let mut joined = Vec::new();
                    for s in b {
                        joined.extend(self.emit_step(s, place, frontier.clone(), depth, sink));
                    }
                    joined.sort_unstable();
                    joined.dedup();
                    joined
                }
                s => self.emit_step(s, place, frontier, depth, sink),
            };
        }
        frontier
    }

    fn emit_step(&mut self, s: &'h CallStep, place: Place, frontier: Vec<u32>, depth: usize, sink: &mut Sink) -> Vec<u32> {
        match s {
            CallStep::Read { key, value } => {
                let key = self.key(key);
                vec![self.node(Event { write: false, key, value: *value, place }, &frontier)]
            }
            CallStep::Write { key, value } => {
                let key = self.key(key);
                vec![self.node(Event { write: true, key, value: Some(*value), place }, &frontier)]
            }
            CallStep::Call(sub) => self.emit_call(sub, place, frontier, depth, sink),
            CallStep::Hit { ca, ret, origin } => {
                let bad = |why: String| Story::BadHit {
                    txn: place.txn,
                    hit: format!("the hit of {ca} in {}", self.reqs[place.req as usize]),
                    why,
                };
                let story = match self.index.get(&**origin) {
                    None => Some(bad(format!("its origin {origin} appears nowhere in the history"))),
                    Some(o) if o.ca != *ca => Some(bad(format!("its origin {origin} was a call of {}, not {ca}", o.ca))),
                    Some(o) if o.ret != *ret => Some(bad(format!("it returned {ret}, but its origin {origin} returned {}", o.ret))),
                    Some(o) if writes_anything(o) => Some(bad(format!("its origin {origin} wrote, so it was not read-only"))),
                    Some(_) if depth >= EXPANSION_DEPTH_MAX => {
                        Some(bad(format!("hits inside origins nest deeper than {EXPANSION_DEPTH_MAX}")))
                    }
                    Some(_) => None,
                };
                if let Some(story) = story {
                    sink.push(Finding {
                        anomaly: Anomaly::NotCacheFree,
                        key: None,
                        read: None,
                        detail: Detail::CacheFree(Box::new(story)),
                    });
                    return frontier;
                }
                let o = self.index[&**origin];
                let mut virtual_place = place;
                if place.hit == NONE {
                    virtual_place.hit = self.hits.len() as u32;
                    self.hits.push(HitRef { ca: ca.clone(), origin: origin.clone(), req: place.req });
                }
                self.emit_call(o, virtual_place, frontier, depth + 1, sink)
            }
            CallStep::Par(_) => unreachable!("fan-outs are emitted by emit_call"),
        }
    }

    /// Version order, reads-from and anti-dependency edges, per key.
    fn data_edges(&mut self, sink: &mut Sink) {
        // Each key's writes, by value (their commit order), with the (real) write events.
        let mut writes: Vec<Vec<(i64, u32)>> = vec![Vec::new(); self.key_names.len()];
        for (n, e) in self.events.iter().enumerate() {
            if e.write && e.place.hit == NONE {
                writes[e.key as usize].push((e.value.expect("writes have values"), n as u32));
            }
        }
        for (k, w) in writes.iter_mut().enumerate() {
            w.sort_unstable();
            for pair in w.windows(2) {
                if pair[0].0 == pair[1].0 {
                    let txn = self.events[pair[1].1 as usize].place.txn;
                    let why = format!("{}={} is written twice; written values must be unique per key", self.key_names[k], pair[0].0);
                    sink.push(Finding {
                        anomaly: Anomaly::NotCacheFree,
                        key: None,
                        read: None,
                        detail: Detail::CacheFree(Box::new(Story::BadValue { txn, why })),
                    });
                }
                self.succ[pair[0].1 as usize].push((pair[1].1, Edge::Version));
            }
        }
        for n in 0..self.events.len() {
            let e = self.events[n];
            if e.write {
                continue;
            }
            let w = &writes[e.key as usize];
            let next = match e.value {
                None => w.first().map(|x| x.1),
                Some(v) => match w.binary_search_by_key(&v, |x| x.0) {
                    Ok(i) => {
                        self.succ[w[i].1 as usize].push((n as u32, Edge::ReadsFrom));
                        w.get(i + 1).map(|x| x.1)
                    }
                    Err(_) => {
                        let why = format!(
                            "{} read {}={v}, which no write in the history produced",
                            self.reqs[e.place.req as usize], self.key_names[e.key as usize]
                        );
                        sink.push(Finding {
                            anomaly: Anomaly::NotCacheFree,
                            key: None,
                            read: None,
                            detail: Detail::CacheFree(Box::new(Story::BadValue { txn: e.place.txn, why })),
                        });
                        None
                    }
                },
            };
            if let Some(next) = next {
                self.succ[n].push((next, Edge::Anti));
            }
        }
    }

    /// A shortest cycle through a virtual event if there is one on a cycle (else through any
    /// event on a cycle), or `None` when the graph is acyclic.
    fn find_cycle(&self) -> Option<Vec<CycleEdge>> {
        let n = self.events.len();
        let mut indeg = vec![0u32; n];
        for s in &self.succ {
            for &(t, _) in s {
                indeg[t as usize] += 1;
            }
        }
        let mut queue: VecDeque<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
        let mut done = 0;
        while let Some(v) = queue.pop_front() {
            done += 1;
            for &(t, _) in &self.succ[v as usize] {
                indeg[t as usize] -= 1;
                if indeg[t as usize] == 0 {
                    queue.push_back(t);
                }
            }
        }
        if done == n {
            return None;
        }
        // Left over: cycles and what they reach. Try virtual events first, then any.
        let left: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] > 0).collect();
        let starts = left.iter().filter(|&&v| self.events[v as usize].place.hit != NONE).chain(left.iter());
        for &s in starts.take(64) {
            if let Some(path) = self.shortest_cycle(s, &indeg) {
                return Some(path);
            }
        }
        // Every remaining event is on or after a cycle; some start of the first 64 is on one
        // unless the cycles lie beyond them: search from all.
        left.iter().find_map(|&s| self.shortest_cycle(s, &indeg))
    }

    /// Breadth-first search from `s` back to `s` among the events Kahn's algorithm left.
    fn shortest_cycle(&self, s: u32, indeg: &[u32]) -> Option<Vec<CycleEdge>> {
        let mut parent: BTreeMap<u32, (u32, Edge)> = BTreeMap::new();
        let mut queue = VecDeque::from([s]);
        while let Some(v) = queue.pop_front() {
            for &(t, kind) in &self.succ[v as usize] {
                if indeg[t as usize] == 0 {
                    continue;
                }
                if t == s {
                    let mut edges = vec![(v, t, kind)];
                    let mut at = v;
                    while at != s {
                        let (p, k) = parent[&at];
                        edges.push((p, at, k));
                        at = p;
                    }
                    edges.reverse();
                    return Some(edges.into_iter().map(|(a, b, k)| self.cycle_edge(a, b, k)).collect());
                }
                if let std::collections::btree_map::Entry::Vacant(e) = parent.entry(t) {
                    e.insert((v, kind));
                    queue.push_back(t);
                }
            }
        }
        None
    }

    fn cycle_edge(&self, a: u32, b: u32, kind: Edge) -> CycleEdge {
        CycleEdge { kind: kind as u8, from: self.text(a), to: self.text(b) }
    }

    fn text(&self, n: u32) -> EventText {
        let e = self.events[n as usize];
        let value = e.value.map_or("⊥".to_string(), |v| v.to_string());
        let noun = if e.write { "write" } else { "read" };
        let what = format!("{noun} of {}={value} at {}", self.key_names[e.key as usize], self.reqs[e.place.req as usize]);
        let hit = (e.place.hit != NONE).then(|| {
            let h = &self.hits[e.place.hit as usize];
            format!("the virtual copy of {} for the cache hit of {} in {}", h.origin, h.ca, self.reqs[h.req as usize])
        });
        EventText { txn: e.place.txn, what, hit }
    }
}

/// The explanation of a finding: (transactions to label, steps, contradiction, sentence).
/// `label` names a transaction (`T1`).
pub(crate) fn explain(story: &Story, label: &dyn Fn(u32) -> String) -> (Vec<String>, String, String) {
    match story {
        Story::BadHit { txn, hit, why } => {
            let contradiction = format!("However, in {}, {hit} cannot stand for a call that ran: {why}.", label(*txn));
            let sentence = format!("{hit} (transaction {}) is not backed by a cache-free call: {why}.", label(*txn));
            (vec![], contradiction, sentence)
        }
        Story::BadValue { txn, why } => (vec![], format!("However, in {}: {why}.", label(*txn)), format!("{why}.")),
        Story::Cycle(edges) => {
            let show = |e: &EventText| match &e.hit {
                Some(h) => format!("{}'s {} (in {h})", label(e.txn), e.what),
                None => format!("{}'s {}", label(e.txn), e.what),
            };
            let mut steps: Vec<String> = edges
                .iter()
                .map(|e| {
                    let (a, b) = (show(&e.from), show(&e.to));
                    match e.kind {
                        k if k == Edge::Program as u8 => format!("{a} comes before {b} in program order."),
                        k if k == Edge::ReadsFrom as u8 => format!("{b} returns the value of {a}, so it comes after it."),
                        k if k == Edge::Version as u8 => format!("{a} comes before {b}, the next version of the key."),
                        _ => format!("{a} comes before {b}, which overwrote the value it returns."),
                    }
                })
                .collect();
            let last = steps.pop().unwrap_or_default();
            let contradiction =
                format!("However, {}: a cycle, so no execution without caches has these reads!", last.trim_end_matches('.'));
            // Name the hit whose virtual read missed a write (its anti-dependency is on the
            // cycle), not merely the first virtual event: a cycle can pass several hits.
            let anti = |e: &&CycleEdge| e.kind == Edge::Anti as u8;
            let stale = edges.iter().filter(anti).find(|e| e.from.hit.is_some()).or_else(|| edges.iter().find(anti));
            let hit = stale.and_then(|e| e.from.hit.clone()).or_else(|| edges.iter().find_map(|e| e.from.hit.clone()));
            let write = stale.map(|e| e.to.what.clone());
            let sentence = match (hit, write) {
                (Some(h), Some(w)) => format!(
                    "{h} returns a value that the {w} overwrote, yet the hitting request also observes that write, through the path below: no execution without caches orders both."
                ),
                _ => "the requests' reads and writes form a cycle even without cache hits on it: no execution orders them.".to_string(),
            };
            (steps, contradiction, sentence)
        }
    }
}

/// The transactions a story involves, in the order it mentions them.
pub(crate) fn txns(story: &Story) -> Vec<u32> {
    match story {
        Story::BadHit { txn, .. } | Story::BadValue { txn, .. } => vec![*txn],
        Story::Cycle(edges) => edges.iter().flat_map(|e| [e.from.txn, e.to.txn]).collect(),
    }
}

#[cfg(test)]
mod tests {
    use crate::{Anomaly, Level, check, read_history};

    fn run(lines: &[&str]) -> crate::Report {
        let text = lines.join("\n");
        check(&read_history(text.as_bytes(), None).unwrap_or_else(|e| panic!("{e}")), Level::CacheFree)
    }

    /// c0 fills the cache: S3.get read k at S4 before any write.
    const FILL: &str = r#"{"session":"c0","ops":[],"call":{"req":"S1#1","ca":"S1.view(0)","ret":5,"steps":[{"call":{"req":"S3#1","ca":"S3.get(0)","ret":7,"steps":[{"r":"S4:k:0","value":null}]}}]}}"#;

    #[test]
    fn a_hit_that_misses_the_requests_own_earlier_write_is_a_cycle_naming_the_hit() {
        // Fig. 4: c1 writes k through S2, then hits S3.get(0), filled before the write.
        let diamond = r#"{"session":"c1","ops":[],"call":{"req":"S1#2","ca":"S1.act(0)","ret":1,"steps":[{"call":{"req":"S2#1","ca":"S2.upd(0)","ret":2,"steps":[{"w":"S4:k:0","value":1}]}},{"hit":{"ca":"S3.get(0)","ret":7,"origin":"S3#1"}}]}}"#;
        let report = run(&[FILL, diamond]);
        assert_eq!(report.counts.get(&Anomaly::NotCacheFree), Some(&1), "{}", report.render_text());
        let v = &report.violations[0];
        assert!(v.cycle);
        assert!(v.sentence.contains("the cache hit of S3.get(0) in S1#2"), "{}", v.sentence);
        assert!(v.explanation.contradiction.contains("a cycle"), "{}", v.explanation.contradiction);
        assert_eq!(v.transactions.len(), 1, "the cycle lies within c1's request");
    }

    #[test]
    fn a_stale_hit_after_another_clients_write_is_allowed_as_there_is_no_real_time_order() {
        // Fig. 3: c1's write completes before c2's hit in real time; the witness orders c2 first.
        let write = r#"{"session":"c1","invoke_ns":10,"complete_ns":20,"ops":[],"call":{"req":"S4#2","ca":"S4.put(0)","ret":1,"steps":[{"w":"S4:k:0","value":1}]}}"#;
        let hit = r#"{"session":"c2","invoke_ns":30,"complete_ns":40,"ops":[],"call":{"req":"S1#3","ca":"S1.view(0)","ret":5,"steps":[{"hit":{"ca":"S3.get(0)","ret":7,"origin":"S3#1"}}]}}"#;
        let report = run(&[FILL, write, hit]);
        assert!(report.ok, "{}", report.render_text());
    }

    #[test]
    fn fan_out_branches_are_unordered() {
        // One branch sees the write, the other (a hit) does not: fine when concurrent, a
        // cycle when the second comes after the first in program order.
        let write = r#"{"session":"c1","ops":[],"call":{"req":"S4#2","ca":"S4.put(0)","ret":1,"steps":[{"w":"S4:k:0","value":1}]}}"#;
        let branches = r#"{"call":{"req":"S5#1","ca":"S5.get(0)","ret":9,"steps":[{"r":"S4:k:0","value":1}]}},{"hit":{"ca":"S3.get(0)","ret":7,"origin":"S3#1"}}"#;
        let par =
            format!(r#"{{"session":"c2","ops":[],"call":{{"req":"S1#3","ca":"S1.two(0)","ret":3,"steps":[{{"par":[{branches}]}}]}}}}"#);
        assert!(run(&[FILL, write, &par]).ok);
        let seq = format!(r#"{{"session":"c2","ops":[],"call":{{"req":"S1#3","ca":"S1.two(0)","ret":3,"steps":[{branches}]}}}}"#);
        assert_eq!(run(&[FILL, write, &seq]).counts.get(&Anomaly::NotCacheFree), Some(&1));
    }

    #[test]
    fn a_cycle_through_a_fresh_hit_and_a_stale_one_names_the_stale_one() {
        // X11's shape: c2 reads the new k, hits a fresh entry of S6, writes m; c3 reads m, then
        // hits the stale S3.get(0). The cycle passes both hits; only S3's missed a write.
        let fill6 = r#"{"session":"c4","ops":[],"call":{"req":"S1#4","ca":"S1.six(0)","ret":5,"steps":[{"call":{"req":"S6#1","ca":"S6.get(0)","ret":9,"steps":[{"r":"S6:q:0","value":null}]}}]}}"#;
        let write = r#"{"session":"c1","ops":[],"call":{"req":"S4#2","ca":"S4.put(0)","ret":1,"steps":[{"w":"S4:k:0","value":1}]}}"#;
        let c2 = r#"{"session":"c2","ops":[],"call":{"req":"T#1","ca":"T.compose(0)","ret":2,"steps":[{"r":"S4:k:0","value":1},{"hit":{"ca":"S6.get(0)","ret":9,"origin":"S6#1"}},{"w":"T:m:0","value":1}]}}"#;
        let c3 = r#"{"session":"c3","ops":[],"call":{"req":"S1#3","ca":"S1.page(0)","ret":3,"steps":[{"r":"T:m:0","value":1},{"hit":{"ca":"S3.get(0)","ret":7,"origin":"S3#1"}}]}}"#;
        let report = run(&[FILL, fill6, write, c2, c3]);
        assert_eq!(report.counts.get(&Anomaly::NotCacheFree), Some(&1), "{}", report.render_text());
        let sentence = &report.violations[0].sentence;
        assert!(sentence.contains("the cache hit of S3.get(0) in S1#3 returns a value that the write of S4:k:0=1"), "{sentence}");
    }

    #[test]
    fn a_hit_must_be_backed_by_a_read_only_origin_that_returned_its_value() {
        let hit = |origin: &str, ret: i64| {
            format!(
                r#"{{"session":"c2","ops":[],"call":{{"req":"S1#3","ca":"S1.view(0)","ret":5,"steps":[{{"hit":{{"ca":"S3.get(0)","ret":{ret},"origin":"{origin}"}}}}]}}}}"#
            )
        };
        for (h, why) in [(hit("S3#9", 7), "appears nowhere"), (hit("S3#1", 8), "returned 7"), (hit("S1#1", 5), "was a call of S1.view(0)")]
        {
            let report = run(&[FILL, &h]);
            assert_eq!(report.counts.get(&Anomaly::NotCacheFree), Some(&1));
            assert!(report.violations[0].sentence.contains(why), "{}", report.violations[0].sentence);
        }
    }

    #[test]
    fn histories_without_call_trees_pass_with_a_note_and_bad_trees_name_their_line_and_field() {
        let plain = r#"{"session":"c1","ops":[{"f":"w","key":"x","value":1}]}"#;
        let report = run(&[plain]);
        assert!(report.ok && report.notes.iter().any(|n| n.contains("no call trees")));
        let bad = r#"{"session":"c1","ops":[],"call":{"req":"S1#1","ca":"S1.v(0)","ret":1,"steps":[{"hit":{"ca":"S3.get(0)","ret":7}}]}}"#;
        let err = read_history(format!("{plain}\n{bad}").as_bytes(), None).unwrap_err().to_string();
        assert!(err.contains("line 2") && err.contains("call.steps[0].hit.origin"), "{err}");
    }
}
